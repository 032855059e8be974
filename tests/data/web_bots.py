"""Bots that misbehave, for the tests of browser play's fault handling
(``tests/data/web_bots.py:Raiser`` and friends)."""

import time

import numpy as np

from sichuan_env.core.actions import PASS
from sichuan_env.seats.agent import BaseAgent


class Passer(BaseAgent):
    """Passes whenever it may, else the lowest legal action."""

    needs = "nothing"

    def act(self, observation, mask) -> int:
        return PASS if mask[PASS] else int(np.flatnonzero(mask)[0])


class Raiser(Passer):
    """Raises on every decision from the ``after``-th on (counted per object)."""

    def __init__(self, after: int = 2) -> None:
        self.after = after
        self.calls = 0

    def act(self, observation, mask) -> int:
        self.calls += 1
        if self.calls >= self.after:
            raise RuntimeError("the bot broke (its hand is 1m 1m 1m)")
        return super().act(observation, mask)


class Sleeper(Passer):
    """Thinks ``seconds`` on each decision."""

    def __init__(self, seconds: float = 2.0) -> None:
        self.seconds = seconds

    def act(self, observation, mask) -> int:
        time.sleep(self.seconds)
        return super().act(observation, mask)


class Illegal(Passer):
    """Answers an action that is never legal for it."""

    def act(self, observation, mask) -> int:
        return int(np.flatnonzero(~mask)[0])


class Counter(Passer):
    """Counts its decisions and resets (per object)."""

    def __init__(self) -> None:
        self.decisions = 0
        self.resets = 0

    def act(self, observation, mask) -> int:
        self.decisions += 1
        return super().act(observation, mask)

    def reset(self) -> None:
        self.resets += 1


class ClaimThinker(Passer):
    """Passes like :class:`Passer`, thinking ``seconds`` on each claim or rob decision
    (those with a pass), as a slow bot does: a timing tell of the windows it is asked in."""

    def __init__(self, seconds: float = 0.01) -> None:
        self.seconds = seconds

    def act(self, observation, mask) -> int:
        if mask[PASS]:
            time.sleep(self.seconds)
        return super().act(observation, mask)

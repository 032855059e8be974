"""A bot defined outside the package, for the tests of agents by import path
(``tests/data/mybot.py:MyBot``)."""

import numpy as np

from sichuan_env.core.actions import HU
from sichuan_env.seats.agent import BaseAgent


class MyBot(BaseAgent):
    """Hu whenever it may, else the highest legal action number (``prefer="high"``) or
    the lowest (``prefer="low"``); it never looks at the observation."""

    needs = "nothing"

    def __init__(self, prefer: str = "high") -> None:
        if prefer not in ("high", "low"):
            raise ValueError(f"prefer must be 'high' or 'low', got {prefer!r}")
        self.prefer = prefer

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if mask[HU]:
            return HU
        return int(legal[-1] if self.prefer == "high" else legal[0])


class NoActBatch:
    """Not an agent: it has ``act`` only."""

    def act(self, observation, mask):
        return int(np.flatnonzero(mask)[0])


class Illegal(BaseAgent):
    """Always discards the first tile kind, legal or not."""

    needs = "nothing"

    def act(self, observation, mask):
        return 0

"""An agent object and a factory function, for the import-path tests."""

import numpy as np

from sichuan_env.seats.agent import BaseAgent


class FirstLegal(BaseAgent):
    """The first (``prefer="low"``) or last (``"high"``) legal action."""

    needs = "nothing"

    def __init__(self, prefer: str = "high") -> None:
        self.prefer = prefer

    def act(self, observation, mask):
        legal = np.flatnonzero(mask)
        return int(legal[0] if self.prefer == "low" else legal[-1])


BOT = FirstLegal()


def make_bot(prefer: str = "high") -> FirstLegal:
    return FirstLegal(prefer)

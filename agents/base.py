"""The agent interface, re-exported from :mod:`sichuan_env.agent` where it lives (the
environments own the protocol; this module keeps ``from agents.base import ...`` working)."""

from sichuan_env.agent import (
    NO_OBSERVATION,
    Agent,
    BaseAgent,
    RandomAgent,
    needs_observation,
    validate_agent,
)

__all__ = [
    "Agent", "BaseAgent", "RandomAgent", "validate_agent", "NO_OBSERVATION", "needs_observation",
]

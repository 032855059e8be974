"""Agents for sichuan-env: one act/act_batch interface, rule bots, PPO, the arena.

``Agent`` (protocol), ``BaseAgent`` (implement ``act_batch``), ``RandomAgent`` and
``validate_agent`` live in :mod:`sichuan_env.agent` (re-exported by
:mod:`agents.base`); :func:`sichuan_env.agent.make_agent` builds agents by name.
"""

from agents.base import Agent, BaseAgent, RandomAgent, validate_agent

__all__ = ["Agent", "BaseAgent", "RandomAgent", "validate_agent"]

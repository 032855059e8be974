"""Agents for sichuan-env: one act/act_batch interface, rule bots, PPO, the arena.

``Agent`` (protocol), ``BaseAgent`` (implement ``act_batch``), ``RandomAgent`` and
``validate_agent`` live in :mod:`agents.base`.
"""

from agents.base import Agent, BaseAgent, RandomAgent, validate_agent

__all__ = ["Agent", "BaseAgent", "RandomAgent", "validate_agent"]

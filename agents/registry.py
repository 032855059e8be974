"""Agents by name: ``make_agent("random" | "greedy" | "rules" | "ppo:PATH", seed=...)``.

=================  ==========================================================
spec               agent
=================  ==========================================================
``random``         :class:`agents.base.RandomAgent` (uniform over legal actions)
``greedy``         :class:`agents.greedy.GreedyAgent` (shanten / tile efficiency)
``rules``          :class:`agents.rules_bot.RulesAgent` (greedy + value + defence)
``ppo:PATH``       a trained policy loaded by ``agents.ppo`` from ``PATH``
``rllib:PATH``     a policy of ``train.py --backend rllib`` (``agents.rllib_agent``)
=================  ==========================================================
"""

from __future__ import annotations

import importlib
from typing import Any

AGENT_NAMES = ("random", "greedy", "rules", "ppo:PATH", "rllib:PATH")


def make_agent(spec: str, seed: int | None = None, **kwargs: Any) -> Any:
    """Build an agent from its spec string (see the module docstring)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec string is expected, got {spec!r}")
    spec = spec.strip()
    name, _, arg = spec.partition(":")
    name = name.lower()
    if name == "random":
        from agents.base import RandomAgent

        return RandomAgent(seed=seed)
    if name == "greedy":
        from agents.greedy import GreedyAgent

        return GreedyAgent(seed=seed, **kwargs)
    if name == "rules":
        from agents.rules_bot import RulesAgent

        return RulesAgent(seed=seed, **kwargs)
    if name == "ppo":
        if not arg:
            raise ValueError("a PPO agent needs a path: 'ppo:runs/model.zip'")
        try:
            ppo = importlib.import_module("agents.ppo")
        except ModuleNotFoundError as err:
            if err.name != "agents.ppo":
                raise
            raise ValueError(
                "agent 'ppo:...' needs agents/ppo.py, which is not installed in this checkout"
            ) from None
        load = getattr(ppo, "load_agent", None)
        if load is not None:
            return load(arg, seed=seed, **kwargs)
        cls = getattr(ppo, "PPOAgent", None)
        if cls is None:
            raise ValueError("agents.ppo has neither load_agent(path) nor PPOAgent(path)")
        return cls(arg, **kwargs)
    if name == "rllib" and arg:
        from agents.rllib_agent import load_agent

        return load_agent(arg, seed=seed, **kwargs)
    raise ValueError(f"unknown agent {spec!r}; known agents: {', '.join(AGENT_NAMES)}")

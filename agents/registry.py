"""Agents by name, re-exported from :mod:`sichuan_env.agent` (the one resolver).

``make_agent(spec, seed=...)`` takes a registered name (``random``, ``greedy``, ``rules``,
``ppo:PATH`` or a name an installed package registers under the entry-point group
``sichuan_env.agents``), an import path ``package.module:ClassName`` or
``path/to/file.py:ClassName``, each optionally followed by ``?key=value&...`` keyword
arguments. See :mod:`sichuan_env.agent` for the details.
"""

from sichuan_env.agent import AgentSpecError, known_agents, make_agent

__all__ = ["make_agent", "known_agents", "AgentSpecError"]

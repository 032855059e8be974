"""Agents for sichuan-env: the bots and model agents users name, and the evaluation commands.

The interface (``Agent``, ``BaseAgent``, ``RandomAgent``, ``validate_agent``) and the
resolver by name (``make_agent``) live in :mod:`sichuan_env.agent`. Here:

- bots: :mod:`agents.greedy`, :mod:`agents.rules_bot`;
- agents that play a trained model: :mod:`agents.ppo` (SB3), :mod:`agents.rllib_agent`;
- evaluation: :mod:`agents.arena` (duplicate matches), :mod:`agents.ladder`;
- :mod:`agents.training`: the training pipelines and the networks they train.
"""

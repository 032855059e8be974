"""Agents for sichuan-env: the bots and model agents users name, and the commands that
evaluate them.

The interface (``Agent``, ``BaseAgent``, ``RandomAgent``, ``validate_agent``) and the
resolver by name (``make_agent``) live in :mod:`sichuan_env.seats.agent`. Here, one folder per
part, and the commands at the top:

- :mod:`sichuan_agents.bots`: the hand-written bots ``greedy`` and ``rules``;
- :mod:`sichuan_agents.models`: trained models as agents (``fitted``, ``ppo``, ``boosted``,
  ``best``, ``rllib:PATH``) with the shipped model files and their cards;
- :mod:`sichuan_agents.search`: the ``search`` agent, its candidates, sampler, play-outs and
  hidden-hands network;
- :mod:`sichuan_agents.training`: the training pipelines and the networks they train;
- the commands: :mod:`sichuan_agents.arena` (duplicate matches), :mod:`sichuan_agents.ladder`
(every pair,
  one rating each), :mod:`sichuan_agents.tournament` (every bot against every other, a leaderboard),
  :mod:`sichuan_agents.review` (where each decision of a deal won or lost points).
"""

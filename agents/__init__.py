"""Agents for sichuan-env: the bots and model agents users name, and the commands that
evaluate them.

The interface (``Agent``, ``BaseAgent``, ``RandomAgent``, ``validate_agent``) and the
resolver by name (``make_agent``) live in :mod:`sichuan_env.agent`. Here, one folder per
part, and the commands at the top:

- :mod:`agents.bots`: the hand-written bots ``greedy`` and ``rules``;
- :mod:`agents.models`: trained models as agents (``fitted``, ``ppo``, ``boosted``,
  ``best``, ``rllib:PATH``) with the shipped model files and their cards;
- :mod:`agents.search`: the ``search`` agent, its candidates, sampler, play-outs and
  hidden-hands network;
- :mod:`agents.training`: the training pipelines and the networks they train;
- the commands: :mod:`agents.arena` (duplicate matches), :mod:`agents.ladder` (every pair,
  one rating each), :mod:`agents.tournament` (every bot against every other, a leaderboard),
  :mod:`agents.review` (where each decision of a deal won or lost points).
"""

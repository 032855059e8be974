"""Trained models as agents (``fitted``, ``ppo``, ``boosted``, ``best``, ``rllib:PATH``)
and the shipped model files with their cards (``*.json``) beside them."""

"""Training pipelines and the networks they train.

- :mod:`~agents.training.features`: the analysis planes a network reads beside the
  observation, and the VecEnv wrapper that adds them;
- :mod:`~agents.training.advice`: the adviser's planes (a bot's choice as input);
- :mod:`~agents.training.ppo_policy`: the SB3 policy and feature extractor;
- :mod:`~agents.training.oracle_critic`: the critic that reads the full state;
- :mod:`~agents.training.imitation`: behaviour cloning of a bot (the warm start);
- :mod:`~agents.training.rollout_teacher`, :mod:`~agents.training.distill`: rollout
  comparisons and the fit to them;
- :mod:`~agents.training.rllib_net`, :mod:`~agents.training.rllib_module`,
  :mod:`~agents.training.rllib_train`: the same network as an RLlib module and its trainer;
- :mod:`~agents.training.export_model`: model files for the package.

These modules may import the bots (:mod:`agents.bots.greedy`, :mod:`agents.bots.rules_bot`); the
agents that play a trained model (:mod:`agents.models.ppo`, :mod:`agents.models.rllib_agent`) import
the networks from here.
"""

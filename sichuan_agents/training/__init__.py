"""Training pipelines and the networks they train.

- :mod:`~sichuan_agents.training.features`: the analysis planes a network reads beside the
  observation, and the VecEnv wrapper that adds them;
- :mod:`~sichuan_agents.training.advice`: the adviser's planes (a bot's choice as input);
- :mod:`~sichuan_agents.training.ppo_policy`: the SB3 policy and feature extractor;
- :mod:`~sichuan_agents.training.oracle_critic`: the critic that reads the full state;
- :mod:`~sichuan_agents.training.imitation`: behaviour cloning of a bot (the warm start);
- :mod:`~sichuan_agents.training.rollout_teacher`, :mod:`~sichuan_agents.training.distill`: rollout
  comparisons and the fit to them;
- :mod:`~sichuan_agents.training.rllib_net`, :mod:`~sichuan_agents.training.rllib_module`,
  :mod:`~sichuan_agents.training.rllib_train`: the same network as an RLlib module and its trainer;
- :mod:`~sichuan_agents.training.export_model`: model files for the package.

These modules may import the bots (:mod:`sichuan_agents.bots.greedy`,
:mod:`sichuan_agents.bots.rules_bot`); the
agents that play a trained model (:mod:`sichuan_agents.models.ppo`,
:mod:`sichuan_agents.models.rllib_agent`) import
the networks from here.
"""

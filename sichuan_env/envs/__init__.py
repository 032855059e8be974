"""The environments: PettingZoo AEC (:mod:`~sichuan_env.envs.aec`), Gymnasium single-agent
(:mod:`~sichuan_env.envs.gym_env`), the Stable-Baselines3 VecEnv
(:mod:`~sichuan_env.envs.vector`, needs the ``train`` extra), RLlib's multi-agent envs
(:mod:`~sichuan_env.envs.rllib`, :mod:`~sichuan_env.envs.rllib_bulk`, need the ``rllib``
extra) and the batched rounds the envs play for the seats they drive
(:mod:`~sichuan_env.envs.random_rounds`). Imports the layers below, never the agents.
"""

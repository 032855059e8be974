"""Hidden information for the critic only: the oracle planes appended to a VecEnv's
observations.

A deal's points depend heavily on tiles no seat sees (the other hands, the wall's order),
so a value function that reads only the seat's own planes explains little of the return
and PPO's advantages are mostly noise. During training the critic may read everything:
:class:`OracleVecEnv` appends the hidden planes of
:func:`sichuan_env.seats.observation.encode_oracle`
(the other seats' standing and set-aside tiles, their forbidden suits, the wall's tiles) for
each slot's learner seat, and :class:`sichuan_agents.training.ppo_policy.OracleCriticPolicy` feeds
them to the critic's extractor alone. The actor never reads them, so the trained policy
acts from the seat's own observation (:class:`sichuan_agents.models.ppo.PPOAgent` passes zeros in
their place).
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from sichuan_agents.training.features import StatePlanesVecEnv
from sichuan_env.seats.observation import N_CHANNELS, N_ORACLE_CHANNELS, encode_oracle

#: Channels the oracle adds to a seat's planes.
N_HIDDEN_PLANES = N_ORACLE_CHANNELS - N_CHANNELS


class OracleVecEnv(StatePlanesVecEnv):
    """Appends each slot's hidden planes (``N_HIDDEN_PLANES`` channels) to the observations
    of ``venv`` (a :class:`sichuan_env.envs.vector.SichuanVecEnv`, possibly wrapped); terminal
    observations get zeros there. ``policy_planes``: the channels before them."""

    def __init__(self, venv: VecEnv) -> None:
        self.policy_planes = int(venv.observation_space.shape[0])
        super().__init__(venv, N_HIDDEN_PLANES)

    def planes_now(self) -> np.ndarray:
        """(num_envs, N_HIDDEN_PLANES, 27): what the learner seat of each slot cannot see."""
        base = self.venv.unwrapped
        oracle = encode_oracle(base.state, base.learner.astype(np.intp))
        return np.ascontiguousarray(oracle[:, N_CHANNELS:])

"""The network that reads the observation planes, for sb3-contrib's MaskablePPO.

The observation is ``(C, 27)``: C feature planes over the 27 tile kinds (see
:mod:`sichuan_env.observation`). :class:`TilePlanesExtractor` views it as C channels over
3 suits x 9 ranks and runs 2-D convolutions with kernel (1, 3): every filter looks at
neighbouring ranks of one suit (where sequences live) and the same weights serve all three
suits. A linear layer then mixes the suits and the broadcast scalar planes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn


class TilePlanesExtractor(BaseFeaturesExtractor):
    """(N, C, 27) planes -> (N, features_dim) features; ``planes``: read only the first
    ``planes`` channels (the rest are there for another extractor; default all)."""

    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 256,
                 channels: int = 64, planes: int | None = None) -> None:
        super().__init__(observation_space, features_dim)
        n_planes = int(observation_space.shape[0]) if planes is None else int(planes)
        self.planes = n_planes
        self.convs = nn.Sequential(
            nn.Conv2d(n_planes, channels, kernel_size=(1, 3), padding=(0, 1)),
            nn.ReLU(),
            nn.Conv2d(channels, channels, kernel_size=(1, 3), padding=(0, 1)),
            nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(channels * 27, features_dim),
                                  nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations[:, : self.planes].reshape(observations.shape[0], -1, 3, 9)
        return self.head(self.convs(x))


class OracleCriticPolicy(MaskableActorCriticPolicy):
    """Actor and critic with separate extractors: the actor reads the first
    ``policy_planes`` channels (what the seat sees), the critic every channel (the oracle
    planes of :class:`agents.training.oracle_critic.OracleVecEnv` appended: the other hands and
    the wall). The critic only shapes the advantages during training; acting never reads
    the hidden channels (they may be zeros)."""

    def __init__(self, *args: Any, policy_planes: int, **kwargs: Any) -> None:
        self.policy_planes = int(policy_planes)
        self._extractors_made = 0
        kwargs["share_features_extractor"] = False
        super().__init__(*args, **kwargs)

    def make_features_extractor(self) -> BaseFeaturesExtractor:
        # called twice by the base class: first the actor's extractor, then the critic's
        first = self._extractors_made == 0
        self._extractors_made += 1
        kwargs = dict(self.features_extractor_kwargs)
        kwargs["planes"] = self.policy_planes if first else None
        return self.features_extractor_class(self.observation_space, **kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["policy_planes"] = self.policy_planes
        return data


def policy_kwargs(features_dim: int = 256, channels: int = 64,
                  policy_planes: int | None = None) -> dict[str, Any]:
    """``policy_kwargs`` for ``MaskablePPO("MlpPolicy", env, policy_kwargs=...)``; with
    ``policy_planes``, for ``MaskablePPO(OracleCriticPolicy, ...)`` (the critic reads the
    channels after the first ``policy_planes`` too)."""
    if policy_planes is not None:
        return {
            "features_extractor_class": TilePlanesExtractor,
            "features_extractor_kwargs": {"features_dim": features_dim, "channels": channels},
            "net_arch": {"pi": [128], "vf": [128]},
            "policy_planes": policy_planes,
        }
    return {
        "features_extractor_class": TilePlanesExtractor,
        "features_extractor_kwargs": {"features_dim": features_dim, "channels": channels},
        "net_arch": {"pi": [128], "vf": [128]},
        "share_features_extractor": True,
    }


#: Where this module lived before the training code moved into ``agents.training``: model
#: files saved then name their policy and extractor classes by that path.
_FORMER_MODULE = "agents.ppo_policy"


def load_model(path: str | Path, cls: Any = None, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, **kwargs)`` (or ``cls.load``, a subclass of it), also for
    model files that name this module by its former path (``agents.ppo_policy``, the
    shipped models among them)."""
    import sys

    from sb3_contrib import MaskablePPO

    added = _FORMER_MODULE not in sys.modules
    if added:
        sys.modules[_FORMER_MODULE] = sys.modules[__name__]
    try:
        return (cls or MaskablePPO).load(str(path), **kwargs)
    finally:
        if added:
            del sys.modules[_FORMER_MODULE]

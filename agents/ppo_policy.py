"""The network that reads the observation planes, for sb3-contrib's MaskablePPO.

The observation is ``(C, 27)``: C feature planes over the 27 tile kinds (see
:mod:`sichuan_env.observation`). :class:`TilePlanesExtractor` views it as C channels over
3 suits x 9 ranks and runs 2-D convolutions with kernel (1, 3): every filter looks at
neighbouring ranks of one suit (where sequences live) and the same weights serve all three
suits. A linear layer then mixes the suits and the broadcast scalar planes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn


class TilePlanesExtractor(BaseFeaturesExtractor):
    """(N, C, 27) planes -> (N, features_dim) features."""

    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 256,
                 channels: int = 64) -> None:
        super().__init__(observation_space, features_dim)
        n_planes = int(observation_space.shape[0])
        self.convs = nn.Sequential(
            nn.Conv2d(n_planes, channels, kernel_size=(1, 3), padding=(0, 1)),
            nn.ReLU(),
            nn.Conv2d(channels, channels, kernel_size=(1, 3), padding=(0, 1)),
            nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(channels * 27, features_dim),
                                  nn.ReLU())

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.reshape(observations.shape[0], -1, 3, 9)
        return self.head(self.convs(x))


def policy_kwargs(features_dim: int = 256, channels: int = 64) -> dict[str, Any]:
    """``policy_kwargs`` for ``MaskablePPO("MlpPolicy", env, policy_kwargs=...)``."""
    return {
        "features_extractor_class": TilePlanesExtractor,
        "features_extractor_kwargs": {"features_dim": features_dim, "channels": channels},
        "net_arch": {"pi": [128], "vf": [128]},
        "share_features_extractor": True,
    }

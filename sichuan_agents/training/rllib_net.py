"""The SB3 PPO policy's network as a plain torch module, shared by the RLlib RLModule
(:mod:`sichuan_agents.training.rllib_module`) and the ``rllib:PATH`` agent
(:mod:`sichuan_agents.models.rllib_agent`).

Same layers, names and initialisation as ``MaskablePPO("MlpPolicy", ...,
policy_kwargs=sichuan_agents.training.ppo_policy.policy_kwargs())``: the
:class:`~sichuan_agents.training.ppo_policy.TilePlanesExtractor` (convolutions over ranks shared
by the three suits), then separate ``pi`` and ``vf`` hidden layers of 128 (tanh), the
action logits and the value. So a state dict moves between the two unchanged
(:func:`from_sb3_state`, :func:`to_sb3_state`); SB3's ``pi_features_extractor`` and
``vf_features_extractor`` entries are aliases of its shared ``features_extractor``.
Illegal actions get logit ``MASKED_LOGIT``, as sb3-contrib's masked categorical does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from sichuan_agents.training.ppo_policy import TilePlanesExtractor
from sichuan_env.core.actions import N_ACTIONS

MASKED_LOGIT = -1e8
_SB3_ALIASES = ("pi_features_extractor.", "vf_features_extractor.")


class _MlpExtractor(nn.Module):
    def __init__(self, features_dim: int, hidden: int) -> None:
        super().__init__()
        self.policy_net = nn.Sequential(nn.Linear(features_dim, hidden), nn.Tanh())
        self.value_net = nn.Sequential(nn.Linear(features_dim, hidden), nn.Tanh())


class TilePlanesNet(nn.Module):
    """(N, n_planes, 27) planes -> masked action logits (N, 88) and values (N,)."""

    def __init__(self, n_planes: int, features_dim: int = 256, channels: int = 64,
                 hidden: int = 128) -> None:
        super().__init__()
        self.config = {"n_planes": int(n_planes), "features_dim": int(features_dim),
                       "channels": int(channels), "hidden": int(hidden)}
        space = spaces.Box(-np.inf, np.inf, (int(n_planes), 27), np.float32)
        self.features_extractor = TilePlanesExtractor(space, features_dim, channels)
        self.mlp_extractor = _MlpExtractor(features_dim, hidden)
        self.action_net = nn.Linear(hidden, N_ACTIONS)
        self.value_net = nn.Linear(hidden, 1)
        # SB3's orthogonal initialisation (ActorCriticPolicy with ortho_init=True)
        for module, gain in ((self.features_extractor, math.sqrt(2)),
                             (self.mlp_extractor, math.sqrt(2)), (self.action_net, 0.01),
                             (self.value_net, 1.0)):
            for m in module.modules():
                if isinstance(m, nn.Linear | nn.Conv2d):
                    nn.init.orthogonal_(m.weight, gain=gain)
                    m.bias.data.fill_(0.0)

    def features(self, planes: torch.Tensor) -> torch.Tensor:
        return self.features_extractor(planes)

    def logits(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        raw = self.action_net(self.mlp_extractor.policy_net(features))
        return torch.where(mask > 0.5, raw, torch.full_like(raw, MASKED_LOGIT))

    def values(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(self.mlp_extractor.value_net(features)).squeeze(-1)


def from_sb3_state(sb3_state: dict[str, Any]) -> dict[str, Any]:
    """An SB3 MaskablePPO policy state dict -> a :class:`TilePlanesNet` state dict."""
    return {k: v for k, v in sb3_state.items() if not k.startswith(_SB3_ALIASES)}


def to_sb3_state(net_state: dict[str, Any]) -> dict[str, Any]:
    """A :class:`TilePlanesNet` state dict -> an SB3 MaskablePPO policy state dict."""
    out = dict(net_state)
    for k, v in net_state.items():
        if k.startswith("features_extractor."):
            rest = k[len("features_extractor."):]
            for alias in _SB3_ALIASES:
                out[alias + rest] = v
    return out


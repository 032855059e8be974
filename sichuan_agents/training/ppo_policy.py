"""The network that reads the observation planes, for sb3-contrib's MaskablePPO.

The observation is ``(C, 27)``: C feature planes over the 27 tile kinds (see
:mod:`sichuan_env.seats.observation`). :class:`TilePlanesExtractor` views it as C channels over
3 suits x 9 ranks and runs 2-D convolutions with kernel (1, 3): every filter looks at
neighbouring ranks of one suit (where sequences live) and the same weights serve all three
suits. A linear layer then mixes the suits and the broadcast scalar planes. ``channels``
(the convolutions' width, ``train.py --channels``) sets most of the network's cost: the
two convolutions are about three quarters of a forward and backward pass at 64.

:func:`network_precision` runs the extractors of a policy in bfloat16 (``torch.autocast``)
for the duration of a ``with`` block, e.g. training with ``train.py --precision bf16``: the
convolutions and the wide linear layer are most of the network's arithmetic, and CPUs with
AMX (and GPUs) do them about twice as fast in bfloat16. The heads stay in float32. Outside
the block (acting, evaluating, a loaded model) the network computes in float32.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

#: The convolutions' channels of a network built without saying (and of every model saved
#: before ``train.py --channels``): what a saved policy that names none was built with.
CHANNELS = 64


class TilePlanesExtractor(BaseFeaturesExtractor):
    """(N, C, 27) planes -> (N, features_dim) features through two (1, 3) convolutions of
    ``channels`` channels; ``planes``: read only the first ``planes`` channels (the rest
    are there for another extractor; default all).
    ``autocast_dtype`` (not saved; None: float32): compute in that dtype under
    ``torch.autocast``, features returned as float32 (see :func:`network_precision`)."""

    autocast_dtype: torch.dtype | None = None

    def __init__(self, observation_space: gym.spaces.Box, features_dim: int = 256,
                 channels: int = CHANNELS, planes: int | None = None) -> None:
        super().__init__(observation_space, features_dim)
        if int(channels) < 1:
            raise ValueError(f"channels must be >= 1, got {channels}")
        channels = int(channels)
        self.channels = channels
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
        if self.autocast_dtype is None:
            return self.head(self.convs(x))
        with torch.autocast(x.device.type, dtype=self.autocast_dtype):
            out = self.head(self.convs(x))
        return out.float()


PRECISIONS = {"fp32": None, "bf16": torch.bfloat16}


@contextmanager
def network_precision(module: nn.Module, precision: str) -> Iterator[None]:
    """Within the block, every :class:`TilePlanesExtractor` inside ``module`` (an SB3
    policy, a :class:`~sichuan_agents.training.rllib_net.TilePlanesNet`) computes in ``precision``
    (``fp32`` or ``bf16``); restored after."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
    extractors = [m for m in module.modules() if isinstance(m, TilePlanesExtractor)]
    before = [m.autocast_dtype for m in extractors]
    for m in extractors:
        m.autocast_dtype = PRECISIONS[precision]
    try:
        yield
    finally:
        for m, dtype in zip(extractors, before, strict=True):
            m.autocast_dtype = dtype


class OracleCriticPolicy(MaskableActorCriticPolicy):
    """Actor and critic with separate extractors: the actor reads the first
    ``policy_planes`` channels (what the seat sees), the critic every channel (the oracle
    planes of :class:`sichuan_agents.training.oracle_critic.OracleVecEnv` appended: the other hands
    and
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


def network_channels(module: nn.Module) -> int:
    """The convolutions' channels of the first :class:`TilePlanesExtractor` inside
    ``module`` (an SB3 policy, a :class:`~sichuan_agents.training.rllib_net.TilePlanesNet`)."""
    for m in module.modules():
        if isinstance(m, TilePlanesExtractor):
            return m.channels
    raise ValueError(f"{type(module).__name__} has no TilePlanesExtractor")


def policy_kwargs(features_dim: int = 256, channels: int = CHANNELS,
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


#: Where this module lived before: model files saved then name their policy and extractor
#: classes by that path (the shipped models by the first).
_FORMER_MODULES = ("agents.ppo_policy", "agents.training.ppo_policy")


def load_model(path: str | Path, cls: Any = None, **kwargs: Any) -> Any:
    """``MaskablePPO.load(path, **kwargs)`` (or ``cls.load``, a subclass of it), also for
    model files that name this module by a former path (:data:`_FORMER_MODULES`: the
    shipped models and files saved before the package was ``sichuan_agents``). The former
    names point at this module only while the file loads."""
    import sys
    import types

    from sb3_contrib import MaskablePPO

    added = []
    for former in _FORMER_MODULES:
        parts = former.split(".")
        for n in range(1, len(parts)):  # pickle imports the parent packages first
            parent = ".".join(parts[:n])
            if parent not in sys.modules:
                sys.modules[parent] = types.ModuleType(parent)
                added.append(parent)
        if former not in sys.modules:
            sys.modules[former] = sys.modules[__name__]
            added.append(former)
    try:
        return (cls or MaskablePPO).load(str(path), **kwargs)
    finally:
        for name in added:
            del sys.modules[name]

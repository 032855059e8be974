"""sichuan-env: Sichuan Bloody mahjong (xuezhan daodi) for reinforcement learning.

Heavy modules (engine tables, environments) load on first use so that
``import sichuan_env`` stays fast. Importing the package registers the single-agent
Gymnasium environment as :data:`GYM_ENV_ID` (``gymnasium.make("sichuan_env/Sichuan-v0")``,
keyword arguments as for :class:`sichuan_env.gym_env.SichuanSingleEnv`); the registration
names its class by import path, so nothing heavy is imported until ``make``.

It also registers the PettingZoo AEC environments in PettingZoo's own registry (1.27 and
later): ``pettingzoo.make("aec", "sichuan_env/Sichuan-v0")`` is :func:`env` and
``pettingzoo.make("aec", "sichuan_env/SichuanRaw-v0")`` is :func:`raw_env`, with the same
keyword arguments (``rules``, ``render_mode``).
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium

from sichuan_env.rules import PRESETS, Rules, get_rules

__version__ = "0.1.0"

__all__ = ["AEC_ENV_ID", "AEC_RAW_ENV_ID", "GYM_ENV_ID", "PRESETS", "Rules", "get_rules", "env",
           "raw_env", "__version__"]

GYM_ENV_ID = "sichuan_env/Sichuan-v0"
"""The Gymnasium id of :class:`sichuan_env.gym_env.SichuanSingleEnv`."""

if GYM_ENV_ID not in gymnasium.registry:  # a reload must not register it twice
    gymnasium.register(id=GYM_ENV_ID, entry_point="sichuan_env.gym_env:SichuanSingleEnv")

AEC_ENV_ID = "sichuan_env/Sichuan-v0"
"""PettingZoo's registry id of :func:`env` (the checked AEC env)."""
AEC_RAW_ENV_ID = "sichuan_env/SichuanRaw-v0"
"""PettingZoo's registry id of :func:`raw_env` (no wrappers)."""


def _register_with_pettingzoo() -> None:
    """Register both AEC envs by import path (PettingZoo older than 1.27 has no registry)."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError:
        return
    for env_id, entry_point in ((AEC_ENV_ID, "sichuan_env.aec:env"),
                                (AEC_RAW_ENV_ID, "sichuan_env.aec:raw_env")):
        if env_id not in aec_registry:  # a reload must not register it twice
            register("aec", env_id, entry_point=entry_point)


_register_with_pettingzoo()

_LAZY = {"env": "sichuan_env.aec", "raw_env": "sichuan_env.aec"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sichuan_env' has no attribute {name!r}")

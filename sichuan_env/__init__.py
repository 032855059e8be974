"""sichuan-env: Sichuan Bloody mahjong (xuezhan daodi) for reinforcement learning.

Heavy modules (engine tables, environments) load on first use so that
``import sichuan_env`` stays fast. Importing the package registers the single-agent
Gymnasium environment as :data:`GYM_ENV_ID` (``gymnasium.make("sichuan_env/Sichuan-v0")``,
keyword arguments as for :class:`sichuan_env.envs.gym_env.SichuanSingleEnv`); the registration
names its class by import path, so nothing heavy is imported until ``make``.

It also registers the PettingZoo AEC environments in PettingZoo's own registry (1.27 and
later): ``pettingzoo.make("aec", "sichuan_env/Sichuan-v0")`` is :func:`env` and
``pettingzoo.make("aec", "sichuan_env/SichuanRaw-v0")`` is :func:`raw_env`, with the same
keyword arguments (``rules``, ``render_mode``).

The package is five floors, each importing only those below it: :mod:`sichuan_env.core`
(the rule engine), :mod:`sichuan_env.seats` (what a seat sees, agents, bots in other
processes), :mod:`sichuan_env.records` (records, pictures, the viewer),
:mod:`sichuan_env.envs` (AEC, Gymnasium, VecEnv, RLlib) and :mod:`sichuan_env.play`
(terminal and browser play). The names users start from are importable from here too
(:data:`PUBLIC`): ``env``, ``raw_env``, ``hands``, ``engine``, ``Game``, ``SichuanSingleEnv``,
``SichuanVecEnv``, ``SichuanMultiAgentEnv``, ``SichuanVectorEnv``, ``SichuanEnvRunner``,
``make_agent``, ``BaseAgent``, ``RandomAgent``, each loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium

from sichuan_env.core.rules import PRESETS, Rules, get_rules

__version__ = "0.1.0"

# name -> the module that defines it (a module's own name: the module itself)
PUBLIC = {
    "env": "sichuan_env.envs.aec",
    "raw_env": "sichuan_env.envs.aec",
    "hands": "sichuan_env.core.hands",
    "engine": "sichuan_env.core.engine",
    "Game": "sichuan_env.records.game",
    "SichuanSingleEnv": "sichuan_env.envs.gym_env",
    "SichuanVecEnv": "sichuan_env.envs.vector",
    "SichuanMultiAgentEnv": "sichuan_env.envs.rllib",
    "SichuanVectorEnv": "sichuan_env.envs.rllib",
    "SichuanEnvRunner": "sichuan_env.envs.rllib",
    "make_agent": "sichuan_env.seats.agent",
    "BaseAgent": "sichuan_env.seats.agent",
    "RandomAgent": "sichuan_env.seats.agent",
}

__all__ = ["AEC_ENV_ID", "AEC_RAW_ENV_ID", "GYM_ENV_ID", "PRESETS", "PUBLIC", "Rules",
           "get_rules", "__version__", *PUBLIC]

GYM_ENV_ID = "sichuan_env/Sichuan-v0"
"""The Gymnasium id of :class:`sichuan_env.envs.gym_env.SichuanSingleEnv`."""

if GYM_ENV_ID not in gymnasium.registry:  # a reload must not register it twice
    gymnasium.register(id=GYM_ENV_ID, entry_point="sichuan_env.envs.gym_env:SichuanSingleEnv")

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
    for env_id, entry_point in ((AEC_ENV_ID, "sichuan_env.envs.aec:env"),
                                (AEC_RAW_ENV_ID, "sichuan_env.envs.aec:raw_env")):
        if env_id not in aec_registry:  # a reload must not register it twice
            register("aec", env_id, entry_point=entry_point)


_register_with_pettingzoo()



def __getattr__(name: str) -> Any:
    if name in PUBLIC:
        module = importlib.import_module(PUBLIC[name])
        return module if module.__name__.rpartition(".")[2] == name else getattr(module, name)
    raise AttributeError(f"module 'sichuan_env' has no attribute {name!r}")

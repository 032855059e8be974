"""sichuan-env: Sichuan Bloody mahjong (xuezhan daodi) for reinforcement learning.

Heavy modules (engine tables, environments) load on first use so that
``import sichuan_env`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from sichuan_env.rules import PRESETS, Rules, get_rules

__version__ = "0.1.0"

__all__ = ["PRESETS", "Rules", "get_rules", "env", "raw_env", "__version__"]

_LAZY = {"env": "sichuan_env.aec", "raw_env": "sichuan_env.aec"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sichuan_env' has no attribute {name!r}")

"""Compiled kernels: numba set up once for the whole package.

Every compiled function of the package is declared with :func:`njit` from here, which is
``numba.njit`` with ``cache=True`` and the compiled code stored in the user cache folder
(``$SICHUAN_ENV_CACHE/numba`` or ``~/.cache/sichuan_env/numba``), never beside the
sources: an installed package may sit in a read-only site-packages. A ``NUMBA_CACHE_DIR``
set by the user wins. The first use of a kernel compiles it (seconds); later processes
load it from the cache.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numba

from sichuan_env.tables import cache_dir

__all__ = ["njit", "numba_cache_dir", "prange"]

prange = numba.prange


def numba_cache_dir() -> str:
    """Folder of the compiled-code cache (created on first use by numba)."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(cache_dir() / "numba")


# numba reads NUMBA_CACHE_DIR when it is first imported; setting its config here also works
# when numba was imported earlier, because each function's cache locator is chosen when the
# function is declared.
numba.config.CACHE_DIR = numba_cache_dir()


def njit(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``numba.njit`` with ``cache=True``: ``@njit`` or ``@njit(parallel=True, ...)``."""
    options.setdefault("cache", True)
    if func is None:
        return numba.njit(**options)
    return numba.njit(**options)(func)

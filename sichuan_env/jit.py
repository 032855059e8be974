"""Compiled kernels: numba set up once for the whole package.

Every compiled function of the package is declared with :func:`njit` from here, which is
``numba.njit`` with ``cache=True`` and the compiled code stored in the user cache folder
(``$SICHUAN_ENV_CACHE/numba`` or ``~/.cache/sichuan_env/numba``), never beside the
sources: an installed package may sit in a read-only site-packages. A ``NUMBA_CACHE_DIR``
set by the user wins. The first use of a kernel compiles it (seconds); later processes
load it from the cache.

The compiled code of each package folder goes into a subfolder named by a fingerprint of
that folder's sources (:func:`source_fingerprint`): numba's cache index pickles the types
of a kernel's arguments, and an index written by another version of the sources may name a
type that no longer exists -- numba then fails while reading it instead of recompiling.
With the fingerprint, code from one version of the sources never meets another's (an
upgrade or an edit simply compiles once).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba

from sichuan_env.tables import cache_dir

__all__ = ["many_threads", "njit", "numba_cache_dir", "prange", "source_fingerprint"]

prange = numba.prange


def numba_cache_dir() -> str:
    """Folder of the compiled-code cache (created on first use by numba)."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(cache_dir() / "numba")


# numba reads NUMBA_CACHE_DIR when it is first imported; setting its config here also works
# when numba was imported earlier, because each function's cache locator is chosen when the
# function is declared.
numba.config.CACHE_DIR = numba_cache_dir()


_FINGERPRINTS: dict[Path, str] = {}


def source_fingerprint(folder: str | Path) -> str:
    """16 hex digits of a hash of the ``.py`` files in ``folder`` (names and contents);
    computed once per folder and process."""
    folder = Path(folder).resolve()
    if folder not in _FINGERPRINTS:
        h = hashlib.sha256()
        for path in sorted(folder.glob("*.py")):
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        _FINGERPRINTS[folder] = h.hexdigest()[:16]
    return _FINGERPRINTS[folder]


def many_threads() -> bool:
    """Whether the calling thread may run numba's parallel kernels on more than two threads
    (``numba.get_num_threads()``, which a process such as an env runner given one CPU
    lowers with ``numba.set_num_threads``)."""
    return numba.get_num_threads() > 2


def kernel_cache_dir(func: Callable[..., Any]) -> str:
    """Where the compiled code of ``func`` is cached: the cache folder, then the name and
    source fingerprint of the folder its module lives in."""
    code = getattr(func, "__code__", None)
    if code is None:
        return numba_cache_dir()
    folder = Path(code.co_filename).resolve().parent
    return os.path.join(numba_cache_dir(), f"{folder.name}-{source_fingerprint(folder)}")


def njit(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``numba.njit`` with ``cache=True``: ``@njit`` or ``@njit(parallel=True, ...)``."""
    options.setdefault("cache", True)

    def compiled(f: Callable[..., Any]) -> Any:
        if not options["cache"]:
            return numba.njit(**options)(f)
        # the cache locator reads the folder when the kernel is made
        numba.config.CACHE_DIR = kernel_cache_dir(f)
        try:
            return numba.njit(**options)(f)
        finally:
            numba.config.CACHE_DIR = numba_cache_dir()

    return compiled if func is None else compiled(func)

"""Compiled kernels: numba set up once for the whole package.

Every compiled function of the package is declared with :func:`njit` from here, which is
``numba.njit`` with ``cache=True`` and the compiled code stored in the user cache folder
(``$SICHUAN_ENV_CACHE/numba`` or ``~/.cache/sichuan_env/numba``), never beside the
sources: an installed package may sit in a read-only site-packages. A ``NUMBA_CACHE_DIR``
set by the user wins. The first use of a kernel compiles it (seconds); later processes
load it from the cache.

The compiled code of the package goes into one subfolder named by a fingerprint of all the
package's sources, subfolders included (:func:`source_fingerprint`): numba's cache index
pickles the types of a kernel's arguments, and an index written by another version of the
sources may name a type that no longer exists -- numba then fails while reading it instead
of recompiling; and a kernel calls kernels of other modules (a seat's observation kernel
calls the engine's), whose edits numba's own cache check does not see. With the
fingerprint, code from one version of the sources never meets another's (an upgrade or an
edit simply compiles once). A kernel outside the package (the agents' bots) is cached under
its own folder's name, fingerprinted by that folder's sources and the package's.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba

from sichuan_env.core.tables import cache_dir

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


PACKAGE = Path(__file__).resolve().parents[1]
"""The package folder (``sichuan_env/``): its kernels share one cache folder."""


def source_fingerprint(folder: str | Path) -> str:
    """16 hex digits of a hash of the ``.py`` files in ``folder`` and its subfolders
    (paths relative to ``folder``, and contents); computed once per folder and process."""
    folder = Path(folder).resolve()
    if folder not in _FINGERPRINTS:
        h = hashlib.sha256()
        for path in sorted(folder.rglob("*.py")):
            name = path.relative_to(folder).as_posix()
            h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
        _FINGERPRINTS[folder] = h.hexdigest()[:16]
    return _FINGERPRINTS[folder]


def many_threads() -> bool:
    """Whether the calling thread may run numba's parallel kernels on more than two threads
    (``numba.get_num_threads()``, which a process such as an env runner given one CPU
    lowers with ``numba.set_num_threads``)."""
    return numba.get_num_threads() > 2


def kernel_cache_dir(func: Callable[..., Any]) -> str:
    """Where the compiled code of ``func`` is cached: the cache folder, then
    ``sichuan_env-FINGERPRINT`` for a kernel of the package, else the name of the folder its
    module lives in and a fingerprint of that folder's sources and the package's."""
    code = getattr(func, "__code__", None)
    if code is None:
        return numba_cache_dir()
    folder = Path(code.co_filename).resolve().parent
    if folder.is_relative_to(PACKAGE):
        return os.path.join(numba_cache_dir(), f"{PACKAGE.name}-{source_fingerprint(PACKAGE)}")
    both = source_fingerprint(folder) + source_fingerprint(PACKAGE)
    key = hashlib.sha256(both.encode()).hexdigest()[:16]
    return os.path.join(numba_cache_dir(), f"{folder.name}-{key}")


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

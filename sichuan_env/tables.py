"""Per-suit lookup tables for hand facts, built with numpy and cached on disk.

A suit's nine counts ``h[0..8]`` (each 0..4) are coded in base 5:
``code = sum(h[r] * 5**r)``, so there are ``5**9 = 1_953_125`` codes. For every code the
tables hold:

========== ======== ==================================================================
name       dtype    meaning
========== ======== ==================================================================
``flags``  uint8    bit 0 (``is_sets``): the tiles split into sets only (pungs and
                    chows; the empty suit counts); bit 1 (``is_sets_pair``): into sets
                    and exactly one pair; bit 2: every count is even; bit 3: exactly
                    one count is odd
``packed`` uint32   bits 0-8: ``wait_into_sets`` (bit r set when adding one tile of
                    rank r+1 gives a sets-only suit); bits 9-17: ``wait_into_sets_pair``
                    (the same into sets + one pair); bits 18-19: flag bits 0-1;
                    bits 20-28: the ranks held an odd number of times
``best``   uint8    shape (5**9, 12); column ``2*m + p``: the largest number of this
                    suit's tiles that ``m`` set blocks (pung or chow shapes, each
                    possibly only partly held) plus ``p`` pair blocks can cover
                    (m in 0..4, p in 0..1) -- the building block of shanten; column
                    10: pairs held (sum of count // 2); column 11: ranks held an odd
                    number of times (both for seven pairs)
========== ======== ==================================================================

``best`` comes from a vectorised dynamic programme over all codes:
``f[m][0](h) = max over set blocks b of matched(b, h) + f[m-1][0](h - matched)`` and
``f[m][1](h) = max over pair blocks b of matched(b, h) + f[m][0](h - matched)``, where a
block always takes as many of its tiles as the suit holds (an exchange argument shows
that this greedy matching loses nothing). The complete-suit flags follow from it: a suit
with ``3k`` tiles splits into sets exactly when ``f[k][0] == 3k`` (k <= 4), one with
``3k + 2`` tiles into sets and a pair when ``f[k][1] == 3k + 2``.

The tables are built on first use (about two seconds) and cached as an ``.npz`` file in
``$SICHUAN_ENV_CACHE`` or else ``~/.cache/sichuan_env``; the file name carries
:data:`TABLE_VERSION`, so a changed builder never reads a stale file. Rebuild by hand
with ``python -m sichuan_env.tables --rebuild``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

TABLE_VERSION = 1
N_CODES = 5**9
MAX_SET_BLOCKS = 4
POW5 = 5 ** np.arange(9, dtype=np.int64)

_ARRAYS = ("flags", "packed", "best")
_cache: dict[str, np.ndarray] | None = None


def cache_dir() -> Path:
    """Directory of the cached tables: ``$SICHUAN_ENV_CACHE`` or ``~/.cache/sichuan_env``."""
    env = os.environ.get("SICHUAN_ENV_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "sichuan_env"


def cache_path() -> Path:
    """Path of the cache file for the current :data:`TABLE_VERSION`."""
    return cache_dir() / f"suit_tables_v{TABLE_VERSION}.npz"


def code_of(counts: np.ndarray | list[int]) -> int:
    """Base-5 code of one suit's nine counts."""
    h = np.asarray(counts, dtype=np.int64)
    if h.shape != (9,):
        raise ValueError(f"a suit has nine counts, got shape {h.shape}")
    return int(h @ POW5)


def _set_blocks() -> list[dict[int, int]]:
    pungs = [{r: 3} for r in range(9)]
    chows = [{r: 1, r + 1: 1, r + 2: 1} for r in range(7)]
    return pungs + chows


def _pair_blocks() -> list[dict[int, int]]:
    return [{r: 2} for r in range(9)]


def _relax(f_prev: np.ndarray, digits: np.ndarray, codes: np.ndarray, blocks) -> np.ndarray:
    """max over blocks of (tiles the block matches) + f_prev(code with them removed)."""
    out = np.zeros_like(f_prev)
    for block in blocks:
        matched = np.zeros(codes.shape, dtype=np.uint8)
        rest = codes.copy()
        for r, need in block.items():
            take = np.minimum(digits[r], need)
            matched += take
            rest -= take.astype(np.int32) * int(POW5[r])
        np.maximum(out, matched + f_prev[rest], out=out)
    return out


def build_tables() -> dict[str, np.ndarray]:
    """Compute all tables from scratch (vectorised; no loop over codes)."""
    codes = np.arange(N_CODES, dtype=np.int32)
    digits = np.empty((9, N_CODES), dtype=np.uint8)
    rem = codes.copy()
    for r in range(9):
        digits[r] = rem % 5
        rem //= 5
    total = digits.sum(axis=0, dtype=np.int16)

    f0 = [np.zeros(N_CODES, dtype=np.uint8)]  # f[m][0]
    for _ in range(MAX_SET_BLOCKS):
        f0.append(_relax(f0[-1], digits, codes, _set_blocks()))
    f1 = [_relax(f, digits, codes, _pair_blocks()) for f in f0]  # f[m][1]

    odd = digits & 1
    n_odd = odd.sum(axis=0, dtype=np.uint8)
    best = np.empty((N_CODES, 2 * (MAX_SET_BLOCKS + 1) + 2), dtype=np.uint8)
    for m in range(MAX_SET_BLOCKS + 1):
        best[:, 2 * m] = f0[m]
        best[:, 2 * m + 1] = f1[m]
    best[:, -2] = (digits >> 1).sum(axis=0, dtype=np.uint8)
    best[:, -1] = n_odd

    is_sets = np.zeros(N_CODES, dtype=bool)
    is_sets_pair = np.zeros(N_CODES, dtype=bool)
    for k in range(MAX_SET_BLOCKS + 1):
        is_sets |= (total == 3 * k) & (f0[k] == 3 * k)
        is_sets_pair |= (total == 3 * k + 2) & (f1[k] == 3 * k + 2)

    wait_sets = np.zeros(N_CODES, dtype=np.uint32)
    wait_sets_pair = np.zeros(N_CODES, dtype=np.uint32)
    for r in range(9):
        room = digits[r] < 4
        target = np.where(room, codes + int(POW5[r]), 0)
        wait_sets |= (room & is_sets[target]).astype(np.uint32) << r
        wait_sets_pair |= (room & is_sets_pair[target]).astype(np.uint32) << r

    odd_mask = np.zeros(N_CODES, dtype=np.uint32)
    for r in range(9):
        odd_mask |= odd[r].astype(np.uint32) << r
    flags = (
        is_sets.astype(np.uint8)
        | (is_sets_pair.astype(np.uint8) << 1)
        | ((n_odd == 0).astype(np.uint8) << 2)
        | ((n_odd == 1).astype(np.uint8) << 3)
    )
    packed = (
        wait_sets
        | (wait_sets_pair << 9)
        | ((flags & 3).astype(np.uint32) << 18)
        | (odd_mask << 20)
    )
    return {"flags": flags, "packed": packed, "best": best}


def _save(tables: dict[str, np.ndarray], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".tmp.npz", dir=path.parent)
    os.close(fd)
    try:
        np.savez(tmp, version=np.int64(TABLE_VERSION), **tables)
        os.replace(tmp, path)  # atomic: concurrent readers see the old or the new file
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _read(path: Path) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path) as data:
            if int(data["version"]) != TABLE_VERSION:
                return None
            tables = {name: data[name] for name in _ARRAYS}
    except (OSError, KeyError, ValueError, EOFError):
        return None
    if tables["best"].shape != (N_CODES, 12) or tables["packed"].shape != (N_CODES,):
        return None
    return tables


def load_tables(rebuild: bool = False) -> dict[str, np.ndarray]:
    """The tables, from memory, the cache file, or built (and cached) now."""
    global _cache
    if _cache is not None and not rebuild:
        return _cache
    path = cache_path()
    tables = None if rebuild else _read(path)
    if tables is None:
        tables = build_tables()
        try:
            _save(tables, path)
        except OSError as exc:  # read-only home etc.: keep the tables in memory only
            warnings.warn(f"could not cache hand tables at {path}: {exc}", stacklevel=2)
    _cache = tables
    return tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sichuan_env.tables", description="Build or check the hand tables."
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild and rewrite the cache")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    tables = load_tables(rebuild=args.rebuild)
    dt = time.perf_counter() - t0
    size = sum(a.nbytes for a in tables.values()) / 2**20
    action = "built" if args.rebuild else "loaded (or built)"
    print(f"{action} hand tables v{TABLE_VERSION} in {dt:.2f} s: {cache_path()} ({size:.1f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

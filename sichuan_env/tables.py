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

``best[:, 2*m + p]`` is exact under the four-copies limit: the largest ``sum(min(W, h))``
over every suit ``W`` made of m sets and p pairs with at most four of each rank. It comes
from a zeta transform over the 9-dimensional lattice of codes: mark the complete ``W``,
close the marks downwards (suffix OR along each digit axis), weigh each marked code by
its tile count and take prefix maxima along each axis. The complete-suit flags come from
enumerating every multiset of up to four of the 16 set shapes, with or without a pair.

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

TABLE_VERSION = 2
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


def _set_codes() -> np.ndarray:
    """Codes of the 16 set shapes of a suit: 9 pungs, 7 chows."""
    pungs = [3 * int(POW5[r]) for r in range(9)]
    chows = [int(POW5[r] + POW5[r + 1] + POW5[r + 2]) for r in range(7)]
    return np.array(pungs + chows, dtype=np.int64)


def complete_codes() -> dict[tuple[int, int], np.ndarray]:
    """(m, p) -> codes of every suit made of exactly m sets and p pairs (counts <= 4),
    m in 0..4, p in 0..1. Small (about 22,000 codes in all); computed in milliseconds."""
    sets = _set_codes()
    pairs = 2 * POW5
    out: dict[tuple[int, int], np.ndarray] = {(0, 0): np.zeros(1, dtype=np.int64)}
    for m in range(1, MAX_SET_BLOCKS + 1):
        out[(m, 0)] = _add_blocks(out[(m - 1, 0)], sets)
    for m in range(MAX_SET_BLOCKS + 1):
        out[(m, 1)] = _add_blocks(out[(m, 0)], pairs)
    return out


def _add_blocks(base: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """Distinct sums base + block whose digits all stay <= 4 (no carry in base 5)."""
    bd = (base[:, None] // POW5) % 5
    kd = (blocks[:, None] // POW5) % 5
    ok = ((bd[:, None, :] + kd[None, :, :]) <= 4).all(axis=2)
    return np.unique((base[:, None] + blocks[None])[ok])


def _max_cover(complete: np.ndarray) -> np.ndarray:
    """For every code h: max over W in ``complete`` of sum(min(W, h)).

    That is the largest h' <= h lying below some W: mark the W, close the marks
    downwards (suffix OR along each of the nine digit axes), weigh each mark by its tile
    count and take the prefix maximum along each axis (a zeta transform)."""
    shape = (5,) * 9
    down = np.zeros(N_CODES, dtype=bool)
    down[complete] = True
    down = down.reshape(shape)
    for axis in range(9):
        flipped = np.flip(down, axis=axis)
        down = np.flip(np.logical_or.accumulate(flipped, axis=axis), axis=axis)
    total = _TOTAL.reshape(shape)
    cover = np.where(down, total, 0).astype(np.uint8)
    for axis in range(9):
        cover = np.maximum.accumulate(cover, axis=axis)
    return np.ascontiguousarray(cover).reshape(N_CODES)


def _digits() -> np.ndarray:
    rem = np.arange(N_CODES, dtype=np.int32)
    digits = np.empty((9, N_CODES), dtype=np.uint8)
    for r in range(9):
        digits[r] = rem % 5
        rem //= 5
    return digits


_TOTAL: np.ndarray = np.zeros(0, dtype=np.uint8)


def build_tables() -> dict[str, np.ndarray]:
    """Compute all tables from scratch (vectorised; no loop over codes)."""
    global _TOTAL
    codes = np.arange(N_CODES, dtype=np.int32)
    digits = _digits()
    _TOTAL = digits.sum(axis=0, dtype=np.uint8)
    complete = complete_codes()

    is_sets = np.zeros(N_CODES, dtype=bool)
    is_sets_pair = np.zeros(N_CODES, dtype=bool)
    for m in range(MAX_SET_BLOCKS + 1):
        is_sets[complete[(m, 0)]] = True
        is_sets_pair[complete[(m, 1)]] = True

    odd = digits & 1
    n_odd = odd.sum(axis=0, dtype=np.uint8)
    best = np.empty((N_CODES, 2 * (MAX_SET_BLOCKS + 1) + 2), dtype=np.uint8)
    for m in range(MAX_SET_BLOCKS + 1):
        for p in range(2):
            best[:, 2 * m + p] = _max_cover(complete[(m, p)])
    best[:, -2] = (digits >> 1).sum(axis=0, dtype=np.uint8)
    best[:, -1] = n_odd
    _TOTAL = np.zeros(0, dtype=np.uint8)

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

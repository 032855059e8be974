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

Suits holding declared melds (a pung leaves one usable copy of its kind, a kong none) use
a second set of tables, described at :func:`build_meld_tables`: ``seg_best`` (the cover
table of every shortened suit segment, possibly overlapped by outside chows) and the
``pat_*`` / ``cfg_*`` arrays listing, for every pattern of melds in a suit, the ways of
splitting the suit at its meld kinds.

``best[:, 2*m + p]`` is exact under the four-copies limit: the largest ``sum(min(W, h))``
over every suit ``W`` made of m sets and p pairs with at most four of each rank. It comes
from a zeta transform over the 9-dimensional lattice of codes: mark the complete ``W``,
close the marks downwards (suffix OR along each digit axis), weigh each marked code by
its tile count and take prefix maxima along each axis. The complete-suit flags come from
enumerating every multiset of up to four of the 16 set shapes, with or without a pair.

The tables are built on first use (about four seconds) and cached as an ``.npz`` file in
``$SICHUAN_ENV_CACHE`` or else ``~/.cache/sichuan_env``; the file name carries
:data:`TABLE_VERSION`, so a changed builder never reads a stale file. Rebuild by hand
with ``python -m sichuan_env.core.tables --rebuild``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from itertools import combinations, product
from pathlib import Path

import numpy as np

TABLE_VERSION = 3
N_CODES = 5**9
MAX_SET_BLOCKS = 4
POW5 = 5 ** np.arange(9, dtype=np.int64)

_ARRAYS = (
    "flags", "packed", "best", "seg_best", "pat_start", "pat_count", "pat_nseg", "pat_div",
    "pat_mod", "cfg_base", "cfg_ext", "cfg_cover",
)
N_PATTERNS = 3**9
MAX_SEGMENTS = 5
SEG_COLUMNS = 8  # 2*m + p for m in 0..3 set blocks, p in 0..1 pairs
SEG_NONE = -64  # no arrangement exists
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
    return {"flags": flags, "packed": packed, "best": best, **build_meld_tables()}


# ------------------------------------------------------------- suits holding melds


def _segment_complete(length: int) -> dict[tuple[int, int], np.ndarray]:
    """(m, p) -> codes of every segment of ``length`` ranks (codes below ``5**length``)
    made of m sets and p pairs lying inside it, counts <= 4; m in 0..3, p in 0..1."""
    pungs = [3 * int(POW5[r]) for r in range(length)]
    chows = [int(POW5[r] + POW5[r + 1] + POW5[r + 2]) for r in range(length - 2)]
    sets = np.array(pungs + chows, dtype=np.int64)
    pairs = 2 * POW5[:length]
    out: dict[tuple[int, int], np.ndarray] = {(0, 0): np.zeros(1, dtype=np.int64)}
    for m in range(1, 4):
        out[(m, 0)] = _add_blocks(out[(m - 1, 0)], sets)
    for m in range(4):
        out[(m, 1)] = _add_blocks(out[(m, 0)], pairs)
    return out


def _lattice_cover(marks: np.ndarray, length: int) -> np.ndarray:
    """(5**length, K) marks -> (5**length, K) uint8: per code h and column, the largest
    tile count of a code h' <= h lying below some marked code (as :func:`_max_cover`)."""
    k = marks.shape[1]
    shape = (5,) * length
    down = marks.reshape(shape + (k,))
    for axis in range(length):
        flipped = np.flip(down, axis=axis)
        down = np.flip(np.logical_or.accumulate(flipped, axis=axis), axis=axis)
    rem = np.arange(5**length)
    total = np.zeros(5**length, dtype=np.uint8)
    for _ in range(length):
        total += (rem % 5).astype(np.uint8)
        rem //= 5
    cover = np.where(down, total.reshape(shape + (1,)), 0).astype(np.uint8)
    for axis in range(length):
        cover = np.maximum.accumulate(cover, axis=axis)
    return cover.reshape(5**length, k)


def _pattern_configs(t: tuple[int, ...]):
    """Segments and split configurations of a suit whose rank r holds a meld of code
    t[r] (0 none, 1 pung, 2 kong).

    A block of a target suit cannot use a kong kind (no copy left) and uses a pung kind
    only as one chow (one copy left). So the target is a set S of "outside" chows, each
    holding a pung kind, no two sharing one, plus blocks lying inside the segments (the
    maximal runs of ranks without a meld). Returns the segments [(first rank, length)]
    and, per S (|S| <= 4 - melds: more set blocks
    than that never go into this suit), ([E per segment], |S|, bit mask of the pung
    kinds S uses), E being the copies S puts on each rank of the segment."""
    capped = [r for r in range(9) if t[r]]
    pungs = {r for r in range(9) if t[r] == 1}
    kongs = {r for r in range(9) if t[r] == 2}
    chows = [
        s for s in range(7)
        if pungs & {s, s + 1, s + 2} and not kongs & {s, s + 1, s + 2}
    ]
    segments = []
    start = 0
    for r in capped + [9]:
        if r > start:
            segments.append((start, r - start))
        start = r + 1
    configs = []
    for size in range(min(3, 4 - len(capped)) + 1):
        for chosen in combinations(chows, size):
            used = [r for s in chosen for r in (s, s + 1, s + 2) if r in pungs]
            if len(used) != len(set(used)):
                continue
            extra = [0] * 9
            for s in chosen:
                for r in (s, s + 1, s + 2):
                    extra[r] += 1
            per_segment = [tuple(extra[a : a + n]) for a, n in segments]
            configs.append((per_segment, size, sum(1 << r for r in used)))
    return segments, configs


def build_meld_tables() -> dict[str, np.ndarray]:
    """Tables for the exact per-suit cover of suits holding melds.

    ``seg_best`` (rows, 8) int8: one block of rows per (segment length L, outside copies
    E) that occurs; row ``offset + code`` (code of the segment's L counts), column
    ``2*m + p``: the largest ``sum(min(W + E, h))`` over W made of m sets and p pairs
    inside the segment with ``W + E <= 4``, or :data:`SEG_NONE` when no such W exists.

    Per pattern id ``sum(t[r] * 3**r)`` (``t`` the meld codes of a suit, at most four
    melds): ``pat_nseg`` segments, segment i's code is ``code // pat_div[:, i] %
    pat_mod[:, i]``; its configurations are rows ``pat_start .. pat_start + pat_count``
    of ``cfg_base`` (row offset into ``seg_best`` per segment), ``cfg_ext`` (outside
    chows: set blocks) and ``cfg_cover`` (bit mask of the pung kinds they use: each
    covers the concealed copy of that kind, if held). The suit's cover for m set blocks
    is the max over configurations of the (max, +) convolution of the segment rows,
    shifted by ``cfg_ext`` set blocks, plus the covered pung kinds."""
    pat_start = np.zeros(N_PATTERNS, dtype=np.int32)
    pat_count = np.zeros(N_PATTERNS, dtype=np.int32)
    pat_nseg = np.zeros(N_PATTERNS, dtype=np.int8)
    pat_div = np.ones((N_PATTERNS, MAX_SEGMENTS), dtype=np.int32)
    pat_mod = np.ones((N_PATTERNS, MAX_SEGMENTS), dtype=np.int32)
    variants: dict[tuple[int, tuple[int, ...]], int] = {}
    cfg_rows: list[tuple[list[tuple[int, tuple[int, ...]]], int, int]] = []
    pow3 = 3 ** np.arange(9)
    for t in product(range(3), repeat=9):
        if not 0 < sum(x > 0 for x in t) <= 4:
            continue
        pid = int(np.dot(t, pow3))
        segments, configs = _pattern_configs(t)
        pat_start[pid] = len(cfg_rows)
        pat_count[pid] = len(configs)
        pat_nseg[pid] = len(segments)
        for i, (a, n) in enumerate(segments):
            pat_div[pid, i] = 5**a
            pat_mod[pid, i] = 5**n
        for per_segment, ext, cover in configs:
            keys = [(n, e) for (_, n), e in zip(segments, per_segment, strict=True)]
            for key in keys:
                variants.setdefault(key, 0)
            cfg_rows.append((keys, ext, cover))
    offset = 0
    for key in sorted(variants):
        variants[key] = offset
        offset += 5 ** key[0]
    seg_best = np.empty((offset, SEG_COLUMNS), dtype=np.int8)
    by_length: dict[int, dict] = {}
    for (n, e), off in variants.items():
        complete = by_length.setdefault(n, _segment_complete(n))
        e_code = np.array([int(np.dot(e, POW5[:n]))], dtype=np.int64)
        marks = np.zeros((5**n, SEG_COLUMNS), dtype=bool)
        empty = np.zeros(SEG_COLUMNS, dtype=bool)
        for m in range(4):
            for p in range(2):
                codes = _add_blocks(complete[(m, p)], e_code) if n else complete[(m, p)]
                marks[codes, 2 * m + p] = True
                empty[2 * m + p] = codes.size == 0
        block = _lattice_cover(marks, n).astype(np.int8)
        block[:, empty] = SEG_NONE
        seg_best[off : off + 5**n] = block
    cfg_base = np.zeros((len(cfg_rows), MAX_SEGMENTS), dtype=np.int32)
    cfg_ext = np.zeros(len(cfg_rows), dtype=np.int8)
    cfg_cover = np.zeros(len(cfg_rows), dtype=np.uint16)
    for j, (keys, ext, cover) in enumerate(cfg_rows):
        cfg_base[j, : len(keys)] = [variants[k] for k in keys]
        cfg_ext[j] = ext
        cfg_cover[j] = cover
    return {
        "seg_best": seg_best, "pat_start": pat_start, "pat_count": pat_count,
        "pat_nseg": pat_nseg, "pat_div": pat_div, "pat_mod": pat_mod,
        "cfg_base": cfg_base, "cfg_ext": cfg_ext, "cfg_cover": cfg_cover,
    }


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
    if tables["seg_best"].shape[1:] != (SEG_COLUMNS,) or tables["pat_div"].shape != (
        N_PATTERNS, MAX_SEGMENTS
    ):
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
        prog="python -m sichuan_env.core.tables", description="Build or check the hand tables."
    )
    parser.add_argument("--rebuild", action="store_true", help="rebuild and rewrite the cache")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = load_tables(rebuild=args.rebuild)
    dt = time.perf_counter() - t0
    not_cached = [w for w in caught if "could not cache hand tables" in str(w.message)]
    if not_cached:  # the tables work, but every new process would build them again
        print(f"error: {not_cached[0].message}; set SICHUAN_ENV_CACHE to a writable folder",
              file=sys.stderr)
        return 1
    size = sum(a.nbytes for a in tables.values()) / 2**20
    action = "built" if args.rebuild else "loaded (or built)"
    print(f"{action} hand tables v{TABLE_VERSION} in {dt:.2f} s: {cache_path()} ({size:.1f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Shuffling and dealing, vectorised over tables.

Each table holds a 64-bit key drawn once from ``np.random.SeedSequence(seed)``. The wall
of deal ``d`` of match ``e`` on that table is a pure function of ``(key, e, d)``: 108
hashed sort keys (splitmix64) whose argsort is a uniformly random permutation of the
tiles. So a table's deals never depend on the batch size or on other tables, and
re-dealing finished tables inside ``step`` needs no random generator.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sichuan_env.tiles import N_TILES

_U = np.uint64
_GOLDEN = _U(0x9E3779B97F4A7C15)
_M1 = _U(0xBF58476D1CE4E5B9)
_M2 = _U(0x94D049BB133111EB)


def _splitmix(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> _U(30))) * _M1
        z = (z ^ (z >> _U(27))) * _M2
        return z ^ (z >> _U(31))


def table_keys(seeds: Sequence[int] | np.ndarray) -> np.ndarray:
    """One uint64 key per table seed, through ``np.random.SeedSequence``."""
    return np.array(
        [np.random.SeedSequence(int(s)).generate_state(1, np.uint64)[0] for s in seeds],
        dtype=np.uint64,
    )


def shuffled_tiles(keys: np.ndarray, episode: np.ndarray, deal_index: np.ndarray) -> np.ndarray:
    """(n, 108) int8 tile kinds in shuffled order for each (key, episode, deal)."""
    with np.errstate(over="ignore"):
        salt = episode.astype(np.uint64) * _U(0x100000) + deal_index.astype(np.uint64)
        base = _splitmix(keys.astype(np.uint64) ^ _splitmix(salt))
        pos = np.arange(N_TILES, dtype=np.uint64) * _GOLDEN
        sort_keys = _splitmix(base[:, None] + pos[None, :])
    order = np.argsort(sort_keys, axis=1, kind="stable")
    return (order // 4).astype(np.int8)


def split_deal(tiles: np.ndarray, dealer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shuffled tiles -> hands (n, 4, 27) int8 counts and wall (n, 55) int8.

    Seat ``dealer + i`` gets tiles ``13 i .. 13 i + 12``; the dealer also gets tile 52;
    tiles 53.. form the wall in draw order.
    """
    n = tiles.shape[0]
    onehot = np.zeros((n, 53, 27), dtype=np.int8)
    np.put_along_axis(onehot, tiles[:, :53, None].astype(np.intp), 1, axis=2)
    by_offset = np.empty((n, 4, 27), dtype=np.int8)
    for i in range(4):  # four seats, not tables or tiles
        by_offset[:, i] = onehot[:, 13 * i : 13 * i + 13].sum(axis=1)
    by_offset[:, 0] += onehot[:, 52]
    seats = (dealer[:, None].astype(np.intp) + np.arange(4)) % 4
    hands = np.empty_like(by_offset)
    hands[np.arange(n)[:, None], seats] = by_offset
    return hands, tiles[:, 53:].copy()

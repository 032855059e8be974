"""Shuffling and dealing, vectorised over tables.

Each table holds a 64-bit key drawn once from ``np.random.SeedSequence(seed)``. The wall
of deal ``d`` of match ``e`` on that table is a pure function of ``(key, e, d)``: 108
hashed sort keys (splitmix64) whose argsort is a uniformly random permutation of the
tiles. So a table's deals never depend on the batch size or on other tables, and
re-dealing finished tables inside ``step`` needs no random generator. The hash and the
seed-to-key mapping live in :mod:`sichuan_env.seeding`.
"""

from __future__ import annotations

import numpy as np

from sichuan_env.seeding import GOLDEN as _GOLDEN
from sichuan_env.seeding import splitmix64 as _splitmix
from sichuan_env.seeding import table_keys
from sichuan_env.tiles import N_TILES

__all__ = ["table_keys", "shuffled_tiles", "split_deal"]

_U = np.uint64


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

"""Seeds: the one splitmix64 hash, and how each entry point turns its seed into deals.

Everything that is dealt starts from an **engine seed** (an integer in 0 .. 2**64 - 1,
one per table): ``engine.reset([s])``, ``Game.new(s)`` and a record's ``"seed"`` all deal
the same wall from the same ``s``. :func:`table_keys` turns engine seeds into the 64-bit
table keys the dealing hash reads. :func:`splitmix_word` is that hash, its one definition:
the compiled engine's deal compiles it, :func:`splitmix64` runs it over arrays. The
entry points map *their* seed to engine seeds as below; ``docs/seeding.md`` tells the
whole story with examples, and ``tests/test_seeding.py`` checks every line of it against
the entry points themselves.

==================  ================================================================
entry point         engine seed of its deals
==================  ================================================================
engine, Game        the seed itself
aec ``reset(seed)`` the seed itself; later ``reset()`` calls draw
                    :func:`drawn_seed` from ``default_rng(seed)``
gym ``reset(seed)`` :func:`drawn_seed` from the env's ``np_random`` (``default_rng(seed)``),
                    after the learner seat is drawn when it is ``"random"``
vector              table ``i`` of ``num_envs`` tables: :func:`vector_table_seeds`
arena               wall ``w``: :func:`arena_wall_seed`
selfplay            deal ``i``: :func:`selfplay_deal_seed`
==================  ================================================================

Agents built from specs for a set of seats (the arena, the envs' opponents, training
opponents, terminal play) are seeded by one formula, :func:`agent_seed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "GOLDEN", "splitmix_word", "splitmix64", "table_keys", "drawn_seed", "vector_table_seeds",
    "arena_wall_seed", "selfplay_deal_seed", "opponent_rng", "ARENA_SEED_STRIDE",
    "agent_seed", "AGENT_SALT_STRIDE",
]

_U = np.uint64
GOLDEN = _U(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, splitmix64's increment
_M1 = _U(0xBF58476D1CE4E5B9)
_M2 = _U(0x94D049BB133111EB)

#: Engine seeds of one arena run's walls are ``seed * ARENA_SEED_STRIDE + wall``.
ARENA_SEED_STRIDE = 10_000_000


def splitmix_word(x: Any) -> Any:
    """The splitmix64 finaliser of ``x + GOLDEN`` (uint64, wrapping): the output of a
    splitmix64 generator whose state was ``x``. Written once for both numpy (a uint64
    scalar or element-wise over a uint64 array; :func:`splitmix64` is the safe way to
    call it from Python) and numba (the engine compiles this same function for its
    deal)."""
    z = x + GOLDEN
    z = (z ^ (z >> _U(30))) * _M1
    z = (z ^ (z >> _U(27))) * _M2
    return z ^ (z >> _U(31))


def splitmix64(x: np.ndarray | int) -> np.ndarray:
    """:func:`splitmix_word` of ``x`` taken as uint64, element-wise (wrapping silently)."""
    with np.errstate(over="ignore"):
        return splitmix_word(np.asarray(x).astype(_U))


def table_keys(seeds: Sequence[int] | np.ndarray) -> np.ndarray:
    """One uint64 table key per engine seed, through ``np.random.SeedSequence``."""
    return np.array(
        [np.random.SeedSequence(int(s)).generate_state(1, np.uint64)[0] for s in seeds],
        dtype=np.uint64,
    )


def drawn_seed(rng: np.random.Generator) -> int:
    """An engine seed drawn from a generator (the Gymnasium env and later AEC resets)."""
    return int(rng.integers(0, 2**63 - 1))


def vector_table_seeds(seed: int, num_envs: int) -> np.ndarray:
    """(num_envs,) int64 engine seeds of a vector env's tables: the first ``num_envs``
    words of ``SeedSequence([seed, num_envs])``, halved to 63 bits. Table ``i`` keeps its
    seed whatever the shard size (but a different ``num_envs`` gives other deals)."""
    n = int(num_envs)
    words = np.random.SeedSequence([int(seed), n]).generate_state(n, np.uint64) >> _U(1)
    return words.astype(np.int64)


def arena_wall_seed(seed: int, wall: int) -> int:
    """Engine seed of wall ``wall`` of an arena run with ``seed``."""
    return int(seed) * ARENA_SEED_STRIDE + int(wall)


def selfplay_deal_seed(seed: int, i: int) -> int:
    """Engine seed of deal ``i`` of a self-play run with ``seed`` (63 bits)."""
    word = np.random.SeedSequence([int(seed), int(i)]).generate_state(1, np.uint64)[0]
    return int(word >> _U(1))


def opponent_rng(seed: int) -> np.random.Generator:
    """The generator of the default random opponents of the gym and vector envs reset
    with ``seed``."""
    return np.random.default_rng([int(seed), 1])


#: What worker ``w`` of a run split over processes adds to its agents' seeds, times ``w``.
AGENT_SALT_STRIDE = 7919


def agent_seed(seed: int | None, k: int, salt: int = 0) -> int | None:
    """Seed of the ``k``-th distinct agent (1, 2, ... in seat order) built for a run with
    ``seed``: ``seed * 101 + k + 7919 * salt`` (``salt``: the worker number of a run split
    over processes, else 0); None when ``seed`` is None."""
    if seed is None:
        return None
    return int(seed) * 101 + int(k) + AGENT_SALT_STRIDE * int(salt)

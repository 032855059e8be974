"""The compiled hand functions (the one implementation, sichuan_env.core.hand_kernels) agree
with the numpy reference of tests/support/reference_hands.py (complete?, waits, shanten, fans,
value, theoretical maximum) on random hands with melds and voids and on every
single-suit hand; one hand at a time and through the batched API of sichuan_env.core.hands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from sichuan_env.core import hand_kernels as hk
from sichuan_env.core import hands as hx

from support import reference_hands as rh

SITUATIONS = [(False, False, False, False), (True, False, False, True),
              (False, True, False, False), (False, False, True, False),
              (False, False, False, True)]


def _random_hand(rng: np.random.Generator, n_tiles: int):
    """Counts (27,) int8, engine meld codes (27,) int8 and a void suit: n_melds melds of
    distinct kinds and ``n_tiles - 3 * n_melds`` concealed tiles, at most four copies of a
    kind in all. Often drawn from few suits and kinds, so that complete hands occur."""
    n_melds = int(rng.integers(0, 5))
    suits = rng.choice(3, size=int(rng.integers(1, 4)), replace=False)
    kinds = np.concatenate([np.arange(9 * s, 9 * s + 9) for s in suits])
    meld = np.zeros(27, np.int8)
    used = np.zeros(27, np.int8)
    for k in rng.choice(kinds, size=n_melds, replace=False):
        meld[k] = rng.choice([1, 2, 3, 4, 5])
        used[k] = 3 if meld[k] == 1 else 4
    counts = np.zeros(27, np.int8)
    want = n_tiles - 3 * n_melds
    while counts.sum() < want:
        k = rng.choice(kinds)
        if counts[k] + used[k] < 4:
            counts[k] += 1
    void = int(rng.integers(-1, 3))
    if rng.random() < 0.7 and void >= 0:  # usually a void suit not in the hand
        free = [s for s in range(3) if s not in suits]
        void = free[0] if free else void
    return counts, meld, void


@settings(max_examples=30, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_one_hand_functions_equal_the_numpy_reference(seed):
    rng = np.random.default_rng(seed)
    tables = hk.hand_tables()
    fans = np.zeros(10, np.int32)
    waits = np.zeros(27, bool)
    for _ in range(40):
        # a standing hand: waits and theoretical maximum
        c, meld, void = _random_hand(rng, 13)
        mk = np.minimum(meld, 2)
        want_waits = rh.batch_wait_mask(c[None], mk[None], np.array([void], np.int8))[0]
        got_any = hk.wait_mask(tables, c, meld, void, waits)
        assert np.array_equal(waits, want_waits) and got_any == want_waits.any()
        want_max = rh.batch_theoretical_max(c[None], mk[None], np.array([void], np.int8), 4)
        assert hk.theoretical_max(tables, c, meld, void, 4, waits) == want_max[0]
        want_sh = rh.batch_shanten(c[None], mk[None], np.array([void], np.int8))[0]
        assert hk.shanten(hk.shanten_tables(), c, mk, void) == want_sh
        # the hand plus one tile (often a wait): complete?, fans, value
        own = c + np.where(meld == 1, 3, np.where(meld >= 2, 4, 0))
        room = np.flatnonzero(own < 4)  # at most four copies of a kind in all
        extra = int(rng.choice(np.flatnonzero(want_waits))) if want_waits.any() and \
            rng.random() < 0.8 else int(rng.choice(room))
        full = c.copy()
        full[extra] += 1
        n = int(np.count_nonzero(meld))
        want_complete = rh.batch_is_complete(full[None], np.array([n]),
                                             np.array([void], np.int8))[0]
        assert hk.is_complete(tables.flags3, tables.complete, c, extra, n, void) == want_complete
        assert hk.is_complete(tables.flags3, tables.complete, full, -1, n, void) == want_complete
        flags = SITUATIONS[int(rng.integers(0, len(SITUATIONS)))]
        one = np.ones(1, bool)
        want_fans = rh.batch_fans(full[None], mk[None], np.array([extra]),
                                  np.array([void], np.int8), one & flags[0], one & flags[0],
                                  one & flags[1], one & flags[2], one & flags[3])[0]
        total = hk.fans(c, extra, mk, flags[0], flags[1], flags[2], flags[3], fans)
        assert np.array_equal(fans, want_fans) and total == want_fans.sum()
        for cap in (3, 4):
            assert hk.value_of(total, cap) == rh.batch_value(want_fans[None], cap)[0]


@settings(max_examples=40, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_wait_bits_are_the_completing_kinds(seed):
    """Bit k of :func:`hk.wait_bits` == ``is_complete(hand + k)`` for every kind held fewer
    than four times, for standing hands (3n + 1 tiles) with melds, voids (held or not) and
    seven-pairs shapes; and the bits agree with ``wait_mask`` where a fifth copy exists."""
    rng = np.random.default_rng(seed)
    t = hk.hand_tables()
    waits = np.zeros(27, bool)
    for _ in range(60):
        c, meld, void = _random_hand(rng, 13)
        if rng.random() < 0.3 and meld.sum() == 0:  # pairs, for seven-pairs waits
            c = np.zeros(27, np.int8)
            kinds = rng.choice(27 if rng.random() < 0.5 else 9, size=7, replace=False)
            c[kinds] = 2
            c[kinds[0]] = 1
        n = int(np.count_nonzero(meld))
        bits = hk.wait_bits(t.packed, t.shift, t.mask, t.mask7, c, n, void)
        want = 0
        for k in range(27):
            if c[k] < 4 and hk.is_complete(t.flags3, t.complete, c, k, n, void):
                want |= 1 << k
        held4 = sum(1 << k for k in range(27) if c[k] >= 4)
        assert bits & ~held4 == want
        hk.wait_mask(t, c, meld, void, waits)
        assert sum(1 << k for k in range(27) if waits[k]) == bits & ~held4 & sum(
            1 << k for k in range(27) if c[k] + (3 if meld[k] == 1 else 4 if meld[k] else 0) < 4)


def test_flags_follow_from_packed():
    """Every suit code's flag bits, as ``wait_bits`` derives them from ``packed``."""
    t = hk.hand_tables()
    pk = t.packed.astype(np.int64)
    odd = (pk >> 20) & 0x1FF
    one_odd = (odd != 0) & (odd & (odd - 1) == 0)
    derived = ((pk >> 18) & 3) | np.where(odd == 0, 4, 0) | np.where(one_odd, 8, 0)
    np.testing.assert_array_equal(derived, t.flags3[: hk.N_CODES])
    for code in (0, 1, 2, 5**9 - 1, 123456, 1953124 // 3):
        assert hk.flags_of_packed(np.uint32(t.packed[code])) == t.flags3[code]


def _random_batch(rng: np.random.Generator, size: int, n_tiles: int):
    rows = [_random_hand(rng, n_tiles) for _ in range(size)]
    c = np.array([r[0] for r in rows], np.int8)
    mk = np.minimum(np.array([r[1] for r in rows], np.int8), 2)
    return c, mk, np.array([r[2] for r in rows], np.int8)


def _assert_batched_api_is_reference(c13, mk, v, c14):
    """Every batched function of sichuan_env.core.hands (the kernels over rows) on standing
    hands ``c13`` and the same hands plus a tile ``c14`` equals the numpy reference."""
    n = np.count_nonzero(mk, axis=1)
    np.testing.assert_array_equal(hx.batch_wait_mask(c13, mk, v), rh.batch_wait_mask(c13, mk, v))
    for c in (c13, c14):
        got = hx.batch_shanten(c, mk, v)
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, rh.batch_shanten(c, mk, v))
    for cap in (3, 4):
        got = hx.batch_theoretical_max(c13, mk, v, cap)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, rh.batch_theoretical_max(c13, mk, v, cap))
    done = hx.batch_is_complete(c14, n, v)
    np.testing.assert_array_equal(done, rh.batch_is_complete(c14, n, v))
    rows = np.flatnonzero(done)
    b = rows.size
    flags = [np.arange(b) % m == 0 for m in (2, 3, 5, 7, 11)]
    fans = hx.batch_fans(c14[rows], mk[rows], np.zeros(b, np.int64), v[rows], *flags)
    assert fans.dtype == np.int8 and fans.shape == (b, len(hx.FAN_NAMES))
    np.testing.assert_array_equal(
        fans, rh.batch_fans(c14[rows], mk[rows], np.zeros(b, np.int64), v[rows], *flags))
    for cap in (3, 4):
        np.testing.assert_array_equal(hx.batch_value(fans, cap), rh.batch_value(fans, cap))


@settings(max_examples=25, deadline=None)
@given(seed=hs.integers(0, 2**32 - 1))
def test_batched_api_equals_numpy_reference_on_random_hands(seed):
    rng = np.random.default_rng(seed)
    c13, mk, v = _random_batch(rng, 64, 13)
    own = c13 + np.array([0, 3, 4], np.int8)[mk]
    c14 = c13.copy()
    for i in range(c14.shape[0]):  # one more tile of a kind with a copy left (often a wait)
        waits = np.flatnonzero(rh.batch_wait_mask(c13[i:i + 1], mk[i:i + 1], v[i:i + 1])[0])
        room = np.flatnonzero(own[i] < 4)
        c14[i, rng.choice(waits) if waits.size and rng.random() < 0.7 else rng.choice(room)] += 1
    _assert_batched_api_is_reference(c13, mk, v, c14)


def _single_suit(n_tiles: int) -> np.ndarray:
    grid = np.array(np.meshgrid(*[np.arange(5, dtype=np.int8)] * 9, indexing="ij"))
    vs = grid.reshape(9, -1).T
    return vs[vs.sum(axis=1) == n_tiles]


def test_batched_api_equals_numpy_reference_on_every_single_suit_hand():
    """Every single-suit hand of 13 tiles (in suit p, void none, m or p), and each plus one
    tile of its suit."""
    v13 = _single_suit(13)
    c13 = np.zeros((v13.shape[0], 27), np.int8)
    c13[:, 9:18] = v13
    rng = np.random.default_rng(5)
    c14 = c13.copy()
    room = c14[:, 9:18] < 4
    pick = np.argmax(rng.random(room.shape) * room, axis=1)
    c14[np.arange(c14.shape[0]), 9 + pick] += 1
    mk = np.zeros_like(c13)
    for void in (-1, 0, 1):
        v = np.full(c13.shape[0], void, np.int8)
        _assert_batched_api_is_reference(c13, mk, v, c14)


def test_batched_api_checks_shapes():
    with pytest.raises(ValueError, match=r"concealed must have shape \(B, 27\)"):
        hx.batch_shanten(np.zeros(27, np.int8), np.zeros(27, np.int8), -1)
    with pytest.raises(ValueError, match=r"void must be a scalar or have shape \(2,\)"):
        hx.batch_wait_mask(np.zeros((2, 27)), np.zeros((2, 27)), np.zeros(3))
    one = np.zeros((1, 27), np.int8)
    one[0, :13] = 1
    assert hx.batch_shanten(one, np.zeros((1, 27)), -1).tolist() == \
        rh.batch_shanten(one, np.zeros((1, 27), np.int8), np.array([-1], np.int8)).tolist()

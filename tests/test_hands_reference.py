"""The fast hand functions (single-hand and batched) against the slow reference in
tests/support/reference.py: random hands with hypothesis, and every single-suit 14-tile hand."""

import itertools
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sichuan_env.core import hands, tiles
from sichuan_env.core.rules import get_rules

from support import reference as ref

RULES = {3: get_rules("mil"), 4: get_rules("mahjongsoft")}
FLAG_NAMES = ("self_drawn", "after_kong", "shoot_after_kong", "robbing_kong", "under_the_sea")
BATCH = 12
seeds = st.integers(0, 2**32)


def api_melds(melds):
    return [(mk, tiles.tile_str(t)) for mk, t in melds]


def api_void(void):
    return None if void is None else "mps"[void]


def meld_kind_vector(melds):
    v = np.zeros(27, np.int8)
    for mk, t in melds:
        v[t] = 1 if mk == "pung" else 2
    return v


def batch_arrays(rows):
    """rows of (counts, melds, void) -> (counts (B,27), meld_kind (B,27), void (B,))"""
    c = np.array([r[0] for r in rows], np.int8).reshape(-1, 27)
    mk = np.array([meld_kind_vector(r[1]) for r in rows], np.int8).reshape(-1, 27)
    v = np.array([-1 if r[2] is None else r[2] for r in rows], np.int8)
    return c, mk, v


def check_shanten(got, c, melds, void):
    """-1 complete, 0 ready (a real, non-exhausted wait), else fewest exchanges to ready."""
    assert got == ref.shanten(c, melds, void), (tiles.format_hand(c), melds, void, got)


def test_fan_names_order():
    assert tuple(hands.FAN_NAMES) == ref.ALL_FANS


# ---------------------------------------------------------------- complete hands


@settings(max_examples=200, deadline=None)
@given(seeds)
def test_complete_hands(seed):
    rnd = random.Random(seed)
    rows = []
    for _ in range(BATCH):
        c, melds, void = ref.random_complete_hand(rnd)
        if rnd.random() < 0.3:  # declare a random void; often breaks the hand
            free = [x for x in range(3) if all(t // 9 != x for _, t in melds)]
            void = rnd.choice(free + [None])
        rows.append((c, melds, void))
    for c, melds, void in rows:
        expected = ref.is_complete(c, melds, void)
        got = hands.is_complete(np.array(c, np.int8), api_melds(melds), api_void(void))
        assert got == expected, (tiles.format_hand(c), melds, void)
        check_shanten(hands.shanten(np.array(c, np.int8), api_melds(melds), api_void(void)),
                      c, melds, void)
        # the string form gives the same answer
        assert hands.is_complete(tiles.format_hand(c), api_melds(melds), api_void(void)) == (
            expected)
    c, mk, v = batch_arrays(rows)
    n = np.array([len(r[1]) for r in rows])
    expected = np.array([ref.is_complete(*r) for r in rows])
    np.testing.assert_array_equal(hands.batch_is_complete(c, n, v), expected)
    for r, got in zip(rows, hands.batch_shanten(c, mk, v), strict=True):
        check_shanten(int(got), *r)


# ---------------------------------------------------------------- standing hands


@settings(max_examples=150, deadline=None)
@given(seeds)
def test_standing_hands_waits_shanten_theoretical_max(seed):
    rnd = random.Random(seed)
    rows = [ref.random_standing_hand(rnd) for _ in range(BATCH)]
    ref_waits = [ref.waits(*r) for r in rows]
    ref_tmax = {cap: [ref.theoretical_max(*r, cap=cap) for r in rows] for cap in (3, 4)}
    for i, (c, melds, void) in enumerate(rows):
        args = (np.array(c, np.int8), api_melds(melds), api_void(void))
        where = (tiles.format_hand(c), melds, void)
        assert hands.waits(*args) == ref_waits[i], where
        sh = hands.shanten(*args)
        check_shanten(sh, *rows[i])
        assert (sh == 0) == bool(ref_waits[i])
        for cap in (3, 4):
            assert hands.theoretical_max(*args, rules=RULES[cap]) == ref_tmax[cap][i], where
        assert hands.theoretical_max(*args) == ref_tmax[3][i]
    c, mk, v = batch_arrays(rows)
    mask = hands.batch_wait_mask(c, mk, v)
    assert mask.shape == (len(rows), 27)
    for i in range(len(rows)):
        assert [tiles.tile_str(k) for k in np.flatnonzero(mask[i])] == ref_waits[i]
    batch_sh = hands.batch_shanten(c, mk, v)
    assert batch_sh.shape == (len(rows),)
    for r, got in zip(rows, batch_sh, strict=True):
        check_shanten(int(got), *r)
    for cap in (3, 4):
        np.testing.assert_array_equal(hands.batch_theoretical_max(c, mk, v, cap),
                                      ref_tmax[cap])


@settings(max_examples=120, deadline=None)
@given(seeds)
def test_full_standing_hands(seed):
    """14 - 3m tiles that are usually not complete: shanten and is_complete."""
    rnd = random.Random(seed)
    rows = [ref.random_standing_hand(rnd, n_tiles_extra=1) for _ in range(BATCH)]
    for c, melds, void in rows:
        args = (np.array(c, np.int8), api_melds(melds), api_void(void))
        assert hands.is_complete(*args) == ref.is_complete(c, melds, void)
        check_shanten(hands.shanten(*args), c, melds, void)
    c, mk, v = batch_arrays(rows)
    for r, got in zip(rows, hands.batch_shanten(c, mk, v), strict=True):
        check_shanten(int(got), *r)
    np.testing.assert_array_equal(hands.batch_is_complete(c, (mk > 0).sum(1), v),
                                  [ref.is_complete(*r) for r in rows])


def test_shanten_definition_on_known_hands():
    # the reference itself on textbook cases (so a wrong reference cannot hide a bug)
    assert ref.shanten("123456789m1234p") == 0
    assert ref.shanten("147m258m369m147p2p") == 1
    assert ref.shanten("19m19p19s1234567m") == 3
    assert ref.shanten("8888p", [("pung", 18), ("pung", 22), ("pung", 26)], 0) == 1
    assert ref.shanten("123p456p789p555p3s", (), 2) == 1
    assert ref.shanten("11223344556677m") == -1
    assert ref.shanten("1111222233334m") == 0  # waits 4m (and 5m? no: 1111 is two pairs)
    assert ref.waits("1111222233334m") == ["4m", "5m"]
    for h in ("123456789m1234p", "147m258m369m147p2p", "1112345678999m"):
        assert hands.shanten(h) == ref.shanten(h)


def test_shanten_exact_with_exhausted_partial_set():
    # kong of 5p, pungs of 1m and 9m, standing 4p 6p 1s 9s: one exchange cannot make the
    # hand ready (a pair plus 46p waits only on 5p, which is gone), so shanten is 2; the
    # usual block count ignoring the copy limit would say 1
    melds = [("concealed_kong", "5p"), ("pung", "1m"), ("pung", "9m")]
    assert ref.shanten("46p19s", [("concealed_kong", 13), ("pung", 0), ("pung", 8)]) == 2
    assert hands.shanten("46p19s", melds) == 2
    assert hands.shanten("46p19s", [("pung", "5s"), ("pung", "1m"), ("pung", "9m")]) == 1
    # the same with void tiles to get rid of: 68m are garbage, the 5p kong kills 46p
    melds = [("pung", "4s"), ("postponed_kong", "5p")]
    assert hands.shanten("68m1146p6s", melds, "m") == 3
    c = np.array(ref.counts("68m1146p6s"), np.int8)[None]
    mk = np.zeros((1, 27), np.int8)
    mk[0, 21], mk[0, 13] = 1, 2
    assert hands.batch_shanten(c, mk, np.array([0], np.int8)).tolist() == [3]


# ---------------------------------------------------------------- scoring


@settings(max_examples=300, deadline=None)
@given(seeds)
def test_scores(seed):
    rnd = random.Random(seed)
    rows = []
    for _ in range(BATCH):
        cw, melds, void = ref.random_complete_hand(rnd)
        win = rnd.choice([k for k in range(27) if cw[k]])
        flags = ref.random_flags(rnd, cw, melds, win)
        rows.append((cw, melds, void, win, flags))
    for cw, melds, void, win, flags in rows:
        expected = ref.fans(cw, melds, win, void, **{k: v for k, v in flags.items()
                                                      if k != "self_drawn"})
        conc = np.array(cw, np.int8)
        conc[win] -= 1
        for cap in (3, 4):
            s = hands.score(conc, api_melds(melds), tiles.tile_str(win), api_void(void),
                            rules=RULES[cap], **flags)
            assert dict(s.fans) == expected, (tiles.format_hand(cw), melds, win, flags)
            assert s.fan_total == sum(expected.values())
            assert s.value == ref.value(expected, cap)
        # the integer form of the winning tile and the string form of the hand agree
        s2 = hands.score(tiles.format_hand(conc), api_melds(melds), tiles.tile_str(win),
                         api_void(void), **flags)
        assert dict(s2.fans) == expected
    c, mk, v = batch_arrays([(r[0], r[1], r[2]) for r in rows])
    win = np.array([r[3] for r in rows])
    fl = {name: np.array([r[4][name] for r in rows], bool) for name in FLAG_NAMES}
    f = hands.batch_fans(c, mk, win, v, fl["self_drawn"], fl["after_kong"],
                         fl["shoot_after_kong"], fl["robbing_kong"], fl["under_the_sea"])
    assert f.shape == (len(rows), 10)
    for i, (cw, melds, void, w, flags) in enumerate(rows):
        expected = ref.fans(cw, melds, w, void, **{k: x for k, x in flags.items()
                                                    if k != "self_drawn"})
        assert {hands.FAN_NAMES[j]: int(f[i, j]) for j in range(10) if f[i, j]} == expected
    for cap in (3, 4):
        np.testing.assert_array_equal(
            hands.batch_value(f, cap), [ref.value(ref.fans(r[0], r[1], r[3], r[2]) | {
                n: 1 for k, n in zip(FLAG_NAMES[1:], ref.SITUATIONAL, strict=True)
                if r[4][k]}, cap) for r in rows])


@settings(max_examples=60, deadline=None)
@given(seeds)
def test_theoretical_max_is_best_plain_score_over_waits(seed):
    """theoretical_max == max over the waits of score() without situational flags."""
    rnd = random.Random(seed)
    for _ in range(BATCH):
        c, melds, void = ref.random_standing_hand(rnd)
        args = (np.array(c, np.int8), api_melds(melds), api_void(void))
        w = hands.waits(*args)
        for cap in (3, 4):
            vals = [hands.score(*args[:2], x, args[2], rules=RULES[cap]).value for x in w]
            assert hands.theoretical_max(*args, rules=RULES[cap]) == max(vals, default=0)


# ---------------------------------------------------------------- exhaustive, one suit


def _single_suit_vectors(total):
    out = [v for v in itertools.product(range(5), repeat=9) if sum(v) == total]
    return np.array(out, np.int8)


@pytest.fixture(scope="module")
def suit14():
    return _single_suit_vectors(14)


def _embed(vs, suit):
    c = np.zeros((vs.shape[0], 27), np.int8)
    c[:, 9 * suit:9 * suit + 9] = vs
    return c


def test_every_single_suit_14_tile_hand_is_complete_as_reference(suit14):
    assert suit14.shape[0] == 118800
    expected = np.array([ref._complete_counts(tuple(v) + (0,) * 18, 0) for v in suit14.tolist()])
    assert 0 < expected.sum() < expected.size
    no_void = np.full(suit14.shape[0], -1, np.int8)
    zeros = np.zeros(suit14.shape[0], np.int64)
    for suit in range(3):
        c = _embed(suit14, suit)
        np.testing.assert_array_equal(hands.batch_is_complete(c, zeros, no_void), expected)
        other = np.full(suit14.shape[0], (suit + 1) % 3, np.int8)
        np.testing.assert_array_equal(hands.batch_is_complete(c, zeros, other), expected)
        own = np.full(suit14.shape[0], suit, np.int8)
        assert not hands.batch_is_complete(c, zeros, own).any()
    # shanten -1 exactly for the complete ones (suit m, no void)
    sh = hands.batch_shanten(_embed(suit14, 0), np.zeros((suit14.shape[0], 27), np.int8),
                             no_void)
    np.testing.assert_array_equal(sh == -1, expected)
    assert (sh >= -1).all()


def test_every_single_suit_13_tile_hand_waits_as_reference():
    vs = _single_suit_vectors(13)
    exp = np.zeros((vs.shape[0], 27), bool)
    for i, v in enumerate(vs.tolist()):
        for r in range(9):
            if v[r] < 4:
                w = list(v)
                w[r] += 1
                exp[i, 9 + r] = ref._complete_counts((0,) * 9 + tuple(w) + (0,) * 9, 0)
    c = _embed(vs, 1)
    mask = hands.batch_wait_mask(c, np.zeros_like(c), np.full(vs.shape[0], -1, np.int8))
    np.testing.assert_array_equal(mask, exp)
    sh = hands.batch_shanten(c, np.zeros_like(c), np.full(vs.shape[0], 0, np.int8))
    np.testing.assert_array_equal(sh == 0, exp.any(axis=1))
    assert (sh >= 0).all()

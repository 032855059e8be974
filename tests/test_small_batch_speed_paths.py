"""The lookup tables and shortcuts of the batch-1 speed paths agree with the plain rules."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import PUNG, WALL_SIZE, State
from sichuan_env.seats.observation import (
    N_CHANNELS,
    PLANES,
    SCORE_CLIP,
    SCORE_SCALE,
    encode,
    plane_names,
)

from support.policies import biased, hu_shy, uniform

PLANE_NAMES = plane_names()


def _next_non_hu_ref(hu: np.ndarray, seat: int) -> int:
    for i in range(1, 5):
        s = (seat + i) % 4
        if not hu[s]:
            return s
    return (seat + 1) % 4


def test_next_non_hu_table():
    hus = np.array(list(itertools.product([False, True], repeat=4)))
    for seat in range(4):
        bits = hus @ np.array([1, 2, 4, 8])
        got = ek.NEXT_NON_HU[16 * seat + bits]
        assert got.tolist() == [_next_non_hu_ref(h, seat) for h in hus]
    # nobody has won: the next seat
    assert ek.NEXT_NON_HU[16 * np.arange(4)].tolist() == [1, 2, 3, 0]


def test_kong_table():
    for v, m, h in itertools.product(range(2), range(6), range(5)):
        want = (h == 4 and not v) or (m == PUNG and h >= 1)
        assert ek.KONG_OK[30 * v + 5 * m + h] == want


def test_claim_option_table():
    for wall_ok, cnt in itertools.product(range(2), range(5)):
        want = (ek.OPT_PUNG if cnt >= 2 else 0) | (
            ek.OPT_KONG if cnt == 3 and wall_ok else 0)
        assert ek.CLAIM_OPTS[wall_ok, cnt] == want


def _played(batch: int, steps: int, rules) -> engine.State:
    st = engine.reset(np.arange(batch), rules)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        m = engine.legal_mask(st)
        r = (rng.random(batch) * m.sum(1)).astype(np.int64)
        a = (np.cumsum(m, axis=1) > r[:, None]).argmax(1)
        st, _, _ = engine.step(st, a, inplace=True, validate=False, autoreset=True)
    return st


@pytest.mark.parametrize("deals", [1, 3])
def test_scalar_planes_scaled_and_clipped(deals):
    rules = get_rules("mil").replace(deals_per_match=deals)
    st = _played(16, 30, rules)
    rng = np.random.default_rng(1)
    st.scores[:] = rng.integers(-3000, 3000, st.scores.shape)
    st.match_scores[:] = rng.integers(-(2**20), 2**20, st.scores.shape)
    st.passed_hu[:] = rng.integers(0, 2 * rules.max_value, st.passed_hu.shape)
    st.deal_index[:] = rng.integers(0, deals, 16)
    seats = rng.integers(0, 4, 16)
    obs = encode(st, seats)
    assert obs.shape == (16, N_CHANNELS, 27)
    for i, s in enumerate(seats):
        rel = [(s + r) % 4 for r in range(4)]
        c = PLANES["scores"][0]
        want = np.clip(st.scores[i, rel] / SCORE_SCALE, -SCORE_CLIP, SCORE_CLIP)
        assert np.allclose(obs[i, c : c + 4, 0], want)
        c = PLANES["match_scores"][0]
        want = np.clip(st.match_scores[i, rel] / SCORE_SCALE, -SCORE_CLIP, SCORE_CLIP)
        assert np.allclose(obs[i, c : c + 4, 0], want)
        c = PLANES["passed_hu"][0]
        assert np.isclose(obs[i, c, 0], min(st.passed_hu[i, s] / rules.max_value, 1.0))
        c = PLANES["deal_progress"][0]
        assert np.isclose(obs[i, c, 0], st.deal_index[i] / deals)
        c = PLANES["wall_left"][0]
        assert np.isclose(obs[i, c, 0], (st.wall_back[i] - st.wall_front[i]) / WALL_SIZE)
        c = PLANES["dealer"][0]
        assert obs[i, c + (st.dealer[i] - s) % 4, 0] == 1 and obs[i, c : c + 4, 0].sum() == 1
    # scalars are broadcast over the tile axis
    c = PLANES["phase"][0]
    assert (obs[:, c:] == obs[:, c:, :1]).all()


def test_recent_discards_short_and_full_rivers():
    st = _played(4, 12, get_rules("mil"))
    st.river_len[0] = [0, 1, 3, 60]
    st.river[0, 3] = np.arange(60) % 27
    st.river[0, 1, 0] = 5
    obs = encode(st, 0)
    c = PLANES["recent_discard"][0]
    for r in range(4):
        n = int(st.river_len[0, r])
        for j in range(4):
            plane = obs[0, c + 4 * r + j]
            if n - 1 - j >= 0:
                k = int(st.river[0, r, n - 1 - j])
                assert plane[k] == 1 and plane.sum() == 1
            else:
                assert plane.sum() == 0


def test_int_seat_equals_seat_array():
    st = _played(8, 40, get_rules("mil"))
    for s in range(4):
        assert np.array_equal(encode(st, s), encode(st, np.full(8, s)))
        assert np.array_equal(encode(st, np.int64(s), rows=[3, 1]),
                              encode(st, [s, s], rows=[3, 1]))
    with pytest.raises(ValueError):
        encode(st, 4)
    assert encode(st, 4, rows=np.array([], int)).shape == (0, N_CHANNELS, 27)


def _table_entries(entries: list[tuple], table: int) -> list[tuple]:
    return [e[:1] + e[2:] for e in entries if e[1] == table]


@settings(max_examples=40, deadline=None)
@given(
    seed=hs.integers(0, 2**40),
    preset=hs.sampled_from(["mil", "mahjongsoft"]),
    deals=hs.sampled_from([1, 2]),
    policy=hs.sampled_from([uniform, biased, hu_shy]),
    with_ledger=hs.booleans(),
)
def test_one_table_path_equals_batched_kernels(seed, preset, deals, policy, with_ledger):
    """A table stepped alone and the same table as row 0 of a batch go through identical
    states, rewards, done flags, masks and ledger entries, for a whole match."""
    rules = get_rules(preset).replace(deals_per_match=deals)
    alone = engine.reset([seed], rules)
    batch = engine.reset([seed, seed + 1], rules)
    rng = np.random.default_rng(seed % 2**32)
    steps = 0
    while not alone.done[0]:
        m1 = engine.legal_mask(alone)
        m2 = engine.legal_mask(batch)
        assert np.array_equal(m1[0], m2[0]), f"step {steps}: masks differ"
        a = int(policy(alone, m1, rng)[0])
        b = int(uniform(batch, m2, rng)[1])
        led1 = engine.Ledger() if with_ledger else None
        led2 = engine.Ledger() if with_ledger else None
        alone, r1, d1 = engine.step(alone, [a], ledger=led1)
        batch, r2, d2 = engine.step(batch, [a, b], ledger=led2)
        where = f"step {steps}, action {a}"
        assert np.array_equal(r1[0], r2[0]) and d1[0] == d2[0], where
        for name, x, y in zip(State._fields, alone.arrays(), batch.arrays(), strict=False):
            assert np.array_equal(x[0], y[0]), f"{where}: field {name} differs"
        if with_ledger:
            assert _table_entries(led1.entries, 0) == _table_entries(led2.entries, 0), where
        steps += 1
    assert steps > 30

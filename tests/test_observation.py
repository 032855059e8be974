"""Observation planes: layout, meaning, rotation, batching and the no-leak property."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st_

from sichuan_env.core import engine
from sichuan_env.core.state import CLAIM, DONE, ROB, TURN, VOID, State
from sichuan_env.seats.agent import RandomAgent
from sichuan_env.seats.observation import (
    N_CHANNELS,
    N_ORACLE_CHANNELS,
    OBS_SHAPE,
    OBS_VERSION,
    ORACLE_PLANES,
    PLANES,
    describe,
    encode,
    encode_oracle,
    observation_bounds,
    plane_names,
)

SEAT_FIELDS = (
    "hand", "set_aside", "void", "void_revealed", "meld", "river", "river_len", "hu",
    "hu_tile", "hu_rank", "scores", "match_scores", "nonvoid_discard", "turn_kong_paid",
    "passed_hu", "claim_opts", "claim_value", "claim_answer",
)
SEAT_VALUED = ("current", "active", "dealer", "next_dealer")


def play(seed: int, n_steps: int, tables: int = 1) -> State:
    """A state after ``n_steps`` random decisions (finished tables stay finished)."""
    st = engine.reset(np.arange(seed, seed + tables))
    agent = RandomAgent(seed)
    for _ in range(n_steps):
        if st.done.all():
            break
        m = engine.legal_mask(st)
        m[st.done, 0] = True  # finished tables ignore their action
        st, _, _ = engine.step(st, agent.act_batch(None, m), inplace=True, validate=False)
    return st


def rotate(st: State, k: int) -> State:
    """The same table with seat s renamed (s - k) % 4, so old seat k becomes seat 0."""
    d = st._asdict()
    order = (np.arange(4) + k) % 4
    for f in SEAT_FIELDS:
        d[f] = d[f][:, order].copy()
    d["kong_income"] = d["kong_income"][:, order][:, :, order].copy()
    for f in SEAT_VALUED:
        d[f] = ((d[f].astype(np.int16) - k) % 4).astype(d[f].dtype)
    # hu_from: per seat, and its values are seats (-1 = none stays -1)
    hu_from = d["hu_from"][:, order]
    d["hu_from"] = np.where(hu_from >= 0, (hu_from.astype(np.int16) - k) % 4, -1).astype(
        hu_from.dtype)
    return State(**d)


def test_layout() -> None:
    assert OBS_VERSION == "sichuan-obs/1"
    assert OBS_SHAPE == (N_CHANNELS, 27)
    assert len(plane_names()) == N_CHANNELS
    assert len(plane_names(oracle=True)) == N_ORACLE_CHANNELS
    assert len(set(plane_names(oracle=True))) == N_ORACLE_CHANNELS
    ends = sorted((c, c + n) for c, n in ORACLE_PLANES.values())
    assert ends[0][0] == 0 and ends[-1][1] == N_ORACLE_CHANNELS
    assert all(a[1] == b[0] for a, b in zip(ends, ends[1:], strict=False))  # no gap/overlap
    low, high = observation_bounds()
    assert low.shape == high.shape == OBS_SHAPE


@pytest.mark.parametrize("n_steps", [0, 3, 20, 80, 400])
def test_values_and_bounds(n_steps: int) -> None:
    st = play(11, n_steps, tables=6)
    low, high = observation_bounds()
    for seat in range(4):
        obs = encode(st, seat)
        assert obs.shape == (6, N_CHANNELS, 27) and obs.dtype == np.float32
        assert ((obs >= low) & (obs <= high)).all()
        for b in range(6):
            p = describe(obs[b])
            # hand thresholds add up to the counts
            np.testing.assert_array_equal(p["hand"].sum(0), st.hand[b, seat])
            assert p["phase"][:, 0].sum() == 1
            assert p["dealer"][(st.dealer[b] - seat) % 4, 0] == 1
            assert np.allclose(p["wall_left"], st.wall_left[b] / 55)
            np.testing.assert_allclose(p["scores"][:, 0] * 64,
                                       np.roll(st.scores[b], -seat), atol=1e-4)
            n_disc = np.roll(st.river_len[b], -seat)
            np.testing.assert_allclose(p["discards"].sum(1) * 4, n_disc, atol=1e-5)
            recent = p["recent_discard"].reshape(4, 4, 27).sum(2)
            np.testing.assert_array_equal(recent.sum(1), np.minimum(n_disc, 4))


def test_oracle_conserves_tiles() -> None:
    st = play(3, 150, tables=8)
    for seat in range(4):
        base = encode(st, seat)
        full = encode_oracle(st, seat)
        assert full.shape == (8, N_ORACLE_CHANNELS, 27)
        np.testing.assert_array_equal(full[:, :N_CHANNELS], base)
        for b in range(8):
            p = describe(full[b], oracle=True)
            hands = p["hand"].sum(0) + p["other_hands"].sum(0) * 4
            tiles = (hands + p["set_aside"][0] + p["other_set_aside"].sum(0)
                     + p["wall"][0] * 4)
            # every tile is somewhere: hands, set aside, wall, or visible on the table
            public = (p["visible"][0] * 4 - p["hand"].sum(0) - p["set_aside"][0])
            np.testing.assert_allclose(tiles + public, 4, atol=1e-5)
            assert np.isclose(p["wall"].sum() * 4, st.wall_left[b])


def test_rotation() -> None:
    st = play(5, 120, tables=4)
    for k in range(4):
        np.testing.assert_array_equal(encode(st, k), encode(rotate(st, k), 0))
        np.testing.assert_array_equal(encode_oracle(st, k), encode_oracle(rotate(st, k), 0))


def test_batched_equals_single_and_rows() -> None:
    st = play(8, 90, tables=7)
    seats = np.array([0, 1, 2, 3, 0, 1, 2])
    full = encode(st, seats)
    for b in range(7):
        np.testing.assert_array_equal(full[b], encode(st.take([b]), seats[b])[0])
    from sichuan_env.seats.observation import _encode_into

    # the serial and the parallel kernel give the same rows
    many = np.arange(300) % 7
    for parallel in (False, True):
        for oracle in (False, True):
            out = np.empty((many.size, N_ORACLE_CHANNELS if oracle else N_CHANNELS, 27),
                           np.float32)
            _encode_into(st, many, seats[many], out, oracle=oracle, parallel=parallel)
            np.testing.assert_array_equal(out[:, :N_CHANNELS], full[many])
            if oracle:
                np.testing.assert_array_equal(out, encode_oracle(st, seats)[many])
    rows = np.array([5, 2])
    np.testing.assert_array_equal(encode(st, seats[rows], rows), full[rows])
    assert encode(st, np.zeros(0, int), np.zeros(0, int)).shape == (0, N_CHANNELS, 27)


def test_void_planes_follow_reveal() -> None:
    st = engine.reset([21])
    agent = RandomAgent(0)
    c, _ = PLANES["void_revealed"]
    mine, _ = PLANES["my_void"]
    seen = False
    while not st.done[0]:
        obs = encode(st, 0)[0]
        for r in range(1, 4):
            s = r % 4
            if st.void_revealed[0, s]:
                suit = int(st.void[0, s])
                assert obs[c + r, suit * 9 : suit * 9 + 9].all()
                assert obs[c + r].sum() == 9
                seen = True
            else:
                assert not obs[c + r].any()
        if st.void[0, 0] >= 0:
            assert obs[mine].sum() == 9
        m = engine.legal_mask(st)
        st, _, _ = engine.step(st, agent.act_batch(None, m))
    assert seen


def test_claim_and_drawn_planes() -> None:
    st = play(2, 200, tables=32)
    obs_active = encode(st, st.active.astype(int))
    obs_asked = encode(st, st.current.astype(int))
    claim_c, _ = PLANES["claim_tile"]
    drawn_c, _ = PLANES["drawn"]
    for b in range(32):
        if st.phase[b] == CLAIM:  # the asked seat sees the window; the discarder cannot
            assert obs_asked[b, claim_c, st.claim_tile[b]] == 1  # tell it is open
            assert not obs_active[b, claim_c].any()
        if st.phase[b] == TURN and st.drawn_tile[b] >= 0:
            assert obs_active[b, drawn_c, st.drawn_tile[b]] == 1
        other = encode(st, (int(st.active[b]) + 1) % 4, [b])[0]
        assert not other[drawn_c].any()
        if st.phase[b] in (VOID, DONE):
            assert not obs_active[b, claim_c].any()


def _perturb_hidden(st: State, observer: int, rng: np.random.Generator) -> State:
    """Change what ``observer`` cannot know: opponents' standing tiles exchanged with the
    wall and with each other, the remaining wall order, unrevealed voids, opponents'
    set-aside tiles, drawn tile and passed-Hu values, claim offers, and whether a claim or
    rob window that does not ask the observer is open at all."""
    s2 = st.copy()
    b = 0
    others = [(observer + r) % 4 for r in (1, 2, 3)]
    front, back = int(s2.wall_front[b]), int(s2.wall_back[b])
    for _ in range(12):
        o = int(rng.choice(others))
        held = np.flatnonzero(s2.hand[b, o])
        if not held.size:
            continue
        k = int(rng.choice(held))
        if back > front and rng.random() < 0.6:
            p = int(rng.integers(front, back))
            w = int(s2.wall[b, p])
            s2.hand[b, o, k] -= 1
            s2.hand[b, o, w] += 1
            s2.wall[b, p] = k
        else:
            o2 = int(rng.choice(others))
            held2 = np.flatnonzero(s2.hand[b, o2])
            if not held2.size:
                continue
            k2 = int(rng.choice(held2))
            s2.hand[b, o, k] -= 1
            s2.hand[b, o2, k] += 1
            s2.hand[b, o2, k2] -= 1
            s2.hand[b, o, k2] += 1
    if back > front:
        s2.wall[b, front:back] = rng.permutation(s2.wall[b, front:back])
    for o in others:
        if s2.set_aside[b, o] >= 0 and back > front:  # swap the set-aside tile with the wall
            p = int(rng.integers(front, back))
            s2.set_aside[b, o], s2.wall[b, p] = s2.wall[b, p], s2.set_aside[b, o]
        if not s2.void_revealed[b, o]:
            s2.void[b, o] = rng.integers(-1, 3)
        s2.passed_hu[b, o] = rng.integers(0, 9)
        s2.claim_opts[b, o] = rng.integers(0, 8)
        s2.claim_value[b, o] = rng.integers(0, 9)
        s2.claim_answer[b, o] = rng.integers(0, 5)
    if s2.active[b] != observer:
        s2.drawn_tile[b] = rng.integers(-1, 27)
    if s2.phase[b] in (CLAIM, ROB) and s2.current[b] != observer and rng.random() < 0.5:
        # whether a window is open at all: the engine opens one only when some seat has an
        # option, so a seat it does not ask cannot tell it from the same table without one
        s2.phase[b] = TURN
        s2.current[b] = s2.active[b]
        s2.claim_tile[b] = -1
        s2.claim_opts[b] = 0
        s2.drawn_tile[b] = -1
    return s2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st_.integers(0, 10_000),
    n_steps=st_.integers(0, 250),
    observer=st_.integers(0, 3),
    salt=st_.integers(0, 2**32 - 1),
)
def test_no_leak(seed: int, n_steps: int, observer: int, salt: int) -> None:
    st = play(seed, n_steps)
    s2 = _perturb_hidden(st, observer, np.random.default_rng(salt))
    np.testing.assert_array_equal(encode(st, observer), encode(s2, observer))


def test_perturbation_is_visible_to_the_oracle() -> None:
    """The no-leak test does change something: the oracle sees it."""
    changed = 0
    for seed in range(10):
        st = play(seed, 40)
        s2 = _perturb_hidden(st, 0, np.random.default_rng(seed))
        changed += not np.array_equal(encode_oracle(st, 0), encode_oracle(s2, 0))
    assert changed >= 8

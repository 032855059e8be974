"""The compiled observation encoder and the seat view against the former numpy encoder
(``tests/support/reference_observation.py``): the same bits for every seat, every phase, both
presets, the oracle variant, batches of one and many; and the seat view holds nothing a
seat may not see."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from test_observation import _perturb_hidden, rotate

from sichuan_env.core import engine
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import DONE, PHASE_NAMES, ROB, State
from sichuan_env.seats.observation import (
    N_CHANNELS,
    ORACLE_PLANES,
    PLANES,
    encode,
    encode_oracle,
    fill_observations,
    plane_names,
    planes_from_view,
)
from sichuan_env.seats.view import STATE_FIELDS, SeatView, seat_view, state_arrays

from support import reference_observation as ref
from support.policies import biased, hu_shy, uniform

NAMES = plane_names(oracle=True)


def _differ(a: np.ndarray, b: np.ndarray) -> list[str]:
    return sorted({NAMES[c] for c in np.argwhere(a != b)[:, -2]})


def _played(seed: int, preset: str, steps: int, policy, tables: int = 6,
            autoreset: bool = True) -> State:
    rules = get_rules(preset).replace(deals_per_match=2)
    st = engine.reset(np.arange(tables) + seed, rules)
    rng = np.random.default_rng(seed % 2**32)
    for _ in range(steps):
        if st.done.all():
            break
        m = engine.legal_mask(st)
        m[st.done, 0] = True  # finished tables ignore their action
        st, _, _ = engine.step(st, policy(st, m, rng), autoreset=autoreset)
    return st


def _scramble_scalars(st: State, rng: np.random.Generator) -> None:
    """Scores, passed-Hu values and deal numbers beyond the clipping bounds."""
    st.scores[:] = rng.integers(-5000, 5000, st.scores.shape)
    st.match_scores[:] = rng.integers(-(2**22), 2**22, st.match_scores.shape)
    st.passed_hu[:] = rng.integers(0, 3 * st.rules.max_value, st.passed_hu.shape)
    st.deal_index[:] = rng.integers(0, st.rules.deals_per_match + 1, st.deal_index.shape)


def _check_all_views(st: State) -> None:
    """Every (table, seat): compiled == reference, in one batch, row by row, as a table
    alone, through the view, oracle included."""
    B = st.batch_size
    rows = np.repeat(np.arange(B), 4)
    seats = np.tile(np.arange(4), B)
    want = ref.encode_oracle(st, seats, rows)
    got = encode_oracle(st, seats, rows)
    assert np.array_equal(got, want), _differ(got, want)
    base = encode(st, seats, rows)
    assert np.array_equal(base, want[:, :N_CHANNELS]), _differ(base, want[:, :N_CHANNELS])
    via_view = planes_from_view(seat_view(st, seats, rows), st.rules)
    assert np.array_equal(via_view, base), _differ(via_view, base)
    out = np.full_like(base, np.nan)  # every channel is written
    fill_observations(st, seats, rows, out)
    assert np.array_equal(out, base)
    for i in range(rows.size):
        r, s = int(rows[i]), int(seats[i])
        one = encode(st, s, [r])
        assert np.array_equal(one[0], want[i, :N_CHANNELS]), (r, s, _differ(one[0], base[i]))
        alone = st.take([r])
        assert np.array_equal(encode(alone, s)[0], base[i])
        assert np.array_equal(encode_oracle(alone, np.array([s]))[0], want[i])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=hs.integers(0, 2**40),
    preset=hs.sampled_from(["mil", "mahjongsoft"]),
    policy=hs.sampled_from([uniform, biased, hu_shy]),
    steps=hs.integers(0, 400),
    autoreset=hs.booleans(),
    scramble=hs.booleans(),
)
def test_compiled_equals_reference(seed, preset, policy, steps, autoreset, scramble) -> None:
    st = _played(seed, preset, steps, policy, autoreset=autoreset)
    if scramble:
        _scramble_scalars(st, np.random.default_rng(seed % 2**32))
    _check_all_views(st)


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_every_phase_and_large_batches(preset: str) -> None:
    """A long sweep over many tables meets every phase; a batch large enough for the
    parallel kernel equals the reference too."""
    rules = get_rules(preset).replace(deals_per_match=2)
    B = 256  # kong robbing is rare: about one rob window per 256 tables of two deals
    st = engine.reset(np.arange(B) + 1000, rules)
    rng = np.random.default_rng(7)
    seen = set()
    rows = np.repeat(np.arange(B), 4)
    seats = np.tile(np.arange(4), B)
    step = 0
    while not st.done.all():
        seen.update(st.phase.tolist())
        check = rows if step % 16 == 0 else rows[st.phase[rows] == ROB]
        if check.size:
            got = encode_oracle(st, seats[check], check)
            want = ref.encode_oracle(st, seats[check], check)
            assert np.array_equal(got, want), (step, _differ(got, want))
        m = engine.legal_mask(st)
        m[st.done, 0] = True
        st, _, _ = engine.step(st, biased(st, m, rng))
        step += 1
    seen.update(st.phase.tolist())
    assert seen == set(range(len(PHASE_NAMES))), seen
    assert (st.phase == DONE).all()
    _check_all_views(st.take(np.arange(0, B, 29)))


def test_rows_are_checked() -> None:
    st = _played(3, "mil", 20, uniform, tables=3)
    with pytest.raises(IndexError):
        encode(st, 0, [3])
    with pytest.raises(IndexError):
        seat_view(st, 0, [-4])
    with pytest.raises(ValueError):
        encode(st, [0, 5], [0, 1])
    with pytest.raises(ValueError):
        encode(st, 0, [0.5])
    with pytest.raises(IndexError):
        encode(st, 0, np.array([2**64 - 1], np.uint64))
    # any integer types give the same planes
    want = encode(st, np.array([1, 2]), np.array([2, 0]))
    assert np.array_equal(encode(st, np.array([1, 2], np.int8), np.array([2, 0], np.uint16)),
                          want)
    # negative rows count from the end, as numpy indexing does
    assert np.array_equal(encode(st, 1, [-1]), encode(st, 1, [2]))
    with pytest.raises(ValueError):
        fill_observations(st, np.zeros(3, int), np.arange(3), np.zeros((3, N_CHANNELS, 26)))


# ----------------------------------------------------------------------------- the view

_VIEW_SHAPES = {
    "seat": (), "phase": (), "hand": (27,), "set_aside": (), "drawn": (), "passed_hu": (),
    "void": (4,), "void_revealed": (4,), "meld": (4, 27), "river": (4, 60),
    "river_len": (4,), "hu": (4,), "hu_tile": (4,), "live_discards": (27,),
    "won_tiles": (27,), "claim_tile": (), "active": (), "dealer": (), "wall_left": (),
    "scores": (4,), "match_scores": (4,), "deal_index": (),
}


def test_view_fields_and_meaning() -> None:
    st = _played(5, "mahjongsoft", 150, biased, tables=8)
    got = state_arrays(st)
    assert len(got) == len(STATE_FIELDS)
    assert all(a is getattr(st, f) for a, f in zip(got, STATE_FIELDS, strict=True))
    assert set(SeatView._fields) == set(_VIEW_SHAPES)
    for s in range(4):
        v = seat_view(st, s)
        for name, shape in _VIEW_SHAPES.items():
            assert getattr(v, name).shape == (8, *shape), name
        assert (v.seat == s).all()
        rel = (s + np.arange(4)) % 4
        np.testing.assert_array_equal(v.hand, st.hand[:, s])
        np.testing.assert_array_equal(v.meld, st.meld[:, rel])
        np.testing.assert_array_equal(v.river_len, st.river_len[:, rel])
        np.testing.assert_array_equal(v.scores, st.scores[:, rel])
        np.testing.assert_array_equal(v.dealer, (st.dealer - s) % 4)
        np.testing.assert_array_equal(v.wall_left, st.wall_left)
        np.testing.assert_array_equal(v.void[:, 0], st.void[:, s])
        shown = st.void_revealed[:, rel[1:]]
        np.testing.assert_array_equal(v.void[:, 1:], np.where(shown, st.void[:, rel[1:]], -1))
        # the view of seat s equals the view of seat 0 of the table renamed around s
        w = seat_view(rotate(st, s), 0)
        for name in SeatView._fields:
            if name != "seat":
                np.testing.assert_array_equal(getattr(v, name), getattr(w, name), name)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=hs.integers(0, 10_000),
    n_steps=hs.integers(0, 250),
    observer=hs.integers(0, 3),
    salt=hs.integers(0, 2**32 - 1),
)
def test_view_hides_what_the_seat_may_not_see(seed, n_steps, observer, salt) -> None:
    """Changing other seats' tiles, set-aside tiles, unrevealed voids, claim offers and
    passed-Hu values, the drawn tile of another seat and the wall order changes nothing in
    the view (the perturbation is the one of test_observation.test_no_leak)."""
    st = _played(seed, "mil", n_steps, uniform, tables=1)
    s2 = _perturb_hidden(st, observer, np.random.default_rng(salt))
    a, b = seat_view(st, observer), seat_view(s2, observer)
    for name in SeatView._fields:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), name)


def test_view_hides_self_drawn_winning_tiles() -> None:
    """Another seat's self-drawn winning tile is face down: not in hu_tile, not in
    won_tiles; a tile won on a discard is shown to everyone."""
    rng = np.random.default_rng(1)
    st = engine.reset(np.arange(64), get_rules("mil"))
    hidden = shown = 0
    for _ in range(400):
        m = engine.legal_mask(st)
        st, _, _ = engine.step(st, biased(st, m, rng), autoreset=True)
        won = np.argwhere(st.hu & (st.hu_tile >= 0))
        for t, s in won:
            tile = int(st.hu_tile[t, s])
            for observer in range(4):
                v = seat_view(st, observer, [t])
                r = (s - observer) % 4
                if r and st.hu_from[t, s] == s:
                    assert v.hu_tile[0, r] == -1
                    hidden += 1
                else:
                    assert v.hu_tile[0, r] == tile
                    shown += 1
            self_drawn = [a for a in range(4) if st.hu[t, a] and st.hu_from[t, a] == a
                          and a != 0 and st.hu_tile[t, a] >= 0]
            v = seat_view(st, 0, [t])
            face_down = np.bincount(st.hu_tile[t, self_drawn], minlength=27)
            np.testing.assert_array_equal(v.won_tiles[0], st.won_tiles[t] - face_down)
        if hidden > 30 and shown > 30:
            break
    assert hidden and shown


def test_planes_layout_unchanged() -> None:
    assert {k: v for k, v in ref.PLANES.items()} == PLANES
    assert ORACLE_PLANES == ref.ORACLE_PLANES
    assert plane_names(oracle=True) == ref.plane_names(oracle=True)

"""The batched engine under random play, checked by the slow invariant checker.

* uniformly random legal play, both presets, with ``check_invariants`` after every step;
* play biased toward Hu, kong and pung (and toward keeping connected tiles), so that wins,
  kongs, multi-Hu, robbing the kong, shoot after kong and wall-end settlement happen; each
  is counted and asserted to occur;
* batch row i == the same seed played alone; determinism of reset and of whole games;
* illegal actions, finished tables, auto-reset, and multi-deal matches (docs/rules.md section 9).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.engine import IllegalActionError, Ledger
from sichuan_env.core.hands import FAN_NAMES
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import DONE, END_THREE_HU, END_WALL, VOID, State

from support.invariants import check_invariants
from support.policies import biased, uniform

PRESETS = ["mil", "mahjongsoft"]
ROB_FAN = FAN_NAMES.index("Robbing the Kong")
SHOOT_FAN = FAN_NAMES.index("Shoot after Kong")
AFTER_KONG_FAN = FAN_NAMES.index("Win after Kong")
SEA_FAN = FAN_NAMES.index("Under the Sea")

def count_entries(entries: list[tuple], counts: Counter) -> None:
    wins_by_table: Counter = Counter()
    for e in entries:
        if e[0] == "pay":
            counts[e[5]] += 1
        elif e[0] == "win":
            counts["win"] += 1
            counts["win_on_discard" if e[4] >= 0 else "win_self_drawn"] += 1
            fans = e[5]
            counts["robbing"] += bool(fans[ROB_FAN])
            counts["shoot_after_kong"] += bool(fans[SHOOT_FAN])
            counts["win_after_kong"] += bool(fans[AFTER_KONG_FAN])
            counts["under_the_sea"] += bool(fans[SEA_FAN])
            wins_by_table[e[1]] += 1
        elif e[0] == "end":
            counts["end_three_hu" if e[2] == END_THREE_HU else "end_wall"] += 1
        elif e[0] == "settle":
            counts["settle"] += 1
    counts["multi_hu"] += sum(1 for n in wins_by_table.values() if n > 1)


def play(preset: str, deals: int, tables: int, policy, seed: int, *, check: bool = True,
         ledger: bool = False) -> Counter:
    """Play ``deals`` deals on ``tables`` tables with auto-reset; invariants every step."""
    rng = np.random.default_rng(seed)
    st = engine.reset(np.arange(tables) + 1000 * seed, preset)
    if check:
        check_invariants(st)
    counts: Counter = Counter()
    finished = 0
    steps = 0
    while finished < deals:
        mask = engine.legal_mask(st)
        actions = policy(st, mask, rng)
        led = Ledger() if ledger else None
        prev = st
        st, rewards, done = engine.step(st, actions, ledger=led, autoreset=True)
        if check:
            check_invariants(st, prev, rewards)
        if led is not None:
            count_entries(led.entries, counts)
        finished += int(done.sum())
        steps += 1
        assert steps < 200 * deals, "the engine does not finish deals"
    counts["deals"] = finished
    counts["steps"] = steps
    return counts


# ----------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("preset", PRESETS)
def test_uniform_random_play_keeps_invariants(preset: str) -> None:
    counts = play(preset, 400, 80, uniform, seed=11, ledger=True)
    assert counts["deals"] >= 400
    assert counts["end_wall"] > 0


@pytest.mark.parametrize("preset", PRESETS)
def test_biased_play_keeps_invariants(preset: str) -> None:
    counts = play(preset, 500, 100, biased, seed=12, ledger=True)
    assert counts["win"] > 0 and counts["concealed_kong"] + counts["melded_kong"] > 0


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("policy", [uniform, biased])
def test_single_table_play_keeps_invariants(preset: str, policy) -> None:
    # batch size 1 takes the engine's one-table path (discards, passes, void choices, masks)
    counts = play(preset, 40, 1, policy, seed=13)
    assert counts["deals"] >= 40


def test_biased_play_reaches_every_situation() -> None:
    counts: Counter = Counter()
    for preset in PRESETS:
        counts += play(preset, 1500, 256, biased, seed=13, check=False, ledger=True)
    for what in (
        "win_on_discard", "win_self_drawn", "hu", "self_drawn_hu", "multi_hu", "robbing",
        "shoot_after_kong", "win_after_kong", "under_the_sea", "concealed_kong",
        "melded_kong", "promoted_kong", "kong_refund", "end_three_hu", "end_wall", "settle",
        "ready", "flower_pig",
    ):
        assert counts[what] > 0, f"{what} never happened in {counts['deals']} deals: {counts}"


def test_checker_catches_broken_states() -> None:
    st = engine.reset([1, 2], "mil")
    check_invariants(st)
    bad = st.copy()
    bad.hand[1, 2, int(np.flatnonzero(bad.hand[1, 2])[0])] -= 1
    with pytest.raises(AssertionError, match="table 1"):
        check_invariants(bad)
    bad = st.copy()
    bad.live_discards[0, 0] += 1
    with pytest.raises(AssertionError, match="table 0"):
        check_invariants(bad)
    st2, rewards, _ = engine.step(st, uniform(st, engine.legal_mask(st), np.random.default_rng(0)))
    wrong = rewards.copy()
    wrong[0, 0] += 1
    with pytest.raises(AssertionError, match="table 0"):
        check_invariants(st2, st, wrong)


# ----------------------------------------------------------------------------- batching


def _assert_rows_equal(batch: State, i: int, single: State, where: str) -> None:
    for name, a, b in zip(State._fields, batch.arrays(), single.arrays(), strict=False):
        assert np.array_equal(a[i], b[0]), f"{where}: field {name} differs for table {i}"


@pytest.mark.parametrize("preset", PRESETS)
def test_batch_row_equals_table_played_alone(preset: str) -> None:
    seeds = [5, 17, 23, 99, 123456, 7, 8, 9]
    rngs = [np.random.default_rng(s) for s in seeds]
    rngs1 = [np.random.default_rng(s) for s in seeds]
    batch = engine.reset(seeds, preset)
    singles = [engine.reset([s], preset) for s in seeds]
    for i in range(len(seeds)):
        _assert_rows_equal(batch, i, singles[i], "reset")
    step_no = 0
    while not batch.done.all():
        mask = engine.legal_mask(batch)
        acts = [int(rngs[i].choice(np.flatnonzero(mask[i]))) if mask[i].any() else 0
                for i in range(len(seeds))]
        batch, rew, _ = engine.step(batch, acts)
        for i in range(len(seeds)):
            if singles[i].done[0]:
                continue
            m1 = engine.legal_mask(singles[i])
            assert np.array_equal(m1[0], mask[i]), f"step {step_no}: masks differ, table {i}"
            a1 = int(rngs1[i].choice(np.flatnonzero(m1[0])))
            singles[i], rew1, _ = engine.step(singles[i], [a1])
            assert np.array_equal(rew1[0], rew[i]), f"step {step_no}: rewards differ, table {i}"
            _assert_rows_equal(batch, i, singles[i], f"step {step_no}")
        step_no += 1


def _game_trace(seed: int, preset: str) -> list:
    st = engine.reset([seed], preset)
    rng = np.random.default_rng(seed)
    led = Ledger()
    while not st.done[0]:
        st, _, _ = engine.step(st, uniform(st, engine.legal_mask(st), rng), ledger=led)
    return led.entries


def test_same_seed_same_game_and_reset_determinism() -> None:
    for preset in PRESETS:
        assert _game_trace(42, preset) == _game_trace(42, preset)
    a, b, c = engine.reset([3, 4], "mil"), engine.reset([3, 4], "mil"), engine.reset([4], "mil")
    for x, y in zip(a.arrays(), b.arrays(), strict=True):
        assert np.array_equal(x, y)
    assert not np.array_equal(a.wall[0], a.wall[1])
    assert not np.array_equal(a.hand[0], a.hand[1])
    assert np.array_equal(a.wall[1], c.wall[0]) and np.array_equal(a.hand[1], c.hand[0])
    walls = {engine.reset([s], "mil").wall[0].tobytes() for s in range(50)}
    assert len(walls) == 50


# ----------------------------------------------------------------------------- errors etc.


def _advance_to_turn(st: State, rng: np.random.Generator) -> State:
    while (st.phase == VOID).any():
        st, _, _ = engine.step(st, uniform(st, engine.legal_mask(st), rng))
    return st


def test_illegal_action_raises_and_changes_nothing() -> None:
    rng = np.random.default_rng(3)
    st = _advance_to_turn(engine.reset([1, 2, 3], "mil"), rng)
    mask = engine.legal_mask(st)
    acts = uniform(st, mask, rng)
    bad = int(np.flatnonzero(~mask[1])[0])
    acts[1] = bad
    before = st.copy()
    for inplace in (False, True):
        with pytest.raises(IllegalActionError) as err:
            engine.step(st, acts, inplace=inplace)
        msg = str(err.value)
        assert "table 1" in msg and f"seat {int(st.current[1])}" in msg and str(bad) in msg
        for name, x, y in zip(State._fields, before.arrays(), st.arrays(), strict=False):
            assert np.array_equal(x, y), f"{name} changed by an illegal action"
    acts[1] = 999
    with pytest.raises(IllegalActionError, match="table 1"):
        engine.step(st, acts)
    with pytest.raises(ValueError):
        engine.step(st, acts[:2])


def test_finished_tables_ignore_steps() -> None:
    rng = np.random.default_rng(4)
    st = engine.reset([10, 11, 12, 13], "mil")
    while not st.done.any():
        st, _, _ = engine.step(st, uniform(st, engine.legal_mask(st), rng))
    fin = np.flatnonzero(st.done)
    assert not engine.legal_mask(st)[fin].any()
    before = st.copy()
    acts = uniform(st, engine.legal_mask(st), rng)
    acts[fin] = 87  # anything: ignored
    st2, rew, done = engine.step(st, acts)
    assert done[fin].all() and (rew[fin] == 0).all()
    for x, y in zip(before.arrays(), st2.arrays(), strict=True):
        assert np.array_equal(x[fin], y[fin])
    check_invariants(st2, before, rew)


def test_autoreset_starts_a_new_match() -> None:
    rng = np.random.default_rng(5)
    st = engine.reset([20, 21], "mahjongsoft")
    while True:
        prev = st
        st, rew, done = engine.step(st, uniform(st, engine.legal_mask(st), rng),
                                    autoreset=True)
        check_invariants(st, prev, rew)
        if done.any():
            break
    i = int(np.flatnonzero(done)[0])
    assert st.episode[i] == prev.episode[i] + 1
    assert st.phase[i] == VOID and not st.done[i] and st.deal_index[i] == 0
    assert (st.scores[i] == 0).all() and (st.match_scores[i] == 0).all()
    assert st.dealer[i] == 0
    assert not np.array_equal(st.wall[i], prev.wall[i])
    assert engine.legal_mask(st)[i].any()
    again = engine.reset_done(engine.reset([20], "mahjongsoft")._replace(
        done=np.array([True])))
    assert again.episode[0] == 1


@pytest.mark.parametrize("preset", PRESETS)
def test_new_matches_in_place_equals_reset_done(preset: str) -> None:
    """``engine.new_matches`` deals the given tables in place exactly as ``reset_done``
    deals finished ones, and leaves every other table untouched."""
    rng = np.random.default_rng(9)
    st = engine.reset(np.arange(12) + 70, preset)
    for _ in range(rng.integers(30, 90)):
        st, _, _ = engine.step(st, uniform(st, engine.legal_mask(st), rng))
    rows = np.array([1, 4, 5, 10])
    want = engine.reset_done(st._replace(done=np.isin(np.arange(12), rows)))
    got = st.copy()
    engine.new_matches(got, rows)
    for name, x, y, z in zip(State._fields, got.arrays(), want.arrays(), st.arrays(),
                             strict=False):
        assert np.array_equal(x[rows], y[rows]), name
        keep = np.setdiff1d(np.arange(12), rows)
        assert np.array_equal(x[keep], z[keep]), name
    assert (got.episode[rows] == st.episode[rows] + 1).all()


@pytest.mark.parametrize("preset", PRESETS)
def test_multi_deal_match_rotates_dealer(preset: str) -> None:
    rules = get_rules(preset).replace(deals_per_match=4)
    rng = np.random.default_rng(6)
    tables = 24
    st = engine.reset(np.arange(tables) + 500, rules)
    deal_scores = np.zeros((tables, 4), np.int64)
    first_wins: list[list | None] = [None] * tables
    seen_rotations = Counter()
    while not st.done.all():
        mask = engine.legal_mask(st)
        led = Ledger()
        prev = st
        st, rew, done = engine.step(st, biased(st, mask, rng), ledger=led)
        check_invariants(st, prev, rew)
        wins = [e for e in led.entries if e[0] == "win"]
        for t in {e[1] for e in wins}:
            if first_wins[t] is None:
                first_wins[t] = [e for e in wins if e[1] == t]
        for e in led.entries:
            if e[0] != "end":
                continue
            t = e[1]
            deal_scores[t] += prev.scores[t] + rew[t].astype(np.int64)
            fw = first_wins[t]
            if fw is None:
                want, kind = int(prev.dealer[t]), "nobody won"
            elif len(fw) == 1:
                want, kind = fw[0][2], "one first winner"
            else:
                want, kind = fw[0][4], "several first winners"
            assert e[3] == want, f"table {t}: next dealer {e[3]}, expected {want} ({kind})"
            seen_rotations[kind] += 1
            if st.phase[t] != DONE:
                assert st.dealer[t] == want and st.phase[t] == VOID
                assert (st.scores[t] == 0).all()
            first_wins[t] = None
    assert (st.deal_index == 3).all()
    assert np.array_equal(st.match_scores, deal_scores)
    assert seen_rotations["one first winner"] > 0
    assert {END_WALL, END_THREE_HU} >= set(st.end_reason.tolist())

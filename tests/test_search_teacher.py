"""The search comparisons: the search agent's candidate values as training data."""

import numpy as np
import pytest

from sichuan_agents.search.agent import SearchAgent
from sichuan_agents.training.advice import advice_planes
from sichuan_agents.training.distill import load_shards
from sichuan_agents.training.search_teacher import generate
from sichuan_agents.training.search_teacher import main as teacher_main
from sichuan_env.core import engine
from sichuan_env.core.actions import HU
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import TURN
from sichuan_env.seats.driver import choose
from sichuan_env.seats.view import seat_view


def test_on_values_reports_each_searched_rows_candidates_and_their_means():
    """With z=0 the agent plays the candidate with the best mean, so the values it reports
    must put its choice first (or the prior's, when nothing beats it)."""
    rules = get_rules("mil")
    st = engine.reset(np.arange(12, dtype=np.int64) + 40, rules)
    agent = SearchAgent(seed=1, k=6, z=0.0, rules=rules)
    seen = 0
    got: dict[int, tuple[list[int], np.ndarray]] = {}
    agent.on_values = lambda i, c, v: got.__setitem__(i, (c, v))
    for _ in range(40):
        live = np.flatnonzero(~st.done)
        seats = st.current[live].astype(np.intp)
        got.clear()
        acts = np.zeros(st.batch_size, np.int64)
        acts[live] = agent.act_batch(seat_view(st, seats, live), st.legal_action_mask[live])
        for i, (cand, val) in got.items():
            assert len(cand) == val.size >= 2
            assert st.legal_action_mask[live[i], cand].all()
            best = int(np.argmax(val))
            want = cand[best] if val[best] > val[0] else cand[0]
            assert acts[live[i]] == want
            seen += 1
        engine.step(st, np.where(st.done, 0, acts), inplace=True)
    assert seen > 20


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_samples_are_own_turns_valued_by_the_search_in_the_rollout_format(preset, tmp_path):
    data = generate(deals=2, seed=5, rules=preset, sample_prob=0.5, k=4, tables=2)
    n = data["returns"].shape[0]
    assert n > 5
    cand, ret, masks = data["candidates"].astype(np.int64), data["returns"], data["masks"]
    have = cand >= 0
    assert (have.sum(1) >= 2).all() and (have[:, 0]).all()
    assert np.isfinite(ret[have]).all() and np.isnan(ret[~have]).all()
    assert (data["phase"] == TURN).all() and not masks[:, HU].any()
    rows = np.repeat(np.arange(n), cand.shape[1])[have.ravel()]
    assert masks[rows, cand[have]].all(), "every candidate is legal"
    np.testing.assert_array_equal(cand[:, 0], data["advice"])
    np.testing.assert_array_equal(data["planes"][:, -7:].astype(np.float32),
                                  advice_planes(data["advice"]))
    # column 0 is what the rules bot plays there: replay the deals and compare
    again = generate(deals=2, seed=5, rules=preset, sample_prob=0.5, k=4, tables=2)
    for key in data:
        np.testing.assert_array_equal(data[key], again[key])
    path = tmp_path / "s.npz"
    np.savez_compressed(path, **data)
    loaded = load_shards([str(path)])
    assert loaded["returns"].shape[0] == n and np.isfinite(loaded["weight"]).all()


def test_column_zero_is_the_rules_bots_choice_in_plain_play():
    """The deals are those four Python rules bots play: the first sampled decision's
    advice is what the Python bot chooses at that table."""
    rules = get_rules("mil")
    data = generate(deals=1, seed=9, rules="mil", sample_prob=1.0, k=2, tables=1)
    st = engine.reset(np.array([9 * 10**7], np.int64), rules)
    from sichuan_agents.bots.rules_bot import RulesAgent
    bot = RulesAgent()
    advised = []
    while not st.done.all():
        a = choose(st, np.array([0]), [bot])
        m = st.legal_action_mask[0]
        if st.phase[0] == TURN and not m[HU] and m.sum() > 1:
            advised.append(int(a[0]))
        engine.step(st, a, inplace=True)
    assert len(advised) == data["advice"].size
    np.testing.assert_array_equal(advised, data["advice"])


@pytest.mark.parametrize("argv, text", [
    (["--deals", "0", "--out", "x.npz"], "--deals must be >= 1"),
    (["--k", "1", "--out", "x.npz"], "--k >= 2"),
    (["--rules", "nope", "--out", "x.npz"], "--rules:"),
])
def test_cli_errors_are_one_line(argv, text, capsys):
    assert teacher_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and text in err[0]


def test_sample_chance_per_decision_kind():
    from sichuan_agents.training.search_teacher import sample_chance
    from sichuan_env.core.actions import KONG, N_ACTIONS, PASS, PUNG
    from sichuan_env.core.state import CLAIM, VOID

    m = np.zeros((6, N_ACTIONS), bool)
    m[0, [3, 4]] = True  # own turn, two discards
    m[1, [3, 4, KONG + 3]] = True  # own turn offering a kong
    m[2, [3, 4, HU]] = True  # own turn with a legal Hu: the bot's, never sampled
    m[3, [PUNG, PASS]] = True  # claim answer
    m[4, [28, 40]] = True  # void choice
    m[5, [PASS]] = True  # one legal action
    phase = np.array([TURN, TURN, TURN, CLAIM, VOID, CLAIM])
    np.testing.assert_array_equal(sample_chance(phase, m, 0.25, 0.0, 0.0),
                                  [0.25, 0.25, 0, 0, 0, 0])
    np.testing.assert_array_equal(sample_chance(phase, m, 0.25, 0.5, 0.125),
                                  [0.25, 0.5, 0, 0.5, 0.125, 0])


def test_claims_kongs_and_the_void_choice_are_valued_too():
    data = generate(deals=2, seed=8, rules="mil", sample_prob=0.05, k=2, tables=2,
                    claim_prob=1.0, void_prob=1.0)
    from sichuan_env.core.state import CLAIM, VOID

    phase, cand, masks = data["phase"], data["candidates"].astype(np.int64), data["masks"]
    assert (phase == VOID).sum() >= 4 and (phase == CLAIM).any()
    have = cand >= 0
    rows = np.repeat(np.arange(cand.shape[0]), cand.shape[1])[have.ravel()]
    assert masks[rows, cand[have]].all() and (have.sum(1) >= 2).all()
    np.testing.assert_array_equal(cand[:, 0], data["advice"])
    assert np.isfinite(data["returns"][have]).all()
    # with no claim or void chance the samples are the own-turn ones of the default
    plain = generate(deals=2, seed=8, rules="mil", sample_prob=0.05, k=2, tables=2)
    assert (plain["phase"] == TURN).all()


def test_with_the_best_prior_column_zero_is_what_best_plays_there():
    """``prior=best``: candidate 0 of every sample is the shipped best agent's choice at
    that decision (the decisions found again by replaying their deals)."""
    from sichuan_agents.models.best import best_agent
    from sichuan_agents.training.decision_store import replay

    data = generate(deals=1, seed=3, rules="mil", sample_prob=0.5, k=2, tables=1,
                    prior="best")
    assert str(data["prior"]) == "best" and data["returns"].shape[0] > 3
    st = replay(data["deal_seed"], data["decision"], get_rules("mil"))
    rows = np.arange(st.batch_size)
    want = best_agent("mil").act_batch(seat_view(st, data["seat"].astype(np.intp), rows),
                                       st.legal_action_mask)
    np.testing.assert_array_equal(data["candidates"][:, 0], want)

"""Rollout comparisons (sichuan_agents/rollout_teacher.py) and the fit on them
(sichuan_agents/distill.py).

The play-outs are checked against plain play (the bot's own choice played out must score
exactly what the deal then gave the decider), the candidates against the masks, and the
fit against a planted improvement it must find on data where the truth is known."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sichuan_agents.bots.greedy import Seen
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_agents.models.ppo import MODELS
from sichuan_agents.training.advice import advice_planes
from sichuan_agents.training.distill import held_out_gain
from sichuan_agents.training.distill import main as distill_main
from sichuan_agents.training.rollout_teacher import (
    MAX_CANDIDATES,
    candidate_actions,
    generate,
    play_out,
    suit_of_void_action,
)
from sichuan_agents.training.rollout_teacher import main as teacher_main
from sichuan_env.core import engine
from sichuan_env.core.actions import VOID_SUIT, VOID_TILE
from sichuan_env.core.state import CLAIM, ROB, TURN, VOID
from sichuan_env.core.vocab import SUIT_OF
from sichuan_env.seats.driver import choose
from sichuan_env.seats.view import seat_view

BOT = RulesAgent()
SHIPPED_MODEL = MODELS / "fitted_mil.zip"


def play_to_end(st, seats):
    """Points of ``seats[i]`` at table i from now on, every seat played by the bot."""
    total = np.zeros(st.batch_size)
    rows = np.arange(st.batch_size)
    while not st.done.all():
        live = np.flatnonzero(~st.done)
        acts = np.zeros(st.batch_size, np.int64)
        acts[live] = choose(st, live, [BOT])
        _, r, _ = engine.step(st, acts, inplace=True)
        total += r[rows, seats]
    return total


def states_midway(seed: int, tables: int, steps: int):
    st = engine.reset(np.arange(tables) + seed, "mil")
    for _ in range(steps):
        live = np.flatnonzero(~st.done)
        if not live.size:
            break
        acts = np.zeros(tables, np.int64)
        acts[live] = choose(st, live, [BOT])
        engine.step(st, acts, inplace=True)
    return st


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10**6), steps=st.integers(0, 60))
def test_the_bots_own_choice_played_out_scores_what_plain_play_gives(seed, steps):
    st = states_midway(seed, 8, steps)
    live = np.flatnonzero(~st.done)
    if not live.size:
        return
    sub = st.take(live)
    seats = sub.current.astype(np.intp)
    first = choose(sub, np.arange(sub.batch_size), [BOT])
    before = sub.copy()
    got = play_out(sub.copy(), seats, first, BOT)
    want = play_to_end(before.copy(), seats)
    np.testing.assert_array_equal(got, want)
    # the deal's points sum to zero over the seats, and the play-out is one seat's share
    assert np.isfinite(got).all()


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10**6), steps=st.integers(0, 80))
def test_candidates_are_legal_distinct_and_start_with_the_bots_choice(seed, steps):
    st = states_midway(seed, 16, steps)
    live = np.flatnonzero(~st.done)
    if not live.size:
        return
    seats = st.current[live].astype(np.intp)
    masks = st.legal_action_mask[live]
    mine = choose(st, live, [BOT])
    cand = candidate_actions(BOT, Seen(seat_view(st, seats, live)), masks, mine, discards=3)
    assert cand.shape == (live.size, MAX_CANDIDATES)
    np.testing.assert_array_equal(cand[:, 0], mine)
    for i in range(live.size):
        c = [int(a) for a in cand[i] if a >= 0]
        assert (cand[i, len(c):] == -1).all(), "padding only at the end"
        assert len(set(c)) == len(c), f"duplicate candidates {c}"
        assert all(masks[i, a] for a in c), f"illegal candidate in {c}"
        ph = st.phase[live[i]]
        legal = np.flatnonzero(masks[i])
        if ph in (CLAIM, ROB):
            if legal.size <= MAX_CANDIDATES:
                assert sorted(c) == sorted(legal.tolist()), "every claim option is compared"
        elif ph == VOID:
            suits = suit_of_void_action(np.array(c))
            assert len(set(suits.tolist())) == len(c), "one candidate per suit"
            assert set(suits.tolist()) == set(suit_of_void_action(legal).tolist())
        elif ph == TURN:
            assert sum(1 for a in c if a < VOID_TILE) <= 3


def test_suit_of_void_action_reads_tiles_and_indicator_cards():
    kinds = np.arange(27)
    np.testing.assert_array_equal(suit_of_void_action(VOID_TILE + kinds), SUIT_OF[kinds])
    np.testing.assert_array_equal(suit_of_void_action(VOID_SUIT + np.arange(3)), [0, 1, 2])


def test_generate_samples_match_plain_play_and_the_network_input():
    data = generate(deals=6, seed=3, sample_prob=0.5, claim_prob=1.0, void_prob=1.0,
                    tables=3, batch=64)
    n = data["returns"].shape[0]
    assert n > 10
    cand = data["candidates"]
    have = cand >= 0
    assert (have.sum(1) >= 2).all(), "only decisions with a choice are kept"
    assert np.isfinite(data["returns"][have]).all() and np.isnan(data["returns"][~have]).all()
    np.testing.assert_array_equal(cand[:, 0], data["advice"])
    assert data["planes"].shape == (n, 89, 27)
    # the advice planes (the last 7) light the bot's choice
    np.testing.assert_array_equal(data["planes"][:, -7:].astype(np.float32),
                                  advice_planes(data["advice"]))
    rows = np.arange(n)
    assert data["masks"][rows, cand[:, 0]].all()
    # the same seed gives the same samples
    again = generate(deals=6, seed=3, sample_prob=0.5, claim_prob=1.0, void_prob=1.0,
                     tables=3, batch=64)
    for k in data:
        np.testing.assert_array_equal(data[k], again[k])


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_compiled_play_outs_give_the_python_bots_samples(preset):
    """The rules bot's compiled copy playing the deals and the play-outs gives every
    sample, candidate and return that the Python bot gives."""
    args = dict(deals=8, seed=4, rules=preset, sample_prob=0.5, claim_prob=1.0,
                void_prob=1.0, tables=4, batch=64)
    python, compiled = generate(**args), generate(**args, compiled=True)
    assert python["returns"].shape[0] > 50
    for k in python:
        np.testing.assert_array_equal(python[k], compiled[k])


def test_compiled_play_outs_take_no_other_player():
    from sichuan_agents.bots.greedy import GreedyAgent
    with pytest.raises(ValueError, match="give no player"):
        generate(deals=1, seed=1, compiled=True, player=GreedyAgent())


def test_another_player_plays_the_deals_and_the_advice_stays_the_bots():
    """With ``player``, column 0 is the player's choice (here greedy's) and the advice
    planes hold the rules bot's choice for the same decision."""
    from sichuan_agents.bots.greedy import GreedyAgent
    data = generate(deals=4, seed=5, sample_prob=0.5, claim_prob=1.0, void_prob=1.0,
                    tables=4, batch=64, player=GreedyAgent())
    cand, adv = data["candidates"], data["advice"]
    assert (cand[:, 0] != adv).any(), "greedy and rules disagree somewhere"
    np.testing.assert_array_equal(data["planes"][:, -7:].astype(np.float32),
                                  advice_planes(adv))
    assert data["masks"][np.arange(adv.size), adv].all()


def test_held_out_gain_counts_only_played_out_choices():
    cand = np.array([[5, 6, -1], [84, 87, -1], [3, 4, 7]])
    ret = np.array([[1.0, 3.0, np.nan], [0.0, -2.0, np.nan], [2.0, 2.0, 5.0]], np.float32)
    g = held_out_gain(np.array([6, 84, 9]), cand, ret)
    assert g["gain"] == pytest.approx(1.0)  # +2 on the first, 0 on the second
    assert g["unknown"] == pytest.approx(1 / 3)
    assert g["deviate"] == pytest.approx(2 / 3)


def _planted_shards(d, first: int, second: int, phase: int) -> list[str]:
    """Shards where candidate ``second`` is worth 3 points more than the bot's ``first``
    whenever plane 0 holds a 1 at kind 0, and 3 points less otherwise."""
    rng = np.random.default_rng(0)
    paths = []
    for j in range(3):
        n = 3000
        planes = np.zeros((n, 89, 27), np.float16)
        flag = rng.random(n) < 0.5
        planes[flag, 0, 0] = 1.0
        planes[:, -7:] = advice_planes(np.full(n, first, np.int64))  # the bot's choice
        masks = np.zeros((n, 88), bool)
        masks[:, [first, second]] = True
        cand = np.full((n, MAX_CANDIDATES), -1, np.int16)
        cand[:, 0], cand[:, 1] = first, second
        ret = np.full((n, MAX_CANDIDATES), np.nan, np.float32)
        noise = rng.normal(0, 1.0, n)
        ret[:, 0] = noise
        ret[:, 1] = noise + np.where(flag, 3.0, -3.0) + rng.normal(0, 1.0, n)
        p = d / f"s{j}.npz"
        np.savez(p, planes=planes, masks=masks, candidates=cand, returns=ret,
                 advice=cand[:, 0].copy(), phase=np.full(n, phase, np.int8),
                 meta=np.array([j, n, 10**6, 10**6, 10**6, 3], np.int64))
        paths.append(str(p))
    return paths


@pytest.mark.parametrize("margins, deviates", [
    (["--margin", "0", "--void-margin", "5"], False),
    (["--margin", "5", "--void-margin", "0"], True),
])
def test_the_void_margin_governs_another_void_suit(tmp_path, capsys, margins, deviates):
    shards = _planted_shards(tmp_path, VOID_TILE + 2, VOID_TILE + 11, VOID)
    rc = distill_main([*shards, "--val", "1", "--epochs", "3", "--lr", "1e-3",
                       "--init", str(SHIPPED_MODEL), *margins,
                       "--out", str(tmp_path / "v.zip")])
    assert rc == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch")]
    last = eval(lines[-1].split(": ", 1)[1])
    assert set(last["by_kind"]) == {"void"}
    if deviates:
        assert 0.35 < last["deviate"] < 0.65 and last["gain"] > 1.2
    else:
        assert last["deviate"] < 0.05


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Discard 2 instead of the bot's discard 1: +3 points with a flag in the planes, -3
    without -- an improvement the fit must find."""
    return _planted_shards(tmp_path_factory.mktemp("planted"), 1, 2, TURN)


def test_the_fit_finds_a_planted_improvement(planted, tmp_path, capsys):
    out = tmp_path / "fit.zip"
    rc = distill_main([*planted, "--val", "1", "--epochs", "3", "--lr", "1e-3",
                       "--init", str(SHIPPED_MODEL), "--out", str(out)])
    assert rc == 0 and out.exists()
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch")]
    first, last = eval(lines[0].split(": ", 1)[1]), eval(lines[-1].split(": ", 1)[1])
    assert last["gain"] > first["gain"] + 1.0
    # perfect play gains 3 points on half the samples: 1.5 per sample
    assert last["gain"] > 1.2 and last["gain"] - last["ci95"] > 1.0
    assert 0.35 < last["deviate"] < 0.65
    # one sample per deal, each sampled for certain: per seat and deal, a quarter of it
    assert last["per_deal"] == pytest.approx(last["gain"] / 4, rel=0.05)


def test_save_each_epoch_writes_the_model_of_every_epoch(planted, tmp_path, capsys):
    import torch

    from sichuan_agents.training.distill import actor_logits
    from sichuan_agents.training.ppo_policy import load_model

    out = tmp_path / "fit.zip"
    rc = distill_main([*planted, "--val", "1", "--epochs", "2", "--lr", "1e-3",
                       "--init", str(SHIPPED_MODEL), "--save-each-epoch", "--out", str(out)])
    assert rc == 0
    saved = [tmp_path / "fit_ep1.zip", tmp_path / "fit_ep2.zip"]
    assert all(p.exists() for p in saved)
    obs = torch.as_tensor(np.load(planted[0])["planes"][:64].astype(np.float32))
    with torch.no_grad():
        logits = [actor_logits(load_model(p, device="cpu").policy, obs).numpy()
                  for p in (*saved, out)]
    assert np.array_equal(logits[1], logits[2])  # the last epoch's model is the output
    assert not np.array_equal(logits[0], logits[1])  # the first epoch's is its own


@pytest.mark.parametrize("margins, deviates", [
    (["--margin", "5"], False),  # a 3-point gain does not clear a 5-point margin
    (["--margin", "0", "--discard-margin", "5"], False),  # the planted choice: discards
    (["--margin", "5", "--discard-margin", "0"], True),
])
def test_a_margin_keeps_the_bots_choice_unless_the_gain_exceeds_it(planted, tmp_path,
                                                                    capsys, margins,
                                                                    deviates):
    rc = distill_main([*planted, "--val", "1", "--epochs", "3", "--lr", "1e-3",
                       "--init", str(SHIPPED_MODEL), *margins,
                       "--out", str(tmp_path / "m.zip")])
    assert rc == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch")]
    last = eval(lines[-1].split(": ", 1)[1])
    if deviates:
        assert 0.35 < last["deviate"] < 0.65 and last["gain"] > 1.2
    else:
        assert last["deviate"] < 0.05
    assert set(last["by_kind"]) == {"discard"} and last["by_kind"]["discard"]["n"] == 3000


def test_decision_kinds_follow_phase_and_mask():
    from sichuan_agents.training.distill import DECISION_KINDS, decision_kind
    from sichuan_env.core.actions import HU, KONG, PASS

    masks = np.zeros((6, 88), bool)
    masks[:, 0] = True
    masks[2, KONG + 4] = True
    masks[3, HU] = True
    masks[4, PASS] = True
    phase = np.array([VOID, TURN, TURN, TURN, CLAIM, ROB], np.int8)
    got = [DECISION_KINDS[k] for k in decision_kind(phase, masks)]
    assert got == ["void", "discard", "turn_kong", "turn_hu", "claim", "claim"]


@pytest.mark.parametrize("argv, text", [
    (["--deals", "0", "--out", "x.npz"], "--deals must be >= 1"),
    (["--sample-prob", "1.5", "--out", "x.npz"], "--sample-prob"),
    (["--player", "nobody", "--deals", "1", "--out", "x.npz"], "--player: unknown agent"),
    (["--player", "fitted", "--compiled", "--out", "x.npz"], "--compiled plays the rules"),
])
def test_teacher_cli_errors_are_one_line(argv, text, capsys):
    assert teacher_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and text in err[0]


def test_distill_cli_errors_are_one_line(tmp_path, capsys, planted):
    assert distill_main([str(tmp_path / "none.npz"), "--init", str(SHIPPED_MODEL),
                         "--out", "x.zip"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert distill_main([planted[0], "--val", "1", "--init", str(SHIPPED_MODEL),
                         "--out", "x.zip"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--val" in err[0]



def _anchor_change(model_path, anchor_path) -> float:
    """Mean squared change of the legal logits on the anchor decisions from the shipped
    model's."""
    import torch

    from sichuan_agents.training.distill import actor_logits
    from sichuan_agents.training.ppo_policy import load_model

    d = np.load(anchor_path)
    obs = torch.as_tensor(d["planes"][:512].astype(np.float32))
    m = d["masks"][:512]
    with torch.no_grad():
        got = actor_logits(load_model(model_path, device="cpu").policy, obs).numpy()
        was = actor_logits(load_model(SHIPPED_MODEL, device="cpu").policy, obs).numpy()
    return float(((got - was) ** 2)[m].mean())


def test_anchor_decisions_keep_the_start_models_logits(planted, tmp_path, capsys):
    """Fitted to discard comparisons only, the model's logits on decisions of another kind
    (the anchor: void choices) move far less with the anchor than without, and the
    planted improvement is still found."""
    anchor = _planted_shards(tmp_path, VOID_TILE + 2, VOID_TILE + 11, VOID)[0]
    change = {}
    for weight in ("0", "10"):
        out = tmp_path / f"fit_{weight}.zip"
        rc = distill_main([*planted, "--val", "1", "--epochs", "2", "--lr", "1e-3",
                           "--init", str(SHIPPED_MODEL), "--anchor", anchor,
                           "--anchor-weight", weight, "--out", str(out)])
        assert rc == 0
        lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("epoch")]
        assert eval(lines[-1].split(": ", 1)[1])["gain"] > 1.0
        change[weight] = _anchor_change(out, anchor)
    assert change["0"] > 0.01
    assert change["10"] < 0.25 * change["0"]


def test_distill_rejects_an_unknown_anchor_kind(planted, tmp_path, capsys):
    rc = distill_main([*planted, "--anchor", planted[0], "--anchor-kinds", "void,nope",
                       "--out", str(tmp_path / "x.zip")])
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--anchor-kinds: unknown kind 'nope'" in err[0]

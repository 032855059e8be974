"""The boosted agent: candidate features, the trees' fit, and how the agent departs from the
fitted network."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_agents.models.boosted import TOP, BoostedAgent, shipped_trees
from sichuan_agents.models.candidate_features import (
    DECISION_FEATURES,
    FEATURE_NAMES,
    KIND_FEATURES,
    N_FEATURES,
    candidate_features,
)
from sichuan_agents.models.ppo import PPOAgent
from sichuan_agents.search.candidates import search_candidates
from sichuan_agents.training.boost import main as boost_main
from sichuan_agents.training.rollout_teacher import write_shard
from sichuan_agents.training.search_teacher import generate
from sichuan_env.core import engine
from sichuan_env.core.actions import HU, KONG
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import TURN
from sichuan_env.seats.agent import AgentSpecError, make_agent
from sichuan_env.seats.observation import N_CHANNELS, PLANES
from sichuan_env.seats.view import SeatView, seat_view

K = {name: i for i, name in enumerate(FEATURE_NAMES)}


def decisions(preset: str, seed: int, steps: int):
    """Steps 16 deals: yields (views, masks) of the deciding seats and plays the actions
    sent back (``generator.send``)."""
    st = engine.reset(np.arange(16, dtype=np.int64) + seed, get_rules(preset))
    for _ in range(steps):
        live = np.flatnonzero(~st.done)
        if live.size == 0:
            return
        acts = yield seat_view(st, st.current[live].astype(np.intp), live), \
            st.legal_action_mask[live]
        full = np.zeros(st.batch_size, np.int64)
        full[live] = acts
        engine.step(st, full, inplace=True)


def play(preset: str, seed: int, steps: int, act):
    """Runs :func:`decisions`, each step's actions ``act(views, masks)``."""
    gen = decisions(preset, seed, steps)
    try:
        views, masks = next(gen)
        while True:
            views, masks = gen.send(act(views, masks))
    except StopIteration:
        pass


def own_turns(preset: str, seed: int, steps: int = 120):
    """(inputs, candidates, views) at the own turns with a choice and no Hu of a batch of
    deals played by four rules bots."""
    net = PPOAgent(kind="fitted", rules=preset)
    bot = RulesAgent()
    got = []

    def act(views, masks):
        acts = bot.act_batch(views, masks)
        ask = np.flatnonzero((views.phase == TURN) & ~masks[:, HU] & (masks.sum(1) > 1))
        if ask.size:
            sub = SeatView(*(f[ask] for f in views))
            cands = search_candidates(bot, TOP, sub, masks[ask], acts[ask], acts[ask])
            table = np.full((ask.size, TOP), -1, np.int64)
            for j, c in enumerate(cands):
                table[j, :len(c)] = c
            got.append((net.network_input(sub, masks[ask], advice=acts[ask]), table, sub))
        return acts

    play(preset, seed, steps, act)
    inputs = np.concatenate([g[0] for g in got])
    table = np.concatenate([g[1] for g in got])
    views = SeatView(*(np.concatenate(f) for f in zip(*(g[2] for g in got), strict=True)))
    return inputs, table, views


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_features_agree_with_the_seat_view_they_come_from(preset):
    """Differential: the features read from the network's planes equal the same facts
    counted directly from the seat views."""
    inputs, cands, views = own_turns(preset, seed=70)
    feats, valid = candidate_features(inputs, cands)
    assert feats.shape == (cands.shape[0], TOP, N_FEATURES) and valid[:, 0].all()
    assert valid.sum() > cands.shape[0]  # rows with more than one candidate
    for i in range(cands.shape[0]):
        hand = views.hand[i].astype(int)
        suits = hand.reshape(3, 9).sum(1)
        rank = np.argsort(np.argsort(suits, kind="stable"), kind="stable")
        river = views.river[i]
        own_void = views.void[i, 0]
        d = feats[i, 0]
        assert d[K["pairs"]] == (hand >= 2).sum() and d[K["triplets"]] == (hand >= 3).sum()
        assert d[K["suits_held"]] == (suits > 0).sum() and d[K["largest_suit"]] == suits.max()
        assert d[K["void_left"]] == (suits[own_void] if own_void >= 0 else 0)
        assert d[K["others_won"]] == views.hu[i, 1:].sum()
        assert d[K["wall_left"]] == pytest.approx(views.wall_left[i] / 55, abs=1e-6)
        for j in np.flatnonzero(valid[i]):
            a = int(cands[i, j])
            t = a - KONG if a >= KONG else a
            s, r = divmod(t, 9)
            f = feats[i, j]
            assert f[K["is_kong"]] == (a >= KONG)
            assert f[K["held"]] == hand[t] and f[K["suit_held"]] == suits[s]
            assert f[K["suit_rank"]] == rank[s] and f[K["edge"]] == min(r, 8 - r)
            near = [hand[9 * s + r + o] if 0 <= r + o < 9 else 0 for o in (-2, -1, 1, 2)]
            assert list(f[K["held_minus2"]:K["held_plus2"] + 1]) == near
            assert f[K["own_discarded"]] == (river[0] == t).sum()
            assert f[K["others_discarded"]] == (river[1:] == t).sum()
            assert f[K["live"]] == views.live_discards[i, t]
            assert f[K["in_void"]] == (own_void == s)
            block = f[:len(KIND_FEATURES)]
            rules_block = f[2 * len(KIND_FEATURES):3 * len(KIND_FEATURES)]
            np.testing.assert_array_equal(rules_block, feats[i, 0, :len(KIND_FEATURES)])
            np.testing.assert_allclose(f[len(KIND_FEATURES):2 * len(KIND_FEATURES)],
                                       block - rules_block, atol=1e-6)
            np.testing.assert_array_equal(f[-len(DECISION_FEATURES):],
                                          d[-len(DECISION_FEATURES):])


def test_a_scripted_hand_gives_the_expected_features():
    x = np.zeros((1, N_CHANNELS + 4, 27), np.float32)
    hand = np.zeros(27, int)
    hand[[0, 1, 2, 9, 13, 14, 20, 25, 26]] = [1, 1, 1, 4, 1, 1, 2, 1, 2]  # suits: 3, 6, 5
    for k in range(4):
        x[0, PLANES["hand"][0] + k] = hand > k
    # candidates: discard kind 20 (a pair: the rules bot's choice), kong of kind 9,
    # discard kind 0 (a suit's edge), none
    feats, valid = candidate_features(x, np.array([[20, KONG + 9, 0, -1]]))
    assert valid.tolist() == [[True, True, True, False]]
    f = feats[0]
    assert [f[0, K["held"]], f[1, K["held"]], f[2, K["held"]]] == [2, 4, 1]
    assert [f[j, K["is_kong"]] for j in range(3)] == [0, 1, 0]
    assert [f[j, K["suit_held"]] for j in range(3)] == [5, 6, 3]
    assert f[2, K["edge"]] == 0 and f[0, K["edge"]] == 2  # kind 20: rank 2 of its suit
    assert f[2, K["held_plus1"]] == 1 and f[2, K["held_plus2"]] == 1
    assert f[2, K["held_minus1"]] == 0 and f[2, K["held_minus2"]] == 0
    assert f[2, K["held_vs_rules"]] == -1 and f[1, K["held_vs_rules"]] == 2
    assert f[2, K["rules_held"]] == 2
    assert [f[j, K["suit_rank"]] for j in range(3)] == [1, 2, 0]
    assert f[0, K["pairs"]] == 3 and f[0, K["triplets"]] == 1 and f[0, K["largest_suit"]] == 6


def test_bad_candidate_inputs_are_refused_in_one_line():
    x = np.zeros((2, N_CHANNELS + 4, 27), np.float32)
    with pytest.raises(ValueError, match="network inputs"):
        candidate_features(x[:, :10], np.zeros((2, 2), int))
    with pytest.raises(ValueError, match="candidates must be"):
        candidate_features(x, np.zeros((3, 2), int))
    with pytest.raises(ValueError, match="column 0"):
        candidate_features(x, np.array([[0, 1], [HU, 2]]))


@pytest.fixture(scope="module")
def small_trees(tmp_path_factory):
    """Trees fitted by the command on two small search_teacher shards (one held out)."""
    d = tmp_path_factory.mktemp("boost")
    paths = []
    for seed in (5, 6):
        p = d / f"s{seed}.npz"
        write_shard(str(p), generate(deals=3, seed=seed, rules="mil", sample_prob=0.6, k=4,
                                     tables=3))
        paths.append(str(p))
    out = d / "trees.txt"
    assert boost_main([*paths, "--val", "1", "--trees", "20", "--leaves", "4",
                       "--min-leaf", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def best_prior_trees(tmp_path_factory):
    """Trees fitted to two small shards of the search with the ``best`` prior."""
    d = tmp_path_factory.mktemp("boost_best")
    paths = []
    for seed in (7, 8):
        p = d / f"s{seed}.npz"
        write_shard(str(p), generate(deals=3, seed=seed, rules="mil", sample_prob=0.6, k=4,
                                     tables=3, prior="best"))
        paths.append(str(p))
    out = d / "trees.txt"
    assert boost_main([*paths, "--val", "1", "--trees", "20", "--leaves", "4",
                       "--min-leaf", "2", "--out", str(out)]) == 0
    return out


def test_the_fit_writes_trees_and_metadata_with_the_held_out_gain(small_trees):
    meta = json.loads(small_trees.with_suffix(".json").read_text())
    assert meta["features"] == list(FEATURE_NAMES) and meta["held_out_shards"] == 1
    assert meta["prior"] == "rules" and BoostedAgent(small_trees).over == "network"
    assert meta["samples_fitted"] > 0 and meta["rows_fitted"] >= meta["samples_fitted"]
    r = meta["held_out"]["margin_0"]
    assert 0 <= r["departures"] <= 1 and np.isfinite(r["per_sample"])
    assert meta["settings"]["trees"] == 20


def test_the_fit_command_refuses_bad_input_in_one_line(tmp_path, capsys, small_trees):
    assert boost_main([str(tmp_path / "none.npz"), "--out", str(tmp_path / "t.txt")]) == 2
    assert capsys.readouterr().err.strip().startswith("boost: no such file")
    shard = str(sorted(small_trees.parent.glob("s*.npz"))[0])
    assert boost_main([shard, "--val", "1", "--out", str(tmp_path / "t.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("boost: --val") and "\n" not in err
    assert not (tmp_path / "t.txt").exists()


def test_shards_of_different_priors_are_not_fitted_together(tmp_path, capsys, small_trees,
                                                           best_prior_trees):
    mixed = [str(sorted(t.parent.glob("s*.npz"))[0]) for t in (small_trees, best_prior_trees)]
    assert boost_main([*mixed, "--val", "1", "--out", str(tmp_path / "t.txt")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("boost: the shards mix search priors (best, rules)")
    assert "\n" not in err and not (tmp_path / "t.txt").exists()


def test_trees_of_the_best_prior_re_rank_best_and_a_huge_margin_plays_as_best(
        best_prior_trees):
    from sichuan_agents.arena import run_arena

    assert json.loads(best_prior_trees.with_suffix(".json").read_text())["prior"] == "best"
    stacked = BoostedAgent(best_prior_trees, rules="mil", margin=99)
    assert stacked.over == "best"
    a = run_arena([stacked, "rules", "rules", "rules"], deals=16, seed=3, rules="mil")
    b = run_arena(["best", "rules", "rules", "rules"], deals=16, seed=3, rules="mil")
    np.testing.assert_array_equal(a.points, b.points)
    assert stacked.decisions > 0 and stacked.departures == 0


def test_departures_over_best_are_candidates_of_the_best_prior(best_prior_trees):
    """Over ``best``, the trees change its choice only at own turns with a choice and no
    Hu, to one of the candidates the search with the ``best`` prior lists there."""
    stacked = BoostedAgent(best_prior_trees, rules="mil", margin=0, over="best")
    best = make_agent("best", preset="mil")
    bot = RulesAgent()
    departed = 0

    def act(views, masks):
        nonlocal departed
        acts = stacked.act_batch(views, masks)
        assert masks[np.arange(masks.shape[0]), acts].all()
        base, rule = best.act_batch(views, masks), bot.act_batch(views, masks)
        for i in np.flatnonzero(acts != base):
            assert views.phase[i] == TURN and not masks[i, HU]
            sub = SeatView(*(f[i:i + 1] for f in views))
            m = masks[i:i + 1]
            assert acts[i] in search_candidates(bot, TOP, sub, m, base[i:i + 1],
                                                rule[i:i + 1])[0]
            departed += 1
        return base

    play("mil", 90, 150, act)
    assert departed > 0 and stacked.departures == departed


def test_a_huge_margin_plays_exactly_as_the_fitted_network(small_trees):
    from sichuan_agents.arena import run_arena

    boosted = BoostedAgent(small_trees, rules="mil", margin=99)
    a = run_arena([boosted, "rules", "rules", "rules"], deals=16, seed=3, rules="mil")
    b = run_arena(["fitted", "rules", "rules", "rules"], deals=16, seed=3, rules="mil")
    np.testing.assert_array_equal(a.points, b.points)
    assert boosted.decisions > 0 and boosted.departures == 0


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_departures_are_own_turn_candidates_where_the_network_agrees_with_rules(preset):
    """The shipped trees change the fitted network's choice only at own turns with a
    choice and no Hu where the network plays the rules bot's choice, and only to one of
    the search's candidates; every action stays legal."""
    agent = make_agent("boosted", preset=preset)
    assert agent.name == "boosted" and agent.path == str(shipped_trees(preset))
    net = PPOAgent(kind="fitted", rules=preset)
    bot = RulesAgent()
    departed = 0

    def act(views, masks):
        nonlocal departed
        acts = agent.act_batch(views, masks)
        assert masks[np.arange(masks.shape[0]), acts].all()
        mine, rule = net.act_batch(views, masks), bot.act_batch(views, masks)
        for i in np.flatnonzero(acts != mine):
            assert views.phase[i] == TURN and not masks[i, HU] and mine[i] == rule[i]
            sub = SeatView(*(f[i:i + 1] for f in views))
            assert acts[i] in search_candidates(bot, TOP, sub, masks[i:i + 1], rule[i:i + 1])[0]
            departed += 1
        return mine  # the deals go on as the network plays them

    play(preset, 90, 150, act)
    assert departed > 0


def test_bad_settings_and_missing_trees_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="margin must be"):
        BoostedAgent(margin=-1)
    with pytest.raises(ValueError, match="over must be one of network, best"):
        BoostedAgent(over="rules")
    with pytest.raises(FileNotFoundError, match="no trees file"):
        BoostedAgent(tmp_path / "none.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("not a model\n")
    with pytest.raises(ValueError, match="not a LightGBM model"):
        BoostedAgent(bad)
    with pytest.raises(AgentSpecError, match="no trees file"):
        make_agent(f"boosted:{tmp_path / 'none.txt'}")

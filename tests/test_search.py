"""The search agent: its compiled rollout policies, the deal sampler (legal deals, nothing
hidden used), the agent's choices and its options from the command line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from sichuan_agents.arena import main as arena_main
from sichuan_agents.bots.greedy import GreedyAgent
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_agents.search import rollout as sr
from sichuan_agents.search.agent import SearchAgent
from sichuan_agents.search.sampler import (
    DISCARD_WEIGHTS,
    EXPLAINED_MISS,
    HAND_SAMPLING,
    Known,
    discard_weights,
    explained_weights,
    sample_states,
)
from sichuan_env.core import engine, hands
from sichuan_env.core.actions import (
    DISCARD,
    HU,
    KONG,
    MELDED_KONG,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
)
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import CLAIM, ROB, TURN, VOID, State
from sichuan_env.core.vocab import MELD_KIND_OF_CODE, MELD_TILES, SUIT_OF
from sichuan_env.seats.agent import AgentSpecError, make_agent, validate_agent
from sichuan_env.seats.driver import choose
from sichuan_env.seats.view import SeatView, seat_view

ROOT = Path(__file__).resolve().parent.parent


def _positions(preset: str, n_tables: int = 24, seed: int = 5) -> list[State]:
    """Snapshots (one table each) of deals played by four rules bots."""
    st = engine.reset(np.arange(seed, seed + n_tables), get_rules(preset))
    bot = RulesAgent()
    snaps: list[State] = []
    while not st.done.all():
        live = np.flatnonzero(~st.done)
        snaps += [st.take([t]) for t in live]
        acts = np.zeros(st.batch_size, np.int64)
        acts[live] = choose(st, live, [bot])
        engine.step(st, acts, inplace=True)
    return snaps


@pytest.fixture(scope="module")
def mil_positions() -> list[State]:
    return _positions("mil")


@pytest.fixture(scope="module")
def soft_positions() -> list[State]:
    return _positions("mahjongsoft", 12, 77)


# ----------------------------------------------------------------------------- rollout policy


def _waits_choice(p: State) -> int:
    return int(sr.choose_actions(p, np.array([0]))[0])


def test_waits_policy_rules(mil_positions):
    seen = {"hu": 0, "void_tile": 0, "ready": 0, "void": 0, "kong_claim": 0}
    for p in mil_positions:
        m = p.legal_action_mask[0]
        seat = int(p.current[0])
        a = _waits_choice(p)
        assert m[a], "the policy chose an illegal action"
        ph = int(p.phase[0])
        hand = p.hand[0, seat]
        if m[HU]:
            assert a == HU
            seen["hu"] += 1
            continue
        if ph == VOID:
            per_suit = hand.reshape(3, 9).sum(1)
            suit = a - VOID_SUIT if a >= VOID_SUIT else SUIT_OF[a - VOID_TILE]
            assert per_suit[suit] == per_suit.min()
            seen["void"] += 1
        elif ph == TURN and not m[KONG:PUNG].any() and m[DISCARD:VOID_TILE].sum() > 1:
            vd = int(p.void[0, seat])
            if hand[9 * vd:9 * vd + 9].sum():
                assert SUIT_OF[a - DISCARD] == vd
                seen["void_tile"] += 1
                continue
            mk = MELD_KIND_OF_CODE[p.meld[0, seat]]
            legal = np.flatnonzero(m[DISCARD:VOID_TILE])
            h13 = np.repeat(hand[None], legal.size, 0)
            h13[np.arange(legal.size), legal] -= 1
            waits = hands.batch_wait_mask(h13, np.repeat(mk[None], legal.size, 0),
                                          np.full(legal.size, vd, np.int8))
            unseen = 4 - hand - p.live_discards[0] - p.won_tiles[0] - MELD_TILES[
                p.meld[0]].sum(0)
            live = (waits * unseen).sum(1)
            if live.max() > 0:  # the discard leaving the most unseen waits
                assert live[list(legal).index(a - DISCARD)] == live.max()
                seen["ready"] += 1
        elif ph in (CLAIM, ROB) and m[MELDED_KONG]:
            assert a == MELDED_KONG
            seen["kong_claim"] += 1
    assert all(v > 0 for v in seen.values()), seen


def test_waits_policy_pungs_only_loose_pairs(mil_positions):
    for p in mil_positions:
        m = p.legal_action_mask[0]
        if p.phase[0] == CLAIM and m[PUNG] and not m[HU] and not m[MELDED_KONG]:
            k = int(p.claim_tile[0])
            hand = p.hand[0, int(p.current[0])]
            near = (hand[k - 1] if k % 9 > 0 else 0) + (hand[k + 1] if k % 9 < 8 else 0)
            assert _waits_choice(p) == (PUNG if near == 0 else PASS)


def _tally_kinds(kinds, st, t, m):
    """Counts table ``t``'s decision (mask ``m``) by kind in ``kinds``; returns the own-turn
    discard kind (``void_tile`` or ``discard``) once the void is chosen, else None."""
    ph = int(st.phase[t])
    hand = st.hand[t, int(st.current[t])]
    vd = int(st.void[t, int(st.current[t])])
    kinds["void"] += ph == VOID
    kinds["hu"] += bool(m[HU])
    kinds["own_kong"] += ph == TURN and bool(m[KONG:PUNG].any())
    kinds["pung"] += ph == CLAIM and bool(m[PUNG])
    kinds["claim_kong"] += ph == CLAIM and bool(m[MELDED_KONG])
    if ph == TURN and vd >= 0:
        key = "void_tile" if hand[9 * vd:9 * vd + 9].sum() else "discard"
        kinds[key] += 1
        return key
    return None


@pytest.mark.parametrize("preset, n_tables", [("mil", 24), ("mahjongsoft", 16)])
def test_greedy_policy_chooses_what_greedy_chooses(preset, n_tables):
    """The compiled ``greedy`` rollout policy is the Python greedy bot: the same action at
    every decision of deals played by rules and greedy bots in turn (several hundred
    decisions with a choice, every decision kind)."""
    st = engine.reset(np.arange(40, 40 + n_tables), get_rules(preset))
    bots = [RulesAgent(), GreedyAgent()]
    python_greedy = GreedyAgent()
    kinds = {"void": 0, "discard": 0, "void_tile": 0, "own_kong": 0, "pung": 0,
             "claim_kong": 0, "hu": 0}
    step = 0
    while not st.done.all():
        live = np.flatnonzero(~st.done)
        masks = st.legal_action_mask[live]
        want = python_greedy.act_batch(seat_view(st, st.current[live], live), masks)
        got = sr.choose_actions(st, live, "greedy")
        assert (got == want).all(), (live[got != want], got[got != want], want[got != want])
        for i, t in enumerate(live.tolist()):
            if masks[i].sum() >= 2:
                _tally_kinds(kinds, st, t, masks[i])
        acts = np.zeros(st.batch_size, np.int64)
        acts[live] = choose(st, live, [bots[step % 2]])
        engine.step(st, acts, inplace=True)
        step += 1
    assert sum(kinds.values()) >= 500 and all(v > 0 for v in kinds.values()), kinds


@pytest.mark.parametrize("preset, n_tables", [("mil", 24), ("mahjongsoft", 16)])
def test_rules_policy_chooses_what_rules_chooses(preset, n_tables):
    """The compiled ``rules`` rollout policy is the Python rules bot (default options):
    the same action at every decision of deals played by rules and greedy bots in turn
    (several hundred decisions with a choice, every decision kind, the look-ahead
    discards, judged pungs, passed Hu and the void-tile order among them)."""
    st = engine.reset(np.arange(60, 60 + n_tables), get_rules(preset))
    bots = [RulesAgent(), GreedyAgent()]
    python_rules = RulesAgent()
    python_greedy = GreedyAgent()
    kinds = {"void": 0, "discard": 0, "void_tile": 0, "own_kong": 0, "pung": 0,
             "claim_kong": 0, "hu": 0, "look_ahead": 0, "void_tile_order": 0,
             "pung_passed": 0, "hu_passed": 0}
    step = 0
    while not st.done.all():
        live = np.flatnonzero(~st.done)
        masks = st.legal_action_mask[live]
        view = seat_view(st, st.current[live], live)
        want = python_rules.act_batch(view, masks)
        greedy = python_greedy.act_batch(view, masks)
        got = sr.choose_actions(st, live, "rules")
        assert (got == want).all(), (live[got != want], got[got != want], want[got != want])
        for i, t in enumerate(live.tolist()):
            m, ph = masks[i], int(st.phase[t])
            if m.sum() < 2:
                continue
            key = _tally_kinds(kinds, st, t, m)
            kinds["hu_passed"] += bool(m[HU]) and want[i] == PASS
            kinds["pung_passed"] += ph == CLAIM and greedy[i] == PUNG and want[i] == PASS
            if key is not None:
                kinds["void_tile_order" if key == "void_tile" else "look_ahead"] += (
                    want[i] != greedy[i])
        acts = np.zeros(st.batch_size, np.int64)
        acts[live] = choose(st, live, [bots[step % 2]])
        engine.step(st, acts, inplace=True)
        step += 1
    assert sum(kinds.values()) >= 500 and all(v > 0 for v in kinds.values()), kinds


@pytest.mark.parametrize("policy", sr.ROLLOUT_POLICIES)
def test_play_out_is_the_engine_step_by_step(mil_positions, policy):
    """The compiled play-out ends where stepping the engine with the same policy ends."""
    picks = [p for p in mil_positions[::37]][:12]
    rules1 = get_rules("mil")
    batch = State(*(np.concatenate(f) for f in zip(*(p.arrays() for p in picks),
                                                      strict=True)), rules1)
    batch.key[:] = np.arange(batch.batch_size, dtype=np.uint64) * 977 + 1
    first = sr.choose_actions(batch.copy(), np.arange(batch.batch_size), policy)
    ref = batch.copy()
    got = sr.play_out(batch, first, policy)
    acts = first
    while True:
        engine.step(ref, acts, inplace=True)
        live = np.flatnonzero(~ref.done)
        if not live.size:
            break
        acts = np.zeros(ref.batch_size, np.int64)
        acts[live] = sr.choose_actions(ref, live, policy)
    assert (got == ref.scores).all()
    assert batch.done.all()


@pytest.mark.parametrize("policy", ["rules", pytest.param("random", marks=pytest.mark.slow)])
def test_play_out_on_threads_ends_as_on_one(mil_positions, policy):
    """Play-outs split among threads end every table exactly as one thread does."""
    picks = [p for p in mil_positions[::23]][:16]
    batch = State(*(np.concatenate(f) for f in zip(*(p.arrays() for p in picks),
                                                      strict=True)), get_rules("mil"))
    batch = batch.take(np.repeat(np.arange(batch.batch_size), 3))  # 48 tables
    batch.key[:] = np.arange(batch.batch_size, dtype=np.uint64) * 7919 + 5
    first = sr.choose_actions(batch.copy(), np.arange(batch.batch_size), policy)
    one = batch.copy()
    want = sr.play_out(one, first, policy)
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here (NUMBA_NUM_THREADS)")
    for threads in range(2, min(4, numba.config.NUMBA_NUM_THREADS) + 1):
        many = batch.copy()
        got = sr.play_out(many, first, policy, threads=threads)
        assert (got == want).all() and many.done.all()
        for name, a, b in zip(State._fields, one.arrays(), many.arrays(), strict=False):
            assert (a == b).all(), name


def test_search_on_threads_chooses_as_on_one(mil_positions):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here (NUMBA_NUM_THREADS)")
    picks = [q for q in mil_positions if q.legal_action_mask[0].sum() > 2][:12]
    one, two = SearchAgent(seed=4, k=6), SearchAgent(seed=4, k=6, threads=2)
    for p in picks:
        v = seat_view(p, int(p.current[0]), [0])
        assert one.act_batch(v, p.legal_action_mask) == two.act_batch(v, p.legal_action_mask)
    assert one.playouts == two.playouts > 0


@pytest.mark.parametrize("threads", [0, -1, 2.0, True, 10_000])
def test_play_out_rejects_bad_thread_counts(mil_positions, threads):
    p = mil_positions[0]
    with pytest.raises(ValueError, match="threads must be an integer in 1.."):
        sr.play_out(p.copy(), np.array([int(np.flatnonzero(p.legal_action_mask[0])[0])]),
                    "waits", threads=threads)
    with pytest.raises(ValueError, match="threads must be an integer in 1.."):
        SearchAgent(threads=threads)


def test_random_rollouts_repeat_with_the_same_key(mil_positions):
    p = next(q for q in mil_positions if q.phase[0] == TURN and q.wall_left[0] >= 40)
    a = State(*(np.repeat(x, 32, 0) for x in p.arrays()), p.rules)
    a.key[:] = np.repeat(np.arange(16, dtype=np.uint64) * 7919 + 3, 2)
    first = np.full(32, int(np.flatnonzero(p.legal_action_mask[0])[0]), np.int64)
    pts = sr.play_out(a, first, "random")
    assert (pts[0::2] == pts[1::2]).all()
    assert len({tuple(r) for r in pts[0::2]}) > 1  # different keys, different play-outs


def test_play_out_rejects_bad_input(mil_positions):
    p = mil_positions[0]
    with pytest.raises(ValueError, match="unknown rollout policy 'nope'"):
        sr.play_out(p.copy(), np.array([0]), "nope")
    with pytest.raises(ValueError, match="expected 1 first actions"):
        sr.play_out(p.copy(), np.array([0, 1]))
    two = State(*p.arrays(), get_rules("mil", deals_per_match=2))
    with pytest.raises(ValueError, match="deals_per_match=1"):
        sr.play_out(two, np.array([0]))


# ----------------------------------------------------------------------------- sampler


def enough_for_revealed(k: Known, vd: int) -> bool:
    """The unseen tiles outside suit ``vd`` can fill every seat with a revealed void."""
    need = sum(k.sizes[a] for a in k.others if k.void_revealed[a])
    return int(k.unseen.sum() - k.unseen[9 * vd:9 * vd + 9].sum()) >= need


def _check_legal_samples(p: State, smp: State) -> None:
    seat = int(p.current[0])
    k = Known(seat_view(p, seat, [0]), 0)
    for r in range(smp.batch_size):
        tiles = (smp.hand[r].sum(0) + smp.live_discards[r] + smp.won_tiles[r]
                 + MELD_TILES[smp.meld[r]].sum(0)).astype(int)
        tiles += np.bincount(smp.wall[r, :smp.wall_back[r]], minlength=27)
        sa = smp.set_aside[r][smp.set_aside[r] >= 0]
        tiles += np.bincount(sa, minlength=27)
        if smp.phase[r] == ROB:
            tiles[smp.claim_tile[r]] += 1
        assert (tiles == 4).all(), "108 tiles, four of each kind"
        assert smp.wall_back[r] - smp.wall_front[r] == p.wall_left[0]
        for a in range(4):
            held = int(smp.hand[r, a].sum()) + int(smp.set_aside[r, a] >= 0)
            assert held == int(p.hand[0, a].sum()) + int(p.set_aside[0, a] >= 0), "hand size"
            if a == seat:
                assert (smp.hand[r, a] == p.hand[0, a]).all()
            elif p.void_revealed[0, a] and enough_for_revealed(k, int(p.void[0, a])):
                vd = int(p.void[0, a])
                assert smp.void[r, a] == vd
                assert smp.hand[r, a, 9 * vd:9 * vd + 9].sum() == 0, "revealed void respected"
        # the deciding seat has exactly its real options
        assert (smp.legal_action_mask[r] == p.legal_action_mask[0]).all()


@pytest.mark.parametrize("how", HAND_SAMPLING)
@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_sampled_deals_are_legal(mil_positions, soft_positions, preset, how):
    positions = mil_positions if preset == "mil" else soft_positions
    rng = np.random.default_rng(0)
    phases = set()
    for p in positions[::7]:
        seat = int(p.current[0])
        smp = sample_states(seat_view(p, seat, [0]), 0, p.legal_action_mask[0],
                            get_rules(preset), 3, rng, how)
        _check_legal_samples(p, smp)
        phases.add(int(p.phase[0]))
    assert {VOID, TURN, CLAIM} <= phases


def test_explained_weights_favour_the_hands_rules_bots_really_hold(mil_positions):
    """``hands=explained``: the real hands of seats played by ``rules`` are explained (the
    ``rules`` policy would have made their last discard from them) far more often than the
    hands ``discards`` samples; each unexplained seat multiplies a deal's weight by
    EXPLAINED_MISS."""
    rng = np.random.default_rng(3)
    real, sampled = [], []
    for p in mil_positions[::10]:
        if int(p.phase[0]) != TURN:
            continue
        seat = int(p.current[0])
        view = seat_view(p, seat, [0])
        k = Known(view, 0)
        checked = [a for a in k.others if not k.hu[a] and k.river_len[a] > 0]
        if not checked:
            continue
        misses = -np.log10(explained_weights(p.copy(), k)) / -np.log10(EXPLAINED_MISS)
        assert np.allclose(misses, np.round(misses))
        real.append(1 - misses[0] / len(checked))
        smp = sample_states(view, 0, p.legal_action_mask[0], get_rules("mil"), 16, rng,
                            "discards")
        w = explained_weights(smp, k)
        sampled.append(np.mean(1 + np.log10(w) / -np.log10(EXPLAINED_MISS) / len(checked)))
    assert len(real) >= 20
    assert np.mean(real) > 0.85
    assert np.mean(sampled) < np.mean(real) - 0.2


def _hide_differently(p: State, rng: np.random.Generator) -> State:
    """``p`` with the hidden tiles moved: another seat's hand swaps tiles with the wall and
    the wall is reshuffled (what the deciding seat sees is unchanged)."""
    q = p.copy()
    seat = int(q.current[0])
    wall = q.wall[0, q.wall_front[0]:q.wall_back[0]].copy()
    other = next(a for a in range(4) if a != seat and q.hand[0, a].sum() > 0)
    held = np.repeat(np.arange(27), q.hand[0, other])
    n = min(3, held.size, wall.size)
    out_tiles, in_tiles = held[:n], wall[:n].copy()
    wall[:n] = out_tiles
    np.subtract.at(q.hand[0, other], out_tiles, 1)
    np.add.at(q.hand[0, other], in_tiles, 1)
    q.wall[0, q.wall_front[0]:q.wall_back[0]] = rng.permutation(wall)
    engine_kernels_refresh(q)
    return q


def engine_kernels_refresh(q: State) -> None:
    from sichuan_env.core import engine_kernels as ek
    ek.refresh_waits(*engine.kernel_rule_args(q.rules), *q.arrays())


def test_discard_weights_by_rank_distance():
    w = discard_weights(np.array([4, 20, 8, -1, -1]), 3)  # 5 and 9 of suit 0, 3 of suit 2
    assert w[4] == w[20] == w[8] == DISCARD_WEIGHTS[0]
    assert w[3] == w[5] == w[7] == w[19] == w[21] == DISCARD_WEIGHTS[1]
    assert w[2] == w[6] == w[18] == w[22] == DISCARD_WEIGHTS[2]
    assert w[0] == w[9] == w[10] == w[23] == DISCARD_WEIGHTS[3]  # no neighbour across suits
    assert (discard_weights(np.full(60, -1), 0) == DISCARD_WEIGHTS[3]).all()


def test_discard_weighted_hands_hold_thrown_kinds_less(mil_positions):
    """Weighted by their rivers, the other seats' sampled hands hold the kinds they threw
    less often, by about the weight of a thrown kind."""
    rate = {}
    for how in HAND_SAMPLING:
        rng = np.random.default_rng(4)
        held = np.zeros(2)  # copies in sampled hands: thrown kinds, other kinds
        unseen = np.zeros(2)
        for p in mil_positions[::3]:
            seat = int(p.current[0])
            view = seat_view(p, seat, [0])
            k = Known(view, 0)
            if p.phase[0] != TURN:
                continue
            smp = sample_states(view, 0, p.legal_action_mask[0], get_rules("mil"), 8, rng,
                                how)
            for a in k.others:
                if k.river_len[a] < 3 or k.hu[a]:
                    continue
                thrown = discard_weights(k.river[a], int(k.river_len[a])) == DISCARD_WEIGHTS[0]
                shown = int(k.void[a]) if k.void_revealed[a] else -1
                ok = SUIT_OF.astype(int) != shown  # not the seat's revealed void suit
                for j, sel in enumerate((thrown & ok, ~thrown & ok)):
                    held[j] += smp.hand[:, a, sel].sum() / 8
                    unseen[j] += k.unseen[sel].sum()
        rate[how] = (held[0] / unseen[0]) / (held[1] / unseen[1])
    # drawn evenly, thrown kinds are held about as often as others (a little more: they
    # lie in suits other seats may not take); weighted, about 0.6 to 0.7 times that
    assert 0.9 < rate["uniform"] < 1.25, rate
    assert 0.55 < rate["discards"] / rate["uniform"] < 0.8, rate
    assert rate["model"] / rate["uniform"] < 0.8, rate  # the hand model learned it too


def test_hand_sampling_option():
    assert SearchAgent().hands == "discards"  # the default, chosen on seed 901
    assert SearchAgent(hands="uniform").hands == "uniform"
    with pytest.raises(ValueError,
                       match="unknown hand sampling 'x'; known: uniform, discards, model"):
        SearchAgent(hands="x")


@pytest.mark.parametrize("how", HAND_SAMPLING)
def test_samples_and_choice_ignore_hidden_tiles(mil_positions, how):
    rng = np.random.default_rng(1)
    tried = 0
    for p in mil_positions[5::23]:
        if p.phase[0] not in (TURN, CLAIM) or p.wall_left[0] < 5:
            continue
        q = _hide_differently(p, rng)
        seat = int(p.current[0])
        assert not (q.hand == p.hand).all() or not (q.wall == p.wall).all()
        vp, vq = seat_view(p, seat, [0]), seat_view(q, seat, [0])
        for f, g in zip(vp, vq, strict=True):
            assert (f == g).all()
        a = sample_states(vp, 0, p.legal_action_mask[0], p.rules, 4, np.random.default_rng(9),
                          how)
        b = sample_states(vq, 0, q.legal_action_mask[0], q.rules, 4, np.random.default_rng(9),
                          how)
        for f, g in zip(a.arrays(), b.arrays(), strict=True):
            assert (f == g).all()
        ca = SearchAgent(seed=4, k=6, hands=how).act_batch(vp, p.legal_action_mask)
        cb = SearchAgent(seed=4, k=6, hands=how).act_batch(vq, q.legal_action_mask)
        assert ca[0] == cb[0]
        tried += 1
    assert tried >= 3


# ----------------------------------------------------------------------------- the agent


def test_search_plays_legal_deals_and_counts_its_work():
    agent = make_agent("search?k=4&top=3", seed=0)
    validate_agent(agent, n_deals=2, seed=3)
    assert agent.searched > 0 and agent.playouts >= 2 * 4 * agent.searched // 2
    assert agent.seconds > 0 and agent.cpu_seconds > 0


def test_search_takes_hu_and_plays_single_actions_without_search(mil_positions):
    agent = SearchAgent(seed=0, k=4)
    for p in mil_positions:
        m = p.legal_action_mask[0]
        if m[HU] or m.sum() == 1:
            v = seat_view(p, int(p.current[0]), [0])
            before = agent.playouts
            a = agent.act_batch(v, p.legal_action_mask)[0]
            assert a == (HU if m[HU] else np.flatnonzero(m)[0])
            assert agent.playouts == before


def test_hu_search_searches_a_hu_on_another_seats_tile(mil_positions):
    """``hu=search``: a Hu on a discard (or a robbed kong) is searched against the other
    answers, Hu first (the rules prior's choice); a self-drawn Hu is still taken without
    play-outs; one candidate (``top=1``) declares the Hu."""
    agent = SearchAgent(seed=0, k=4, top=4, hu="search")
    single = SearchAgent(seed=0, k=4, top=1, hu="search")
    claims = 0
    for p in mil_positions:
        m = p.legal_action_mask
        if not m[0, HU]:
            continue
        v = seat_view(p, int(p.current[0]), [0])
        before = agent.playouts
        a = int(agent.act_batch(v, m)[0])
        assert m[0, a]
        assert single.act_batch(v, m)[0] == HU
        if p.phase[0] == TURN:
            assert a == HU and agent.playouts == before
            continue
        claims += 1
        cand = agent.candidates(v, m, np.array([HU]))[0]
        assert cand[0] == HU and PASS in cand and all(m[0, c] for c in cand)
        assert agent.playouts > before
    assert claims >= 3 and single.playouts == 0


def test_top1_plays_the_prior(mil_positions):
    agent = SearchAgent(seed=0, k=4, top=1)
    prior = RulesAgent()
    ps = mil_positions[::11]
    for p in ps:
        m = p.legal_action_mask[0]
        v = seat_view(p, int(p.current[0]), [0])
        want = HU if m[HU] else prior.act_batch(v, p.legal_action_mask)[0]
        assert agent.act_batch(v, p.legal_action_mask)[0] == want
    assert agent.playouts == 0


def test_candidates_start_with_the_prior(mil_positions):
    agent = SearchAgent(seed=0, k=4, top=3)
    for p in mil_positions[::13]:
        v = seat_view(p, int(p.current[0]), [0])
        prior = agent.prior.act_batch(v, p.legal_action_mask)
        cand = agent.candidates(v, p.legal_action_mask, prior)[0]
        assert cand[0] == prior[0] and 1 <= len(cand) <= 3 and len(set(cand)) == len(cand)
        assert all(p.legal_action_mask[0, a] for a in cand)


def test_fitted_prior_top1_plays_the_fitted_network(mil_positions):
    """With ``prior=fitted`` and one candidate the agent is the shipped ``fitted`` agent,
    Hu-or-pass decisions included (the fitted network decides those itself)."""
    from sichuan_agents.models.ppo import PPOAgent

    agent = SearchAgent(seed=0, k=4, top=1, prior="fitted")
    fitted = PPOAgent(kind="fitted", rules="mil")
    for p in mil_positions[::7]:
        v = seat_view(p, int(p.current[0]), [0])
        assert agent.act_batch(v, p.legal_action_mask)[0] == \
            fitted.act_batch(v, p.legal_action_mask)[0]
    assert agent.playouts == 0


def test_best_prior_top1_plays_the_best_agent(mil_positions):
    """``prior=best`` with one candidate is the shipped ``best`` agent for the preset."""
    from sichuan_agents.models.best import best_agent

    agent = SearchAgent(seed=0, k=4, top=1, prior="best")
    best = best_agent("mil")
    assert type(agent.prior) is type(best)
    for p in mil_positions[::7]:
        v = seat_view(p, int(p.current[0]), [0])
        assert agent.act_batch(v, p.legal_action_mask)[0] == \
            best.act_batch(v, p.legal_action_mask)[0]
    assert agent.playouts == 0


def test_fitted_prior_candidates_add_the_rules_choice(mil_positions):
    """Candidate 0 is the fitted network's choice; the rules bot's choice comes next
    when it differs (so search can go back to it)."""
    agent = SearchAgent(seed=0, k=4, top=3, prior="fitted")
    for p in mil_positions[::3]:
        m = p.legal_action_mask
        if m[0, HU] or m[0].sum() < 2 or p.phase[0] == VOID:
            continue
        v = seat_view(p, int(p.current[0]), [0])
        prior = agent.prior.act_batch(v, m)
        bot = agent.bot.act_batch(v, m)
        cand = agent.candidates(v, m, prior, bot)[0]
        assert cand[0] == prior[0] and len(set(cand)) == len(cand) <= 3
        assert int(bot[0]) in cand


class _DepartingPrior:
    """A prior that plays the rules bot's choice (Hu declared) except where the number of
    legal actions is even: there it plays another legal action."""

    def __init__(self) -> None:
        self.bot = RulesAgent()

    def act_batch(self, views, masks):
        out = np.where(masks[:, HU], HU, self.bot.act_batch(views, masks))
        for i in np.flatnonzero(masks.sum(1) % 2 == 0):
            other = [a for a in np.flatnonzero(masks[i]) if a != out[i]]
            if other:
                out[i] = other[-1]
        return out

    def reset(self) -> None:
        self.bot.reset()


def test_departures_play_keeps_the_priors_departures_without_search(mil_positions):
    """``departures=play``: where the prior departs from the rules bot (Hu declared) its
    choice is played without play-outs; elsewhere the agent chooses exactly as the rules
    prior's search does, with the same samples."""
    ps = [p for p in mil_positions if p.legal_action_mask[0].sum() > 1][::6]
    views = [seat_view(p, int(p.current[0]), [0]) for p in ps]
    stub = _DepartingPrior()
    departed = agreed = 0
    for p, v in zip(ps, views, strict=True):
        m = p.legal_action_mask
        keep = SearchAgent(seed=3, k=8, departures="play")
        keep.prior = stub
        plain = SearchAgent(seed=3, k=8)
        want = stub.act_batch(v, m)[0]
        got = keep.act_batch(v, m)[0]
        if want != np.where(m[0, HU], HU, plain.bot.act_batch(v, m)[0]):
            departed += 1
            assert got == want and keep.playouts == 0
        else:
            agreed += 1
            assert got == plain.act_batch(v, m)[0]
            assert keep.playouts == plain.playouts and keep.searched == plain.searched
    assert departed >= 10 and agreed >= 10
    # a batch of both kinds: the departing rows are kept, the others searched
    keep = SearchAgent(seed=3, k=8, departures="play")
    keep.prior = stub
    rows = list(range(24))
    m = np.concatenate([ps[i].legal_action_mask for i in rows])
    v = SeatView(*(np.concatenate(f) for f in zip(*(views[i] for i in rows), strict=True)))
    want = stub.act_batch(v, m)
    got = keep.act_batch(v, m)
    odd = m.sum(1) % 2 == 1
    assert (got[~odd] == want[~odd]).all() and m[np.arange(len(rows)), got].all()
    assert 0 < keep.searched <= odd.sum() and (~odd).any()


def test_departures_play_with_the_fitted_prior(mil_positions):
    """With the shipped ``fitted`` network as prior, ``departures=play`` chooses as the
    network wherever it departs from ``rules`` and as the rules-prior search elsewhere."""
    agent = SearchAgent(seed=5, k=4, prior="fitted", departures="play")
    plain = SearchAgent(seed=5, k=4)
    same = 0
    for p in mil_positions[::10]:
        m = p.legal_action_mask
        v = seat_view(p, int(p.current[0]), [0])
        net = agent.prior.act_batch(v, m)[0]
        bot = HU if m[0, HU] else agent.bot.act_batch(v, m)[0]
        agent.rng = np.random.default_rng(11)
        plain.rng = np.random.default_rng(11)
        got = agent.act_batch(v, m)[0]
        if net != bot:
            assert got == net
        else:
            same += 1
            assert got == plain.act_batch(v, m)[0]
    assert same >= 20


def test_void_suit_discards_come_first_without_strict_void(soft_positions):
    """Under mahjongsoft (no strict_void) a seat holding a tile of its void suit may
    discard any tile, but search lists only void-suit discards (past the prior's and the
    rules bot's own choices): keeping a void-suit tile is never a candidate."""
    agent = SearchAgent(seed=0, k=4, top=6, rules="mahjongsoft")
    checked = 0
    for p in soft_positions:
        m = p.legal_action_mask
        if p.phase[0] != TURN or m[0, HU]:
            continue
        v = seat_view(p, int(p.current[0]), [0])
        void = int(v.void[0, 0])
        legal = np.flatnonzero(m[0, DISCARD:VOID_TILE])
        void_legal = legal[SUIT_OF[legal] == void]
        if void < 0 or void_legal.size == 0 or void_legal.size == legal.size:
            continue
        prior = agent.prior.act_batch(v, m)
        cand = agent.candidates(v, m, prior)[0]
        for a in cand[1:]:
            if DISCARD <= a < VOID_TILE:
                assert SUIT_OF[a - DISCARD] == void, (cand, void)
        checked += 1
    assert checked >= 10


def test_rollout_option_names_the_policy():
    # the defaults: 256 samples played out by the rules bot compiled
    assert (SearchAgent().rollout, SearchAgent().k) == ("rules", 256)
    for name in sr.ROLLOUT_POLICIES:
        assert make_agent(f"search?rollout={name}&k=2").rollout == name


def test_rollout_budget_lowers_samples():
    assert SearchAgent(k=64, rollouts=100).samples_for(4) == 25
    assert SearchAgent(k=8, rollouts=100).samples_for(4) == 8
    assert SearchAgent(k=8, rollouts=2).samples_for(4) == 1


@pytest.mark.parametrize("spec, words", [
    ("search?k=0", "k must be an integer >= 1, got 0"),
    ("search?k=-3", "k must be an integer >= 1"),
    ("search?top=0", "top must be an integer >= 1"),
    ("search?k=2.5", "k must be an integer >= 1, got 2.5"),
    ("search?rollouts=0", "rollouts must be an integer >= 1"),
    ("search?rollout=nope", "unknown rollout policy 'nope'; known: waits, random, greedy, rules"),
    ("search?rollout=", "unknown rollout policy ''"),
    ("search?depth=3", "unexpected keyword argument 'depth'"),
    ("search?prior=nope", "unknown prior 'nope'; known: rules, fitted"),
    ("search?hu=maybe", "unknown hu choice 'maybe'; known: declare, search"),
    ("search?departures=x", "unknown departures choice 'x'; known: search, play"),
    ("search?threads=0", "threads must be an integer in 1.."),
    ("search?clip=0", "clip must be a number of points in (0, 1000), got 0"),
    ("search?clip=-2", "clip must be a number of points in (0, 1000)"),
])
def test_bad_options(spec, words, capsys):
    with pytest.raises(AgentSpecError, match="search"):
        make_agent(spec)
    code = arena_main(["--seats", f"{spec},rules,rules,rules", "--deals", "4",
                       "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], err


@pytest.mark.slow
def test_arena_cli_bad_option_is_one_line():
    r = subprocess.run([sys.executable, "-m", "sichuan_agents.arena", "--seats",
                        "search?k=0,rules,rules,rules", "--deals", "4", "--no-progress"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "k must be an integer >= 1, got 0" in lines[0]


@pytest.mark.parametrize("argv, words", [
    (["--agent", "search?k=0"], "k must be an integer >= 1, got 0"),
    (["--agent", "rules"], "--agent must be a search agent, got 'rules'"),
    (["--deals", "0"], "--deals and --tables must be >= 1"),
    (["--rules", "nope"], "unknown rule preset 'nope'"),
    (["--baseline", "greedy"], "--baseline must be a search agent, got 'greedy'"),
    (["--baseline", "search?rollout=x"], "unknown rollout policy 'x'"),
])
def test_search_command_bad_input(argv, words, capsys):
    from sichuan_agents.search.agent import main
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_search_command_reports_strength_and_cost(capsys):
    from sichuan_agents.search.agent import main
    assert main(["--agent", "search?k=4&top=2", "--deals", "4", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "search?k=4&top=2 - rules:" in out and "over 4 deals (1 walls), seed 3" in out
    assert "s per decision" in out and "CPU s per decision" in out


def test_search_command_baseline_on_the_same_walls(capsys):
    """With --baseline the two agents play the same walls: the difference is the
    difference of their per-wall results (zero for the same agent twice)."""
    from sichuan_agents.search.agent import main
    argv = ["--agent", "search?k=4&top=2", "--deals", "8", "--seed", "3", "--tables", "8"]
    assert main(argv + ["--baseline", "search?k=4&top=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5 and out[0].split(" - rules: ")[1] == out[2].split(" - rules: ")[1]
    assert out[4] == "search?k=4&top=2 - search?k=4&top=2 (same walls): +0.000 [+0.000, +0.000]"
    assert main(argv + ["--baseline", "search?k=4&top=1"]) == 0
    out = capsys.readouterr().out.splitlines()
    a, b = (float(line.split(" - rules: ")[1].split()[0]) for line in (out[0], out[2]))
    assert out[4].startswith("search?k=4&top=2 - search?k=4&top=1 (same walls): ")
    assert float(out[4].split(": ")[1].split()[0]) == pytest.approx(a - b, abs=2e-3)


@pytest.mark.slow
def test_search_command_runs_as_a_module():
    r = subprocess.run([sys.executable, "-m", "sichuan_agents.search.agent",
                        "--agent", "search?k=2&top=2",
                        "--deals", "4", "--seed", "2"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "search?k=2&top=2 - rules:" in r.stdout and "s per decision" in r.stdout


def test_candidates_share_samples_and_rollout_keys(mil_positions, monkeypatch):
    """Common random numbers: every candidate is played out on the same sampled deals
    with the same rollout key, in one batch."""
    import sichuan_agents.search.agent as search_mod
    seen: list[tuple[State, np.ndarray]] = []

    def fake_play_out(state, first, policy="waits", threads=1):
        seen.append((state.copy(), first.copy()))
        return np.zeros((state.batch_size, 4), np.int32)

    monkeypatch.setattr(search_mod, "play_out", fake_play_out)
    agent = SearchAgent(seed=2, k=5, top=3, rollout="random")
    p = next(q for q in mil_positions if q.phase[0] == TURN and q.wall_left[0] > 20
             and q.legal_action_mask[0, DISCARD:VOID_TILE].sum() >= 3
             and not q.legal_action_mask[0, HU])
    v = seat_view(p, int(p.current[0]), [0])
    agent.act_batch(v, p.legal_action_mask)
    (batch, first), = seen
    c = batch.batch_size // 5
    assert c >= 2 and batch.batch_size == 5 * c
    for j in range(5):
        rows = np.arange(j * c, (j + 1) * c)
        for f in batch.arrays():
            assert (f[rows] == f[rows[:1]]).all()
        assert len(set(first[rows].tolist())) == c
    assert len({int(batch.key[j * c]) for j in range(5)}) == 5
    assert len({batch.wall[j * c].tobytes() for j in range(5)}) == 5


def test_pick_needs_a_margin_of_z_standard_errors():
    agent = SearchAgent(z=1.0)
    base = np.array([0.0, 4.0, -4.0, 8.0, -8.0, 2.0, -2.0, 0.0])
    pts = np.stack([base, base + 0.1, base + 3.0 + np.tile([1.0, -1.0], 4)], 1)
    assert agent.pick(pts) == 2  # +3 on average, se 0.38: well clear
    noisy = np.stack([base, base + np.array([9, -9, 9, -9, 9, -9, 9, -8.0])], 1)
    assert agent.pick(noisy) == 0  # +0.125 on average with a large se: keep the prior
    assert SearchAgent(z=0).pick(noisy) == 1  # best mean
    assert agent.pick(np.stack([base, base - 1.0], 1)) == 0


def test_clip_bounds_each_sample_difference_before_the_choice():
    """One play-out with a large swing decides the plain mean; with ``clip`` it counts
    for no more than ``clip`` points, and steady gains are still found."""
    base = np.zeros(8)
    lucky = np.stack([base, base + np.array([40.0, -1, -1, -1, -1, -1, -1, -1])], 1)
    assert SearchAgent(z=0).pick(lucky) == 1  # mean +4.1: the one big sample wins
    assert SearchAgent(z=0, clip=4).pick(lucky) == 0  # clipped mean (4 - 7) / 8 < 0
    steady = np.stack([base, base + 1.5 + np.tile([0.5, -0.5], 4), base - 30.0], 1)
    assert SearchAgent(z=1, clip=4).pick(steady) == 1
    assert SearchAgent(z=0, clip=4).pick(np.stack([base, base + 20.0], 1)) == 1


def _benchmark(name: str):
    """The module ``benchmarks/<name>.py``, loaded from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / f"benchmarks/{name}.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_playouts_benchmark(capsys):
    bench = _benchmark("playouts")
    assert bench.main(["--tables", "3", "--repeats", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == list(sr.ROLLOUT_POLICIES)
    assert all("play-outs per CPU-s" in line for line in out)
    assert bench.main(["--tables", "0"]) == 2
    assert bench.main(["--rules", "nope"]) == 2
    assert bench.main(["--threads", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(e.startswith("error: ") for e in err)
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert bench.main(["--tables", "4", "--repeats", "1", "--threads", "2"]) == 0
        out = capsys.readouterr().out.splitlines()[len(sr.ROLLOUT_POLICIES):]
        assert [line.split()[0] for line in out] == list(sr.ROLLOUT_POLICIES)
        assert all(re.search(r"wall-s on 1 thread, +\d+ on 2 \(\d+\.\d\d times\)", line)
                   for line in out), out


def test_search_oracle_benchmark(capsys):
    """The diagnostic plays every mode on the same walls, prints each against `rules`
    and against `sampled`, and puts the driver and the sampler back afterwards."""

    import sichuan_env.seats.driver as driver
    from sichuan_agents.search import agent as search_mod

    bench = _benchmark("search_oracle")
    seat_view_before, sampler_before = driver.seat_view, search_mod.sample_states
    assert bench.main(["--agent", "search?k=4", "--deals", "4", "--seed", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:4]] == list(bench.MODES)
    assert [line.split()[0] for line in out[4:]] == list(bench.MODES[1:])
    assert driver.seat_view is seat_view_before
    assert search_mod.sample_states is sampler_before
    assert bench.main(["--modes", "nope"]) == 2
    assert bench.main(["--deals", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("error: ") for e in err)


def test_discard_evidence_benchmark(capsys):
    """The rules bot, asked what it would discard from a seat's real hand plus its last
    discard, makes that discard nearly always (the reconstruction is faithful), far more
    often than from sampled hands; the driver is put back; bad input is one line, exit 2."""

    import sichuan_env.seats.driver as driver

    bench = _benchmark("discard_evidence")
    seat_view_before = driver.seat_view
    assert bench.main(["--deals", "8", "--seed", "5", "--samples", "16"]) == 0
    assert driver.seat_view is seat_view_before
    out = capsys.readouterr().out.splitlines()
    last = out[1].split()
    real, sampled = float(last[last.index("hands") + 1].rstrip(",")), float(last[-1])
    assert int(last[3].rstrip(":")) >= 100
    assert real >= 0.85 and real > sampled + 0.1
    assert out[3].startswith("tiles in common with the real hand")
    assert bench.main(["--deals", "0"]) == 2
    assert bench.main(["--rules", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("error: ") for e in err)


def test_ready_evidence_benchmark(capsys):
    """The sampled hands with ``hands=shaped`` and ``safe`` are ready far more often than
    the even-weighted ones, more often where the real seat is ready; a ready seat almost
    never waits on a kind of its own river; the ``rules`` policy would have made most real
    last discards (``hands=explained``'s test); bad input is one line, exit 2."""

    import sichuan_env.seats.driver as driver

    bench = _benchmark("ready_evidence")
    seat_view_before = driver.seat_view
    assert bench.main(["--deals", "8", "--seed", "5", "--samples", "16",
                       "--hands", "discards,shaped,safe,explained"]) == 0
    assert driver.seat_view is seat_view_before
    out = capsys.readouterr().out.splitlines()
    assert int(out[1].split()[-3]) >= 100
    rate = {line.split()[0]: [float(x) for x in re.findall(r"\d\.\d+", line)[:3]]
            for line in out[2:6]}
    assert set(rate) == {"discards", "shaped", "safe", "explained"}
    assert rate["discards"][0] < 0.1 and rate["shaped"][0] > 0.15 and rate["safe"][0] > 0.15
    assert rate["safe"][1] > rate["safe"][2] and rate["shaped"][1] > rate["shaped"][2]
    own = out[7].split()
    assert own[:5] == ["kinds", "in", "its", "own", "river:"]
    on_waits, on_others = (float(x) for x in re.findall(r"\d\.\d+", out[7]))
    assert on_waits < 0.05 < on_others
    assert out[9].startswith("last discard explained by rules:")
    explained = {h: float(x) for h, x in re.findall(r"(\w+) (\d\.\d+)", out[9].split(":")[1])}
    assert set(explained) == {"real", "discards", "shaped", "safe", "explained"}
    assert explained["real"] > 0.8 and explained["explained"] > explained["discards"]
    assert bench.main(["--deals", "0"]) == 2
    assert bench.main(["--hands", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("error: ") for e in err)


def _decisions(truth: np.ndarray, pool: np.ndarray) -> dict:
    return {"truth": truth[None].astype(np.float32), "ncand": np.array([truth.shape[1]]),
            "per_deal": 10.0, "pools": {"discards": pool[None].astype(np.float32)}}


def test_search_decisions_simulates_the_choice_rule():
    """A simulated search scores its choice by the truth pool: a candidate clearly ahead
    in the samples and in truth is found (with or without halving) and gains its truth
    margin; samples that cannot tell the candidates apart keep the rules choice (gain 0);
    the oracle row picks by half the truth and scores on the other half."""
    bench = _benchmark("search_decisions")
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 1, (512, 1))
    pool = noise + np.array([0.0, -0.5, 2.0, 0.1]) + rng.normal(0, 0.3, (512, 4))
    truth = rng.normal(0, 1, (256, 1)) + np.array([0.0, -1.0, 1.5, 0.0])
    data = _decisions(truth, pool)
    gain = truth[:, 2].mean() - truth[:, 0].mean()
    for setting in ("k=32", "k=32&halving=0.5", "k=32&z=0", "k=32&clip=4", "oracle=1"):
        got = bench.simulate(data, bench.parse_setting(setting), replicates=8, seed=1)
        assert got[0] == pytest.approx(gain, abs=1e-3 if "oracle" not in setting else 0.05)
    same = _decisions(truth, np.repeat(noise, 4, 1))
    assert bench.simulate(same, bench.parse_setting("k=32"), 8, 1)[0] == 0.0
    # top=2 leaves only the rules choice and a worse candidate: nothing gained
    assert bench.simulate(data, bench.parse_setting("k=32&top=2"), 8, 1)[0] == 0.0
    with pytest.raises(ValueError, match="no pool for hands='safe'"):
        bench.simulate(data, bench.parse_setting("k=8&hands=safe"), 1, 1)
    for bad in ("k", "q=3", "z=1"):
        with pytest.raises(ValueError, match="bad setting"):
            bench.parse_setting(bad)


def test_search_decisions_benchmark(capsys, tmp_path):
    """Recorded decisions are played out, saved, and read back to the same report; the
    driver is put back; bad input is one line, exit 2."""
    import sichuan_env.seats.driver as driver

    bench = _benchmark("search_decisions")
    seat_view_before = driver.seat_view
    saved = tmp_path / "d.npz"
    args = ["--deals", "4", "--seed", "5", "--pool", "16", "--truth", "8", "--share", "0.5",
            "--settings", "k=8;k=8&halving=0.5;oracle=1"]
    assert bench.main(args + ["--save", str(saved)]) == 0
    assert driver.seat_view is seat_view_before
    first = capsys.readouterr().out.splitlines()
    n = int(first[0].split()[0])
    assert n >= 4 and first[1].startswith(f"{n} decisions")
    data = bench.load(str(saved))
    assert data["truth"].shape[:2] == (n, 8) and data["pools"]["discards"].shape[:2] == (n, 16)
    assert (data["ncand"] >= 2).all()
    assert bench.main(["--load", str(saved), "--settings", "k=8;k=8&halving=0.5;oracle=1",
                       "--seed", "5"]) == 0
    assert capsys.readouterr().out.splitlines() == first[1:]
    assert bench.main(["--deals", "0"]) == 2
    assert bench.main(["--settings", "k=8&nope=1"]) == 2
    assert bench.main(["--hands", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(e.startswith("error: ") for e in err)

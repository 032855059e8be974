"""The hand model behind ``search?hands=model``: it reads the seat view only, its
training data hold the true hidden tiles, its shares are distributions over unseen kinds,
and the shipped one places the hidden tiles better than an even draw."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from sichuan_agents.search.hand_model import (  # noqa: E402
    N_FEATURES,
    SHIPPED,
    HandNet,
    collect,
    copy_weights,
    hand_features,
    overlap,
    train,
    unseen_from_features,
)
from sichuan_env.core import engine  # noqa: E402
from sichuan_env.core import engine_kernels as ek  # noqa: E402
from sichuan_env.core.rules import get_rules  # noqa: E402
from sichuan_env.core.state import DONE  # noqa: E402
from sichuan_env.seats.view import seat_view  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def data():
    return collect(48, 11, "mil", prob=0.3)


@pytest.fixture(scope="module")
def tiny(data):
    x, y, ready = data
    model, _ = train(x, y, ready, hidden=32, epochs=1, log=lambda *_: None)
    return model


def test_collected_targets_are_the_other_seats_hidden_tiles(data):
    x, y, ready = data
    assert ready.shape == y.shape[:2] and 0.02 < ready.mean() < 0.6
    assert x.shape[1:] == (N_FEATURES, 27) and y.shape == (x.shape[0], 3, 27)
    unseen = unseen_from_features(x.astype(np.float32))
    # every hidden tile of every other seat is a copy the viewer cannot see, and together
    # they never exceed the unseen copies
    assert (y >= 0).all() and (y.sum(1) <= unseen).all()
    sizes = y.sum(2)
    assert set(np.unique(sizes)) <= {1, 2, 4, 5, 7, 8, 10, 11, 13, 14}, np.unique(sizes)
    assert (sizes == 13).mean() > 0.3


def test_features_read_the_view_only():
    """Moving hidden tiles (another seat's hand swapped with the wall) leaves the features
    of the deciding seat unchanged; its own hand does change them."""
    rules = get_rules("mil").replace(deals_per_match=1)
    st = engine.reset([5], rules)
    for _ in range(30):
        st, _, _ = engine.step(st, [int(np.flatnonzero(st.legal_action_mask[0])[-1])])
    assert st.phase[0] != DONE
    seat = int(st.current[0])
    before = hand_features(seat_view(st, seat, [0]), rules)
    q = st.copy()
    other = (seat + 1) % 4
    held = np.flatnonzero(q.hand[0, other])[:2]
    lo, hi = int(q.wall_front[0]), int(q.wall_back[0])
    for j, kind in enumerate(held):
        new = int(q.wall[0, lo + j])
        q.wall[0, lo + j] = kind
        q.hand[0, other, kind] -= 1
        q.hand[0, other, new] += 1
    q.wall[0, lo:hi] = np.random.default_rng(0).permutation(q.wall[0, lo:hi])
    ek.refresh_waits(*engine.kernel_rule_args(rules), *q.arrays())
    assert not np.array_equal(q.hand, st.hand)
    assert np.array_equal(hand_features(seat_view(q, seat, [0]), rules), before)
    assert not np.array_equal(hand_features(seat_view(q, other, [0]), rules), before)


def test_discard_order_channels():
    from sichuan_env.seats.observation import N_CHANNELS

    v = seat_view(engine.reset([3], "mil"), 0, [0])  # before the void choice: no river
    v.river[0, 2, :3] = [4, 7, 4]  # seat 2 threw kind 4 first, then 7, then 4 again
    v.river_len[0, 2] = 3
    f = hand_features(v, get_rules("mil"))
    order = f[0, N_CHANNELS:]
    assert order[1, 4] == pytest.approx(1.0) and order[1, 7] == pytest.approx(1 - 1 / 30)
    assert order[0].sum() == 0 and order[2].sum() == 0
    assert np.count_nonzero(order[1]) == 2


def test_shares_are_distributions_over_unseen_kinds(data, tiny, tmp_path):
    x = data[0]
    xs = x[:200].astype(np.float32)
    p = tiny.probabilities(xs)
    assert p.shape == (200, 3, 27)
    assert np.allclose(p.sum(2), 1.0, atol=1e-5)
    unseen = unseen_from_features(xs)
    assert (p[np.broadcast_to(unseen[:, None, :] == 0, p.shape)] == 0).all()
    path = tmp_path / "h.pt"
    tiny.save(path)
    again = HandNet.load(path)
    assert np.allclose(again.probabilities(xs), p)
    r = tiny.ready(xs)
    assert r.shape == (200, 3) and ((r > 0) & (r < 1)).all()
    assert np.allclose(again.ready(xs), r)
    assert again.settings["hidden"] == 32


def test_copy_weights_are_odds_by_hand_size(tiny):
    rules = get_rules("mil").replace(deals_per_match=1)
    st = engine.reset([3], rules)
    view = seat_view(st, 1, [0])
    w, ready = copy_weights(tiny, view, rules, np.array([[13, 13, 14]]))
    assert w.shape == (1, 3, 27) and (w > 0).all()
    assert np.isfinite(w).all()
    assert ready.shape == (1, 3) and ((ready > 0) & (ready < 1)).all()
    # a seat holding more hidden tiles gets larger odds for every kind
    fewer, _ = copy_weights(tiny, view, rules, np.array([[13, 13, 13]]) * [[1, 1, 0.5]])
    assert (fewer[0, 2] < w[0, 2]).all() and np.allclose(fewer[0, :2], w[0, :2])


def test_missing_hand_model_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="hand model .* is missing"):
        HandNet.load(tmp_path / "none.pt")


def test_shipped_hand_model_places_hidden_tiles_better_than_an_even_draw():
    """On deals never trained on (seed 9), hands drawn by the shipped model's shares hold
    more of each seat's true tiles than hands drawn evenly from the unseen copies."""
    model = HandNet.load(SHIPPED)
    for preset in ("mil", "mahjongsoft"):
        x, y, ready = collect(40, 9, preset, prob=0.15)
        fig = overlap(model, x, y, seed=1)
        assert fig["common_model"] > fig["common_uniform"] + 0.6, (preset, fig)
        # and it tells ready hands better than their overall rate does
        brier = ((model.ready(x.astype(np.float32)) - ready) ** 2).mean()
        assert brier < 0.8 * ready.var(), (preset, brier, ready.var())


def test_command_line_bad_input_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "sichuan_agents.search.hand_model",
                           "--deals", "0"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--deals" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_search_with_model_hands_plays_legally():
    from sichuan_agents.search.agent import SearchAgent
    from sichuan_env.seats.agent import validate_agent

    agent = SearchAgent(seed=2, k=8, hands="model")
    assert agent.hand_model is not None
    validate_agent(agent, n_deals=1, seed=4)
    assert agent.searched > 0


def test_make_ready_swaps_wall_tiles_in_until_the_hand_waits():
    """``make_ready`` (``hands=shaped``) keeps every tile count, never takes the seat's
    void suit, and leaves a ready hand when it says so."""
    from sichuan_agents.bots.greedy import shanten
    from sichuan_agents.bots.rules_bot import RulesAgent
    from sichuan_agents.search.sampler import make_ready, sample_states

    rules = get_rules("mil").replace(deals_per_match=1)
    st = engine.reset([11], rules)
    bot = RulesAgent(0)
    for _ in range(40):
        v = seat_view(st, st.current, None)
        st, _, _ = engine.step(st, bot.act_batch(v, st.legal_action_mask))
    me = int(st.current[0])
    smp = sample_states(seat_view(st, me, [0]), 0, st.legal_action_mask[0], rules, 12,
                        np.random.default_rng(0), "discards")
    rng = np.random.default_rng(1)
    readied = 0
    for a in (a for a in range(4) if a != me):
        for t in range(12):
            lo, hi = int(smp.wall_front[t]), int(smp.wall_back[t])
            before = smp.hand[t, a].astype(int) + np.bincount(smp.wall[t, lo:hi], minlength=27)
            void = int(smp.void[t, a])
            held_void = smp.hand[t, a, 9 * void:9 * void + 9].sum()
            ok = make_ready(smp, t, a, rng)
            after = smp.hand[t, a].astype(int) + np.bincount(smp.wall[t, lo:hi], minlength=27)
            assert (before == after).all()
            assert smp.hand[t, a, 9 * void:9 * void + 9].sum() <= held_void
            if ok:
                readied += 1
                assert shanten(smp.hand[t, a][None], smp.meld[t, a][None],
                               smp.void[t, a:a + 1])[0] == 0
    assert readied >= 30


def test_make_ready_with_dead_kinds_never_waits_on_them():
    """``hands=safe``: a hand made ready with ``dead`` kinds waits on none of them, tile
    counts are kept; ``dead_kinds`` holds the seat's own river and the last discards of
    the seats that played after it, before the viewing seat."""
    from sichuan_agents.bots.rules_bot import RulesAgent
    from sichuan_agents.search.sampler import Known, dead_kinds, make_ready, sample_states
    from sichuan_env.core.hands import batch_wait_mask

    rules = get_rules("mil").replace(deals_per_match=1)
    st = engine.reset([12], rules)
    bot = RulesAgent(0)
    for _ in range(44):
        v = seat_view(st, st.current, None)
        st, _, _ = engine.step(st, bot.act_batch(v, st.legal_action_mask))
    me = int(st.current[0])
    view = seat_view(st, me, [0])
    known = Known(view, 0)
    smp = sample_states(view, 0, st.legal_action_mask[0], rules, 12,
                        np.random.default_rng(0), "discards")
    rng = np.random.default_rng(1)
    readied = 0
    for a in known.others:
        dead = dead_kinds(known, a)
        river = known.river[a, :known.river_len[a]]
        assert dead[river].all()
        b = (a + 1) % 4
        while b != me:
            if known.river_len[b] and not known.hu[b]:
                assert dead[known.river[b, known.river_len[b] - 1]]
            b = (b + 1) % 4
        for t in range(12):
            lo, hi = int(smp.wall_front[t]), int(smp.wall_back[t])
            before = smp.hand[t, a].astype(int) + np.bincount(smp.wall[t, lo:hi], minlength=27)
            if make_ready(smp, t, a, rng, dead=dead):
                readied += 1
                waits = batch_wait_mask(smp.hand[t, a][None], smp.meld[t, a][None],
                                        smp.void[t, a:a + 1])[0]
                assert waits.any() and not (waits & dead).any()
            after = smp.hand[t, a].astype(int) + np.bincount(smp.wall[t, lo:hi], minlength=27)
            assert (before == after).all()
    assert readied >= 20

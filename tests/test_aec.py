"""PettingZoo AEC environment: the official API, seed and render tests plus the rules of
selection, rewards and illegal moves."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from sichuan_env.core import engine
from sichuan_env.core.engine import IllegalActionError
from sichuan_env.core.rules import get_rules
from sichuan_env.envs.aec import AGENTS, env, raw_env
from sichuan_env.seats.observation import N_CHANNELS, encode


def play_random(e, seed: int, rng: np.random.Generator):
    """Play one match with random legal actions; yield (agent, reward, info) per last()."""
    e.reset(seed=seed)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        yield agent, obs, reward, term, info
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def test_api() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env(), num_cycles=400)
        api_test(raw_env(), num_cycles=200)


def test_seed() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(env, num_cycles=100)


def test_render(capsys) -> None:
    render_test(env, custom_tests={"ansi": lambda text: isinstance(text, str) and "seat 3" in text})
    assert "seat 0" in capsys.readouterr().out  # human mode printed


def test_spaces_and_seeded_wall() -> None:
    e = raw_env()
    e.reset(seed=123)
    assert e.agents == list(AGENTS)
    ref = engine.reset([123])
    np.testing.assert_array_equal(e.engine_state.wall, ref.wall)
    np.testing.assert_array_equal(e.engine_state.hand, ref.hand)
    space = e.observation_space("player_2")
    obs = e.observe("player_2")
    assert space.contains(obs)
    assert obs["observation"].shape == (N_CHANNELS, 27)
    np.testing.assert_array_equal(obs["observation"], encode(ref, 2)[0])
    assert obs["action_mask"].dtype == np.int8 and not obs["action_mask"].any()
    assert e.observe(e.agent_selection)["action_mask"].any()
    assert e.action_space("player_0").n == 88
    glob = e.state()
    assert e.state_space.contains(glob)
    wrapped = env()
    wrapped.reset(seed=123)
    np.testing.assert_array_equal(wrapped.state(), glob)  # wrappers forward state()
    assert wrapped.unwrapped.engine_state.batch_size == 1


def test_rewards_add_up_to_scores_and_hu_seats_never_act() -> None:
    rng = np.random.default_rng(0)
    for seed in range(12):
        e = raw_env(rules=get_rules("mahjongsoft"))
        totals = dict.fromkeys(AGENTS, 0.0)
        for agent, obs, reward, term, info in play_random(e, seed, rng):
            totals[agent] += reward
            if not term:
                seat = int(agent[-1])
                assert not e.engine_state.hu[0, seat], "a seat that declared Hu was selected"
                assert info["legal_moves"] == np.flatnonzero(obs["action_mask"]).tolist()
                assert int(e.engine_state.current[0]) == seat
        assert not e.agents
        # what last() delivered to each agent plus nothing left over = its final score
        final = e.engine_state.match_scores[0]
        for i, a in enumerate(AGENTS):
            assert totals[a] == pytest.approx(float(final[i]))


def test_cumulative_rewards_reach_waiting_agents() -> None:
    """A payment to a seat that is not acting shows in its _cumulative_rewards until it acts."""
    e = raw_env()
    rng = np.random.default_rng(3)
    for seed in range(30):
        e.reset(seed=seed)
        while not all(e.terminations.values()):
            agent = e.agent_selection
            before = dict(e._cumulative_rewards)
            mask = e.observe(agent)["action_mask"]
            e.step(int(rng.choice(np.flatnonzero(mask))))
            for a in AGENTS:
                expect = (0.0 if a == agent else before[a]) + e.rewards[a]
                assert e._cumulative_rewards[a] == pytest.approx(expect)
            if any(e.rewards.values()):
                return
    pytest.fail("no payment in 30 deals")


def test_illegal_move_wrapped_and_raw() -> None:
    e = env()
    e.reset(seed=1)
    agent = e.agent_selection
    mask = e.observe(agent)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(bad)
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1
    assert all(e.rewards[a] == 0 for a in AGENTS if a != agent)

    r = raw_env()
    r.reset(seed=1)
    before = r.engine_state.copy()
    with pytest.raises(IllegalActionError, match="illegal action"):
        r.step(bad)
    np.testing.assert_array_equal(r.engine_state.hand, before.hand)


def test_multi_deal_match_terminates_once() -> None:
    e = raw_env(rules=get_rules("mil", deals_per_match=3))
    rng = np.random.default_rng(1)
    deals = set()
    n_term = 0
    for _agent, _obs, _r, term, _info in play_random(e, 4, rng):
        deals.add(int(e.engine_state.deal_index[0]))
        n_term += term
    assert deals == {0, 1, 2}
    assert n_term == 4


def test_reset_reseeds() -> None:
    e = raw_env()
    e.reset(seed=9)
    w1 = e.engine_state.wall.copy()
    e.reset()
    w2 = e.engine_state.wall.copy()
    e.reset(seed=9)
    np.testing.assert_array_equal(e.engine_state.wall, w1)
    e.reset()
    np.testing.assert_array_equal(e.engine_state.wall, w2)
    assert "<table" in e._repr_html_()

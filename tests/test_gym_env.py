"""Single-agent Gymnasium environment."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sichuan_env.core.engine import IllegalActionError
from sichuan_env.core.rules import get_rules
from sichuan_env.envs.gym_env import SichuanSingleEnv
from sichuan_env.seats.agent import BaseAgent, RandomAgent
from sichuan_env.seats.observation import OBS_SHAPE, encode


def run_episode(e: SichuanSingleEnv, seed: int, rng: np.random.Generator):
    obs, info = e.reset(seed=seed)
    total, n = 0.0, 0
    while True:
        mask = e.action_masks()
        assert mask.dtype == bool and mask.any()
        np.testing.assert_array_equal(mask, info["action_mask"])
        assert e.observation_space.contains(obs)
        obs, r, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(mask))))
        total += r
        n += 1
        assert not trunc
        if term:
            return total, n


def test_check_env() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SichuanSingleEnv(learner_seat="random"), skip_render_check=False)
        check_env(SichuanSingleEnv(learner_seat=2, render_mode="ansi"), skip_render_check=False)


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_rewards_sum_to_final_score(seat: int) -> None:
    rng = np.random.default_rng(seat)
    e = SichuanSingleEnv(rules=get_rules("mahjongsoft"), learner_seat=seat,
                         opponents=RandomAgent(seat), illegal_action="raise")
    for seed in range(6):
        total, n = run_episode(e, seed, rng)
        assert n >= 1
        assert total == pytest.approx(float(e.state.match_scores[0, seat]))
        assert not e.action_masks().any()


def test_observation_is_the_learners() -> None:
    e = SichuanSingleEnv(learner_seat=3)
    obs, _ = e.reset(seed=5)
    assert obs.shape == OBS_SHAPE
    assert int(e.state.current[0]) == 3
    np.testing.assert_array_equal(obs, encode(e.state, 3)[0])


def test_random_seat_and_seeding() -> None:
    e = SichuanSingleEnv(learner_seat="random")
    seats = {e.reset(seed=s)[1]["seat"] for s in range(40)}
    assert seats == {0, 1, 2, 3}
    a = SichuanSingleEnv(learner_seat="random", opponents=RandomAgent(1))
    b = SichuanSingleEnv(learner_seat="random", opponents=RandomAgent(1))
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    np.testing.assert_array_equal(oa, ob)
    np.testing.assert_array_equal(a.state.wall, b.state.wall)


class Recorder(BaseAgent):
    """Picks the last legal action; remembers which seats it was asked for."""

    def __init__(self) -> None:
        self.calls = 0

    def act_batch(self, observations, masks):
        assert observations.shape[1:] == OBS_SHAPE
        self.calls += len(masks)
        return np.array([np.flatnonzero(m)[-1] for m in masks])


def test_three_opponents_and_illegal_actions() -> None:
    opp = [Recorder(), Recorder(), Recorder()]
    e = SichuanSingleEnv(learner_seat=0, opponents=opp)
    run_episode(e, 3, np.random.default_rng(0))
    assert all(o.calls > 0 for o in opp)
    with pytest.raises(ValueError):
        SichuanSingleEnv(opponents=[RandomAgent(0)] * 2)

    e = SichuanSingleEnv(learner_seat=0)
    e.reset(seed=0)
    bad = int(np.flatnonzero(~e.action_masks())[0])
    obs, r, term, trunc, info = e.step(bad)
    assert term and r == -1.0 and info["illegal_action"] == bad
    with pytest.raises(RuntimeError):
        e.step(0)
    e = SichuanSingleEnv(learner_seat=0, illegal_action="raise")
    e.reset(seed=0)
    with pytest.raises(IllegalActionError):
        e.step(bad)


def test_render_modes() -> None:
    e = SichuanSingleEnv(learner_seat=1, render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert "seat 1" in text and "you" in text
    assert "<table" in e._repr_html_()


def test_default_opponents_follow_the_seed() -> None:
    runs = []
    for _ in range(2):
        e = SichuanSingleEnv(learner_seat=1)
        rng = np.random.default_rng(0)
        obs, _ = e.reset(seed=11)
        trace = [obs.sum()]
        for _ in range(30):
            obs, r, term, _, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
            trace += [obs.sum(), r]
            if term:
                break
        runs.append(trace)
    assert runs[0] == runs[1]

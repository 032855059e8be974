"""The adviser's planes (sichuan_agents/advice.py): encoding, the VecEnv wrapper, and a PPO agent
whose model reads them building exactly the input the training env gave it."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sichuan_agents.training.advice import (
    N_ADVICE_PLANES,
    AdviceVecEnv,
    advice_planes,
    make_adviser,
)
from sichuan_agents.training.features import N_FEATURE_PLANES, AnalysisVecEnv, augment
from sichuan_env.core.actions import (
    HU,
    KONG,
    MELDED_KONG,
    N_ACTIONS,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
)
from sichuan_env.envs.vector import SichuanVecEnv
from sichuan_env.seats.observation import N_CHANNELS


def decode(planes: np.ndarray) -> int:
    """The action a (7, 27) advice block stands for (the inverse of advice_planes)."""
    hot = [int(p) for p in np.flatnonzero(planes.any(1))]
    assert len(hot) == 1, f"advice for one action lights one plane, got {hot}"
    plane = hot[0]
    kinds = np.flatnonzero(planes[plane])
    if plane == 0:
        assert len(kinds) == 1
        return int(kinds[0])
    if plane == 1:
        if len(kinds) == 1:
            return VOID_TILE + int(kinds[0])
        assert len(kinds) == 9 and kinds[0] % 9 == 0 and np.all(np.diff(kinds) == 1)
        return VOID_SUIT + int(kinds[0]) // 9
    if plane == 2:
        assert len(kinds) == 1
        return KONG + int(kinds[0])
    assert len(kinds) == 27, "claim advice fills its whole plane"
    return {3: PUNG, 4: MELDED_KONG, 5: HU, 6: PASS}[plane]


def test_every_action_has_its_own_planes_and_decodes_back():
    planes = advice_planes(np.arange(N_ACTIONS))
    assert planes.shape == (N_ACTIONS, N_ADVICE_PLANES, 27) and planes.dtype == np.float32
    assert set(np.unique(planes)) <= {0.0, 1.0}
    assert [decode(p) for p in planes] == list(range(N_ACTIONS))


@given(st.lists(st.integers(0, N_ACTIONS - 1), max_size=40))
def test_rows_are_independent_of_each_other(actions):
    planes = advice_planes(np.array(actions, np.int64))
    assert planes.shape[0] == len(actions)
    for row, a in zip(planes, actions, strict=True):
        assert np.array_equal(row, advice_planes(np.array([a]))[0])


@pytest.mark.parametrize("bad", [[-1], [N_ACTIONS], [3, 200]])
def test_out_of_range_advice_is_refused(bad):
    with pytest.raises(ValueError, match="0..87"):
        advice_planes(np.array(bad))


class PlanesReader:
    needs = "planes"


def _advised_env(tables=6, seats=(0, 2), seed=4):
    base = SichuanVecEnv(tables, learner_seats=seats, opponents="rules", seed=seed)
    return base, AdviceVecEnv(AnalysisVecEnv(base), make_adviser("rules", seed=1))


def test_advice_env_observation_is_planes_analysis_and_the_advisers_choice():
    base, env = _advised_env()
    adviser = make_adviser("rules", seed=1)
    obs = env.reset()
    assert obs.shape == (env.num_envs, N_CHANNELS + N_FEATURE_PLANES + N_ADVICE_PLANES, 27)
    assert env.observation_space.contains(obs[0])
    rng = np.random.default_rng(0)
    for _ in range(25):
        masks = env.action_masks()
        planes = base.learner_inputs(PlanesReader())
        assert np.array_equal(obs[:, : N_CHANNELS + N_FEATURE_PLANES], augment(planes))
        advice = adviser.act_batch(base.learner_inputs(adviser), masks)
        assert np.all(masks[np.arange(len(advice)), advice]), "advice is always legal"
        assert np.array_equal(obs[:, -N_ADVICE_PLANES:], advice_planes(advice))
        u = rng.random(masks.shape)
        u[~masks] = -1
        obs, _, dones, infos = env.step(u.argmax(1))
        for d, info in zip(dones, infos, strict=True):
            if d:
                term = info["terminal_observation"]
                assert term.shape == obs.shape[1:] and not term[-N_ADVICE_PLANES:].any()


def test_the_advice_teacher_answers_what_the_adviser_would():
    """The imitation teacher that reads the env's advice gives the rules bot's own choice
    for the observation the env returned, step after step (no second call of the bot)."""
    from sichuan_agents.training.advice import AdviceTeacher

    base, env = _advised_env()
    teacher, bot = AdviceTeacher(env), make_adviser("rules", seed=7)
    with pytest.raises(RuntimeError, match="not advised"):
        teacher.act_batch(None, env.action_masks())
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(30):
        masks = env.action_masks()
        got = teacher.act_batch(None, masks)
        np.testing.assert_array_equal(got, bot.act_batch(base.learner_inputs(bot), masks))
        u = rng.random(masks.shape)
        u[~masks] = -1
        env.step(np.where(rng.random(len(got)) < 0.5, got, u.argmax(1)))


@pytest.fixture(scope="module")
def advised_model():
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.ppo_policy import policy_kwargs

    _, env = _advised_env(tables=2, seats=(0,))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=8, device="cpu", seed=0,
                        policy_kwargs=policy_kwargs(features_dim=32, channels=8))
    model.sichuan_rules = "mil"
    return model


def test_advised_agent_builds_the_training_input_from_a_seat_view(advised_model):
    from sichuan_agents.models.ppo import PPOAgent

    agent = PPOAgent(advised_model)
    assert agent.needs == "view" and agent.rules.preset == "mil"
    base, env = _advised_env(tables=5, seats=(0, 1, 2, 3), seed=9)
    obs = env.reset()
    rng = np.random.default_rng(1)
    for _ in range(15):
        masks = env.action_masks()
        view = base.learner_inputs(agent)
        assert np.array_equal(agent.advised_input(view, masks), obs)
        actions = agent.act_batch(view, masks)
        assert np.all(masks[np.arange(len(actions)), actions])
        u = rng.random(masks.shape)
        u[~masks] = -1
        obs, *_ = env.step(u.argmax(1))


def test_advised_agent_plays_legal_games_and_refuses_planes(advised_model):
    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_env.seats.agent import validate_agent

    agent = PPOAgent(advised_model)
    validate_agent(agent, n_deals=3, seed=2)
    with pytest.raises(TypeError, match="seat view"):
        agent.act_batch(np.zeros((1, N_CHANNELS, 27), np.float32), np.ones((1, 88), bool))

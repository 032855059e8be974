"""SB3 VecEnv with opponents inside; the shared agent interface; a short MaskablePPO run."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core.engine import IllegalActionError
from sichuan_env.core.rules import get_rules
from sichuan_env.envs.vector import SichuanVecEnv
from sichuan_env.seats.agent import Agent, BaseAgent, RandomAgent, validate_agent
from sichuan_env.seats.observation import OBS_SHAPE, encode


def random_steps(venv: SichuanVecEnv, n: int, seed: int = 0):
    agent = RandomAgent(seed)
    for _ in range(n):
        yield venv.step(agent.act_batch(None, venv.action_masks()))


def test_shapes_and_waiting_for_learners() -> None:
    venv = SichuanVecEnv(5, learner_seats=(0, 2), seed=1)
    assert venv.num_envs == 10
    obs = venv.reset()
    assert obs.shape == (10, *OBS_SHAPE) and obs.dtype == np.float32
    assert venv.get_attr("learner_seat") == [0] * 5 + [2] * 5
    for obs, rew, _done, infos in random_steps(venv, 30):
        st = venv.state
        np.testing.assert_array_equal(st.current, venv.learner)  # every table waits
        assert not st.done.any()
        np.testing.assert_array_equal(obs, encode(st, venv.learner))
        assert rew.shape == (10,) and rew.dtype == np.float32
        assert len(infos) == 10
        assert venv.action_masks().any(1).all()


@pytest.mark.parametrize("seats", [(0,), (1, 3), (0, 1, 2, 3)])
def test_episode_rewards_equal_final_scores(seats) -> None:
    venv = SichuanVecEnv(6, rules=get_rules("mahjongsoft"), learner_seats=seats, seed=4)
    venv.reset()
    ret = np.zeros(venv.num_envs)
    finished = 0
    for _obs, rew, done, infos in random_steps(venv, 400, seed=2):
        ret += rew
        for i in np.flatnonzero(done):
            info = infos[i]
            seat = int(venv.learner[i])
            assert info["terminal_observation"].shape == OBS_SHAPE
            assert ret[i] == pytest.approx(info["final_scores"][seat])
            assert info["episode"]["r"] == pytest.approx(ret[i])
            ret[i] = 0
            finished += 1
    assert finished >= venv.num_envs


def test_multi_deal_matches() -> None:
    venv = SichuanVecEnv(4, rules=get_rules("mil", deals_per_match=2), seed=0)
    venv.reset()
    ret = np.zeros(4)
    deals_seen = set()
    done_count = 0
    for _obs, rew, done, infos in random_steps(venv, 300):
        ret += rew
        deals_seen |= set(venv.state.deal_index.tolist())
        for i in np.flatnonzero(done):
            assert ret[i] == pytest.approx(infos[i]["final_scores"][0])
            ret[i] = 0
            done_count += 1
    assert deals_seen == {0, 1} and done_count >= 4


def test_seeding_is_reproducible() -> None:
    a = SichuanVecEnv(3, seed=7, opponents=RandomAgent(1))
    b = SichuanVecEnv(3, seed=7, opponents=RandomAgent(1))
    np.testing.assert_array_equal(a.reset(), b.reset())
    c = SichuanVecEnv(3, seed=8)
    c.reset()
    assert not np.array_equal(a.state.wall, c.state.wall)
    a.seed(8)
    a.reset()
    np.testing.assert_array_equal(a.state.wall, c.state.wall)


def test_default_opponents_follow_the_seed() -> None:
    traces = []
    for _ in range(2):
        venv = SichuanVecEnv(4, seed=3)
        venv.reset()
        traces.append([o.sum() for o, *_ in random_steps(venv, 25, seed=1)])
    assert traces[0] == traces[1]


def test_illegal_learner_action_raises() -> None:
    venv = SichuanVecEnv(3, seed=0)
    venv.reset()
    acts = RandomAgent(0).act_batch(None, venv.action_masks())
    acts[1] = int(np.flatnonzero(~venv.action_masks()[1])[0])
    with pytest.raises(IllegalActionError, match="slot 1"):
        venv.step(acts)


def test_sb3_plumbing() -> None:
    assert SichuanVecEnv(2, learner_seats=3).get_attr("learner_seat") == [3, 3]
    with pytest.raises(ValueError):
        SichuanVecEnv(2, learner_seats=(0, 0))
    venv = SichuanVecEnv(2, learner_seats=(0, 1), seed=0)
    venv.reset()
    masks = np.stack(venv.env_method("action_masks"))
    np.testing.assert_array_equal(masks, venv.action_masks())
    assert venv.has_attr("action_masks")
    assert venv.env_is_wrapped(object) == [False] * 4
    assert len(venv.env_method("render", indices=[1])) == 1
    venv.set_attr("foo", 3)
    assert venv.get_attr("foo", indices=[0, 2]) == [3, 3]
    assert "seat 0" in venv.render("ansi")


class Recorder(BaseAgent):
    def __init__(self) -> None:
        self.rows = 0

    def act_batch(self, observations, masks):
        assert observations.shape == (len(masks), *OBS_SHAPE)
        self.rows += len(masks)
        return masks.argmax(1)


def test_opponents_per_position() -> None:
    opp = [Recorder(), Recorder(), Recorder()]
    venv = SichuanVecEnv(8, learner_seats=(3,), opponents=opp, seed=0)
    venv.reset()
    for _ in random_steps(venv, 20):
        pass
    assert all(o.rows > 0 for o in opp)


def test_agents_interface() -> None:
    agent = RandomAgent(0)
    assert isinstance(agent, Agent)
    masks = np.zeros((500, 88), bool)
    masks[:, [3, 40, 87]] = True
    acts = agent.act_batch(None, masks)
    assert set(acts.tolist()) == {3, 40, 87}
    assert agent.act(np.zeros(OBS_SHAPE), masks[0].astype(np.int8)) in (3, 40, 87)
    with pytest.raises(ValueError):
        agent.act_batch(None, np.zeros((2, 88), bool))
    validate_agent(RandomAgent(1), n_deals=6, seed=3)

    class Bad(BaseAgent):
        def act_batch(self, observations, masks):
            return np.full(len(masks), 87)  # "pass" is rarely legal

    with pytest.raises(IllegalActionError, match="Bad"):
        validate_agent(Bad(), n_deals=2)


@pytest.mark.slow
def test_maskable_ppo_trains() -> None:
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    venv = SichuanVecEnv(16, learner_seats=(0, 1), seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=256, n_epochs=2, seed=0,
                        policy_kwargs={"net_arch": [64, 64]}, verbose=0)
    model.learn(total_timesteps=3 * 32 * venv.num_envs)
    assert model.num_timesteps >= 3 * 32 * venv.num_envs
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=venv.action_masks(), deterministic=True)
    assert venv.action_masks()[np.arange(venv.num_envs), actions].all()


class First(BaseAgent):
    """Deterministic: the first legal action."""

    needs = "nothing"

    def act_batch(self, observations, masks):
        return np.asarray(masks).argmax(1)


def test_shards_give_the_same_games(monkeypatch) -> None:
    import sichuan_env.envs.vector as vector

    runs = []
    for shard in (1024, 3):
        monkeypatch.setattr(vector, "SHARD_TABLES", shard)
        venv = SichuanVecEnv(4, learner_seats=(0, 2), opponents=First(), seed=5)
        assert len(venv._shards) == (1 if shard == 1024 else 3)
        trace = [venv.reset()]
        for _ in range(60):
            obs, rew, done, infos = venv.step(First().act_batch(None, venv.action_masks()))
            trace += [obs, rew, done]
        np.testing.assert_array_equal(venv.state.current, venv.learner)
        assert "seat" in venv.render_slot(7)
        runs.append(trace)
    for x, y in zip(*runs, strict=True):
        np.testing.assert_array_equal(x, y)

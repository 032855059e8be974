"""The RLlib environments (sichuan_env.envs.rllib): RLlib's own check, invariants against the
engine, seeding against the other envs, illegal-action modes, and the RLModule's weights
against the SB3 policy. Skipped when Ray RLlib is not installed."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("ray.rllib")

from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from sichuan_env.core import engine  # noqa: E402
from sichuan_env.core.engine import IllegalActionError  # noqa: E402
from sichuan_env.envs.aec import raw_env  # noqa: E402
from sichuan_env.envs.rllib import (  # noqa: E402
    AGENT_IDS,
    SichuanMultiAgentEnv,
    SichuanVectorEnv,
)
from sichuan_env.seats.agent import RandomAgent  # noqa: E402
from sichuan_env.seats.observation import encode  # noqa: E402


def _random_actions(obs, terms, rng):
    acts = []
    for d, t in zip(obs, terms, strict=True):
        if t["__all__"]:
            acts.append({})
            continue
        ((agent, o),) = d.items()
        acts.append({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
    return acts


@pytest.mark.parametrize("opponents", [None, RandomAgent(seed=5), "random,greedy,rules"])
@pytest.mark.parametrize("illegal", ["random_legal", "penalty"])
def test_rllib_env_check_passes(opponents, illegal):
    for seed in range(3):
        env = SichuanMultiAgentEnv({"opponents": opponents, "illegal": illegal, "seed": seed})
        check_multiagent_environments(env)


def test_illegal_raise_changes_nothing():
    env = SichuanMultiAgentEnv({"illegal": "raise"})
    obs, _ = env.reset(seed=4)
    ((agent, o),) = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    before = env.tables.state.copy()
    seat = AGENT_IDS.index(agent)
    # the driver's one message (sichuan_env.seats.driver.check_actions)
    with pytest.raises(IllegalActionError, match=rf"^RLlib chose illegal action {bad} \(.*\) "
                       rf"at table 0, seat {seat}; legal: \["):
        env.step({agent: bad})
    for a, b in zip(before.arrays(), env.tables.state.arrays(), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="expected one action for"):
        env.step({AGENT_IDS[(AGENT_IDS.index(agent) + 1) % 4]: 0})


@pytest.mark.parametrize("mode", ["random_legal", "penalty"])
def test_illegal_replaced_by_a_legal_action(mode):
    env = SichuanMultiAgentEnv({"illegal": mode, "illegal_penalty": 2.5})
    ref = SichuanMultiAgentEnv({"illegal": "raise"})
    obs, _ = env.reset(seed=9)
    ref.reset(seed=9)
    ((agent, o),) = obs.items()
    bad = int(np.flatnonzero(o["action_mask"] == 0)[0])
    _, rew, _, _, info = env.step({agent: bad})
    assert info[agent]["illegal_action"] == bad
    assert env.tables.illegal_count == 1
    # the action played was legal: some legal action of the reference gives this state
    seat = AGENT_IDS.index(agent)
    played = [a for a in np.flatnonzero(o["action_mask"])
              if np.array_equal(engine.step(ref.tables.state, [int(a)])[0].hand,
                                env.tables.state.hand)
              and engine.step(ref.tables.state, [int(a)])[0].current[0]
              == env.tables.state.current[0]]
    assert played
    _, r_ref, _ = engine.step(ref.tables.state, [int(played[0])])
    expected = float(r_ref[0, seat]) - (2.5 if mode == "penalty" else 0.0)
    assert rew.get(agent, 0.0) == pytest.approx(expected)


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31), tables=st.integers(1, 12))
def test_self_play_invariants_against_the_engine(seed, tables):
    """Every step: one agent (the engine's current seat) per live table, its observation
    is encode() for that seat and its mask the engine's; the rewards of the four seats are
    exactly the engine's payments of that step; returns add up to the match scores."""
    env = SichuanVectorEnv(tables, {})
    obs, _ = env.reset(seed=seed)
    ref = engine.reset(seed + np.arange(tables))
    rng = np.random.default_rng(seed)
    terms = [{"__all__": False}] * tables
    returns = np.zeros((tables, 4))
    finished = np.zeros(tables, bool)
    for _ in range(400):
        ref_mask = engine.legal_mask(ref)
        for t in range(tables):
            if finished[t]:
                continue
            seat = int(ref.current[t])
            assert list(obs[t]) == [AGENT_IDS[seat]]
            o = obs[t][AGENT_IDS[seat]]
            np.testing.assert_array_equal(o["observations"], encode(ref, seat, [t])[0])
            np.testing.assert_array_equal(o["action_mask"], ref_mask[t])
        acts = _random_actions(obs, terms, rng)  # finished tables go on with new matches
        ref_acts = np.array([next(iter(a.values())) if a and not f else 0
                             for a, f in zip(acts, finished, strict=True)])
        ref, r_ref, _ = engine.step(ref, ref_acts)
        obs, rew, terms, truncs, _ = env.step(acts)
        for t in range(tables):
            if finished[t]:
                continue
            assert set(obs[t]) <= set(rew[t])  # observed seats always get a reward entry
            got = np.array([rew[t].get(a, 0.0) for a in AGENT_IDS])
            np.testing.assert_allclose(got, r_ref[t])
            returns[t] += got
            assert not truncs[t]["__all__"]
            if terms[t]["__all__"]:
                finished[t] = True
                assert set(obs[t]) == set(AGENT_IDS)  # a last observation for every seat
                for s, a in enumerate(AGENT_IDS):
                    np.testing.assert_array_equal(obs[t][a]["observations"],
                                                  encode(ref, s, [t])[0])
                    assert not obs[t][a]["action_mask"].any()
                np.testing.assert_allclose(returns[t], ref.match_scores[t])
        if finished.all():
            break
    assert finished.all()


def test_bot_mode_learner_seats_and_returns():
    """One learner seat per table (learner_seats in turn), bots play the others inside the
    env; the learner's rewards add up to its match score."""
    env = SichuanVectorEnv(8, {"opponents": RandomAgent(seed=1), "learner_seats": (1, 3)})
    obs, _ = env.reset(seed=11)
    rng = np.random.default_rng(0)
    learner = [AGENT_IDS[(1, 3)[t % 2]] for t in range(8)]
    returns = np.zeros(8)
    done = np.zeros(8, bool)
    terms = [{"__all__": False}] * 8
    for _ in range(300):
        for t in range(8):
            if not done[t]:
                assert list(obs[t]) == [learner[t]]
        obs, rew, terms, _, _ = env.step(_random_actions(obs, terms, rng))
        for t in range(8):
            if done[t]:
                continue
            assert set(rew[t]) <= {learner[t]}
            returns[t] += rew[t].get(learner[t], 0.0)
            if terms[t]["__all__"]:
                done[t] = True
                seat = AGENT_IDS.index(learner[t])
                assert returns[t] == pytest.approx(env.tables.state.match_scores[t, seat])
        if done.all():
            break
    assert done.all()


def test_same_seed_same_deals_as_the_aec_env_and_engine():
    """Vector table i seeded s = the one-table env seeded s + i = the AEC env seeded s + i
    = engine.reset([s + i]); a whole match plays out identically in the three, and the
    table's next match (autoreset) equals the one-table env's next reset()."""
    seed, n = 123, 4
    vec = SichuanVectorEnv(n, {})
    vobs, _ = vec.reset(seed=seed)
    ref = engine.reset(seed + np.arange(n))
    np.testing.assert_array_equal(vec.tables.state.hand, ref.hand)
    np.testing.assert_array_equal(vec.tables.state.wall, ref.wall)
    t = 2
    one = SichuanMultiAgentEnv({})
    aec = raw_env()
    obs, _ = one.reset(seed=seed + t)
    aec.reset(seed=seed + t)
    np.testing.assert_array_equal(one.tables.state.wall[0], aec.state_.wall[0])
    np.testing.assert_array_equal(one.tables.state.hand[0], vec.tables.state.hand[t])
    rng = np.random.default_rng(7)
    terms = [{"__all__": False}] * n
    aec_returns = dict.fromkeys(AGENT_IDS, 0.0)
    for _ in range(400):
        ((agent, o),) = obs.items()
        assert aec.agent_selection == agent
        np.testing.assert_array_equal(o["observations"], aec.observe(agent)["observation"])
        np.testing.assert_array_equal(vobs[t][agent]["observations"], o["observations"])
        a = int(rng.choice(np.flatnonzero(o["action_mask"])))
        acts = _random_actions(vobs, terms, rng)
        acts[t] = {agent: a}
        obs, rew, term, _, _ = one.step({agent: a})
        vobs, vrew, terms, _, _ = vec.step(acts)
        aec.step(a)
        for ag in AGENT_IDS:
            aec_returns[ag] += aec.rewards[ag]
            assert rew.get(ag, 0.0) == vrew[t].get(ag, 0.0) == pytest.approx(aec.rewards[ag])
        if term["__all__"]:
            assert terms[t]["__all__"] and all(aec.terminations.values())
            break
    else:
        pytest.fail("the match did not end")
    # next match: the vector env's autoreset and the one-table env's reset() agree
    obs, _ = one.reset()
    acts = [{} for _ in range(n)]
    vobs, _, _, _, _ = vec.step(acts if all(x["__all__"] for x in terms) else
                                _random_actions(vobs, terms, rng))
    np.testing.assert_array_equal(one.tables.state.wall[0], vec.tables.state.wall[t])
    np.testing.assert_array_equal(one.tables.state.hand[0], vec.tables.state.hand[t])
    assert list(vobs[t]) == list(obs)


def test_features_are_appended_and_bad_config_is_rejected():
    from sichuan_agents.training.features import analysis_planes

    env = SichuanMultiAgentEnv({"features": analysis_planes})
    obs, _ = env.reset(seed=3)
    ((agent, o),) = obs.items()
    seat = AGENT_IDS.index(agent)
    raw = encode(env.tables.state, seat, [0])
    np.testing.assert_array_equal(o["observations"][: raw.shape[1]], raw[0])
    np.testing.assert_array_equal(o["observations"][raw.shape[1]:], analysis_planes(raw)[0])
    assert env.observation_spaces[agent]["observations"].shape == o["observations"].shape
    with pytest.raises(ValueError, match="unknown env config"):
        SichuanMultiAgentEnv({"tabels": 3})
    with pytest.raises(ValueError, match="illegal must be"):
        SichuanMultiAgentEnv({"illegal": "ignore"})
    with pytest.raises(ValueError, match="learner_seats"):
        SichuanMultiAgentEnv({"learner_seats": (0, 4)})


def test_module_weights_round_trip_with_the_sb3_policy():
    """SB3 MaskablePPO policy -> RLModule: same masked log-probabilities and values on real
    observations; RLModule -> SB3: the same state dict back."""
    import torch
    from ray.rllib.core.columns import Columns
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.features import AnalysisVecEnv, analysis_planes
    from sichuan_agents.training.ppo_policy import policy_kwargs
    from sichuan_agents.training.rllib_module import load_sb3_weights, module_spec
    from sichuan_agents.training.rllib_net import to_sb3_state
    from sichuan_env.envs.vector import SichuanVecEnv

    venv = AnalysisVecEnv(SichuanVecEnv(4, seed=0))
    sb3 = MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=16, device="cpu", seed=1,
                      policy_kwargs=policy_kwargs())
    env = SichuanMultiAgentEnv({"features": analysis_planes})
    spec = module_spec()
    spec.observation_space = env.observation_spaces["player_0"]
    spec.action_space = env.action_spaces["player_0"]
    module = spec.build()
    load_sb3_weights(module, sb3.policy)
    obs = venv.reset()
    mask = venv.action_masks()
    batch = {Columns.OBS: {"observations": torch.as_tensor(obs),
                           "action_mask": torch.as_tensor(mask, dtype=torch.float32)}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        values = module.compute_values(batch)
        dist = sb3.policy.get_distribution(torch.as_tensor(obs), action_masks=mask)
        sb3_logp = dist.distribution.logits
        sb3_values = sb3.policy.predict_values(torch.as_tensor(obs)).squeeze(-1)
    m = torch.as_tensor(mask)
    np.testing.assert_allclose(torch.log_softmax(logits, 1)[m], sb3_logp[m], atol=1e-5)
    np.testing.assert_allclose(values, sb3_values, atol=1e-5)
    assert (logits.argmax(1) == sb3_logp.argmax(1)).all()
    # back: a fresh SB3 policy gets exactly the module's weights
    other = MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=16, device="cpu", seed=2,
                        policy_kwargs=policy_kwargs())
    other.policy.load_state_dict(to_sb3_state(module.net.state_dict()))
    for k, v in sb3.policy.state_dict().items():
        torch.testing.assert_close(other.policy.state_dict()[k], v)


def test_opponents_from_specs_get_the_preset_and_the_shared_seeding():
    """Opponents named in the env config or by train.py's ``--opponents`` are built like every
    env's (seat_agents: equal names are one agent, agent_seed seeds) with the preset played."""
    from sichuan_agents.training.rllib_train import make_bots
    from sichuan_env.envs.rllib import TableBatch
    from sichuan_env.seats.agent import seat_agents

    tables = TableBatch(2, {"rules": "mahjongsoft", "opponents": "search,greedy,search",
                            "learner_seats": (0,), "seed": 5})
    first, second, third = tables.opponents
    assert first is third and second is not first
    assert first.rules.preset == "mahjongsoft"
    bots = make_bots("random", 5, "mahjongsoft")
    assert bots[0] is bots[1] is bots[2]
    expected = seat_agents(["random"] * 3, 5, "mahjongsoft").agents[0]
    assert bots[0].rng.integers(1 << 30) == expected.rng.integers(1 << 30)
    assert make_bots("search", 5, "mahjongsoft")[0].rules.preset == "mahjongsoft"


def test_a_remote_env_runner_runs_numba_on_its_own_cpus_without_spinning_threads(monkeypatch):
    """Runner processes take numba's workqueue threads (OpenMP's idle threads spin, which
    slowed sampling 3.5-4x) and at most their CPUs' worth of them; a choice the user made
    (NUMBA_THREADING_LAYER) stands."""
    import threading

    import numba

    from sichuan_env.core.jit import many_threads
    from sichuan_env.envs.rllib import limit_numba_threads, use_workqueue_threads

    monkeypatch.setattr(numba.config, "THREADING_LAYER", "default")
    use_workqueue_threads()
    assert numba.config.THREADING_LAYER == "workqueue"
    monkeypatch.setattr(numba.config, "THREADING_LAYER", "omp")
    use_workqueue_threads()
    assert numba.config.THREADING_LAYER == "omp"

    seen = {}

    def runner_thread() -> None:  # numba's thread count is per thread: test in one's own
        limit_numba_threads(1.0)
        seen["one"] = (numba.get_num_threads(), many_threads())
        limit_numba_threads(10_000)
        seen["many"] = numba.get_num_threads()

    t = threading.Thread(target=runner_thread)
    t.start()
    t.join()
    assert seen["one"] == (1, False)
    assert seen["many"] == numba.config.NUMBA_NUM_THREADS

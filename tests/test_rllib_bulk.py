"""The bulk-sampling env runner (sichuan_env.envs.rllib_bulk): its episodes are valid RLlib
episodes, replaying their actions in the one-table env gives the same observations, masks
and rewards (a differential test against sichuan_env.envs.rllib), matches continue across
sample() calls, and the metrics add up. Skipped when Ray RLlib is not installed."""

from collections import defaultdict

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

SEED = 3


def _runner(tables: int = 8, n_steps: int = 16, opponents: str = "greedy",
            seats: str = "0,1,2,3", sampler: str = "bulk"):
    from sichuan_agents import train
    from sichuan_agents.training.rllib_train import build_config, env_runner_class

    args = train.parse_args([
        "--backend", "rllib", "--env-runners", "0", "--tables", str(tables), "--n-steps",
        str(n_steps), "--imitate", "none", "--device", "cpu", "--seed", str(SEED),
        "--opponents", opponents, "--learner-seats", seats, "--features", "raw",
        "--sampler", sampler, "--threads", "1"])
    return env_runner_class(args)(config=build_config(args)), args


@pytest.fixture(scope="module")
def sampled():
    """Three sample() calls of a bulk runner: 8 tables x 16 steps each, greedy bots."""
    runner, args = _runner()
    calls = [runner.sample() for _ in range(3)]
    metrics = runner.get_metrics()
    return runner, args, calls, metrics


def _chains(calls):
    """table -> list of matches, each the list of its chunks in order."""
    chains = defaultdict(list)
    for eps in calls:
        for ep in eps:
            t = ep.custom_data["table"]
            if chains[t] and chains[t][-1][-1].id_ == ep.id_:
                chains[t][-1].append(ep)
            else:
                chains[t].append([ep])
    return chains


def test_bulk_episodes_are_valid_rllib_episode_chunks(sampled):
    from ray.rllib.core.columns import Columns

    from sichuan_env.envs.rllib import AGENT_IDS

    runner, _, calls, _ = sampled
    tb = runner.env.tables
    for eps in calls:
        assert sum(len(e) for e in eps) == 8 * 16  # every table stepped 16 times
        ids = [e.id_ for e in eps]
        assert len(set(ids)) == len(ids)
        for e in eps:
            e.validate()  # RLlib's own check of the buffers' lengths
            assert e.is_numpy and len(e) >= 1
            t = e.custom_data["table"]
            assert e.agent_id == AGENT_IDS[tb.learner[t]] and e.module_id == "learner"
            assert e.multi_agent_episode_id == f"{e.id_}-{e.t_started}"
            obs = e.get_observations(slice(0, len(e)))
            masks = obs["action_mask"]
            acts = e.get_actions(slice(0, len(e)))
            assert obs["observations"].shape == (len(e), *tb.observation_space[
                "observations"].shape)
            # masks respected: every action was legal where it was taken
            assert (masks[np.arange(len(e)), acts] == 1).all()
            logits = e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS,
                                               slice(0, len(e)))
            assert (logits[masks == 0] <= -1e7).all()
            logp = e.get_extra_model_outputs(Columns.ACTION_LOGP, slice(0, len(e)))
            z = logits - logits.max(1, keepdims=True)
            ref = z[np.arange(len(e)), acts] - np.log(np.exp(z).sum(1))
            np.testing.assert_allclose(logp, ref, atol=1e-5)
            assert (logp <= 0).all()


def test_matches_continue_across_sample_calls(sampled):
    _, _, calls, _ = sampled
    continued = 0
    for matches in _chains(calls).values():
        for chunks in matches:
            assert all(not c.is_done for c in chunks[:-1])
            for a, b in zip(chunks, chunks[1:], strict=False):
                continued += 1
                assert b.t_started == a.t_started + len(a)  # same episode, counted on
                last = a.get_observations(-1)
                first = b.get_observations(0)
                assert np.array_equal(last["observations"], first["observations"])
                assert np.array_equal(last["action_mask"], first["action_mask"])
            assert chunks[0].t_started == 0
        assert all(m[-1].is_done for m in matches[:-1])
    assert continued >= 8  # every table's match at the end of a call went on


def test_bulk_replays_in_the_one_table_env_with_the_learner_seats_points(sampled):
    """Differential: each table's matches, replayed action by action in
    SichuanMultiAgentEnv (same seed, same bots), give the same observations, masks,
    rewards and ends; a match's return is the points the engine paid the learner seat."""
    from sichuan_agents.training.rllib_train import opponents_factory
    from sichuan_env.envs.rllib import AGENT_IDS, SichuanMultiAgentEnv

    runner, args, calls, _ = sampled
    tb = runner.env.tables
    finished = 0
    for t, matches in _chains(calls).items():
        seat = int(tb.learner[t])
        agent = AGENT_IDS[seat]
        env = SichuanMultiAgentEnv({"opponents": opponents_factory(args.opponents, SEED),
                                    "learner_seats": (seat,), "illegal": "raise"})
        for k, chunks in enumerate(matches):
            obs, _ = env.reset(seed=SEED + t) if k == 0 else env.reset()
            pre = float(env.tables.state.scores[0, seat])  # bots' kongs before step 0
            total = 0.0
            for c, chunk in enumerate(chunks):
                o = chunk.get_observations(slice(0, len(chunk) + 1))
                acts = chunk.get_actions(slice(0, len(chunk)))
                rews = chunk.get_rewards(slice(0, len(chunk)))
                for j in range(len(chunk)):
                    assert list(obs) == [agent]
                    assert np.array_equal(obs[agent]["observations"], o["observations"][j])
                    assert np.array_equal(obs[agent]["action_mask"], o["action_mask"][j])
                    obs, rew, term, _, _ = env.step({agent: int(acts[j])})
                    expected = rew.get(agent, 0.0) + (pre if c == j == 0 else 0.0)
                    assert rews[j] == pytest.approx(expected)
                    total += float(rews[j])
                    assert term["__all__"] == (chunk.is_done and j == len(chunk) - 1)
                assert np.array_equal(obs[agent]["observations"], o["observations"][-1])
            if chunks[-1].is_done:
                finished += 1
                assert total == float(env.tables.state.scores[0, seat])
                assert not obs[agent]["action_mask"].any()
    assert finished >= 8


def test_bulk_metrics_count_steps_episodes_and_returns(sampled):
    _, _, calls, metrics = sampled
    from ray.rllib.utils.metrics import (
        EPISODE_LEN_MEAN,
        EPISODE_MODULE_RETURN_MEAN,
        EPISODE_RETURN_MEAN,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
        NUM_EPISODES_LIFETIME,
        NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    )

    done = [m for ms in _chains(calls).values() for m in ms if m[-1].is_done]
    returns = [sum(c.get_return() for c in m) for m in done]
    lengths = [sum(len(c) for c in m) for m in done]
    assert metrics[NUM_ENV_STEPS_SAMPLED_LIFETIME].peek() == 3 * 8 * 16
    assert metrics[NUM_MODULE_STEPS_SAMPLED_LIFETIME]["learner"].peek() == 3 * 8 * 16
    assert metrics[NUM_EPISODES_LIFETIME].peek() == len(done)
    assert metrics[EPISODE_RETURN_MEAN].peek() == pytest.approx(np.mean(returns))
    assert metrics[EPISODE_MODULE_RETURN_MEAN]["learner"].peek() == pytest.approx(
        np.mean(returns))
    assert metrics[EPISODE_LEN_MEAN].peek() == pytest.approx(np.mean(lengths))


def test_bulk_runner_deals_the_walls_of_the_rllib_runner():
    """Same seed, same tables: the bulk runner's first observations are those of
    SichuanEnvRunner (both deal table i from seed + i)."""
    bulk, _ = _runner(tables=4, n_steps=1)
    ref, _ = _runner(tables=4, n_steps=1, sampler="rllib")
    a = sorted(bulk.sample(), key=lambda e: e.custom_data["table"])
    b = ref.sample()
    for ea, eb in zip(a, b, strict=True):
        sa = next(iter(eb.agent_episodes.values()))
        assert ea.agent_id == sa.agent_id
        np.testing.assert_array_equal(ea.get_observations(0)["observations"],
                                      sa.get_observations(0)["observations"])


def test_bulk_sampler_needs_bot_opponents():
    from sichuan_agents import train
    from sichuan_agents.training.rllib_train import env_runner_class
    from sichuan_env.envs.rllib import SichuanEnvRunner
    from sichuan_env.envs.rllib_bulk import BulkEnvRunner

    def cls(*extra):
        return env_runner_class(train.parse_args(["--backend", "rllib", *extra]))

    assert cls() is BulkEnvRunner and cls("--opponents", "greedy") is BulkEnvRunner
    assert cls("--opponents", "self") is SichuanEnvRunner
    assert cls("--sampler", "rllib") is SichuanEnvRunner
    with pytest.raises(SystemExit) as e:
        train.parse_args(["--backend", "rllib", "--sampler", "bulk", "--opponents", "self"])
    assert e.value.code == 2


def test_bulk_greedy_and_random_actions(sampled):
    """explore=False plays the module's most likely action; random_actions=True a uniform
    legal one; both legal, both continue the same matches."""
    from ray.rllib.core.columns import Columns

    runner = sampled[0]
    for kwargs in ({"explore": False}, {"random_actions": True}):
        eps = runner.sample(**kwargs)
        assert sum(len(e) for e in eps) == 8 * 16
        for e in eps:
            masks = e.get_observations(slice(0, len(e)))["action_mask"]
            acts = e.get_actions(slice(0, len(e)))
            assert (masks[np.arange(len(e)), acts] == 1).all()
            logits = e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS, slice(0, len(e)))
            if kwargs.get("explore") is False:
                assert (acts == logits.argmax(1)).all()
            else:
                assert (logits[masks == 1] == 0).all()


def test_bulk_runner_whole_episodes_use_rllibs_loop_then_bulk_again():
    """sample(num_episodes=...) (evaluation) runs the parent's loop; the next bulk call
    deals fresh tables and samples as before."""
    runner, _ = _runner(tables=2, n_steps=4)
    first = runner.sample()
    whole = runner.sample(num_episodes=2)
    assert len(whole) >= 2 and all(e.is_done for e in whole)
    eps = runner.sample()
    assert sum(len(e) for e in eps) == 2 * 4 and all(e.t_started == 0 for e in eps)
    # fresh walls, not the runner's first deal again
    assert not np.array_equal(first[0].get_observations(0)["observations"],
                              eps[0].get_observations(0)["observations"])


def _same_episodes(a, b):
    """Two lists of episode chunks, table by table: same observations, masks, actions,
    rewards, ends and starts."""
    a = sorted(a, key=lambda e: (e.custom_data["table"], e.t_started))
    b = sorted(b, key=lambda e: (e.custom_data["table"], e.t_started))
    assert len(a) == len(b)
    for ea, eb in zip(a, b, strict=True):
        assert (ea.custom_data["table"], ea.t_started, len(ea), ea.is_done) == (
            eb.custom_data["table"], eb.t_started, len(eb), eb.is_done)
        oa, ob = (e.get_observations(slice(0, len(e) + 1)) for e in (ea, eb))
        np.testing.assert_array_equal(oa["observations"], ob["observations"])
        np.testing.assert_array_equal(oa["action_mask"], ob["action_mask"])
        np.testing.assert_array_equal(ea.get_actions(slice(0, len(ea))),
                                      eb.get_actions(slice(0, len(eb))))
        np.testing.assert_array_equal(ea.get_rewards(slice(0, len(ea))),
                                      eb.get_rewards(slice(0, len(eb))))


def test_bulk_random_bots_in_compiled_rounds_play_as_the_driver_loop():
    """Against the built-in random bots their moves are drawn in compiled rounds
    (sichuan_env.envs.random_rounds), finished tables restarted between rounds; the same
    runner playing them through the driver's play_until_learner (same generator, same
    weights) samples the same episodes, finished matches included."""
    compiled, _ = _runner(opponents="random")
    driver, _ = _runner(opponents="random")
    assert compiled._random_rng() is not None
    driver._random_rng = lambda: None
    driver.module.set_state(compiled.module.get_state())
    finished = 0
    for _ in range(3):
        a, b = compiled.sample(explore=False), driver.sample(explore=False)
        _same_episodes(a, b)
        finished += sum(e.is_done for e in a)
    assert finished >= 8


def test_sample_categorical_draws_the_masked_distribution():
    """The bulk runner's draw from the masked logits: never a masked action, the
    frequencies of the softmax probabilities."""
    import torch

    from sichuan_env.envs.rllib_bulk import _sample_categorical

    torch.manual_seed(0)
    n = 40_000
    logits = torch.full((n, 88), -1e8)
    logits[:, [0, 5, 87]] = torch.log(torch.tensor([0.2, 0.5, 0.3]))
    logits[: n // 2, 5] = -1e8  # half the rows: 5 masked -> 0.4 / 0.6
    act = _sample_categorical(logits).squeeze(1)
    assert act.shape == (n,) and act.dtype == torch.int64
    top, bottom = act[: n // 2], act[n // 2:]
    assert set(top.tolist()) <= {0, 87} and set(bottom.tolist()) <= {0, 5, 87}
    assert (top == 0).float().mean().item() == pytest.approx(0.4, abs=0.015)
    freq = [(bottom == k).float().mean().item() for k in (0, 5, 87)]
    assert freq == pytest.approx([0.2, 0.5, 0.3], abs=0.015)


def test_weight_cast_cache_changes_no_result():
    """The bulk runner samples inside _weight_cast_cache (bf16 weights cast once per
    sample() call): the module's bfloat16 logits are the same inside and outside it."""
    import torch
    from ray.rllib.core.columns import Columns

    from sichuan_env.envs.rllib_bulk import _weight_cast_cache

    runner, _ = _runner(tables=4, n_steps=2)
    module = runner.module["learner"]
    module.net.features_extractor.autocast_dtype = torch.bfloat16
    obs = runner.sample()[0].get_observations(slice(0, 2))
    batch = {Columns.OBS: {k: torch.from_numpy(v) for k, v in obs.items()}}
    with torch.no_grad():
        plain = module._forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        with _weight_cast_cache():
            cached = [module._forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
                      for _ in range(2)]
    for c in cached:
        torch.testing.assert_close(c, plain, rtol=0, atol=0)


def test_bulk_metrics_log_only_what_the_windows_keep():
    """_log_ended logs only the last ``window`` values of each key: the metrics are
    those of logging every finished match (RLlib's windows keep the last ones)."""
    from ray.rllib.utils.metrics import (
        EPISODE_AGENT_RETURN_MEAN,
        EPISODE_LEN_MAX,
        EPISODE_LEN_MEAN,
        EPISODE_RETURN_MEAN,
        EPISODE_RETURN_MIN,
    )
    from ray.rllib.utils.metrics.metrics_logger import MetricsLogger

    runner, _ = _runner(tables=2, n_steps=1)
    rng = np.random.default_rng(0)
    ended = [(int(rng.integers(1, 40)), float(rng.normal()), 0.1, f"player_{k % 4}",
              "learner") for k in range(1000)]
    runner.metrics = MetricsLogger()
    runner._log_ended(ended)
    win = runner.config.metrics_num_episodes_for_smoothing
    assert win < 1000 // 4
    ref = MetricsLogger()
    for length, ret, _, agent, _ in ended:  # every value, as RLlib logs them
        ref.log_value(EPISODE_LEN_MEAN, length, window=win)
        ref.log_value(EPISODE_RETURN_MEAN, ret, window=win)
        ref.log_value((EPISODE_AGENT_RETURN_MEAN, agent), ret, window=win)
        ref.log_value(EPISODE_RETURN_MIN, ret, reduce="min", window=win)
        ref.log_value(EPISODE_LEN_MAX, length, reduce="max", window=win)
    for key in (EPISODE_LEN_MEAN, EPISODE_RETURN_MEAN, (EPISODE_AGENT_RETURN_MEAN, "player_1"),
                EPISODE_RETURN_MIN, EPISODE_LEN_MAX):
        assert runner.metrics.peek(key) == pytest.approx(ref.peek(key))


def test_only_a_remote_runner_freezes_the_heap(monkeypatch):
    """gc.freeze (a full collection no longer scans Ray's and torch's objects) only in a
    remote runner's own process (worker_index > 0), never in the driver's; the remote
    runner also takes numba's workqueue threads."""
    import gc

    from sichuan_env.envs import rllib_bulk

    calls = []
    monkeypatch.setattr(rllib_bulk, "_freeze_heap", lambda: calls.append(1))
    before = gc.get_freeze_count()
    _runner(tables=2, n_steps=1)
    assert calls == [] and gc.get_freeze_count() == before
    from sichuan_agents import train
    from sichuan_agents.training.rllib_train import build_config

    args = train.parse_args(["--backend", "rllib", "--env-runners", "1", "--tables", "2",
                             "--imitate", "none", "--device", "cpu", "--features", "raw"])
    import numba

    monkeypatch.setattr(numba.config, "THREADING_LAYER", "default")  # restored afterwards
    rllib_bulk.BulkEnvRunner(config=build_config(args), worker_index=1)
    assert calls == [1]
    assert numba.config.THREADING_LAYER == "workqueue"  # no spinning OpenMP threads there

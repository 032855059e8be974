"""train.py --backend rllib end to end at a tiny size in a local Ray instance (2 env
runners; the bulk sampler, the default against bots, unless --sampler rllib), its policy as
an agent in the arena and the AEC env, and --resume. Skipped when
Ray RLlib is not installed."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def _train(out: Path, *extra: str) -> str:
    cmd = [sys.executable, str(ROOT / "train.py"), "--backend", "rllib", "--env-runners", "2",
           "--tables", "16", "--n-steps", "64", "--threads", "1", "--imitate", "none",
           "--checkpoint-every", "8192", "--eval-every", "10000", "--eval-deals", "4",
           "--final-eval-deals", "8", "--out", str(out), "--seed", "5", "--no-progress",
           *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rllib_run")
    stdout = _train(out, "--total-steps", "20000")
    return out, stdout


def test_rllib_train_writes_checkpoint_policy_logs_and_results(tiny_run):
    out, stdout = tiny_run
    assert (out / "checkpoint" / "learner_group").is_dir()
    assert (out / "policy.pt").is_file()
    assert list((out / "checkpoints").glob("step_*"))
    assert list((out / "tb").rglob("events.out.tfevents.*"))
    rows = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert rows[-1]["steps"] >= 20000 and all(r["env_steps_per_s"] > 0 for r in rows)
    assert json.loads((out / "eval.jsonl").read_text().splitlines()[0])["random"]["deals"] == 16
    res = json.loads((out / "results.json").read_text())
    assert res["backend"] == "rllib" and res["steps"] >= 20000
    for name in ("random", "greedy"):
        r = res["results"][name]
        lo, hi = r["diff_ci95"]
        assert lo <= r["diff_vs_bot"] <= hi and r["deals"] == 4 * 8
    assert "final evaluation" in stdout


def test_rllib_policy_plays_in_the_arena_and_the_aec_env(tiny_run):
    out, _ = tiny_run
    from sichuan_agents.arena import run_arena
    from sichuan_env.envs.aec import raw_env
    from sichuan_env.seats.agent import make_agent

    for path in (out, out / "policy.pt", out / "checkpoint"):
        agent = make_agent(f"rllib:{path}")
        res = run_arena([f"rllib:{path}", "random", "greedy", "random"], deals=8, seed=3,
                        duplicate=True, tables=8)
        assert res.deals == 8
        assert np.isfinite(res.stats[f"rllib:{path}"]["mean"])
    # the same network from the checkpoint and from policy.pt
    a, b = make_agent(f"rllib:{out}"), make_agent(f"rllib:{out / 'checkpoint'}")
    for (k, v), (k2, v2) in zip(a.net.state_dict().items(), b.net.state_dict().items(),
                                strict=True):
        assert k == k2 and (v == v2).all()
    env = raw_env()
    env.reset(seed=1)
    for _agent_id in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else agent.act(obs["observation"], obs["action_mask"])
        env.step(action)
    assert all(env.terminations.values())
    with pytest.raises(ValueError, match="no RLlib policy"):
        make_agent(f"rllib:{out / 'missing'}")


def test_rllib_resume_continues_from_the_checkpoint(tiny_run, tmp_path):
    out, _ = tiny_run
    stdout = _train(tmp_path, "--total-steps", "2048", "--resume", str(out / "checkpoint"),
                    "--eval-every", "0", "--checkpoint-every", "0")
    res = json.loads((tmp_path / "results.json").read_text())
    assert 2048 <= res["steps"] < 20000  # only the new steps
    rows = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    first = json.loads((out / "progress.jsonl").read_text().splitlines()[-1])
    assert rows[0]["iteration"] == first["iteration"] + 1  # the algorithm state came back
    assert "trained" in stdout


def test_rllib_bad_options_fail_with_one_line(tmp_path):
    for extra, msg in ((["--opponents", "nobody"], "--opponents"),
                       (["--resume", str(tmp_path / "nothing")], "--resume")):
        cmd = [sys.executable, str(ROOT / "train.py"), "--backend", "rllib", "--imitate",
               "none", "--out", str(tmp_path / "o"), *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert proc.returncode != 0
        assert msg in proc.stderr and "Traceback" not in proc.stderr


def test_weights_set_in_the_learner_reach_the_env_runner():
    """What --imitate does: weights loaded into the learner module are the ones the env
    runner samples with."""
    import ray
    import torch

    from sichuan_agents import train
    from sichuan_agents.training.rllib_net import TilePlanesNet
    from sichuan_agents.training.rllib_train import (
        MODULE_ID,
        build_config,
        learner_net,
        set_learner_weights,
    )

    args = train.parse_args(["--backend", "rllib", "--env-runners", "0", "--tables", "2",
                             "--n-steps", "8", "--imitate", "none"])
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        algo = build_config(args).build_algo()
        torch.manual_seed(0)
        net = TilePlanesNet(**learner_net(algo).config)
        set_learner_weights(algo, net.state_dict())
        runner_net = algo.env_runner.module[MODULE_ID].net
        for k, v in net.state_dict().items():
            torch.testing.assert_close(learner_net(algo).state_dict()[k], v)
            torch.testing.assert_close(runner_net.state_dict()[k].cpu(), v)
        algo.stop()
    finally:
        ray.shutdown()


def test_rllib_appo_writes_a_checkpoint_and_a_policy_the_arena_plays(tmp_path):
    """--algo appo: the asynchronous algorithm on the same masked module, end to end (with
    the bulk sampler, the default against bots)."""
    from sichuan_agents.arena import run_arena
    from sichuan_agents.models.rllib_agent import load_net

    stdout = _train(tmp_path, "--algo", "appo", "--env-runners", "1", "--total-steps", "4096",
                    "--eval-every", "0", "--checkpoint-every", "0")
    assert "training RLlib APPO" in stdout
    assert (tmp_path / "checkpoint" / "learner_group").is_dir()
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["algo"] == "appo" and res["steps"] >= 4096
    rows = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    losses = [r["policy_loss"] for r in rows]  # NaN: an iteration without an update
    assert any(np.isfinite(x) for x in losses) and not any(np.isinf(x) for x in losses)
    # the policy file and the checkpoint hold the same network, without the target copy
    a, b = load_net(tmp_path / "policy.pt"), load_net(tmp_path / "checkpoint")
    assert set(a.state_dict()) == set(b.state_dict())
    for k, v in a.state_dict().items():
        assert (v == b.state_dict()[k]).all()
    arena = run_arena([f"rllib:{tmp_path}", "random", "greedy", "random"], deals=8, seed=3,
                      duplicate=True, tables=8)
    assert arena.deals == 8 and np.isfinite(arena.stats[f"rllib:{tmp_path}"]["mean"])


def test_rllib_sampler_rllib_still_trains(tmp_path):
    """--sampler rllib: RLlib's own sampling loop (SichuanEnvRunner) against bots."""
    stdout = _train(tmp_path, "--sampler", "rllib", "--env-runners", "1", "--total-steps",
                    "2048", "--eval-every", "0", "--checkpoint-every", "0")
    assert "trained" in stdout and (tmp_path / "policy.pt").is_file()
    assert json.loads((tmp_path / "results.json").read_text())["steps"] >= 2048

"""``train.py --channels``: the width of the network's convolutions, on both backends.

A model trained with a width other than the default saves it and plays in the arena under
its agent spec (``ppo:PATH``, ``rllib:PATH``); a resumed run keeps its checkpoint's width
and refuses a different one with one line; policies saved before the option (64 channels)
still load; ``benchmarks/train.py --channels`` builds that width.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*argv: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def _conv_widths(policy) -> list[int]:
    from sichuan_agents.training.ppo_policy import TilePlanesExtractor

    return [m.convs[0].out_channels for m in policy.modules()
            if isinstance(m, TilePlanesExtractor)]


def _one_error_line(stderr: str) -> str:
    lines = [x for x in stderr.strip().splitlines() if not x.startswith(("usage:", " "))]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


SB3_RUN = ["--total-steps", "512", "--tables", "4", "--n-steps", "32", "--batch-size", "128",
           "--eval-every", "0", "--checkpoint-every", "256", "--final-eval-deals", "4",
           "--no-progress", "--seed", "2", "--threads", "1"]


@pytest.fixture(scope="module")
def narrow_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("narrow")
    proc = _run("train.py", *SB3_RUN, "--channels", "8", "--imitate", "greedy",
                "--imitate-steps", "256", "--imitate-epochs", "1", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc.stdout


@pytest.mark.slow
def test_sb3_run_builds_saves_and_plays_the_width_asked_for(narrow_run):
    from sichuan_agents.arena import run_arena
    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_agents.training.ppo_policy import network_channels

    out, stdout = narrow_run
    assert "8 channels" in stdout.split("training MaskablePPO")[1].splitlines()[0]
    assert json.loads((out / "results.json").read_text())["args"]["channels"] == 8
    agent = PPOAgent(out / "model.zip")
    assert agent.model.sichuan_channels == 8  # the metadata train.py saves
    assert network_channels(agent.model.policy) == 8
    assert _conv_widths(agent.model.policy) == [8]  # one extractor, shared
    spec = f"ppo:{out / 'model.zip'}"
    res = run_arena([spec, "random", "greedy", "random"], deals=8, seed=3, duplicate=True,
                    tables=8, progress=False)
    assert res.deals == 8 and np.isfinite(res.stats[spec]["mean"])


@pytest.mark.slow
def test_resume_keeps_the_checkpoint_width_and_refuses_another(narrow_run, tmp_path):
    from sichuan_agents.models.ppo import PPOAgent

    out, _ = narrow_run
    ckpt = sorted((out / "checkpoints").glob("ppo_*_steps.zip"))[-1]
    base = ["train.py", *SB3_RUN, "--resume", str(ckpt), "--total-steps", "128"]
    refused = _run(*base, "--channels", "16", "--out", str(tmp_path / "refused"))
    assert refused.returncode == 2
    line = _one_error_line(refused.stderr)
    assert "--channels 16" in line and "8 channels" in line
    assert not (tmp_path / "refused" / "model.zip").exists()
    kept = _run(*base, "--out", str(tmp_path / "kept"))  # the default would be another width
    assert kept.returncode == 0, kept.stderr[-3000:]
    assert "8 channels" in kept.stdout
    agent = PPOAgent(tmp_path / "kept" / "model.zip")
    assert agent.model.sichuan_channels == 8 and _conv_widths(agent.model.policy) == [8]


def test_oracle_critic_policy_gets_the_width_in_both_extractors(tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.oracle_critic import OracleVecEnv
    from sichuan_agents.training.ppo_policy import (
        OracleCriticPolicy,
        load_model,
        network_channels,
        policy_kwargs,
    )
    from sichuan_env.envs.vector import SichuanVecEnv

    torch.set_num_threads(1)
    env = OracleVecEnv(AnalysisVecEnv(SichuanVecEnv(2, learner_seats=(0,), seed=0)))
    model = MaskablePPO(OracleCriticPolicy, env, n_steps=8, batch_size=16, seed=0,
                        device="cpu",
                        policy_kwargs=policy_kwargs(features_dim=16, channels=12,
                                                    policy_planes=env.policy_planes))
    assert _conv_widths(model.policy) == [12, 12]  # the actor's and the critic's
    model.save(tmp_path / "m.zip")
    loaded = load_model(tmp_path / "m.zip", cls=None, device="cpu")
    assert network_channels(loaded.policy) == 12 and _conv_widths(loaded.policy) == [12, 12]


def test_extractor_refuses_a_width_below_one():
    import gymnasium as gym

    from sichuan_agents.training.ppo_policy import TilePlanesExtractor

    space = gym.spaces.Box(0.0, 1.0, (4, 27), np.float32)
    with pytest.raises(ValueError, match="channels must be >= 1"):
        TilePlanesExtractor(space, 16, channels=0)


def _write_policy(path: Path, channels: int | None, with_layout: bool = True) -> None:
    """A policy.pt as train.py --backend rllib writes it (``channels``), or as release
    0.1.0 wrote it (``with_layout=False``: no input layout; its networks had 64)."""
    import torch

    from sichuan_agents.models.rllib_agent import POLICY_FORMAT, save_policy
    from sichuan_agents.training.layout import acting_channels, make_layout
    from sichuan_agents.training.rllib_net import TilePlanesNet

    layout = make_layout(analysis=True)
    torch.manual_seed(0)
    net = TilePlanesNet(acting_channels(layout), 32, 64 if channels is None else channels, 16)
    if with_layout:
        save_policy(net, path, layout)
    else:
        torch.save({"format": POLICY_FORMAT, "config": net.config,
                    "state_dict": net.state_dict()}, path)


@pytest.mark.parametrize("channels, with_layout", [(8, True), (64, False)])
def test_rllib_policy_file_of_any_width_plays_in_the_arena(tmp_path, channels, with_layout):
    from sichuan_agents.arena import run_arena
    from sichuan_env.seats.agent import make_agent

    path = tmp_path / "policy.pt"
    _write_policy(path, channels, with_layout)
    agent = make_agent(f"rllib:{path}")
    assert agent.net.config["channels"] == channels
    assert agent.net.features_extractor.convs[0].out_channels == channels
    spec = f"rllib:{tmp_path}"
    res = run_arena([spec, "random", "greedy", "random"], deals=8, seed=3, duplicate=True,
                    tables=8, progress=False)
    assert res.deals == 8 and np.isfinite(res.stats[spec]["mean"])


def test_rllib_module_default_width_is_the_one_old_checkpoints_were_built_with():
    pytest.importorskip("ray.rllib")
    from sichuan_agents.training.ppo_policy import CHANNELS
    from sichuan_agents.training.rllib_module import MODEL_DEFAULTS, module_spec

    assert CHANNELS == MODEL_DEFAULTS["channels"] == 64
    assert module_spec({"precision": "fp32"}).model_config["channels"] == 64
    assert module_spec({"channels": 16}).model_config["channels"] == 16


def test_rllib_config_and_warm_start_take_the_width():
    pytest.importorskip("ray.rllib")
    from sichuan_agents import train
    from sichuan_agents.training.rllib_train import build_config

    args = train.parse_args(["--backend", "rllib", "--env-runners", "0", "--channels", "24",
                             "--imitate", "none"])
    spec = build_config(args).rl_module_spec.rl_module_specs["learner"]
    assert spec.model_config["channels"] == 24


def test_benchmark_builds_the_width_and_refuses_zero(tmp_path):
    proc = _run("benchmarks/train.py", "--channels", "0", timeout=120)
    assert proc.returncode == 2
    assert "--channels must be >= 1, got 0" in _one_error_line(proc.stderr)


@pytest.mark.slow
def test_rllib_run_trains_saves_and_resumes_the_width(tmp_path):
    """--backend rllib --channels 16 with the SB3 imitation warm start: the policy file and
    the checkpoint hold 16-channel networks, ``rllib:PATH`` plays it; a resume that asks
    for another width stops with one line before Ray starts, one that names none keeps 16."""
    pytest.importorskip("ray.rllib")
    from sichuan_agents.arena import run_arena
    from sichuan_agents.models.rllib_agent import load_net
    from sichuan_agents.training.rllib_train import checkpoint_channels

    out = tmp_path / "run"
    proc = _run("train.py", "--backend", "rllib", "--env-runners", "1", "--tables", "8",
                "--n-steps", "32", "--threads", "1", "--channels", "16", "--imitate",
                "greedy", "--imitate-steps", "256", "--imitate-epochs", "1",
                "--total-steps", "256", "--checkpoint-every", "0", "--eval-every", "0",
                "--final-eval-deals", "4", "--seed", "4", "--no-progress", "--out", str(out),
                timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "16 channels" in proc.stdout and "imitation done" in proc.stdout
    assert json.loads((out / "results.json").read_text())["args"]["channels"] == 16
    assert load_net(out / "policy.pt").config["channels"] == 16
    assert checkpoint_channels(out / "checkpoint") == 16
    assert checkpoint_channels(tmp_path / "nothing") is None
    spec = f"rllib:{out}"
    res = run_arena([spec, "random", "greedy", "random"], deals=8, seed=3, duplicate=True,
                    tables=8, progress=False)
    assert res.deals == 8 and np.isfinite(res.stats[spec]["mean"])
    refused = _run("train.py", "--backend", "rllib", "--resume", str(out / "checkpoint"),
                   "--channels", "32", "--out", str(tmp_path / "again"), timeout=300)
    assert refused.returncode == 2
    line = _one_error_line(refused.stderr)
    assert "--channels 32" in line and "16 channels" in line
    kept = _run("train.py", "--backend", "rllib", "--env-runners", "1", "--tables", "8",
                "--n-steps", "32", "--threads", "1", "--resume", str(out / "checkpoint"),
                "--total-steps", "256", "--checkpoint-every", "0", "--eval-every", "0",
                "--final-eval-deals", "4", "--no-progress", "--out", str(tmp_path / "kept"),
                timeout=900)
    assert kept.returncode == 0, kept.stdout[-2000:] + kept.stderr[-4000:]
    assert "16 channels" in kept.stdout
    assert load_net(tmp_path / "kept" / "policy.pt").config["channels"] == 16

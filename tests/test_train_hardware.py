"""train.py's hardware options: --device, --threads, --precision (auto: bfloat16 where the
hardware does it), --algo, --env-runners against the cores; bad values fail with one line
and exit status 2 before any work (no Ray, no training); a model saved by the learner
loads on the CPU and acts in float32."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sichuan_agents import train
from sichuan_agents.training import hardware
from sichuan_agents.training.hardware import (
    cpu_flags,
    describe_machine,
    fast_bf16,
    machine_cores,
    machine_info,
    resolve_device,
    resolve_precision,
)

ROOT = Path(__file__).resolve().parent.parent


def _fails(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as e:
        train.parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "error:" in err[-1]
    return err[-1]


def test_device_auto_resolves_to_what_torch_sees():
    import torch

    args = train.parse_args([])
    want = "cuda" if torch.cuda.is_available() else "cpu"
    assert args.device == want and resolve_device("auto") == want
    assert args.num_gpus_per_learner == (1.0 if want == "cuda" else 0.0)
    assert train.parse_args(["--device", "cpu"]).device == "cpu"
    assert train.parse_args(["--device", "cpu"]).num_gpus_per_learner == 0.0


def test_threads_default_to_the_machine_cores():
    assert train.parse_args([]).threads == machine_cores() >= 1
    assert train.parse_args(["--threads", "1"]).threads == 1


def test_precision_auto_is_bf16_only_where_the_hardware_does_bfloat16():
    amx, avx512_bf16 = {"avx2", "avx512bw", "amx_bf16", "amx_tile"}, {"avx512f", "avx512_bf16"}
    without = {"sse4_2", "avx2", "avx512f", "avx512bw"}  # AVX-512, but no bfloat16 instructions
    assert resolve_precision("auto", {"cpu"}, flags=amx) == "bf16"
    assert resolve_precision("auto", {"cpu"}, flags=avx512_bf16) == "bf16"
    assert resolve_precision("auto", {"cpu"}, flags=without) == "fp32"
    assert resolve_precision("auto", {"cpu"}, flags=set()) == "fp32"
    assert resolve_precision("auto", {"cuda"}, gpu_capability=(9, 0)) == "bf16"  # H100/H200
    assert resolve_precision("auto", {"cuda"}, gpu_capability=(8, 0)) == "bf16"  # A100
    assert resolve_precision("auto", {"cuda"}, gpu_capability=(7, 5)) == "fp32"  # T4
    # RLlib: the GPU learner and the env runners' CPU must both be fast
    assert resolve_precision("auto", {"cuda", "cpu"}, flags=without,
                             gpu_capability=(9, 0)) == "fp32"
    assert resolve_precision("auto", {"cuda", "cpu"}, flags=amx, gpu_capability=(9, 0)) == "bf16"
    for given in ("fp32", "bf16"):  # an explicit choice stands on any hardware
        assert resolve_precision(given, {"cpu"}, flags=without) == given
        assert resolve_precision(given, {"cpu"}, flags=amx) == given
    with pytest.raises(ValueError, match="--precision must be auto, fp32 or bf16"):
        resolve_precision("fp16", {"cpu"})
    assert fast_bf16("cpu", flags=amx) and not fast_bf16("cpu", flags=without)


def test_cpu_flags_come_from_proc_cpuinfo():
    flags = cpu_flags()
    if Path("/proc/cpuinfo").is_file():
        line = next(x for x in Path("/proc/cpuinfo").read_text().splitlines()
                    if x.startswith("flags"))
        assert flags == frozenset(line.split(":", 1)[1].split()) and flags
    assert fast_bf16("cpu") == bool(flags & {"amx_bf16", "avx512_bf16"})


@pytest.mark.parametrize("flags, want", [({"avx2", "amx_bf16"}, "bf16"),
                                          ({"avx2", "avx512bw"}, "fp32")])
def test_train_resolves_precision_auto_from_the_cpu_flags(monkeypatch, flags, want):
    monkeypatch.setattr(hardware, "cpu_flags", lambda: frozenset(flags))
    assert train.parse_args(["--device", "cpu"]).precision == "fp32"  # the default
    assert train.parse_args(["--device", "cpu", "--precision", "auto"]).precision == want
    assert train.parse_args(["--device", "cpu", "--precision", "fp32"]).precision == "fp32"
    assert train.parse_args(["--device", "cpu", "--precision", "bf16"]).precision == "bf16"
    rllib = train.parse_args(["--backend", "rllib", "--device", "cpu", "--env-runners", "1",
                              "--precision", "auto"])
    assert rllib.precision == want


def test_bad_device_algo_threads_and_runners_fail_with_one_line(capsys):
    import torch

    if not torch.cuda.is_available():
        msg = _fails(capsys, ["--device", "cuda"])
        assert "--device cuda" in msg and "no GPU" in msg and "--device cpu" in msg
    assert "--device must be auto, cpu or cuda" in _fails(capsys, ["--device", "tpu"])
    msg = _fails(capsys, ["--backend", "rllib", "--algo", "dqn"])
    assert "--algo must be one of ppo, appo" in msg and "'dqn'" in msg
    assert "needs --backend rllib" in _fails(capsys, ["--algo", "appo"])
    assert "--threads must be >= 1" in _fails(capsys, ["--threads", "0"])
    assert "--precision" in _fails(capsys, ["--precision", "fp16"])
    n = machine_cores() + 1
    msg = _fails(capsys, ["--backend", "rllib", "--env-runners", str(n)])
    assert f"--env-runners {n} needs {n} CPUs" in msg
    assert f"--env-runners {machine_cores()} or fewer" in msg


def test_bad_options_from_the_command_line_exit_2_without_traceback(tmp_path):
    for extra, words in ((["--algo", "nope", "--backend", "rllib"], "--algo"),
                         (["--device", "gpu0"], "--device")):
        proc = subprocess.run([sys.executable, str(ROOT / "train.py"), "--out",
                               str(tmp_path / "o"), *extra], capture_output=True, text=True,
                              timeout=120, cwd=ROOT)
        assert proc.returncode == 2
        assert "Traceback" not in proc.stderr and words in proc.stderr.splitlines()[-1]
        assert not (tmp_path / "o").exists()


def test_machine_description_names_cpu_cores_gpu_and_versions():
    info = machine_info()
    assert info["cores"] == machine_cores()
    assert info["torch"] != "absent" and info["numpy"] != "absent"
    line = describe_machine()
    assert f"{machine_cores()} cores" in line and "GPU " in line and "torch " in line


def _saved_from(device: str, path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.ppo_policy import policy_kwargs
    from sichuan_env.envs.vector import SichuanVecEnv

    env = AnalysisVecEnv(SichuanVecEnv(2, seed=1))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, n_epochs=1,
                        policy_kwargs=policy_kwargs(), seed=1, device=device, verbose=0)
    model.learn(16)
    model.save(path)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_model_saved_by_the_learner_loads_and_plays_on_the_cpu(tmp_path, device):
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no GPU here")
    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_agents.training.ppo_policy import load_model

    path = tmp_path / f"{device}.zip"
    _saved_from(device, path)
    model = load_model(path, device="cpu")
    assert all(p.device.type == "cpu" for p in model.policy.parameters())
    agent = PPOAgent(str(path))
    from sichuan_env.core import engine
    from sichuan_env.seats.observation import encode

    st = engine.reset(np.arange(4), "mil")
    obs = encode(st, st.current.astype(np.intp), np.arange(4))
    acts = agent.act_batch(obs, st.legal_action_mask)
    assert st.legal_action_mask[np.arange(4), acts].all()


def test_network_precision_is_bf16_inside_the_block_and_float32_outside():
    import torch

    from sichuan_agents.training.ppo_policy import network_precision
    from sichuan_agents.training.rllib_net import TilePlanesNet

    torch.manual_seed(0)
    net = TilePlanesNet(82)
    x, m = torch.rand(64, 82, 27), torch.ones(64, 88)
    with torch.no_grad():
        before = net.logits(net.features(x), m)
        with network_precision(net, "bf16"):
            assert net.features_extractor.autocast_dtype is torch.bfloat16
            feats = net.features(x)
            inside = net.logits(feats, m)
        after = net.logits(net.features(x), m)
    assert feats.dtype == torch.float32
    assert torch.equal(before, after)  # float32 again, bit for bit
    assert not torch.equal(before, inside)  # bfloat16 arithmetic did run
    torch.testing.assert_close(inside, before, atol=2e-2, rtol=2e-2)
    with pytest.raises(ValueError, match="precision must be one of"), \
            network_precision(net, "fp8"):
        pass
    assert net.features_extractor.autocast_dtype is None


def test_a_model_learned_in_bf16_is_saved_with_its_precision_and_acts_in_float32(tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.ppo_policy import network_precision, policy_kwargs
    from sichuan_env.envs.vector import SichuanVecEnv

    env = AnalysisVecEnv(SichuanVecEnv(2, seed=1))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, n_epochs=1,
                        policy_kwargs=policy_kwargs(), seed=1, device="cpu", verbose=0)
    with network_precision(model.policy, "bf16"):
        model.learn(16)
    model.sichuan_precision = "bf16"
    model.save(tmp_path / "m.zip")
    agent = PPOAgent(str(tmp_path / "m.zip"))
    assert agent.model.sichuan_precision == "bf16"
    extractor = agent.model.policy.features_extractor
    assert extractor.autocast_dtype is None
    x = torch.rand(32, *env.observation_space.shape)
    with torch.no_grad():
        feats = extractor(x)
        with network_precision(agent.model.policy, "fp32"):
            assert torch.equal(feats, extractor(x))
        with network_precision(agent.model.policy, "bf16"):
            assert not torch.equal(feats, extractor(x))
    assert feats.dtype == torch.float32


@pytest.mark.slow
def test_train_with_bf16_learns_and_saves_a_float32_model(tmp_path):
    from sichuan_agents.models.ppo import PPOAgent

    cmd = [sys.executable, str(ROOT / "train.py"), "--precision", "bf16", "--device", "cpu",
           "--total-steps", "2048", "--tables", "4", "--n-steps", "64", "--batch-size", "256",
           "--eval-every", "0", "--final-eval-deals", "4", "--imitate", "greedy",
           "--imitate-steps", "512", "--imitate-epochs", "2", "--out", str(tmp_path),
           "--no-progress", "--seed", "2", "--threads", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    agent = PPOAgent(str(tmp_path / "model.zip"))
    assert agent.model.policy.features_extractor.autocast_dtype is None
    assert agent.model.sichuan_precision == "bf16"
    assert "learner on cpu (1 torch threads, bf16)" in proc.stdout
    import json

    res = json.loads((tmp_path / "results.json").read_text())
    assert res["args"]["precision"] == "bf16" and res["steps"] >= 2048
    assert res["imitation"]["agreement"] > 0.3  # the warm start learned under bfloat16

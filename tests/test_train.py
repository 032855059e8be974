"""train.py end to end at a tiny size, and the saved model as an agent."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    cmd = [sys.executable, str(ROOT / "train.py"), "--total-steps", "4096", "--tables", "8",
           "--n-steps", "64", "--batch-size", "256", "--eval-every", "2048",
           "--eval-deals", "8", "--final-eval-deals", "16", "--checkpoint-every", "2048",
           "--out", str(out), "--no-progress", "--seed", "3",
           "--imitate", "greedy", "--imitate-steps", "1024", "--imitate-epochs", "2",
           "--advice", "none"]  # a model of the planes alone (advice: the test below)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc.stdout


@pytest.mark.slow
def test_train_writes_model_checkpoints_logs_and_results(tiny_run):
    out, stdout = tiny_run
    assert (out / "model.zip").exists()
    assert list((out / "checkpoints").glob("ppo_*_steps.zip"))
    assert list((out / "tb").rglob("events.out.tfevents.*"))
    evals = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert evals and {"random", "greedy"} <= set(evals[0])
    res = json.loads((out / "results.json").read_text())
    for name in ("random", "greedy"):
        r = res["results"][name]
        lo, hi = r["diff_ci95"]
        assert lo <= r["diff_vs_bot"] <= hi
        assert r["deals"] == 4 * 16
    assert res["steps_per_second"] > 0
    assert res["args"]["precision"] == "fp32"  # the default
    assert "torch threads, fp32)" in stdout.split("training MaskablePPO")[1]
    imitation = res["imitation"]
    assert imitation["teacher"] == "greedy" and imitation["steps"] >= 1024
    assert 0.0 <= imitation["agreement"] <= 1.0 and imitation["history"]
    assert "imitation done" in stdout
    assert "final evaluation" in stdout and "beats random" in stdout
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("this run: ") and "shipped (mil): fitted " in last


@pytest.mark.slow
def test_saved_model_is_a_legal_agent(tiny_run):
    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_env.seats.agent import make_agent, validate_agent

    out, _ = tiny_run
    agent = PPOAgent(out / "model.zip")
    validate_agent(agent, n_deals=4, seed=5)
    saved = json.loads((out / "results.json").read_text())["args"]["precision"]
    assert agent.model.sichuan_precision == saved  # the model says what it learned in
    assert agent.model.policy.features_extractor.autocast_dtype is None  # acts in float32
    same = make_agent(f"ppo:{out / 'model.zip'}")
    from sichuan_env.core import engine
    from sichuan_env.seats.observation import encode

    st = engine.reset([1, 2])
    m = engine.legal_mask(st)
    obs = encode(st, st.current.astype(np.intp))
    assert (agent.act_batch(obs, m) == same.act_batch(obs, m)).all()


@pytest.mark.slow
def test_resume_continues_from_a_checkpoint(tiny_run, tmp_path):
    out, _ = tiny_run
    ckpt = sorted((out / "checkpoints").glob("ppo_*_steps.zip"))[-1]
    cmd = [sys.executable, str(ROOT / "train.py"), "--total-steps", "1024", "--tables", "8",
           "--n-steps", "32", "--batch-size", "256", "--eval-every", "0",
           "--final-eval-deals", "4", "--out", str(tmp_path), "--no-progress",
           "--resume", str(ckpt), "--opponents", "greedy,random,self"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "model.zip").exists()


def test_ppo_agent_rejects_a_missing_file(tmp_path):
    from sichuan_agents.models.ppo import PPOAgent

    with pytest.raises(FileNotFoundError, match="no saved PPO model"):
        PPOAgent(tmp_path / "nothing.zip")


@pytest.mark.slow
def test_unknown_imitation_teacher_is_rejected_before_training(tmp_path):
    cmd = [sys.executable, str(ROOT / "train.py"), "--imitate", "nobody", "--out",
           str(tmp_path), "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode != 0
    assert "--imitate: unknown agent 'nobody'" in proc.stderr
    assert not (tmp_path / "model.zip").exists()


@pytest.mark.slow
def test_advice_and_oracle_critic_run_end_to_end(tmp_path):
    """The recipe of the shipped model at a tiny size: imitation with the adviser's planes,
    PPO with the oracle critic, evaluation against rules; the result acts from seat views."""
    cmd = [sys.executable, str(ROOT / "train.py"), "--advice", "rules", "--oracle-critic",
           "--opponents", "rules", "--imitate-steps", "300", "--imitate-epochs", "1",
           "--total-steps", "600", "--tables", "2", "--n-steps", "64", "--batch-size", "128",
           "--eval-every", "0", "--final-eval-deals", "4", "--eval-against", "rules",
           "--kl-coef", "0.1", "--out", str(tmp_path), "--seed", "5"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((tmp_path / "results.json").read_text())
    assert set(res["results"]) == {"rules"} and res["results"]["rules"]["deals"] == 16
    assert "beats rules" in proc.stdout
    # the bars end at their totals: whole imitation chunks (32 steps of 8 slots), whole
    # PPO rollouts (64 steps of 8 slots), the step counts printed rounded up to them
    assert "imitating rules: 512 learner decisions (2 chunks of 256;" in proc.stdout
    assert "training MaskablePPO: 1,024 steps (2 rollouts of 512;" in proc.stdout
    assert "512/512" in proc.stderr and "1024/1024" in proc.stderr
    assert not any(f"{n}/512" in proc.stderr for n in range(513, 1024))
    assert res["steps"] == 1024 and res["imitation"]["steps"] == 512
    # the start (after imitation) is measured on the same walls: PPO's own part
    assert (tmp_path / "start.zip").is_file() and "the start (start.zip" in proc.stdout
    c = res["ppo_contribution"]["rules"]
    assert c["ci95"][0] <= c["mean"] <= c["ci95"][1]
    start, final = res["start_results"]["rules"], res["results"]["rules"]
    assert abs(final["diff_vs_bot"] - start["diff_vs_bot"] - c["mean"]) < 1e-9
    assert "PPO's own part: " in proc.stdout.strip().splitlines()[-1]

    from sichuan_agents.models.ppo import PPOAgent

    agent = PPOAgent(tmp_path / "model.zip")
    assert agent.needs == "view" and agent.rules.preset == "mil"
    assert type(agent.model.policy).__name__ == "OracleCriticPolicy"
    from sichuan_agents.training.layout import make_layout

    assert agent.model.sichuan_input == make_layout(True, "rules", oracle=True)


@pytest.mark.slow
def test_advice_does_not_combine_with_self_play(tmp_path):
    cmd = [sys.executable, str(ROOT / "train.py"), "--advice", "rules", "--opponents", "self",
           "--out", str(tmp_path), "--no-progress", "--imitate", "none"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode != 0 and "--advice does not combine with --opponents self" in (
        proc.stderr)


@pytest.mark.slow
def test_resumed_run_takes_the_ppo_settings_written_on_the_command_line(tiny_run):
    from sb3_contrib import MaskablePPO

    from sichuan_agents import train

    out, _ = tiny_run
    ckpt = sorted((out / "checkpoints").glob("ppo_*_steps.zip"))[-1]
    plain = train.parse_args(["--resume", str(ckpt)])
    assert train.resume_overrides(plain) == {}
    args = train.parse_args(["--resume", str(ckpt), "--ent-coef", "0.25", "--lr=0.002",
                             "--epochs", "3"])
    model = MaskablePPO.load(str(ckpt), device="cpu", **train.resume_overrides(args))
    assert model.ent_coef == 0.25 and model.n_epochs == 3
    assert model.lr_schedule(1.0) == 0.002 and model.learning_rate == 0.002
    kept = MaskablePPO.load(str(ckpt), device="cpu")
    assert kept.batch_size == model.batch_size == 256


def test_the_last_line_puts_the_run_next_to_the_shipped_agents():
    import json

    from sichuan_agents import train
    from sichuan_agents.models.ppo import MODELS

    line = train.compare_line({"greedy": {"diff_vs_bot": -3.25}}, "mil")
    assert line.startswith("this run: -3.250 vs greedy; shipped (mil): ")
    meta = json.loads((MODELS / "fitted_mil.json").read_text())
    assert f"fitted {meta['results']['mil/fitted-rules']['diff']:+.3f} vs rules" in line
    assert "docs/models.md" in line


def test_ppo_learns_whole_rollouts_and_its_part_is_paired_per_wall():
    from sichuan_agents import train

    assert train.planned_steps(300_000, 16_384) == 311_296
    assert train.planned_steps(98_304, 16_384) == 98_304 and train.planned_steps(0, 8) == 0
    final = {"greedy": {"diff_vs_bot": 0.5, "_wall_diffs": np.array([1.0, 0.0, 0.5, 0.5])}}
    start = {"greedy": {"diff_vs_bot": 0.25, "_wall_diffs": np.array([0.5, 0.0, 0.5, 0.0])}}
    c = train.ppo_contribution(final, start)["greedy"]
    assert c["mean"] == 0.25  # the mean of the per-wall differences 0.5, 0, 0, 0.5
    half = 1.959963984540054 * np.std([0.5, 0, 0, 0.5], ddof=1) / 2
    assert np.allclose(c["ci95"], [0.25 - half, 0.25 + half])
    assert train.ppo_contribution(final, None) == {}
    assert train.public(final) == {"greedy": {"diff_vs_bot": 0.5}}
    line = train.compare_line(final, "mil", {"greedy": c})
    assert line.startswith(f"this run: +0.500 vs greedy (PPO's own part: +0.250 "
                           f"[{0.25 - half:+.3f}, {0.25 + half:+.3f}] vs greedy); shipped")


def test_advice_auto_is_rules_except_self_play_rllib_and_a_resumed_checkpoints(tmp_path):
    import zipfile

    from sichuan_agents import train

    assert train.parse_args(["--out", str(tmp_path)]).advice == "rules"
    assert train.parse_args(["--out", str(tmp_path), "--advice", "none"]).advice == "none"
    assert train.parse_args(["--out", str(tmp_path), "--opponents", "self"]).advice == "none"
    for adviser, want in (("greedy", "greedy"), (None, "none")):
        ckpt = tmp_path / f"{adviser}.zip"
        with zipfile.ZipFile(ckpt, "w") as z:
            z.writestr("data", json.dumps({"sichuan_input": {"adviser": adviser}}))
        assert train.parse_args(["--out", str(tmp_path), "--resume", str(ckpt)]).advice == want


@pytest.mark.slow  # a train.py process: torch, SB3 and the engine loaded anew
def test_checkpoint_every_zero_writes_no_checkpoints(tmp_path):
    """``--checkpoint-every 0`` turns the periodic checkpoints off (as ``--eval-every 0``
    does the evaluations); the final model is still saved."""
    cmd = [sys.executable, str(ROOT / "train.py"), "--total-steps", "256", "--tables", "2",
           "--n-steps", "32", "--batch-size", "64", "--eval-every", "0",
           "--final-eval-deals", "1", "--checkpoint-every", "0", "--imitate", "none",
           "--eval-against", "random", "--out", str(tmp_path), "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "model.zip").exists()
    assert list((tmp_path / "checkpoints").iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("reference", ["rules", "self"])
def test_reference_trains_with_paired_rewards(tmp_path, reference):
    """--reference rules (a bot) and self (a frozen copy of the learner, refreshed by the
    snapshot callback) train end to end; the header says the rewards are paired."""
    cmd = [sys.executable, str(ROOT / "train.py"), "--reference", reference, "--advice",
           "none", "--imitate", "none", "--total-steps", "512", "--tables", "2",
           "--n-steps", "64", "--batch-size", "128", "--eval-every", "0",
           "--snapshot-every", "256", "--final-eval-deals", "4", "--eval-against", "greedy",
           "--out", str(tmp_path), "--seed", "2", "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"paired with {reference}, " in proc.stdout
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["args"]["reference"] == reference and res["steps"] == 512


@pytest.mark.parametrize("extra, message", [
    (["--reference", "self", "--advice", "rules"], "--reference self does not combine"),
    (["--reference", "self", "--backend", "rllib"], "--reference self needs --backend sb3"),
    (["--reference", "nobody", "--imitate", "none", "--advice", "none"],
     "--reference: unknown agent 'nobody'"),
])
def test_bad_reference_is_one_line_exit_2(tmp_path, extra, message):
    cmd = [sys.executable, str(ROOT / "train.py"), *extra, "--out", str(tmp_path),
           "--no-progress", "--env-runners", "0"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert message in proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr

"""The PPO fine-tune command (sichuan_agents/training/finetune.py): bad arguments are one-line
errors; a tiny run warms the critic up, trains with the KL penalty against the frozen
start, writes the learning curve (JSON lines and PNG) and saves a model with its layout."""

import json

import pytest
import torch

from sichuan_agents.training.finetune import parse_args, sharpen


@pytest.mark.parametrize("argv, word", [
    (["--out", "x", "--kl-coef", "-1"], "--kl-coef"),
    (["--out", "x", "--tables", "0"], "--tables"),
    (["--out", "x", "--sharpen", "0"], "--sharpen"),
    (["--out", "x", "--init", "no/such.zip"], "no such file"),
])
def test_bad_arguments_exit_2_with_one_line(argv, word, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    assert word in capsys.readouterr().err.strip().splitlines()[-1]


def test_sharpening_keeps_every_choice():
    from sichuan_agents.models.ppo import MODELS
    from sichuan_agents.training.distill import actor_logits
    from sichuan_agents.training.ppo_policy import load_model

    model = load_model(MODELS / "fitted_mil.zip", device="cpu")
    obs = torch.rand(64, *model.observation_space.shape)
    with torch.no_grad():
        before = actor_logits(model.policy, obs)
        sharpen(model.policy, 4.0)
        after = actor_logits(model.policy, obs)
    assert torch.allclose(after, 4.0 * before, atol=1e-4)
    assert torch.equal(after.argmax(1), before.argmax(1))


@pytest.mark.slow
def test_tiny_run_writes_the_curve_and_a_model_with_its_layout(tmp_path):
    from sichuan_agents.models.ppo import MODELS, PPOAgent
    from sichuan_agents.training.finetune import main

    out = tmp_path / "ft"
    assert main(["--out", str(out), "--total-steps", "2048", "--tables", "4", "--n-steps",
                 "64", "--batch-size", "512", "--epochs", "1", "--warmup-max", "2",
                 "--eval-every", "1024", "--eval-deals", "8", "--snapshot-every", "1000",
                 "--seed", "1"]) == 0
    curve = [json.loads(x) for x in (out / "curve.jsonl").read_text().splitlines()]
    assert [p["steps"] for p in curve] == [0, 1024, 2048]
    assert all(p["ci_low"] <= p["diff"] <= p["ci_high"] for p in curve)
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"
    log = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert log[0]["phase"] == "warmup" and "kl_ref" not in log[0]
    assert any(r["phase"] == "ppo" and "kl_ref" in r for r in log)
    agent = PPOAgent(out / "model.zip")
    assert agent.model.sichuan_input == PPOAgent(MODELS / "fitted_mil.zip").layout
    assert agent.model.sichuan_rules == "mil"


def test_read_curve_drops_points_after_the_last_checkpoint(tmp_path):
    from sichuan_agents.training.finetune import read_curve

    path = tmp_path / "curve.jsonl"
    assert read_curve(path, 0) == []
    rows = [{"steps": s, "diff": 0.1 * i} for i, s in enumerate((0, 1024, 2048))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_curve(path, 1024) == rows[:2]
    assert [json.loads(x) for x in path.read_text().splitlines()] == rows[:2]


TINY = ["--tables", "4", "--n-steps", "64", "--batch-size", "512", "--epochs", "1",
        "--warmup-max", "2", "--eval-every", "1024", "--eval-deals", "8",
        "--snapshot-every", "1000", "--seed", "1"]


@pytest.mark.slow
def test_a_second_run_resumes_where_the_first_stopped(tmp_path, capsys):
    from sichuan_agents.training.finetune import main

    out = tmp_path / "ft"
    assert main(["--out", str(out), "--total-steps", "1024", *TINY]) == 0
    state = json.loads((out / "state.json").read_text())
    assert state["done"] == 1024 and state["checkpoint"] == "checkpoints/ppo_1024.zip"
    warm = [r for r in map(json.loads, (out / "log.jsonl").read_text().splitlines())
            if r["phase"] == "warmup"]
    capsys.readouterr()
    # other settings than the run in --out: one line, exit 2, nothing touched
    assert main(["--out", str(out), "--total-steps", "2048", *TINY, "--lr", "1e-3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--lr" in err[0]
    assert json.loads((out / "state.json").read_text()) == state
    # the same settings with more steps: no second warm-up, the curve goes on
    assert main(["--out", str(out), "--total-steps", "2048", *TINY]) == 0
    assert "resuming" in capsys.readouterr().out
    log = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert [r for r in log if r["phase"] == "warmup"] == warm
    assert [r["steps"] for r in log if r["phase"] == "ppo"] == [1024, 2048]
    curve = [json.loads(x) for x in (out / "curve.jsonl").read_text().splitlines()]
    assert [p["steps"] for p in curve] == [0, 1024, 2048]
    assert json.loads((out / "state.json").read_text())["done"] == 2048

    # the weights and the optimizer came back: Adam's step count goes on from the checkpoint
    from stable_baselines3.common.save_util import load_from_zip_file

    def adam_steps(name: str) -> int:
        params = load_from_zip_file(out / "checkpoints" / name, device="cpu")[1]
        return int(max(v["step"] for v in params["policy.optimizer"]["state"].values()))

    warm, first, second = (adam_steps(n) for n in ("warm.zip", "ppo_1024.zip",
                                                    "ppo_2048.zip"))
    assert second - first == first - warm > 0


@pytest.mark.slow
def test_tiny_run_with_paired_rewards(tmp_path, capsys):
    """--reference rules: the fine-tune runs with paired-deal rewards (the learner's deals
    replayed with rules in its seat against the pool); an unknown reference is one line."""
    from sichuan_agents.training.finetune import main

    out = tmp_path / "ft"
    assert main(["--out", str(out), "--total-steps", "1024", *TINY, "--reference",
                 "rules"]) == 0
    state = json.loads((out / "state.json").read_text())
    assert state["settings"]["reference"] == "rules" and state["done"] == 1024
    capsys.readouterr()
    assert main(["--out", str(tmp_path / "bad"), "--total-steps", "1024", *TINY,
                 "--reference", "nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--reference" in err[0] and "nobody" in err[0]

"""The PPO fine-tune command (agents/training/finetune.py): bad arguments are one-line
errors; a tiny run warms the critic up, trains with the KL penalty against the frozen
start, writes the learning curve (JSON lines and PNG) and saves a model with its layout."""

import json

import pytest
import torch

from agents.training.finetune import parse_args, sharpen


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
    from agents.ppo import MODELS
    from agents.training.distill import actor_logits
    from agents.training.ppo_policy import load_model

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
    from agents.ppo import MODELS, PPOAgent
    from agents.training.finetune import main

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

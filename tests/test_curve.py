"""The learning-curve command (sichuan_agents/training/curve.py) at a tiny size: chunks of PPO
from scratch with paired rewards, a point per chunk in curve.json and curve.png, resumed by
running it again; other settings are a one-line error."""

import json

import pytest

from sichuan_agents.training.curve import main, parse_args

TINY = ["--start", "scratch", "--reference", "rules", "--chunk-steps", "256", "--tables", "1",
        "--against", "greedy", "--eval-walls", "2", "--seed", "4", "--quiet"]


@pytest.mark.slow
def test_tiny_curve_in_chunks_resumes(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["--out", str(out), "--budget-steps", "512", *TINY]) == 0
    curve = json.loads((out / "curve.json").read_text())
    steps = [p["steps"] for p in curve["points"]]
    assert len(steps) == 2 and steps[0] > 0 and steps[1] > steps[0]
    assert all(p["cpu_seconds"] > 0 for p in curve["points"])
    vs = curve["points"][-1]["vs"]["greedy"]
    assert vs["ci_low"] <= vs["diff"] <= vs["ci_high"] and vs["deals"] == 8
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"
    capsys.readouterr()
    assert main(["--out", str(out), "--budget-steps", "512", *TINY, "--tables", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--tables" in err[0]
    assert main(["--out", str(out), "--budget-steps", str(steps[1] + 1), *TINY]) == 0
    again = json.loads((out / "curve.json").read_text())["points"]
    assert again[:2] == curve["points"] and len(again) == 3 and again[2]["steps"] > steps[1]
    assert again[2]["train_seconds"] > again[1]["train_seconds"] > 0
    # past its --time-limit of training, no chunk starts
    assert main(["--out", str(out), "--budget-steps", "10000", *TINY, "--time-limit",
                 "0.001"]) == 0
    assert json.loads((out / "curve.json").read_text())["points"] == again
    assert "time limit reached" in capsys.readouterr().out


@pytest.mark.parametrize("argv, word", [
    (["--out", "x", "--chunk-steps", "0"], "--chunk-steps"),
    (["--out", "x", "--start", "no/such.zip"], "--start"),
    (["--out", "x", "--trainer-args", "--lr '1e-4"], "--trainer-args"),
    (["--compare", "no/such/dir", "--out", "x.png"], "no curve.json"),
    (["--compare", "no/such/dir", "--out", "x"], ".png"),
])
def test_bad_arguments_exit_2(argv, word, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2
    assert word in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("start", ["scratch", "fitted"])
def test_trainer_args_come_last_so_they_override(start, tmp_path, monkeypatch):
    """Both trainers get the extra options after the curve's own (argparse: the last wins)."""
    from sichuan_agents import train
    from sichuan_agents.training import curve, finetune

    seen: list[list[str]] = []

    def fake_main(argv):
        seen.append(list(argv))
        return 3

    monkeypatch.setattr(train if start == "scratch" else finetune, "main", fake_main)
    a = parse_args(["--out", str(tmp_path), "--start", start, "--reference", "rules",
                    "--trainer-args", "--lr 1e-4 --tables 5"])
    trainer = curve.train_scratch if start == "scratch" else curve.train_finetune
    with pytest.raises(SystemExit, match="stopped with status 3"):
        trainer(a, tmp_path, 0, 100)
    argv = seen[0]
    assert argv[-4:] == ["--lr", "1e-4", "--tables", "5"]
    assert argv.index("--tables") < len(argv) - 2  # the curve's own --tables comes first
    assert "--reference" in argv


def _point(steps, cpu, diff):
    return {"steps": steps, "cpu_seconds": cpu,
            "vs": {"rules": {"diff": diff, "ci_low": diff - 0.1, "ci_high": diff + 0.1,
                             "deals": 8}}}


def test_compare_draws_several_curves_into_one_png(tmp_path, capsys):
    settings = {"start": "fitted", "reference": "none", "against": "rules", "rules": "mil",
                "eval_walls": 2, "eval_seed": 4242}
    for name, ref in (("a", "none"), ("b", "rules")):
        (tmp_path / name).mkdir()
        curve = {"settings": {**settings, "reference": ref},
                 "points": [_point(0, 0.0, 0.1), _point(10, 5.0, 0.2)]}
        (tmp_path / name / "curve.json").write_text(json.dumps(curve))
    png = tmp_path / "both.png"
    assert main(["--compare", str(tmp_path / "a"), str(tmp_path / "b" / "curve.json"),
                 "--out", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "both.png" / "curve.json").exists()

"""The policy-improvement loop (sichuan_agents/training/improve.py): a tiny real run that is
stopped after one generation and resumed for a second, and the keep-only-if-better rule."""

import json
import zipfile

import numpy as np
import pytest

from sichuan_agents.training.improve import keep_generation, parse_args
from sichuan_agents.training.improve import main as improve_main


def test_keep_only_if_the_held_out_gain_is_positive_and_the_arena_not_worse():
    cur = {"diff": 0.10}
    assert keep_generation({"per_deal": 0.02}, {"diff": 0.12}, cur)
    assert keep_generation({"per_deal": 0.02}, {"diff": 0.10}, cur)
    assert not keep_generation({"per_deal": 0.02}, {"diff": 0.09}, cur)
    assert not keep_generation({"per_deal": 0.0}, {"diff": 0.30}, cur)
    assert not keep_generation({"per_deal": -0.01}, {"diff": 0.30}, cur)
    assert keep_generation({"per_deal": 0.02}, {"diff": 0.09}, cur, tolerance=0.02)


def test_bad_arguments_are_one_line_errors(capsys, tmp_path):
    for argv in (["--out", str(tmp_path), "--val", "3", "--shards", "3"],
                 ["--out", str(tmp_path), "--deals", "0"],
                 ["--out", str(tmp_path), "--init", str(tmp_path / "none.zip")]):
        with pytest.raises(SystemExit) as e:
            parse_args(argv)
        assert e.value.code == 2
        assert "error: --" in capsys.readouterr().err.strip().splitlines()[-1]


def _weights(path):
    with zipfile.ZipFile(path) as z:
        return z.read("policy.pth")


@pytest.mark.slow
def test_tiny_run_resumes_and_keeps_only_better_generations(tmp_path):
    out = tmp_path / "run"
    args = ["--out", str(out), "--shards", "2", "--val", "1", "--deals", "6",
            "--claim-prob", "1", "--sample-prob", "0.2", "--arena-deals", "8",
            "--epochs", "1", "--tables", "8", "--seed-base", "9000"]
    assert improve_main([*args, "--generations", "1"]) == 0
    state = json.loads((out / "state.json").read_text())
    assert len(state["generations"]) == 1
    g1 = state["generations"][0]
    assert g1["parent"] == 0 and len(g1["shards"]) == 2
    stamps = {p: (out / "gen1" / p).stat().st_mtime_ns for p in ("s9000.npz", "s9001.npz")}
    # generation 1's comparisons are measured against generation 0's own choices
    with np.load(out / "gen1" / "s9000.npz") as d:
        assert d["returns"].shape[0] > 0 and (d["candidates"][:, 0] >= 0).all()
    # resume with one more generation: gen 1 is not redone, gen 2 is added
    assert improve_main([*args, "--generations", "2"]) == 0
    state = json.loads((out / "state.json").read_text())
    assert [g["k"] for g in state["generations"]] == [1, 2]
    assert {p: (out / "gen1" / p).stat().st_mtime_ns for p in stamps} == stamps
    cur_arena = state["start_arena"]
    current = 0
    for g in state["generations"]:
        assert g["parent"] == current
        assert g["kept"] == keep_generation(g["held_out"], g["arena"], cur_arena)
        if g["kept"]:
            current, cur_arena = g["k"], g["arena"]
    assert state["current"] == current
    want = (out / f"gen{current}" / "model.zip") if current else None
    if want is not None:
        assert _weights(out / "current.zip") == _weights(want)
    table = (out / "generations.md").read_text()
    assert "| 1 | gen 0 |" in table and "| 2 | gen" in table
    # a different setting in the same folder is refused in one line
    with pytest.raises(SystemExit, match="other settings"):
        improve_main([*args[:-2], "--seed-base", "1", "--generations", "3"])

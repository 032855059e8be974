"""Command-line tools given bad arguments, as a new user would: each says what is wrong in
one line and exits non-zero, never with a traceback, and an output path is checked (or
its folder created) before any work is done.

Covers ``python -m sichuan_env.records.selfplay``, ``sichuan_env.core.tables`` and
``sichuan_env.core.hands``
(the other tools are tested with their modules).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sichuan_env.records.selfplay import selfplay

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)


def _one_clear_error(r: subprocess.CompletedProcess, *words: str) -> str:
    """The run failed with a short message (argparse may add its usage line before it)
    naming ``words``, and no traceback."""
    assert r.returncode != 0, r.stdout
    assert "Traceback" not in r.stderr + r.stdout, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines, "nothing said"
    message = lines[-1]
    assert "error:" in message, r.stderr
    assert len([x for x in lines if not x.startswith("usage:") and not x.startswith(" ")]) == 1
    for w in words:
        assert w in message, (w, message)
    return message


# ----------------------------------------------------------------------------- selfplay


@pytest.mark.slow
def test_selfplay_creates_a_missing_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "deals.jsonl"
    r = _run("sichuan_env.records.selfplay", "--deals", "3", "--seed", "2", "--out", str(out),
             "--tables", "2")
    assert r.returncode == 0, r.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    assert all(json.loads(x)["format"] == "sichuan-record/1" for x in lines)


@pytest.mark.slow
def test_selfplay_output_that_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x", encoding="utf-8")
    r = _run("sichuan_env.records.selfplay", "--deals", "3", "--seed", "2", "--out", str(tmp_path))
    _one_clear_error(r, "--out", "is a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


@pytest.mark.slow
def test_selfplay_output_that_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("x", encoding="utf-8")
    r = _run("sichuan_env.records.selfplay", "--deals", "3", "--seed", "2",
             "--out", str(blocker / "deals.jsonl"))
    _one_clear_error(r, "cannot write --out")
    assert blocker.read_text(encoding="utf-8") == "x"


@pytest.mark.slow
@pytest.mark.parametrize("args, words", [
    (["--seed", "-5"], ["--seed", "non-negative"]),
    (["--seed", "x"], ["--seed"]),
    (["--deals", "-1"], ["--deals"]),
    (["--tables", "0"], ["--tables"]),
    (["--rules", "nosuch"], ["--rules"]),
])
def test_selfplay_bad_numbers_and_names(tmp_path: Path, args: list[str], words) -> None:
    base = {"--deals": "2", "--seed": "1", "--out": str(tmp_path / "d.jsonl")}
    for k, v in zip(args[::2], args[1::2], strict=True):
        base[k] = v
    flat = [x for kv in base.items() for x in kv]
    _one_clear_error(_run("sichuan_env.records.selfplay", *flat), *words)
    assert not (tmp_path / "d.jsonl").exists()  # nothing written before the check


@pytest.mark.parametrize("seed", [-1, 2.5, True, "3"])
def test_selfplay_function_rejects_bad_seeds(seed) -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        next(selfplay(2, seed))


# ----------------------------------------------------------------------------- hands


@pytest.mark.slow
@pytest.mark.parametrize("args, words", [
    (["1112345678999p", "--void", "mp"], ["--void"]),
    (["1112345678999p", "--void", ""], ["--void"]),
    (["1112345678999q"], ["unknown suit 'q'"]),
    (["123m"], ["wrong tile count"]),
    (["11111p23456789m"], ["more than four copies of 1p"]),
    (["1112345678999p", "--melds", "pung"], ["a meld is 'kind tile'"]),
    (["1112345678p", "--melds", "bong 5m"], ["unknown meld kind 'bong'"]),
])
def test_hands_cli_bad_input(args: list[str], words) -> None:
    _one_clear_error(_run("sichuan_env.core.hands", *args), *words)


# ----------------------------------------------------------------------------- tables


@pytest.mark.slow
def test_tables_cli_says_when_the_cache_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_folder"
    blocker.write_text("x", encoding="utf-8")
    env = dict(os.environ, SICHUAN_ENV_CACHE=str(blocker / "cache"))
    r = _run("sichuan_env.core.tables", env=env)
    _one_clear_error(r, "could not cache hand tables", "SICHUAN_ENV_CACHE")
    assert blocker.read_text(encoding="utf-8") == "x"


# ----------------------------------------------------------------------------- train, arena


def _script(path: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / path), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args, words", [
    (["--tables", "0"], ["--tables", ">= 1", "0"]),
    (["--lr", "-1"], ["--lr", "> 0", "-1"]),
    (["--lr", "0"], ["--lr", "> 0"]),
    (["--batch-size", "0"], ["--batch-size", ">= 1"]),
    (["--learner-seats", "0,7"], ["--learner-seats", "0..3", "0,7"]),
    (["--learner-seats", "1,1"], ["--learner-seats", "distinct"]),
    (["--learner-seats", "a"], ["--learner-seats"]),
    (["--total-steps", "-5"], ["--total-steps", ">= 0", "-5"]),
    (["--n-steps", "0"], ["--n-steps"]),
    (["--gamma", "1.5"], ["--gamma"]),
    (["--resume", "missing.zip"], ["--resume", "no such checkpoint", "'missing.zip'"]),
])
def test_train_bad_arguments(tmp_path: Path, args: list[str], words) -> None:
    out = tmp_path / "run"
    r = _script("train.py", *args, "--out", str(out), "--no-progress")
    message = _one_clear_error(r, *words)
    assert "missing.zip.zip" not in message
    assert not out.exists()  # refused before any work


def test_train_resume_accepts_a_checkpoint_named_without_zip(tmp_path: Path) -> None:
    from sichuan_agents import train

    ckpt = tmp_path / "ckpt.zip"
    ckpt.write_bytes(b"")
    assert train.parse_args(["--resume", str(tmp_path / "ckpt")]).resume == str(
        tmp_path / "ckpt")
    assert train.parse_args(["--resume", str(ckpt), "--total-steps", "0"]).total_steps == 0


@pytest.mark.slow
@pytest.mark.parametrize("args, words", [
    (["--tables", "0"], ["--tables", ">= 1"]),
    (["--workers", "0"], ["--workers", ">= 1"]),
    (["--record-deals", "-1"], ["--record-deals", ">= 0"]),
])
def test_arena_bad_numbers(tmp_path: Path, args: list[str], words) -> None:
    out = tmp_path / "res.json"
    r = _run("sichuan_agents.arena", "--seats", "random,random,random,random", "--deals", "4",
             "--no-progress", "--out", str(out), *args)
    _one_clear_error(r, *words)
    assert not out.exists()

"""Every numeric option of the command-line tools (train.py, arena, ladder, selfplay,
viewer) given zero, a negative number and a non-number: a bad value stops the tool with one
line and exit status 2 before any work; zero is accepted where it is a legitimate value
(the ``ZERO_OK`` sets say which). In-process and fast: the work each tool would do next
is replaced by a stub that records that it was reached.

Also the ``train.py`` cases a new user runs into (``--final-eval-deals 0``, a negative
``--total-steps``, an ``--out`` that cannot be created, a Ray ``--address`` where no
cluster answers), each run as a command: one line, exit 2, nothing written, no torch or
Ray imported.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "tests" / "data" / "independent-mil.jsonl"


class _Ran(Exception):  # noqa: N818 - a marker, not an error
    """The tool got past its argument checks to its work."""


def _stop(*args, **kwargs):
    raise _Ran


# Per tool: its numeric options, and those for which 0 is a legitimate value.
NUMERIC = {
    "train": {
        "--env-runners", "--num-gpus-per-learner", "--total-steps", "--tables", "--seed",
        "--n-steps", "--batch-size", "--epochs", "--lr", "--gamma", "--ent-coef",
        "--checkpoint-every", "--eval-every", "--eval-deals", "--final-eval-deals",
        "--snapshot-every", "--time-limit", "--imitate-steps", "--imitate-epochs", "--threads",
        "--channels", "--kl-coef",
    },
    "arena": {"--deals", "--seed", "--record-deals", "--tables", "--workers", "--claim-window"},
    "ladder": {"--deals", "--seed", "--tables", "--workers"},
    "selfplay": {"--deals", "--seed", "--tables"},
    "viewer": {"--deal", "--seat"},
}
ZERO_OK = {
    # seeds; 0 env runners (RLlib samples in the driver); 0 GPUs (CPU learner); 0 steps
    # (warm start only); 0 imitation steps; 0 entropy bonus; 0 = off for the periodic
    # checkpoints and evaluations and for the time limit
    "train": {"--seed", "--env-runners", "--num-gpus-per-learner", "--total-steps",
              "--imitate-steps", "--ent-coef", "--checkpoint-every", "--eval-every",
              "--time-limit", "--kl-coef"},
    "arena": {"--seed", "--record-deals", "--claim-window"},  # no record written; no pacing
    "ladder": {"--seed"},
    "selfplay": {"--seed", "--deals"},  # an empty file
    "viewer": {"--deal", "--seat"},  # the first record; seat 0's view
}


def _train(argv: list[str], tmp_path: Path, monkeypatch) -> Callable[[], object]:
    from sichuan_agents import train

    return lambda: train.parse_args([*argv, "--out", str(tmp_path / "run")])


def _arena(argv, tmp_path, monkeypatch):
    import sichuan_agents.arena as arena

    monkeypatch.setattr(arena, "run_arena", _stop)
    return lambda: arena.main(["--seats", "random,random,random,random", "--no-progress",
                               *argv])


def _ladder(argv, tmp_path, monkeypatch):
    import sichuan_agents.ladder as ladder

    monkeypatch.setattr(ladder, "run_ladder", _stop)
    return lambda: ladder.main(["--agents", "random,greedy", "--no-progress", *argv])


def _selfplay(argv, tmp_path, monkeypatch):
    import sichuan_env.records.selfplay as selfplay

    monkeypatch.setattr(selfplay, "selfplay", _stop)
    base = {"--deals": "2", "--seed": "1"}  # required: the option swept replaces its own
    base.update(zip(argv[::2], argv[1::2], strict=False))
    flat = [x for kv in base.items() for x in kv] + argv[len(argv) // 2 * 2:]
    return lambda: selfplay.main([*flat, "--out", str(tmp_path / "d.jsonl")])


def _viewer(argv, tmp_path, monkeypatch):
    import sichuan_env.records.viewer as viewer

    monkeypatch.setattr(viewer, "write_replay", _stop)
    return lambda: viewer.main([str(RECORDS), "--out", str(tmp_path / "r.html"), *argv])


TOOLS = {"train": _train, "arena": _arena, "ladder": _ladder, "selfplay": _selfplay,
         "viewer": _viewer}
CASES = [(tool, flag, value) for tool, flags in NUMERIC.items() for flag in sorted(flags)
         for value in ("0", "-3", "x")]


@pytest.mark.parametrize("tool, flag, value", CASES)
def test_numeric_option(tool: str, flag: str, value: str, tmp_path: Path, monkeypatch,
                        capsys) -> None:
    call = TOOLS[tool]([flag, value], tmp_path, monkeypatch)
    try:
        outcome = call()
        outcome = "ran" if not isinstance(outcome, int) else outcome
    except _Ran:
        outcome = "ran"
    except SystemExit as stop:
        outcome = stop.code
    err = capsys.readouterr().err
    if value == "0" and flag in ZERO_OK[tool]:
        assert outcome == "ran", err
        return
    assert outcome == 2, f"{tool} {flag} {value} was accepted"
    lines = err.strip().splitlines()
    message = lines[-1]
    assert "error:" in message and flag in message, err
    assert [x for x in lines if not x.startswith(("usage:", " "))] == [message]
    assert "Traceback" not in err
    assert not (tmp_path / "run").exists()  # train.py: no output folder left behind


def test_the_sweep_covers_every_numeric_option(monkeypatch, capsys) -> None:
    """The option lists above are complete: every option each parser reads as an int or a
    float is swept."""
    seen: list[argparse.ArgumentParser] = []
    original = argparse.ArgumentParser.parse_args

    def spy(self, *args, **kwargs):
        seen.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", spy)
    for tool, make in TOOLS.items():
        seen.clear()
        call = make(["--help"], Path("."), monkeypatch)
        with pytest.raises(SystemExit):
            call()
        numeric = {a.option_strings[-1] for p in seen for a in p._actions
                   if a.type in (int, float)}
        assert numeric == NUMERIC[tool], tool
    capsys.readouterr()


# ----------------------------------------------------------------------------- train.py


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CHECK = ("import runpy, sys\n"
         "sys.argv = ['train.py', *sys.argv[1:]]\n"
         "try:\n"
         "    runpy.run_path('train.py', run_name='__main__')\n"
         "except SystemExit as stop:\n"
         "    print(stop.code, 'torch' in sys.modules, 'ray' in sys.modules)\n")


@pytest.mark.parametrize("args, words", [
    (["--final-eval-deals", "0"], ["--final-eval-deals", ">= 1"]),
    (["--total-steps", "-5"], ["--total-steps", ">= 0", "-5"]),
    (["--out", "{blocker}/sub/run"], ["--out", "cannot create the folder"]),
    (["--out", "{blocker}"], ["--out", "is a file"]),
    (["--backend", "rllib", "--address", "127.0.0.1:{port}"],
     ["--address 127.0.0.1:", "no Ray cluster answers", "ray start --head",
      "ray start --address=HEAD_HOST:6379"]),
    (["--backend", "rllib", "--address", "localhost"], ["--address", "HOST:PORT"]),
    (["--address", "auto"], ["--address", "--backend rllib"]),
])
def test_train_leftovers_one_line_exit_2_before_any_work(tmp_path: Path, args, words) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    argv = [a.format(blocker=blocker, port=_free_port()) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "run")]
    r = subprocess.run([sys.executable, "-c", CHECK, *argv], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.stdout.split() == ["2", "False", "False"], r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert [x for x in lines if not x.startswith(("usage:", " "))] == [lines[-1]]
    assert lines[-1].startswith("train.py: error: ") and "Traceback" not in r.stderr
    for w in words:
        assert w in lines[-1], (w, lines[-1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]
    assert blocker.read_text() == "x"


def test_train_out_folder_that_can_be_created_is_accepted(tmp_path: Path) -> None:
    from sichuan_agents import train

    out = tmp_path / "new" / "deeper" / "run"
    assert train.parse_args(["--out", str(out)]).out == str(out)
    assert not (tmp_path / "new").exists()  # checked, then left for the run to create
    assert train.out_problem(str(tmp_path)) is None  # an existing folder


def test_address_of_a_listening_port_passes_the_probe() -> None:
    from sichuan_agents.training.cluster import address_problem, parse_address

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert address_problem(f"127.0.0.1:{port}") is None
        assert address_problem(f"ray://127.0.0.1:{port}") is None
    assert parse_address("auto") is None and parse_address("[::1]:6379") == ("::1", 6379)
    for bad in ("", "host", "host:", "host:port", ":6379", "host:70000"):
        with pytest.raises(ValueError, match="--address must be"):
            parse_address(bad)


def test_rllib_reaches_the_cluster_before_imitation(tmp_path: Path, monkeypatch,
                                                    capsys) -> None:
    """A cluster that is not there is found before the warm start: Ray's connection
    error becomes one line naming the address and how to start or join a cluster."""
    import ray

    import sichuan_agents.training.rllib_train as rt
    from sichuan_agents import train
    from sichuan_agents.training import cluster

    def no_cluster(*args, **kwargs):
        raise ConnectionError("Could not find any running Ray instance.")

    def no_imitation(*args, **kwargs):
        raise AssertionError("imitation started before the cluster was reached")

    monkeypatch.setattr(ray, "init", no_cluster)
    monkeypatch.setattr(rt, "imitation_warm_start", no_imitation)
    monkeypatch.setattr(rt, "build_config", lambda args: object())
    out = tmp_path / "run"
    args = train.parse_args(["--backend", "rllib", "--address", "auto", "--out", str(out)])
    with pytest.raises(SystemExit) as stop:
        rt.train(args, None, None, None)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --address auto: cannot join")
    assert cluster.CLUSTER_HINT in err[0] and "Could not find any running Ray" in err[0]
    assert not out.exists()

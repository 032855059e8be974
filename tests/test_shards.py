"""Teacher shards as Ray tasks: written atomically, resumed without redoing a finished
shard, and the same samples wherever they are made (in process, a local Ray instance, a
Ray head started here). Ray 2.60 has no local mode any more (``ray.init(local_mode=True)``
raises), so the in-process Ray case is a local instance with two workers."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from sichuan_agents.training import shards
from sichuan_agents.training.rollout_teacher import main as rollout_main
from sichuan_agents.training.search_teacher import main as search_main
from sichuan_agents.training.shards import run_shards, shard_path, write_atomic

ROOT = Path(__file__).resolve().parent.parent
SEARCH = ["--deals", "1", "--k", "2", "--sample-prob", "0.3"]
ROLLOUT = ["--compiled", "--deals", "3"]


def fake_shard(seed: int, size: int = 3, fail_at: int | None = None,
               calls: list | None = None) -> dict[str, np.ndarray]:
    """A shard in the teachers' format (only ``returns`` is read by run_shards)."""
    if calls is not None:
        calls.append(seed)
    if seed == fail_at:
        raise KeyboardInterrupt  # as a Ctrl-C in the middle of the run
    return {"returns": np.full((size, 2), seed, np.float32)}


def same_shards(a: Path, b: Path) -> bool:
    with np.load(a) as x, np.load(b) as y:
        return x.files == y.files and all(
            np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind in "fc") for k in x.files)


def test_an_interrupted_write_leaves_no_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "s1.npz"

    def broken(f, **data):
        f.write(b"half a shard")
        raise OSError("disk full")

    monkeypatch.setattr(shards.np, "savez_compressed", broken)
    with pytest.raises(OSError):
        write_atomic(path, {"returns": np.zeros(2)})
    assert list(tmp_path.iterdir()) == []


def test_finished_shards_are_not_redone_and_a_stopped_run_resumes(tmp_path):
    calls: list[int] = []
    with pytest.raises(KeyboardInterrupt):  # stopped at the third seed
        run_shards(fake_shard, range(10, 15), tmp_path, {"fail_at": 12, "calls": calls},
                   log=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s10.npz", "s11.npz"]
    (tmp_path / ".s12.npz.999.tmp").write_bytes(b"left by a killed run")
    lines: list[str] = []
    calls.clear()
    paths = run_shards(fake_shard, range(10, 15), tmp_path, {"calls": calls}, log=lines.append)
    assert calls == [12, 13, 14], "the finished shards 10 and 11 are not made again"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"s{s}.npz" for s in range(10, 15)]
    assert paths == [shard_path(tmp_path, s) for s in range(10, 15)]
    for s in range(10, 15):
        with np.load(shard_path(tmp_path, s)) as d:
            assert (d["returns"] == s).all()
    assert "2 of 5 shards already" in lines[0]
    assert "shard 3/3 s14.npz: 3 samples; 9 in" in lines[-1] and "samples/s" in lines[-1]


@pytest.mark.slow  # a Ray instance starts (half a minute or more on a loaded machine)
@pytest.mark.parametrize("main, argv", [(search_main, SEARCH), (rollout_main, ROLLOUT)])
def test_local_ray_workers_write_the_one_process_commands_samples(main, argv, tmp_path):
    for seed in (5, 6):
        assert main([*argv, "--seed", str(seed), "--out", str(tmp_path / f"one{seed}.npz")]) == 0
    assert main([*argv, "--seed", "5", "--shards", "2", "--address", "local",
                 "--workers", "2", "--out", str(tmp_path / "ray")]) == 0
    for seed in (5, 6):
        assert same_shards(tmp_path / f"one{seed}.npz", tmp_path / "ray" / f"s{seed}.npz")


@pytest.mark.parametrize("argv, text", [
    (["--shards", "0", "--out", "d"], "--shards and --workers must be >= 1"),
    (["--shards", "2", "--out", "d.npz"], "--out is a folder"),
    (["--workers", "2", "--out", "d.npz"], "give --shards N"),
    (["--shards", "2", "--address", "127.0.0.1:1", "--out", "d"], "no Ray cluster answers"),
    (["--shards", "2", "--address", "nowhere", "--out", "d"], "--address must be"),
])
def test_shard_options_errors_are_one_line(argv, text, capsys, tmp_path):
    argv = [a if a not in ("d", "d.npz") else str(tmp_path / a) for a in argv]
    assert rollout_main([*ROLLOUT, *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and text in err[0]
    assert not (tmp_path / "d").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_head(monkeypatch):
    """A Ray head on this machine with two CPUs, started for the test and stopped after
    (its own temporary folder and ports, so no other Ray instance here is touched). Ray
    2.60 rewrites 127.0.0.1 in an address to the machine's own address before it connects,
    so the head listens there (the address Ray itself picks), not on the loopback."""
    from ray._private.services import get_node_ip_address

    ip = get_node_ip_address()
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="rayt", dir="/tmp")
    # no token authentication: Ray 2.60 keeps its token in ~/.ray, which every Ray
    # instance of this user shares; this head lives for one test on this machine only
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RAY_ADDRESS", None)
    ports = ["--ray-client-server-port", str(_free_port()),
             "--dashboard-agent-listen-port", str(_free_port()),
             "--node-manager-port", str(_free_port()),
             "--object-manager-port", str(_free_port())]
    head = subprocess.Popen(
        [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
         "--node-ip-address", ip, "--port", str(port), "--num-cpus", "2",
         "--include-dashboard", "false", "--temp-dir", temp, "--disable-usage-stats", *ports],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    address = f"{ip}:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                socket.create_connection((ip, port), timeout=1).close()
                break
            except OSError:
                if head.poll() is not None or time.time() > deadline:
                    raise RuntimeError("the Ray head did not start") from None
                time.sleep(1)
        yield address
    finally:
        head.terminate()  # `ray start --block` stops the processes it started
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            head.kill()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_a_local_ray_head_writes_the_one_process_commands_samples_and_arena(ray_head,
                                                                            tmp_path):
    from sichuan_agents.arena import run_arena

    for seed in (5, 6):
        assert search_main([*SEARCH, "--seed", str(seed),
                            "--out", str(tmp_path / f"one{seed}.npz")]) == 0
    assert search_main([*SEARCH, "--seed", "5", "--shards", "2", "--address", ray_head,
                        "--out", str(tmp_path / "ray")]) == 0
    for seed in (5, 6):
        assert same_shards(tmp_path / f"one{seed}.npz", tmp_path / "ray" / f"s{seed}.npz")
    seats = ["greedy", "random", "greedy", "random"]
    local = run_arena(seats, 24, seed=3, tables=4, workers=2)
    ray = run_arena(seats, 24, seed=3, tables=4, address=ray_head)  # one slice per CPU
    assert ray.workers == 2
    for field in ("points", "hu", "deal_ins", "win_value"):
        np.testing.assert_array_equal(getattr(local, field), getattr(ray, field))

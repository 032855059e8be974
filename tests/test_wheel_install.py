"""The package as users install it: built as a wheel from the tracked files, installed in a
fresh virtual environment outside the checkout, it carries everything it needs -- every
registered agent plays a deal (``best``'s trees and the networks' files are package data),
the play page serves its static files, the protocol's schema loads, the commands run -- and
it puts nothing but ``sichuan_env`` and ``sichuan_agents`` at the top of site-packages.

The venv gets the dependencies from this interpreter's site-packages through a ``.pth``
line (never this checkout: an editable install's hook there is not a site folder, so it is
not read), so the test needs no network."""

from __future__ import annotations

import json
import os
import shutil
import site
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "*.egg-info",
                                 "build", "dist", "runs", ".git")


def _tracked_copy(dst: Path) -> None:
    """The files git tracks (the whole folder less build outputs where git is missing)."""
    try:
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                               check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(ROOT, dst, ignore=IGNORED)
        return
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    _tracked_copy(src)
    dist = tmp / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps",
                            "--no-build-isolation", "-w", str(dist), "-q"],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = dist.glob("sichuan_env-*.whl")
    venv = tmp / "venv"
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                          text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                              "get_paths()['purelib'])"], capture_output=True, text=True,
                             check=True).stdout.strip()
    deps = [p for p in [*site.getsitepackages(), site.getusersitepackages()]
            if Path(p).is_dir() and not Path(p).resolve().is_relative_to(ROOT)]
    (Path(purelib) / "_outer_dependencies.pth").write_text("\n".join(deps) + "\n")
    inst = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index",
                           "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    assert inst.returncode == 0, inst.stderr[-3000:]
    work = tmp / "elsewhere"
    work.mkdir()
    return {"wheel": wheel, "python": python, "bin": venv / "bin", "work": work,
            "purelib": Path(purelib)}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return env


def _run(installed, *argv: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=installed["work"], env=_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_the_wheel_has_two_top_level_packages_and_the_data(installed):
    with zipfile.ZipFile(installed["wheel"]) as whl:
        names = whl.namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"sichuan_env", "sichuan_agents"}, top
    for data in ("sichuan_agents/models/boosted_mil.txt", "sichuan_agents/models/fitted_mil.zip",
                 "sichuan_agents/models/hands.pt", "sichuan_agents/models/boosted_mil.json",
                 "sichuan_env/play/web/static/play.js", "sichuan_env/seats/protocol.schema.json"):
        assert data in names, data
    # every non-Python file of the two packages in the checkout is in the wheel
    tracked = {p.relative_to(ROOT).as_posix() for top in ("sichuan_env", "sichuan_agents")
               for p in (ROOT / top).rglob("*") if p.is_file()
               and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert tracked - set(names) == set()


@pytest.mark.slow
def test_the_installed_package_is_the_wheel_not_the_checkout(installed):
    code = ("import importlib.util, json, sichuan_env, sichuan_agents\n"
            "print(json.dumps({'env': sichuan_env.__file__, 'agents': sichuan_agents.__file__,"
            " 'bare': [n for n in ('agents', 'train') if importlib.util.find_spec(n)]}))")
    res = _run(installed, installed["python"], "-c", code)
    assert res.returncode == 0, res.stderr[-2000:]
    where = json.loads(res.stdout)
    for key in ("env", "agents"):
        assert Path(where[key]).is_relative_to(installed["purelib"]), where
    assert where["bare"] == []  # nothing generic at the top of site-packages


@pytest.mark.slow
def test_every_registered_agent_plays_a_deal_from_the_wheel(installed):
    code = ("from sichuan_env.seats.agent import known_agents\n"
            "print('\\n'.join(sorted(known_agents())))")
    res = _run(installed, installed["python"], "-c", code)
    assert res.returncode == 0, res.stderr[-2000:]
    names = res.stdout.split()
    # a form that needs a path of the user's own (rllib:PATH) has no file to ship
    playable = [n.split("[")[0] for n in names if not n.endswith(":PATH")]
    assert [n for n in names if n.endswith(":PATH")] == ["rllib:PATH"], names
    assert {"best", "rules", "greedy", "search", "fitted", "ppo", "boosted", "random"} <= set(
        playable)
    specs = ["search?k=2&top=2" if n == "search" else n for n in playable]
    for first in range(0, len(specs), 4):
        seats = (specs[first:first + 4] + ["random"] * 4)[:4]
        out = installed["work"] / f"arena{first}.json"
        res = _run(installed, installed["bin"] / "sichuan-arena", "--seats", ",".join(seats),
                   "--deals", "1", "--seed", "3", "--no-progress", "--out", out)
        assert res.returncode == 0, (seats, res.stderr[-3000:])
        played = json.loads(out.read_text())["agents"]
        assert set(seats) <= set(played), (seats, played)


@pytest.mark.slow
def test_the_commands_and_the_schema_work_from_the_wheel(installed):
    for command in ("sichuan-train", "sichuan-play", "sichuan-review", "sichuan-records"):
        res = _run(installed, installed["bin"] / command, "--help", timeout=300)
        assert res.returncode == 0 and "usage" in res.stdout, (command, res.stderr[-2000:])
    res = _run(installed, installed["python"], "-m", "sichuan_env.play", "--help")
    assert res.returncode == 0 and "usage" in res.stdout, res.stderr[-2000:]
    code = ("from sichuan_env.seats.protocol import json_schema\n"
            "print(json_schema()['$schema'])")
    res = _run(installed, installed["python"], "-c", code)
    assert res.returncode == 0 and "2020-12" in res.stdout, res.stderr[-2000:]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_the_play_page_and_its_static_files_are_served_from_the_wheel(installed):
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    port = _free_port()
    server = subprocess.Popen(
        [str(installed["python"]), "-m", "sichuan_env.play", "--web", "--port", str(port),
         "--seats", "you,random,random,random", "--seed", "5"],
        cwd=installed["work"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(base + "/", timeout=10) as r:
                    page = r.read().decode()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()[-3000:]
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(1)
        assert "<html" in page.lower()
        for name in ("play.js", "play.css"):
            with urllib.request.urlopen(f"{base}/static/{name}", timeout=10) as r:
                assert r.status == 200 and len(r.read()) > 100, name
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()

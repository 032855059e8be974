"""``python -m sichuan_env.play --web``: bad arguments (one line, exit 2, no traceback) and
a real server started from the command line."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sichuan_env.play.terminal import main

pytest.importorskip("uvicorn", reason="the web extra is not installed")
httpx = pytest.importorskip("httpx", reason="the web extra is not installed")

ROOT = Path(__file__).resolve().parents[1]


def run_main(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, words", [
    (["--port", "abc"], "a port is a number 0-65535, got 'abc'"),
    (["--port", "70000"], "a port is a number 0-65535, got 70000"),
    (["--port", "-1"], "a port is a number 0-65535, got -1"),
    (["--seats", "you,rules,rules"], "four comma-separated entries"),
    (["--seats", "you,,rules,rules"], "four comma-separated entries"),
    (["--seats", "rules,rules,rules,rules"], "exactly one 'you', got 0"),
    (["--seats", "you,you,rules,rules"], "exactly one 'you', got 2"),
    (["--seats", "you,nosuchbot,rules,rules"], "--seats: "),
    (["--seats", "you,rules,no/such/file.py:Bot,rules"], "--seats: "),
    (["--rules", "nosuch"], "unknown rule preset 'nosuch'"),
    (["--seed", "x"], "invalid int value"),
    (["--colour", "red"], "unrecognized arguments"),
    (["--claim-window-ms", "-1"], "--claim-window-ms must be 0 to 60000, got -1"),
    (["--trusted-proxy", "myproxy"], "--trusted-proxy takes an IP address or network"),
])
def test_bad_arguments(args, words, capsys) -> None:
    code, out, err = run_main(["--web", *args], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("python -m sichuan_env.play --web: error: ")
    assert words in err and "Traceback" not in err


def test_unknown_agent_is_named(capsys) -> None:
    code, _, err = run_main(["--web", "--seats", "you,nosuchbot,rules,rules"], capsys)
    assert code == 2 and "nosuchbot" in err


def test_port_in_use(capsys) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        code, out, err = run_main(["--web", "--port", str(port), "--seats",
                                   "you,random,random,random"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"cannot listen on 127.0.0.1:{port}" in err


def test_without_the_web_extra(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now fails
    code, _, err = run_main(["--web"], capsys)
    assert code == 2 and err.count("\n") == 1 and "pip install -e '.[web]'" in err


def test_bad_arguments_from_the_shell() -> None:
    proc = subprocess.run([sys.executable, "-m", "sichuan_env.play", "--web", "--seats",
                           "you,rules,you,rules"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "python -m sichuan_env.play --web: error: --seats needs exactly one 'you', got 2 in "
        "'you,rules,you,rules'"]


def test_terminal_play_unchanged(capsys) -> None:
    code, out, _ = run_main(["--opponents", "random", "--auto-first", "--seed", "2"], capsys)
    assert code == 0 and "deal over" in out


@pytest.mark.slow
def test_server_from_the_command_line() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "sichuan_env.play", "--web", "--port", "0",
                             "--seats", "random,you,greedy,random", "--seed", "4",
                             "--games-per-client", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=env)
    try:
        line = proc.stdout.readline()
        m = re.search(r"open (http://127\.0\.0\.1:(\d+)/) to play seat 1 \(rules mil; seats "
                      r"random, you, greedy, random; claim windows (\d+) ms\)", line)
        assert m, line
        assert 10 <= int(m[3]) < 200  # from the bots' answers in the trial deal
        with httpx.Client(base_url=m[1], timeout=300) as client:
            assert client.get("/").status_code == 200
            r = client.post("/api/new", json={}).json()
            assert r["table"]["you"] == 1 and r["deal"] == 0
            assert [s["name"] for s in r["table"]["seats"]] == ["random", "you", "greedy",
                                                                "random"]
            # the Host header is checked on a loopback address
            assert client.get("/", headers={"host": "evil.example"}).status_code == 400
        # the limit counts this client's address, whatever X-Forwarded-For says
        with httpx.Client(base_url=m[1], timeout=300) as other:
            r = other.post("/api/new", json={}, headers={"X-Forwarded-For": "10.1.2.3"})
            assert r.status_code == 429 and "at most 1" in r.json()["error"]
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err


def _serve(*args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "sichuan_env.play", "--web", "--port", "0",
                             "--seats", "you,random,random,random", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env=env)


def _stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err
    return err


@pytest.mark.slow
def test_ipv6_loopback_prints_an_address_the_server_accepts() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6")
    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    proc = _serve("--host", "::1")
    try:
        line = proc.stdout.readline()
        m = re.search(r"open (http://\[::1\]:\d+/) ", line)
        assert m, line
        with httpx.Client(base_url=m[1], timeout=300) as client:
            assert client.get("/").status_code == 200
            assert client.post("/api/new", json={}).status_code == 200
            assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    finally:
        err = _stop(proc)
    assert "warning" not in err


@pytest.mark.slow
def test_other_hosts_and_fixed_seeds_are_warned_about() -> None:
    # 127.0.0.2 is on loopback but not one of the loopback names: the exposure warning
    proc = _serve("--host", "127.0.0.2", "--seed", "5", "--allow-host", "mybox.lan")
    try:
        line = proc.stdout.readline()
        m = re.search(r"open (http://127\.0\.0\.2:(\d+)/) ", line)
        assert m, line
        with httpx.Client(base_url=m[1], timeout=300) as client:
            assert client.get("/").status_code == 200
            port = m[2]
            assert client.get("/", headers={"host": f"mybox.lan:{port}"}).status_code == 200
            assert client.get("/", headers={"host": f"10.1.2.3:{port}"}).status_code == 200
            assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    finally:
        err = _stop(proc)
    warnings = [x for x in err.splitlines() if "warning" in x]
    assert len(warnings) == 2, err
    assert any("--seed 5" in w and "knows every hand" in w for w in warnings)
    assert any("listening on 127.0.0.2" in w and "can play here" in w for w in warnings)

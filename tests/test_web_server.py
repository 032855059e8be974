"""How the play server listens and whom it counts (:mod:`sichuan_env.play.web.server`).

* back-to-back requests on one kept-alive connection are answered at once (the accepted
  sockets have ``TCP_NODELAY``: without it each waited ~40 ms for a delayed ACK);
* the per-address limit counts the connection's peer: ``X-Forwarded-For`` is read only
  from a proxy named with ``--trusted-proxy``.
"""

from __future__ import annotations

import json
import socket
import statistics
import time

import pytest

from sichuan_env.play.web.server import listen_socket

from support.web_helpers import LiveServer, create_app, make_config


@pytest.fixture(scope="module")
def server():
    srv = LiveServer(create_app(make_config(["you", "random", "random", "random"],
                                            per_client=2)))
    yield srv
    srv.close()


def test_the_listening_socket_sets_nodelay():
    sock = listen_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP  # what asyncio looks at before setting it
        with socket.create_connection(sock.getsockname()):
            conn, _ = sock.accept()
            with conn:
                assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        sock.close()


def _get(s: socket.socket, request: bytes) -> bytes:
    s.sendall(request)
    answer = b""
    while True:
        answer += s.recv(65536)
        head, sep, body = answer.partition(b"\r\n\r\n")
        if sep:
            size = [int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")]
            if size and len(body) >= size[0]:
                return answer


def test_back_to_back_requests_on_one_connection_do_not_stall(server):
    with server.client() as c:
        assert c.post("/api/new", json={}).status_code == 200
        cookie = c.cookies["sichuan_game"]
        req = (f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: sichuan_game={cookie}"
               "\r\n\r\n").encode()
        # a plain client socket, as a browser's (Nagle on): two requests back to back,
        # many times, on one kept-alive connection
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
            times = []
            for _ in range(12):
                t = time.perf_counter()
                assert _get(s, req).startswith(b"HTTP/1.1 200")
                assert _get(s, req).startswith(b"HTTP/1.1 200")
                times.append(time.perf_counter() - t)
        assert statistics.median(times) < 0.030, [round(x * 1000, 1) for x in times]
        # and the same through httpx, as the load test's players
        times = []
        for _ in range(12):
            t = time.perf_counter()
            assert c.get("/api/state").status_code == 200
            times.append(time.perf_counter() - t)
        assert statistics.median(times) < 0.030, [round(x * 1000, 1) for x in times]
    server.app.state.store.entries.clear()


def _new_games(srv: LiveServer, forwarded: list[str]) -> list[int]:
    codes = []
    for addr in forwarded:
        with srv.client() as c:
            codes.append(c.post("/api/new", json={},
                                headers={"X-Forwarded-For": addr}).status_code)
    return codes


def test_forwarded_for_from_loopback_is_not_trusted_by_default(server):
    try:
        codes = _new_games(server, ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"])
        assert codes == [200, 200, 429, 429]  # one client: its address, not the header's
        assert {e.client for e in server.app.state.store.entries.values()} == {"127.0.0.1"}
    finally:
        server.app.state.store.entries.clear()


def test_forwarded_for_is_read_from_a_trusted_proxy():
    srv = LiveServer(create_app(make_config(["you", "random", "random", "random"],
                                            per_client=2)), trusted_proxies=("127.0.0.1",))
    try:
        codes = _new_games(srv, ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.1",
                                 "10.0.0.1"])
        assert codes == [200, 200, 200, 200, 429]  # each client its own limit
        assert sorted(e.client for e in srv.app.state.store.entries.values()) == [
            "10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.3"]
    finally:
        srv.close()


BIG_SEED = 2**63 + 18190955137  # over 2**53: a JSON number would not keep it


def test_a_64_bit_seed_reaches_the_page_and_the_replay_exactly():
    from sichuan_env.records import record as records
    from sichuan_env.records.game import Game

    srv = LiveServer(create_app(make_config(["you", "random", "random", "random"],
                                            seed=BIG_SEED)))
    try:
        with srv.client() as c:
            r = c.post("/api/new", json={}).json()
            while not r["done"]:
                r = c.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                             "action": r["table"]["legal"][0]}).json()
            exact = BIG_SEED  # deal n of the game is dealt from seed + n; the first is 0
            text = c.get("/api/state").text
            # read as the page's script reads it: every JSON number a double
            as_js = json.loads(text, parse_int=float)
            assert as_js["settlement"]["seed"] == str(exact)
            assert float(exact) != exact  # a number would have come back changed
            rec = json.loads(c.get("/api/record").text)  # the record file: exact digits
            assert rec["seed"] == exact and int(as_js["settlement"]["seed"]) == rec["seed"]
            records.replay(rec)  # the record replays
            replayed = Game.new(int(as_js["settlement"]["seed"]), "mil")
            assert replayed.state.wall.tolist() == Game.new(exact, "mil").state.wall.tolist()
            page = c.get("/replay").text
            assert f"seed {exact}" in page
    finally:
        srv.close()



def test_what_a_game_costs_and_how_many_fit():
    import subprocess
    import sys

    from sichuan_env.play.web.memory import fitting_games, game_cost

    hog = ("b = bytearray(60 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
           "print('ready', flush=True); input()")

    def build():  # a game whose bot runs a program of 60 MiB
        proc = subprocess.Popen([sys.executable, "-c", hog], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "ready\n"
        return proc

    def close(proc):
        proc.kill()
        proc.wait()

    cost = game_cost(build, close, games=2)
    if cost is None:
        pytest.skip("no /proc here: nothing is measured")
    assert 60 * 2**20 <= cost < 120 * 2**20, cost / 2**20
    assert fitting_games(200, cost, 10 * 2**30) == int(0.75 * 10 * 2**30 // cost)
    assert fitting_games(200, 2**20, 10 * 2**30) == 200  # fits: as asked
    assert fitting_games(200, 2**30, 2**29) == 1  # never below one game
    assert fitting_games(200, None, 2**30) == 200 and fitting_games(200, 2**20, None) == 200


@pytest.mark.slow  # starts bot programs
def test_the_command_line_lowers_the_game_limit_to_the_memory(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root),
                                                        os.environ.get("PYTHONPATH", "")])}
    bot = "exec:python -m sichuan_env.seats.bot_server random"
    proc = subprocess.Popen([sys.executable, "-m", "sichuan_env.play", "--web", "--port", "0",
                             "--seats", f"you,{bot},random,random", "--memory-mb", "50",
                             "--bot-workers", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=root, env=env)
    try:
        line = proc.stdout.readline()
        assert "open http://" in line, line
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "warning: at most 1 games (not 200): a game costs about" in err, err
    assert "--memory-mb is 50" in err and "Traceback" not in err


def test_an_exec_bot_game_runs_one_program_per_seat_and_keeps_none_spare():
    import os
    import sys
    from pathlib import Path

    from sichuan_env.play.web import bot_spec
    from sichuan_env.play.web.bots import BotSpec, GameBots
    from sichuan_env.play.web.memory import _children

    if not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    bot = Path(__file__).parent / "support" / "fault_bot.py"
    spec = BotSpec(f"exec:{sys.executable} {bot} ok")
    before = _children(os.getpid())
    games = [GameBots([None, spec, spec, spec], fallback=None) for _ in range(2)]
    try:
        started = _children(os.getpid()) - before
        assert len(started) == 6  # three seats, two games: no prototype program kept
        assert not any(k[0] == spec.spec for k in bot_spec._FRESH)
    finally:
        for g in games:
            g.close()

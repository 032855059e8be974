"""Browser play keeps secrets and holds under faults and abuse.

* a frame never tells the human that a claim or rob window opened for another seat (the
  twin deals of ``support.windows``: the frames are the same whether a bot could claim
  and passed or nobody could claim);
* every deal's seed is a fresh secret draw of 64 bits, shown once the deal is over, and
  the finished deals do not give the next one;
* limits: games per client address and per server refused with a clear message, nobody
  else's game dropped; idle games expire; the body limit holds while reading;
* a bot that raises, answers an illegal move or runs out of time is replaced by the
  fallback for that decision (JSON answers, a notice on the page, the deal goes on); each
  game has its own bot objects, reset at each deal;
* a slow bot delays its own game only: other games' moves and state reads go on;
* Host check (IPv6 literals, IP addresses off loopback), security headers, names.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from sichuan_env.core.actions import action_to_str
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import CLAIM, ROB
from sichuan_env.play.web import table as web_table
from sichuan_env.play.web.app import COOKIE, WebConfig, create_app
from sichuan_env.play.web.bots import BotSpec, display_name
from sichuan_env.play.web.guard import HostCheck, host_name
from sichuan_env.play.web.store import GameStore
from sichuan_env.play.web.table import DealSeeds, WebGame
from sichuan_env.records.game import Game

from support.web_helpers import LiveServer, make_config
from support.windows import window_twins

BOTS = Path(__file__).parent / "data" / "web_bots.py"
RULES = get_rules("mil")


def bot(name: str) -> BotSpec:
    return BotSpec(f"{BOTS}:{name}", RULES.preset)


# ----------------------------------------------------------------------------- secrets
def _first_frame(state, move: int) -> dict:
    """The first frame the human (the seat to move in ``state``) gets after ``move``,
    the bots passing whenever they may."""
    human = int(state.current[0])
    seats = [None if s == human else bot("Passer") for s in range(4)]
    game = WebGame(seats, RULES, DealSeeds(1))
    game.start(Game(state.copy()))
    frames = game.act(0, action_to_str(move))
    assert frames, "the move itself is a public move: a frame"
    return frames[0]


def test_frames_do_not_tell_that_a_window_opened():
    """The web form of the twin test: leak 1 of the issue (a bot that could pung the
    human's discard and passed showed as phase 'claim') fails it; the same for a kong
    that a bot could have robbed."""
    n = 0
    for tw in window_twins(range(40), want=10):
        if any(s == int(tw.before.current[0]) for s in tw.asked):
            continue
        with_window = _first_frame(tw.before, tw.move)
        without = _first_frame(tw.twin_before, tw.move)
        assert with_window == without
        assert with_window["table"]["phase"] != "claim"
        n += 1
    assert n >= 6
    robs = 0  # a kong added to a pung that a bot could rob (Hu on it) and did not
    for tw in window_twins([477, 789, 831], want=3, phases=(ROB,)):
        if int(tw.before.current[0]) not in tw.asked:
            assert _first_frame(tw.before, tw.move) == _first_frame(tw.twin_before, tw.move)
            robs += 1
    assert robs


def test_every_deal_has_its_own_secret_seed(monkeypatch):
    drawn = []

    def randbits(k):
        assert k == 64
        drawn.append(int.from_bytes(np.random.default_rng(len(drawn)).bytes(8), "little"))
        return drawn[-1]

    monkeypatch.setattr(web_table.secrets, "randbits", randbits)
    game = WebGame([None, bot("Passer"), bot("Passer"), bot("Passer")], RULES)
    seeds = []
    for _ in range(3):
        while not game.done:
            assert "seed" not in json.dumps(game.state())  # kept back while the deal is on
            game.act(game.step, game.legal()[0], deal=game.deal_number)
        seeds.append(int(game.settlement()["seed"]))
        game.new_deal()
    assert seeds == drawn[:3] and len(drawn) == 4  # one fresh draw per deal
    assert max(seeds) >= 2**32  # more than the old 31 bits


def test_finished_deals_do_not_give_the_next():
    """The issue's attack: after a deal, Game.new(seed + 1) was the next deal."""
    game = WebGame([None, bot("Passer"), bot("Passer"), bot("Passer")], RULES)
    finished = []
    for _ in range(3):
        while not game.done:
            game.act(game.step, game.legal()[0])
        finished.append(int(game.settlement()["seed"]))
        game.new_deal()
    hands = game.game.state.hand[0, game.human].copy()
    for s in finished:
        for guess in (s, s + 1, s - 1, finished[-1] + 1):
            assert not np.array_equal(Game.new(guess % 2**64, RULES).state.hand[0, 0], hands)
    assert len(set(finished)) == 3


def test_a_fixed_seed_is_reproducible():
    a = WebGame([None, bot("Passer"), bot("Passer"), bot("Passer")], RULES, DealSeeds(7))
    b = WebGame([None, bot("Passer"), bot("Passer"), bot("Passer")], RULES, DealSeeds(7))
    assert np.array_equal(a.game.state.wall, b.game.state.wall)
    a.new_deal()
    assert np.array_equal(a.game.state.wall, Game.new(8, RULES).state.wall)


def auc(pos: list[float], neg: list[float]) -> float:
    """The chance that a value of ``pos`` is above one of ``neg`` (ties half): how well a
    threshold on the value tells them apart (0.5: not at all)."""
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))


def answer_times(claim_window: float, deals: int) -> tuple[list[float], list[float]]:
    """The time of each of the human's discards up to its next decision, split by whether
    a bot was asked in the discard's claim window (hidden from the human) or not."""
    game = WebGame([None] + [bot("ClaimThinker?seconds=0.012")] * 3, RULES, DealSeeds(40),
                   claim_window=claim_window)
    phases: list[int] = []
    decide = game.bots.decide

    def spy(g):
        phases.append(int(g.state.phase[0]))
        return decide(g)

    game.bots.decide = spy
    asked, not_asked = [], []
    for _ in range(deals):
        while not game.done:
            action = game.legal()[0]
            phases.clear()
            t = time.perf_counter()
            game.act(game.step, action)
            took = time.perf_counter() - t
            if action.startswith("discard"):
                window = bool(phases) and phases[0] in (CLAIM, ROB)
                (asked if window else not_asked).append(took)
        game.new_deal()
    return asked, not_asked


def test_a_claim_window_takes_the_same_time_whether_or_not_a_bot_was_asked():
    asked, not_asked = answer_times(0.0, 3)  # unpadded: the bots' thinking shows
    assert len(asked) >= 5 and auc(asked, not_asked) > 0.8, auc(asked, not_asked)
    asked, not_asked = answer_times(0.07, 6)
    assert len(asked) >= 10 and len(not_asked) >= 30, (len(asked), len(not_asked))
    # 13 against 65: the AUC of pure chance is 0.5 +- 0.09
    assert auc(asked, not_asked) < 0.75, (auc(asked, not_asked), sorted(asked),
                                          sorted(not_asked)[-5:])
    assert abs(np.median(asked) - np.median(not_asked)) < 0.005


def test_the_claim_window_follows_the_slowest_bot():
    from sichuan_env.play.web.table import MIN_CLAIM_WINDOW, claim_window_for

    quick = [(s, True, 0.001) for s in (1, 2) for _ in range(5)]
    slow = [(3, True, t) for t in (0.05, 0.08, 0.08, 0.09, 2.0)]  # one compiling answer
    assert claim_window_for(quick + slow, 10) == pytest.approx(2 * (0.001 + 0.001 + 0.08))
    assert claim_window_for(quick, 10) == MIN_CLAIM_WINDOW
    assert claim_window_for(slow, 0.1) == 0.1  # never past the time limit
    # a seat asked in fewer than three windows: the median of all its answers
    rare = [(1, True, 0.3), (1, False, 0.01), (1, False, 0.02), (1, False, 0.02)]
    assert claim_window_for(rare, 10) == pytest.approx(2 * 0.02)


# ----------------------------------------------------------------------------- limits
@pytest.fixture(scope="module")
def tight():
    srv = LiveServer(create_app(make_config(["you", "random", "random", "random"],
                                            max_games=3, per_client=2)))
    yield srv
    srv.close()


def test_limits_refuse_new_games_and_drop_nobody(tight):
    clients = [tight.client() for _ in range(4)]
    try:
        first = clients[0].post("/api/new", json={})
        assert first.status_code == 200
        assert clients[1].post("/api/new", json={}).status_code == 200
        third = clients[2].post("/api/new", json={})  # same address: its third game
        assert third.status_code == 429 and "at most 2" in third.json()["error"]
        assert third.headers["retry-after"]
        # the first two games are still there and play on
        for c in clients[:2]:
            assert c.get("/api/state").status_code == 200
        r = first.json()
        ok = clients[0].post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                               "action": r["table"]["legal"][0]})
        assert ok.status_code == 200
        # a new deal in a game one has is not a new game
        assert clients[0].post("/api/new", json={}).status_code == 200
        store = tight.app.state.store
        store.per_client = 10
        assert clients[2].post("/api/new", json={}).status_code == 200
        full = clients[3].post("/api/new", json={})
        assert full.status_code == 503 and "server is full (3 games" in full.json()["error"]
        assert len(store.entries) == 3
        assert all(c.get("/api/state").status_code == 200 for c in clients[:3])
    finally:
        for c in clients:
            c.close()
        tight.app.state.store.entries.clear()
        tight.app.state.store.per_client = 2


def test_idle_games_expire():
    now = [0.0]
    store = GameStore(max_games=2, per_client=2, idle_seconds=60, clock=lambda: now[0])
    closed = []

    class Fake:
        def close(self):
            closed.append(self)

    a = store.add(Fake(), "1.2.3.4")
    now[0] = 30
    b = store.add(Fake(), "1.2.3.4")
    now[0] = 70  # a idle 70 s, b 40 s
    assert store.get(b.game_id) is b
    with pytest.raises(web_table.GameError, match="expired"):
        store.get(a.game_id)
    assert closed == [a.game] and len(store.entries) == 1
    store.add(Fake(), "1.2.3.4")  # room again for this client


def _raw(port: int, head: bytes, chunks: list[bytes] = ()) -> tuple[bytes, int]:
    """Send ``head`` and then ``chunks`` one by one until the server answers; returns
    its answer and how many chunks were sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        sent = 0
        s.settimeout(0.05)
        answer = b""
        for chunk in chunks:
            try:
                answer = s.recv(65536)
                if answer:
                    break
            except TimeoutError:
                pass
            try:
                s.sendall(chunk)
            except OSError:
                break
            sent += 1
        s.settimeout(10)

        def complete() -> bool:
            head, sep, body = answer.partition(b"\r\n\r\n")
            size = [int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
                    if line.startswith(b"content-length:")]
            return bool(sep) and bool(size) and len(body) >= size[0]

        while not complete():
            more = s.recv(65536)
            if not more:
                break
            answer += more
        return answer, sent


def test_body_limit_holds_while_reading(tight):
    port = tight.port
    big = (f"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           f"Content-Length: {300 * 2**20}\r\n\r\n").encode()
    answer, _ = _raw(port, big)  # refused on its declared length, nothing read
    assert answer.startswith(b"HTTP/1.1 413") and b"over 4096 bytes" in answer
    chunked = (b"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
               b"\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"400\r\n" + b" " * 1024 + b"\r\n"
    answer, sent = _raw(port, chunked, [chunk] * 2000)  # 2 MB if it were all read
    assert answer.startswith(b"HTTP/1.1 413") and b"over 4096 bytes" in answer
    assert sent < 200, f"{sent} chunks sent before the answer"


# ----------------------------------------------------------------------------- faults
def test_bot_faults_are_replaced_by_the_fallback(caplog):
    seats = [None, bot("Raiser"), bot("Illegal"), bot("Sleeper?seconds=1.0")]
    game = WebGame(seats, RULES, DealSeeds(3), time_limit=0.3, label="#faults")
    notices = []
    with caplog.at_level("ERROR", logger="sichuan_env.play.web"):
        notices += game.notices
        while not game.done:
            game.act(game.step, game.legal()[0])
            notices += game.state()["notices"]
    text = " ".join(notices)
    assert "seat 1's bot failed (RuntimeError): the rules bot played this move" in text
    assert "seat 2's bot failed (IllegalActionError)" in text
    assert "seat 3's bot took longer than 0.3 s" in text
    assert "1m 1m 1m" not in text  # the bot's own message may tell its hand: logged only
    logged = caplog.text
    assert "game #faults seat 1" in logged and "1m 1m 1m" in logged
    assert "game #faults seat 3" in logged
    from sichuan_env.records import record as records

    records.replay(game.record())


def test_bot_faults_over_http_are_json_and_the_deal_ends(tmp_path):
    seats = [None, bot("Raiser"), BotSpec("rules"), BotSpec("rules")]
    srv = LiveServer(create_app(WebConfig(seats, RULES, None, time_limit=2.0)))
    try:
        with srv.client() as c:
            r = c.post("/api/new", json={}).json()
            seen = list(r["notices"])
            while not r["done"]:
                resp = c.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                                "action": r["table"]["legal"][0]})
                assert resp.status_code == 200 and resp.headers["content-type"].startswith(
                    "application/json"), resp.text
                r = resp.json()
                seen += r["notices"]
            assert any("seat 1's bot failed" in n for n in seen)
            assert c.get("/api/record").status_code == 200
    finally:
        srv.close()


SECURITY = ("content-security-policy", "x-content-type-options", "x-frame-options",
            "referrer-policy")


def test_a_failing_fallback_does_not_stop_the_deal(caplog):
    seats = [None, bot("Raiser?after=1"), BotSpec("rules"), BotSpec("rules")]
    srv = LiveServer(create_app(WebConfig(seats, RULES, None, time_limit=2.0,
                                          fallback=f"{BOTS}:Raiser?after=1")))
    try:
        with srv.client() as c, caplog.at_level("ERROR", logger="sichuan_env.play.web"):
            r = c.post("/api/new", json={}).json()
            seen = list(r["notices"])
            while not r["done"]:
                resp = c.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                                "action": r["table"]["legal"][0]})
                assert resp.status_code == 200, resp.text
                assert all(h in resp.headers for h in SECURITY)
                r = resp.json()
                seen += r["notices"]
            assert any("seat 1's bot failed (RuntimeError), and the Raiser bot failed too "
                       "(RuntimeError): the first legal move was played for it" in n
                       for n in seen), seen
            assert "the fallback" in caplog.text and "failed too" in caplog.text
            assert c.get("/api/record").status_code == 200
    finally:
        srv.close()


def test_a_server_error_is_json_with_the_headers_and_the_deal_can_be_left(monkeypatch):
    from sichuan_env.play.web.bots import GameBots

    srv = LiveServer(create_app(make_config(["you", "random", "random", "random"])))
    try:
        with srv.client() as c:
            r = c.post("/api/new", json={}).json()
            orig = GameBots.decide

            def broken(self, game):
                raise KeyError("an engine fault")

            monkeypatch.setattr(GameBots, "decide", broken)
            resp = c.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                             "action": r["table"]["legal"][0]})
            assert resp.status_code == 500 and "error is logged" in resp.json()["error"]
            assert all(h in resp.headers for h in SECURITY), resp.headers
            assert "frame-ancestors 'none'" in resp.headers["content-security-policy"]
            monkeypatch.setattr(GameBots, "decide", orig)
            # the page's next read says what happened; a move says to start a new deal
            st = c.get("/api/state").json()
            assert any("stopped on an error of the server" in n for n in st["notices"])
            again = c.post("/api/act", json={"deal": st["deal"], "step": st["step"],
                                              "action": "pass"})
            assert again.status_code == 409 and "start a new deal" in again.json()["error"]
            r = c.post("/api/new", json={}).json()  # and a new deal plays on
            assert r["deal"] == 1 and not r["notices"]
            while not r["done"]:
                resp = c.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                                 "action": r["table"]["legal"][0]})
                assert resp.status_code == 200
                r = resp.json()
    finally:
        srv.close()


def test_each_game_has_its_own_bots_reset_at_each_deal():
    seats = [None, bot("Counter"), bot("Counter"), bot("Counter")]
    a = WebGame(seats, RULES, DealSeeds(1))
    b = WebGame(seats, RULES, DealSeeds(1))
    objs = [x for g in (a, b) for x in g.bots.agents if x is not None]
    assert len({id(x) for x in objs}) == 6
    assert all(x.resets == 1 for x in objs)
    a.new_deal()
    a.new_deal()
    assert [x.resets for x in a.bots.agents[1:]] == [3, 3, 3]
    assert [x.resets for x in b.bots.agents[1:]] == [1, 1, 1]


def test_a_slow_game_does_not_hold_up_the_others():
    slow_seats = [None, bot("Sleeper?seconds=1.5"), bot("Sleeper?seconds=1.5"),
                  bot("Sleeper?seconds=1.5")]
    config = make_config(["you", "rules", "rules", "rules"], seed=None, time_limit=30)

    def factory(cfg: WebConfig, number: int) -> WebGame:
        seats = slow_seats if number == 1 else cfg.seats
        return WebGame(seats, cfg.rules, DealSeeds(number * 100 + 1), time_limit=30)

    srv = LiveServer(create_app(config, game_factory=factory))
    try:
        with srv.client() as slow, srv.client() as quick:
            r = slow.post("/api/new", json={}).json()  # seat 0, the human, deals: no bot yet
            q = quick.post("/api/new", json={}).json()
            result = {}

            def slow_move():
                result["r"] = slow.post("/api/act", json={"deal": r["deal"],
                                                          "step": r["step"],
                                                          "action": r["table"]["legal"][0]})
            th = threading.Thread(target=slow_move)
            th.start()
            time.sleep(0.3)
            quick_times = []
            for _ in range(5):
                if q["done"]:
                    break
                t = time.perf_counter()
                q = quick.post("/api/act", json={"deal": q["deal"], "step": q["step"],
                                                 "action": q["table"]["legal"][0]}).json()
                quick_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            state = slow.get("/api/state")  # the slow game's own table: not behind its move
            read = time.perf_counter() - t
            assert th.is_alive(), "the slow move should still be thinking"
            th.join(60)
            assert result["r"].status_code == 200
            assert state.status_code == 200 and json.loads(state.text)["step"] == r["step"]
            assert max(quick_times) < 1.0 and read < 1.0, (quick_times, read)
    finally:
        srv.close()


# ----------------------------------------------------------------------------- the rest
def test_host_names():
    assert host_name("[::1]:8000") == "::1" and host_name("LocalHost:80") == "localhost"
    assert host_name("192.168.1.5") == "192.168.1.5" and host_name("[fe80::1]") == "fe80::1"
    loop = HostCheck(None, ["127.0.0.1", "localhost", "::1"])
    assert loop.allowed("[::1]:8000") and loop.allowed("localhost:1")
    assert not loop.allowed("evil.example") and not loop.allowed("192.168.1.5:80")
    lan = HostCheck(None, ["127.0.0.1", "localhost", "::1", "0.0.0.0", "mybox.lan"],
                    ip_literals=True)
    assert lan.allowed("192.168.1.5:8000") and lan.allowed("[fe80::2]:80")
    assert lan.allowed("mybox.lan:8000") and not lan.allowed("evil.example:8000")


def test_security_headers(tight):
    with tight.client() as c:
        for path in ("/", "/static/play.js", "/api/state"):
            h = c.get(path).headers
            assert h["x-content-type-options"] == "nosniff"
            assert "frame-ancestors 'none'" in h["content-security-policy"]
            assert "script-src 'self'" in h["content-security-policy"]
        assert c.post("/api/new", json={}).status_code == 200
        game = tight.app.state.store.games[c.cookies[COOKIE]]
        while not game.done:
            r = c.get("/api/state").json()
            c.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                     "action": r["table"]["legal"][0]})
        page = c.get("/replay")
        assert page.status_code == 200
        assert "'sha256-" in page.headers["content-security-policy"]
    tight.app.state.store.entries.clear()


def test_a_move_for_the_previous_deal_is_refused(tight):
    with tight.client() as c:
        r = c.post("/api/new", json={}).json()
        old = {"deal": r["deal"], "step": 0, "action": r["table"]["legal"][0]}
        nxt = c.post("/api/new", json={}).json()
        assert nxt["deal"] == r["deal"] + 1 and nxt["step"] == 0
        resp = c.post("/api/act", json=old)
        assert resp.status_code == 409 and "stale deal" in resp.json()["error"]
        assert c.get("/api/state").json() == {**nxt, "frames": []}
    tight.app.state.store.entries.clear()


@pytest.mark.parametrize("spec, name", [
    ("rules", "rules"), ("ppo:/srv/models/secret.pt", "ppo"), ("search?budget=9", "search"),
    ("/home/me/bots/mybot.py:MyBot", "MyBot"), ("C:\\bots\\b.py:B", "B"),
    ("sichuan_agents/x.py:Y?a=1", "Y"), ("random", "random"),
])
def test_display_names_show_no_paths(spec, name):
    assert display_name(spec) == name


@pytest.mark.slow  # starts worker processes (each imports the package)
def test_isolated_bots_think_in_a_worker_process(caplog):
    from sichuan_env.play.web.workers import BotWorkers

    def iso(name: str) -> BotSpec:
        return BotSpec(f"{BOTS}:{name}", RULES.preset, isolated=True)

    workers = BotWorkers(1, grace=2.0)
    try:
        seats = [None, iso("Counter"), iso("Sleeper?seconds=60"), iso("Raiser?after=1")]
        game = WebGame(seats, RULES, DealSeeds(2), time_limit=3, workers=workers,
                       label="#iso")
        assert game.bots.agents == [None] * 4  # their objects live in the worker
        worker = workers.workers[0]
        assert worker.games == 1
        with caplog.at_level("ERROR", logger="sichuan_env.play.web"):
            t = time.perf_counter()
            game.act(game.step, game.legal()[0])  # seat 0 chooses; then seats 1, 2, 3
            took = time.perf_counter() - t
        notices = game.state()["notices"]
        assert any("seat 2's bot took longer than 3 s" in n for n in notices), notices
        assert any("seat 3's bot failed (RuntimeError)" in n for n in notices), notices
        assert not any("seat 1" in n for n in notices), notices
        assert took < 10
        assert "game #iso seat 3" in caplog.text and "1m 1m 1m" in caplog.text
        # the hung decision (2 s past its limit) restarts the worker
        deadline = time.monotonic() + 20
        while worker.restarts < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert worker.restarts == 1
        while not game.done and game.step < 3:  # the deal goes on
            game.act(game.step, game.legal()[0])
        game.close()
        assert worker.games == 0
    finally:
        workers.close()


@pytest.mark.slow  # starts a worker process
def test_a_slow_bot_delays_only_its_own_game():
    """Eleven games share one worker process; one game's bots think 2.5 s per decision.
    The other ten games' moves take as long as without it (before, they waited for the
    slow decisions in turn and their own bots ran out of time)."""
    from sichuan_env.play.web.workers import BotWorkers

    def iso(name: str) -> BotSpec:
        return BotSpec(f"{BOTS}:{name}", RULES.preset, isolated=True)

    workers = BotWorkers(1)
    try:
        slow = WebGame([None] + [iso("Sleeper?seconds=2.5")] * 3, RULES, DealSeeds(5),
                       time_limit=10, workers=workers, label="#slow")
        quick = [WebGame([None] + [iso("Passer")] * 3, RULES, DealSeeds(10 + i),
                         time_limit=10, workers=workers, label=f"#q{i}") for i in range(10)]

        def play(game: WebGame, moves: int) -> list[float]:
            times = []
            for _ in range(moves):
                if game.done:
                    break
                t = time.perf_counter()
                game.act(game.step, game.legal()[0])
                times.append(time.perf_counter() - t)
                assert not game.notices, game.notices  # no seat blamed, no fallback
            return times

        def quick_moves() -> list[float]:
            out: list[list[float]] = [[] for _ in quick]
            threads = [threading.Thread(target=lambda i=i: out[i].extend(play(quick[i], 4)))
                       for i in range(len(quick))]
            for th in threads:
                th.start()
            for th in threads:
                th.join(120)
            return [x for xs in out for x in xs]

        quick_moves()  # the worker builds the quick games' agents
        alone = quick_moves()
        mover = threading.Thread(target=play, args=(slow, 1))
        mover.start()
        time.sleep(0.2)
        beside = quick_moves()
        assert alone and beside
        # before, a quick decision waited for the slow one in progress (up to 2.5 s)
        assert max(beside) < 1.5, (sorted(alone)[-3:], sorted(beside)[-3:])
        assert np.median(beside) < np.median(alone) + 0.2, (np.median(alone),
                                                            np.median(beside))
        assert mover.is_alive(), "the slow game's move should still be thinking"
        mover.join(60)
    finally:
        workers.close()

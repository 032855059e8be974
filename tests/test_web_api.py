"""The web play server through real HTTP (uvicorn in a thread, httpx clients).

* every response of whole deals holds exactly what the human's seat may see: each table
  (the current one and every frame of the bots' moves) equals the one rebuilt from the
  engine's full state by ``web_helpers.expected_table``, every log line is one of the
  public sentences, nothing of the record (seed, hands, wall) is sent before the end;
* refused requests get a 4xx with one message and leave the game as it was;
* two sessions play two games; a finished deal downloads as a record that the records
  checker replays and the viewer opens; 20 games played at once all finish.
"""

from __future__ import annotations

import json
import random
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from sichuan_env.play.web.app import COOKIE
from sichuan_env.play.web.table import WebGame
from sichuan_env.records import record as records

from support.web_helpers import LiveServer, create_app, expected_table, make_config

TOP_KEYS = {"step", "deal", "done", "rules", "table", "log", "frames", "notices",
            "settlement"}
TILE = r"[1-9][mps]"
WHO = r"(you|seat [0-3])"
PUBLIC_LINE = re.compile(
    rf"^(you set {TILE} aside \(forbidden suit\)|you show an indicator for suit [mps] "
    rf"\(forbidden suit\)|you claim a (pung|kong)|you pass|you discard {TILE}( \(the set-aside "
    rf"tile\))?|you declare (a kong of {TILE}|Hu( on {TILE}| \(self-drawn, tile face down\)))"
    rf"|seat [0-3] (chooses a forbidden suit|discards {TILE}( \(the set-aside tile\))?"
    rf"|declares a kong of {TILE}|declares Hu( on {TILE}| \(self-drawn, tile face down\))"
    rf"|claims a (pung|kong) of {TILE}))$")
PAY_LINE = re.compile(rf"^{WHO} pays? ({WHO}|nobody) \d+ \([a-zA-Z -]+\)$")


def public(line: str) -> bool:
    """One of the sentences the human may read: a public move or a payment."""
    return bool(PUBLIC_LINE.match(line) or PAY_LINE.match(line))


def _copy_state(st):
    return type(st)(*(x.copy() if isinstance(x, np.ndarray) else x for x in st))


@pytest.fixture()
def snapshots(monkeypatch):
    """The engine state after every step that made a frame, per game, in order."""
    shots: dict[int, list] = {}
    orig = WebGame._apply

    def spy(self, action):
        frame = orig(self, action)
        if frame is not None:
            shots.setdefault(id(self), []).append(_copy_state(self.game.state))
        return frame

    monkeypatch.setattr(WebGame, "_apply", spy)
    return shots


@pytest.fixture(scope="module")
def server():
    srv = LiveServer(create_app(make_config(["you", "rules", "greedy", "random"], seed=11)))
    yield srv
    srv.close()


def _game(srv: LiveServer, client) -> WebGame:
    return srv.app.state.store.games[client.cookies[COOKIE]]


def check_response(r: dict, game: WebGame, shots: dict[int, list]) -> None:
    """Everything in ``r`` is what the human may see, and right."""
    assert set(r) == TOP_KEYS
    st = game.game.state
    assert r["table"] == expected_table(st, game.human, game.names, game.legal())
    frames = r["frames"]
    mine = shots.get(id(game), [])
    assert len(mine) == len(frames)
    for frame, state in zip(frames, mine, strict=True):
        assert set(frame) == {"moves", "table"}
        assert frame["table"] == expected_table(state, game.human, game.names, [])
        assert frame["moves"] and all(public(m) for m in frame["moves"]), frame
    mine.clear()
    assert all(public(m) for m in r["log"]), r["log"]
    text = json.dumps(r)
    if not r["done"]:
        assert r["settlement"] is None
        for word in ('"seed"', '"wall": [', '"hands"', '"fans"', '"events"', "pass"):
            if word == "pass":
                assert not re.search(r"seat \d pass", text)
            else:
                assert word not in text


def check_settlement(r: dict, game: WebGame) -> None:
    rec = game.game.record()
    s = r["settlement"]
    assert r["done"] and s["scores"] == rec["scores"] and s["end"] == rec["end"]
    assert s["seed"] == str(rec["seed"])  # a string: exact for the page's script
    assert len(s["wins"]) == len(rec["wins"]) and len(s["payments"]) == len(rec["payments"])
    for w, full in zip(s["wins"], rec["wins"], strict=True):
        assert w["seat"] == full["seat"] and w["value"] == full["value"]
        mine = full["seat"] == game.human
        assert w["fans"] == (full["fans"] if mine else None)
        assert w["tile"] == (full["tile"] if mine or full["from"] is not None else None)
    assert all(PAY_LINE.match(p) for p in s["payments"])
    # the log tells each move once, by the right seat
    log = r["log"]
    h = game.human
    events = rec["events"]

    def n_lines(pattern: str) -> int:
        return sum(bool(re.fullmatch(pattern, line)) for line in log)

    def n_events(seat: int, act: str, **kw) -> int:
        return sum(e["seat"] == seat and e["act"] == act
                   and all(e.get(k) == v for k, v in kw.items()) for e in events)

    for s in range(4):
        who = "you discard" if s == h else f"seat {s} discards"
        assert n_lines(rf"{who} {TILE}( \(the set-aside tile\))?") == n_events(s, "discard")
        hu = "you declare Hu" if s == h else f"seat {s} declares Hu"
        assert n_lines(rf"{hu}.*") == n_events(s, "hu")
        if s != h:
            assert n_lines(f"seat {s} chooses a forbidden suit") == 1
            assert n_lines(rf"seat {s} claims a pung of {TILE}") <= n_events(s, "pung")
    assert n_lines("you pass") == n_events(h, "pass")
    assert n_lines("you claim a pung") == n_events(h, "pung")
    assert n_lines(r"you (set|show) .* \(forbidden suit\)") == 1
    assert sum(bool(PAY_LINE.match(line)) for line in log) == len(rec["payments"])
    # Hu lines name public tiles only
    for line in r["log"]:
        m = re.match(rf"seat (\d) declares Hu on ({TILE})", line)
        if m:
            assert any(w["seat"] == int(m[1]) and w["tile"] == m[2] and w["from"] is not None
                       for w in rec["wins"])
        m = re.match(rf"seat (\d) claims a (pung|kong) of ({TILE})", line)
        if m:
            assert game.game.state.meld[0, int(m[1])].any()


def play_deal(client, srv, shots, rng: random.Random, first: dict | None = None) -> dict:
    r = first or client.post("/api/new", json={}).json()
    game = _game(srv, client)
    check_response(r, game, shots)
    moves = 0
    assert r["step"] == 0
    while not r["done"]:
        action = rng.choice(r["table"]["legal"])
        resp = client.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                              "action": action})
        assert resp.status_code == 200, resp.text
        r = resp.json()
        moves += 1
        # the step counts the human's moves only (the others' passes stay unknown)
        assert r["step"] == moves
        check_response(r, game, shots)
        again = client.get("/api/state").json()
        check_response(again, game, shots)
        assert again["frames"] == [] and again["table"] == r["table"]
    check_settlement(r, game)
    return r


def test_whole_deals_show_only_the_seat_view(server, snapshots) -> None:
    rng = random.Random(3)
    passes = 0
    with server.client() as client:
        for _ in range(4):
            play_deal(client, server, snapshots, rng)
            rec = _game(server, client).game.record()
            passes += sum(e["act"] == "pass" and e["seat"] != 0 for e in rec["events"])
    assert passes > 0  # other seats' passes happened and were never sent


@pytest.mark.parametrize("seats", [["rules", "random", "you", "greedy"],
                                   ["greedy", "rules", "rules", "you"]])
def test_other_human_seats(seats, snapshots) -> None:
    srv = LiveServer(create_app(make_config(seats, seed=5)))
    try:
        with srv.client() as client:
            r = client.post("/api/new", json={}).json()
            assert r["table"]["you"] == seats.index("you")
            assert r["log"]  # the bots before the human already moved
            play_deal(client, srv, snapshots, random.Random(1), first=r)
    finally:
        srv.close()


BOT_FILE = '''
import numpy as np
from sichuan_env.seats.agent import BaseAgent

class LastLegal(BaseAgent):
    needs = "nothing"

    def act_batch(self, observations, masks):
        return np.array([np.flatnonzero(m)[-1] for m in masks], np.int64)
'''


@pytest.mark.slow  # loading torch and the shipped model
def test_any_agent_spec(tmp_path: Path, snapshots) -> None:
    pytest.importorskip("torch", reason="the ppo bot needs the train extra")
    bot = tmp_path / "lastbot.py"
    bot.write_text(BOT_FILE)
    seats = ["greedy", f"{bot}:LastLegal", "you", "ppo"]
    srv = LiveServer(create_app(make_config(seats, seed=9)))
    try:
        with srv.client() as client:
            r = client.post("/api/new", json={}).json()
            # bot seats by name, never by a server file path
            assert [s["name"] for s in r["table"]["seats"]] == ["greedy", "LastLegal", "you",
                                                                "ppo"]
            r = play_deal(client, srv, snapshots, random.Random(2), first=r)
            rec = client.get("/api/record").json()
            assert rec["players"] == ["greedy", "LastLegal", "you", "ppo"]
            assert str(tmp_path) not in json.dumps(rec)
    finally:
        srv.close()


def _snapshot(game: WebGame) -> tuple:
    return (game.step, game.deal_number, len(game.game.events), tuple(game.log),
            json.dumps(game.state()))


def test_refused_requests_change_nothing(server) -> None:
    with server.client() as client:
        r = client.post("/api/new", json={}).json()
        game = _game(server, client)
        legal = r["table"]["legal"]
        illegal = next(a for a in ("hu", "pung", "pass", "discard 1m", "kong 9s")
                       if a not in legal)
        step, deal = r["step"], r["deal"]
        cases = [
            ({"content": b"{", "headers": {"content-type": "application/json"}}, 400, "bad JSON"),
            ({"content": b"[1]", "headers": {"content-type": "application/json"}}, 400,
             "JSON object"),
            ({"json": {}}, 400, '"step"'),
            ({"json": {"step": step, "action": legal[0]}}, 400, '"deal"'),
            ({"json": {"deal": deal, "step": step, "action": legal[0], "x": 1}}, 400,
             "unknown fields"),
            ({"json": {"deal": deal, "step": str(step), "action": legal[0]}}, 400,
             "'step' must be"),
            ({"json": {"deal": deal, "step": True, "action": legal[0]}}, 400, "'step' must be"),
            ({"json": {"deal": "0", "step": step, "action": legal[0]}}, 400, "'deal' must be"),
            ({"json": {"deal": deal, "step": step, "action": 4}}, 400, "'action' must be"),
            ({"json": {"deal": deal, "step": step, "action": "discard 10m"}}, 400,
             "malformed action"),
            ({"json": {"deal": deal, "step": step, "action": "fly"}}, 400, "malformed action"),
            ({"json": {"deal": deal, "step": step + 1, "action": legal[0]}}, 409, "stale step"),
            ({"json": {"deal": deal, "step": step - 1, "action": legal[0]}}, 409, "stale step"),
            ({"json": {"deal": deal - 1, "step": step, "action": legal[0]}}, 409, "stale deal"),
            ({"json": {"deal": deal + 1, "step": step, "action": legal[0]}}, 409, "stale deal"),
            ({"json": {"deal": deal, "step": step, "action": illegal}}, 422, "illegal action"),
            ({"content": b"step=0", "headers": {"content-type": "text/plain"}}, 415,
             "send JSON"),
            ({"content": b"{" + b" " * 5000 + b"}",
              "headers": {"content-type": "application/json"}}, 413, "over 4096"),
        ]
        before = _snapshot(game)
        for kwargs, status, words in cases:
            resp = client.post("/api/act", **kwargs)
            assert resp.status_code == status, (kwargs, resp.text)
            body = resp.json()
            assert set(body) == {"error"} and words in body["error"], (kwargs, body)
            assert "\n" not in body["error"]
            assert _snapshot(game) == before
        assert client.post("/api/new", json={"seed": 3}).status_code == 400
        assert _snapshot(game) == before
        # the record and the replay wait for the end of the deal
        for path in ("/api/record", "/replay"):
            resp = client.get(path)
            assert resp.status_code == 409 and "when the deal is over" in resp.json()["error"]
        assert _snapshot(game) == before
        # the game still plays
        ok = client.post("/api/act", json={"deal": deal, "step": step, "action": legal[0]})
        assert ok.status_code == 200 and ok.json()["step"] > step
    # no game: no cookie, or a cookie the server does not know
    with server.client() as stranger:
        for method, path in (("GET", "/api/state"), ("POST", "/api/act"),
                             ("GET", "/api/record"), ("GET", "/replay")):
            resp = stranger.request(method, path, json={"deal": 0, "step": 0, "action": "pass"})
            assert resp.status_code == 404 and "no game" in resp.json()["error"]
        for method, path, status in (("GET", "/api/act", 405), ("GET", "/api/nothing", 404),
                                     ("DELETE", "/api/state", 405)):
            resp = stranger.request(method, path)
            assert resp.status_code == status and path in resp.json()["error"]
        stranger.cookies.set(COOKIE, "not-a-game")
        resp = stranger.post("/api/act", json={"deal": 0, "step": 0, "action": "pass"})
        assert resp.status_code == 404 and "unknown game" in resp.json()["error"]


def test_finished_deal_refuses_moves_and_saves_a_record(server, snapshots,
                                                         tmp_path: Path) -> None:
    with server.client() as client:
        r = play_deal(client, server, snapshots, random.Random(8))
        game = _game(server, client)
        before = _snapshot(game)
        resp = client.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                             "action": "pass"})
        assert resp.status_code == 409 and "deal is over" in resp.json()["error"]
        assert _snapshot(game) == before
        resp = client.get("/api/record")
        assert resp.status_code == 200
        assert "attachment" in resp.headers["content-disposition"]
        path = tmp_path / "deal.jsonl"
        path.write_bytes(resp.content)
        assert records.main(["check", str(path)]) == 0
        rec = records.read_jsonl(path)[0]
        assert rec["scores"] == r["settlement"]["scores"]
        assert rec["players"] == ["you", "rules", "greedy", "random"]
        page = client.get("/replay")
        assert page.status_code == 200 and 'id="frames"' in page.text
        assert f"seed {rec['seed']}" in page.text
        # the next deal: the next seed, the log starts again
        nxt = client.post("/api/new", json={}).json()
        assert nxt["deal"] == r["deal"] + 1 and not nxt["done"]
        assert nxt["step"] == 0 and _game(server, client) is game
        assert client.get("/api/record").status_code == 409


def test_two_sessions_play_two_games(server) -> None:
    with server.client() as a, server.client() as b:
        ra = a.post("/api/new", json={}).json()
        rb = b.post("/api/new", json={}).json()
        assert a.cookies[COOKIE] != b.cookies[COOKIE]
        ga, gb = _game(server, a), _game(server, b)
        assert ga is not gb
        before_b = _snapshot(gb)
        a.post("/api/act", json={"deal": ra["deal"], "step": ra["step"],
                                 "action": ra["table"]["legal"][0]})
        assert _snapshot(gb) == before_b and ga.step > 0
        assert b.get("/api/state").json()["step"] == rb["step"]


def test_page_and_assets(server) -> None:
    with server.client() as client, server.client() as stranger:
        client.post("/api/new", json={})
        page = client.get("/")
        # the HTML carries nothing of the game: the same bytes for a session without one
        assert page.text == stranger.get("/").text
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert 'id="sich-5m"' in page.text and 'id="sich-back"' in page.text  # svg.py tiles
        assert "/static/play.js" in page.text
        for asset in ("/static/play.js", "/static/play.css"):
            assert client.get(asset).status_code == 200


def test_host_header_checked_on_loopback() -> None:
    app = create_app(make_config(["you", "random", "random", "random"]),
                     allowed_hosts=["127.0.0.1", "localhost"])
    srv = LiveServer(app)
    try:
        with srv.client() as client:
            assert client.get("/").status_code == 200
            assert client.get("/", headers={"host": "evil.example"}).status_code == 400
    finally:
        srv.close()


def _play_one(url: str, seed: int) -> tuple[list[int], int, str]:
    import httpx

    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=300) as client:
        r = client.post("/api/new", json={}).json()
        n = 0
        while not r["done"]:
            resp = client.post("/api/act", json={"deal": r["deal"], "step": r["step"],
                                                 "action": rng.choice(r["table"]["legal"])})
            resp.raise_for_status()
            r = resp.json()
            n += 1
        rec = client.get("/api/record")
        rec.raise_for_status()
        return r["settlement"]["scores"], n, rec.text


@pytest.mark.slow
def test_twenty_concurrent_games(tmp_path: Path) -> None:
    # twenty players from one address (the default allows a client address 8 games)
    srv = LiveServer(create_app(make_config(["you", "rules", "rules", "rules"], seed=None,
                                            per_client=20)))
    try:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(20) as pool:
            results = list(pool.map(lambda i: _play_one(srv.url, i), range(20)))
        elapsed = time.perf_counter() - t0
        games = srv.games()
        assert len(games) == 20, f"{len(games)} games kept"
        assert all(g.done for g in games), [g.game.phase for g in games]
        seeds = {json.loads(text)["seed"] for _, _, text in results}
        assert len(seeds) == 20, seeds  # without --seed every deal draws its own
        path = tmp_path / "twenty.jsonl"
        path.write_text("".join(text for _, _, text in results))
        assert records.main(["check", str(path)]) == 0, "a record did not replay"
        for scores, n, _ in results:
            assert sum(scores) <= 0 and n > 0, (scores, n)
        print(f"20 concurrent games: {sum(n for _, n, _ in results)} human moves "
              f"in {elapsed:.1f} s")
    finally:
        srv.close()


def test_web_game_checks_its_seats_and_plays_one_deal_at_a_time() -> None:
    from sichuan_env.core.rules import get_rules
    from sichuan_env.play.web.bots import BotSpec

    bot = BotSpec("random")
    rules = get_rules("mil", deals_per_match=3)
    for seats in ([bot, bot, bot, bot], [None, None, bot, bot], [None, bot, bot]):
        with pytest.raises(ValueError, match="exactly one of them the human's"):
            WebGame(seats, rules)
    game = WebGame([bot, None, bot, bot], rules)
    while not game.done:
        game.act(game.step, game.legal()[0])
    assert game.rules.deals_per_match == 1 and game.record()["end"] in ("three_hu",
                                                                        "wall_exhausted")
    records.replay(game.record())

"""The tournament (sichuan_agents.tournament): seat orders, duplicate walls, ratings, the three
leaderboard files with working replay links, resume, workers, one-line errors."""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path

import pytest

from sichuan_agents.tournament import lineups, main, run_tournament
from sichuan_env.seats.bot_process import live_processes

ROOT = Path(__file__).resolve().parent.parent
OK_BOT = f"exec:{sys.executable} {ROOT / 'tests/support/fault_bot.py'} ok"


def _follows(seq):
    return {(seq[i], seq[(i + 1) % 4]) for i in range(4)}


def test_lineups_are_every_cyclic_order_once():
    four = lineups(4)
    assert len(four) == 6 and len({frozenset(_follows(x)) for x in four}) == 6
    five = lineups(5)
    assert len(five) == 30 and all(len(set(x)) == 4 for x in five)
    # who sits after whom: every ordered pair equally often
    pairs = [p for x in five for p in _follows(x)]
    counts = {p: pairs.count(p) for p in itertools.permutations(range(5), 2)}
    assert len(set(counts.values())) == 1
    # up to rotation: no lineup is a rotation of another
    for small in (lineups(2), lineups(3)):
        canon = [min(x[i:] + x[:i] for i in range(4)) for x in small]
        assert len(set(canon)) == len(canon)
    assert sorted(lineups(2)) == [(0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 0, 1), (0, 1, 1, 1)]
    assert all(set(x) == {0, 1, 2} for x in lineups(3))
    with pytest.raises(ValueError, match="at least two"):
        lineups(1)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    pytest.importorskip("openskill", reason="the tournament extra is not installed")
    out = tmp_path_factory.mktemp("tour")
    specs = ["greedy", "random", OK_BOT]
    board = run_tournament(specs, walls=2, seed=3, out=out, tables=32)
    return specs, out, board


def test_leaderboard_files(small):
    specs, out, board = small
    assert not live_processes()
    rows = board["standings"]
    assert sorted(r["agent"] for r in rows) == sorted(specs)
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert rows == sorted(rows, key=lambda r: -r["ordinal"])
    n_lineups = len(lineups(3))
    assert board["deals"] == n_lineups * 2 * 4
    for r in rows:
        assert r["walls"] == 2 and r["ci_low"] <= r["mean"] <= r["ci_high"]
        assert r["sigma"] < 25 / 3  # the rating learned something
    bot = next(r for r in rows if r["agent"] == OK_BOT)
    assert bot["exec"]["faults"] == 0 and bot["exec"]["decisions"] > 100
    # the greedy bot beats the random one on the same walls
    by = {r["agent"]: r for r in rows}
    assert by["greedy"]["mean"] > by["random"]["mean"]
    data = json.loads((out / "leaderboard.json").read_text())
    assert data["standings"][0]["agent"] == rows[0]["agent"]
    md = (out / "leaderboard.md").read_text()
    assert all(f"`{s}`" in md for s in specs)
    page = (out / "leaderboard.html").read_text()
    links = re.findall(r'href="([^"]+)"', page)
    assert len(links) == 2 * len(specs)
    for link in links:
        assert (out / link).is_file() and "<svg" in (out / link).read_text()[:3_000_000]
    deals = [json.loads(x) for x in (out / "deals.jsonl").read_text().splitlines()]
    for r in rows:  # the best deal's record gives the bot the points the board says
        rec = deals[r["best"]["record"]]
        seats = [s for s, a in enumerate(rec["arena"]["agents"]) if a == r["agent"]]
        assert sum(rec["scores"][s] for s in seats) / len(seats) == r["best"]["points"]
        assert r["best"]["points"] >= r["worst"]["points"]


def test_resume_plays_only_the_missing_lineups(small, capsys):
    specs, out, board = small
    (out / "lineups" / "0001.json").unlink()
    again = run_tournament(specs, walls=2, seed=3, out=out, tables=32, log=sys.stderr)
    assert "1 to play" in capsys.readouterr().err
    def untimed(rows):  # a program's time per decision differs from run to run
        return [{k: v for k, v in r.items() if k != "exec"} for r in rows]

    assert untimed(again["standings"]) == untimed(board["standings"])
    with pytest.raises(ValueError, match="other settings .*walls"):
        run_tournament(specs, walls=3, seed=3, out=out, tables=32)


def test_workers_give_the_same_lineups(small, tmp_path):
    specs, out, board = small
    two = run_tournament(specs, walls=2, seed=3, out=tmp_path, tables=32, workers=2)
    for i in range(len(lineups(3))):
        a = json.loads((out / "lineups" / f"{i:04d}.json").read_text())
        b = json.loads((tmp_path / "lineups" / f"{i:04d}.json").read_text())
        if "random" not in a["lineup"]:
            assert a["points"] == b["points"]
    assert [r["agent"] for r in two["standings"]]  # complete
    assert not live_processes()


def test_cli_errors_are_one_line(capsys, tmp_path):
    pytest.importorskip("openskill", reason="the tournament extra is not installed")
    code = main(["--agents", "rules", "--walls", "1", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "at least two" in err[0]
    code = main(["--agents", "rules,exec:./nope", "--walls", "1", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot start './nope'" in err[0]


def test_missing_openskill_is_said_before_any_lineup(monkeypatch, capsys, tmp_path):
    import importlib.util

    import sichuan_agents.tournament as tour

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "openskill" else real(name, *a))
    played = []
    monkeypatch.setattr(tour, "play_lineup", lambda *a, **k: played.append(a))
    code = main(["--agents", "greedy,random", "--walls", "1", "--out", str(tmp_path / "t")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "openskill" in err[0] and ".[tournament]" in err[0]
    assert not played and not (tmp_path / "t").exists()


def test_a_lineup_with_one_bot_on_two_seats_isolates_its_processes(tmp_path):
    """Lineups of two bots put one bot on several seats: its processes never see two
    seats of one deal nor, by default, two deals of one wall, across lineups too."""
    pytest.importorskip("openskill", reason="the tournament extra is not installed")
    log = tmp_path / "log.jsonl"
    bot = f"exec:{sys.executable} {ROOT / 'tests/support/record_bot.py'} {log}?tables=64"
    run_tournament([bot, "greedy"], walls=1, seed=2, out=tmp_path / "t", tables=8)
    first: dict[int, list] = {}
    for e in (json.loads(x) for x in log.read_text().splitlines()):
        if e["type"] == "request" and e["hand"] is not None:
            first.setdefault(e["pid"], []).append((e["seat"], tuple(e["hand"])))
    # one wall: a (seat, starting hand) pair is one seat of the wall; a process that saw
    # the wall twice would hold two entries
    assert first and all(len(v) == 1 for v in first.values())
    assert not live_processes()


def test_a_dropped_bot_is_marked_on_the_leaderboard(tmp_path, capsys):
    pytest.importorskip("openskill", reason="the tournament extra is not installed")
    bad = f"exec:{sys.executable} {ROOT / 'tests/support/fault_bot.py'} every_not_json 1?faults=0"
    board = run_tournament([bad, "greedy"], walls=1, seed=2, out=tmp_path, tables=8)
    row = next(r for r in board["standings"] if r["agent"] == bad)
    assert row["exec"]["dropped"]
    line = next(x for x in (tmp_path / "leaderboard.md").read_text().splitlines()
                if f"`{bad}`" in x)
    assert "dropped" in line
    assert "dropped" in (tmp_path / "leaderboard.html").read_text()
    assert not live_processes()

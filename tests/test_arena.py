"""The arena: duplicate seating, confidence intervals, results JSON, records."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sichuan_agents.arena import (
    STAT_FIELDS,
    Z95,
    ArenaResult,
    main,
    mean_ci,
    prepare_output,
    run_arena,
    wall_seed,
)
from sichuan_env.core import engine
from sichuan_env.core.rules import get_rules


def test_mean_ci_by_hand():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    m, half, sd = mean_ci(x)
    mean = sum(x) / 4
    s = math.sqrt(sum((v - mean) ** 2 for v in x) / 3)
    assert m == mean == 3.5
    assert math.isclose(sd, s)
    assert math.isclose(half, 1.959963984540054 * s / 2.0)
    assert math.isclose(Z95, 1.959963984540054)


def _fake_result(points, agent, unit):
    D = points.shape[0]
    z = np.zeros((D, 4))
    return ArenaResult(
        names=["a", "b"], seats=["a", "b", "b", "b"], duplicate=True, seed=0,
        rules=get_rules("mil"), tables=1, agent=agent, unit=unit, rotation=np.zeros(D, int),
        seeds=np.zeros(D, int), points=points, hu=z, self_drawn=z, deal_ins=z,
        win_value=z, pig=z, kong=z, end_reason=np.zeros(D, np.int8))


def test_ci_over_walls_not_deals():
    # two walls, each played twice; agent a's per-wall means are 2 and 4
    points = np.array([[1, 0, 0, -1], [3, 0, 0, -3], [4, -4, 0, 0], [4, 0, -4, 0]], float)
    agent = np.array([[0, 1, 1, 1]] * 4)
    unit = np.array([0, 0, 1, 1])
    res = _fake_result(points, agent, unit)
    s = res.stats["a"]
    assert s["units"] == 2 and s["seat_deals"] == 4
    assert s["mean"] == 3.0
    sd = math.sqrt(((2 - 3) ** 2 + (4 - 3) ** 2) / 1)
    assert math.isclose(s["ci_half_width"], Z95 * sd / math.sqrt(2))
    # b: per wall mean of its 6 seatings: (0+0-1+0+0-3)/6, (-4+0+0+0-4+0)/6
    b = np.array([-4 / 6, -8 / 6])
    p = res.pairwise("a", "b")
    d = np.array([2.0, 4.0]) - b
    assert math.isclose(p["mean"], d.mean())
    assert math.isclose(p["ci_half_width"], Z95 * d.std(ddof=1) / math.sqrt(2))


def test_duplicate_replays_walls_with_rotated_seats():
    res = run_arena(["greedy", "random", "random", "random"], deals=24, seed=3, tables=7)
    assert res.deals == 24
    assert list(res.unit) == [w for w in range(6) for _ in range(4)]
    g = res.names.index("greedy")
    for d in range(24):
        assert res.seeds[d] == wall_seed(3, d // 4)
        # greedy sits at seat r on rotation r: every seat once per wall
        assert res.agent[d, d % 4] == g
        assert (res.agent[d] == g).sum() == 1
    # same seed -> same wall: the dealt hands match for the four deals of a wall
    st = engine.reset(res.seeds[:8], "mil")
    assert (st.hand[0] == st.hand[3]).all() and (st.wall[0] == st.wall[3]).all()
    assert not (st.hand[0] == st.hand[4]).all()
    # greedy crushes random; a random agent alone is no better than another
    assert res.stats["greedy"]["mean"] > res.stats["random"]["mean"]


def test_results_deterministic_and_table_count_independent():
    a = run_arena(["greedy", "greedy", "rules", "greedy"], deals=16, seed=5, tables=16)
    b = run_arena(["greedy", "greedy", "rules", "greedy"], deals=16, seed=5, tables=3)
    assert np.array_equal(a.points, b.points)


def test_a_run_in_chunks_of_walls_plays_the_walls_of_one_run():
    """first_wall: two runs of three walls each replay walls 0-2 and 3-5 of one run of six
    walls, deal for deal; the result says where its walls start."""
    seats = ["greedy", "rules", "rules", "rules"]
    whole = run_arena(seats, deals=24, seed=9)
    parts = [run_arena(seats, deals=12, seed=9, first_wall=w) for w in (0, 3)]
    assert np.array_equal(np.concatenate([p.seeds for p in parts]), whole.seeds)
    assert np.array_equal(np.concatenate([p.points for p in parts]), whole.points)
    assert list(parts[1].unit[:4]) == [0] * 4 and parts[1].seeds[0] == wall_seed(9, 3)
    assert parts[1].to_dict()["first_wall"] == 3 and "first_wall" not in whole.to_dict()
    for bad in (-1, 1.5):
        with pytest.raises(ValueError, match="first_wall must be an int >= 0"):
            run_arena(seats, deals=4, seed=9, first_wall=bad)
    with pytest.raises(ValueError, match="first_wall needs duplicate mode"):
        run_arena(seats, deals=4, seed=9, duplicate=False, first_wall=2)


def test_cli_json_has_every_field_and_records_replay(tmp_path):
    out = tmp_path / "r.json"
    rec = tmp_path / "r.jsonl"
    rc = main(["--seats", "rules,greedy,random,random", "--deals", "40", "--seed", "2",
               "--out", str(out), "--records", str(rec), "--record-deals", "6",
               "--tables", "16", "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    for key in ("command", "seats", "agents", "pairwise", "deals", "units", "duplicate",
                "seed", "rules", "tables", "seconds", "deals_per_second", "ci"):
        assert key in data
    assert set(data["agents"]) == {"rules", "greedy", "random"}
    for stats in data["agents"].values():
        for f in STAT_FIELDS:
            assert f in stats
    assert len(data["pairwise"]) == 3
    lines = rec.read_text().splitlines()
    assert len(lines) == 6
    r0 = json.loads(lines[0])
    assert r0["format"] == "sichuan-record/1" and r0["seed"] == wall_seed(2, 0)
    assert r0["arena"]["agents"][0] == "rules"


def _features(recs: list[dict]) -> dict[str, int]:
    """Counts of the menus worth checking: several Hu on one discard, robbed kongs,
    shoot-after-kong wins."""
    several = robbed = shoot = 0
    for r in recs:
        ev = r["events"]
        several += sum(1 for i in range(1, len(ev)) if ev[i]["act"] == ev[i - 1]["act"] == "hu"
                       and "pass" in ev[i]["legal"] and "pass" in ev[i - 1]["legal"])
        robbed += sum("Robbing the Kong" in w["fans"] for w in r["wins"])
        shoot += sum("Shoot after Kong" in w["fans"] for w in r["wins"])
    return {"several_hu": several, "robbed": robbed, "shoot_after_kong": shoot}


def test_cli_records_with_legal_options_replay(tmp_path):
    """``--records F --legal`` writes every event's legal options; ``records check``
    replays them (menus included), and a changed menu is found."""
    args = ["--seats", "rules,greedy,rules,greedy", "--deals", "200", "--seed", "3",
            "--tables", "64", "--record-deals", "200", "--no-progress"]
    with_legal, without = tmp_path / "legal.jsonl", tmp_path / "plain.jsonl"
    assert main([*args, "--records", str(with_legal), "--legal"]) == 0
    assert main([*args, "--records", str(without)]) == 0
    recs = [json.loads(x) for x in with_legal.read_text().splitlines()]
    plain = [json.loads(x) for x in without.read_text().splitlines()]
    assert len(recs) == 200
    assert all(isinstance(e["legal"], list) and e["legal"] for r in recs for e in r["events"])
    assert not any("legal" in e for r in plain for e in r["events"])
    for r, q in zip(recs, plain, strict=True):  # the same deals, menus aside
        assert [{k: v for k, v in e.items() if k != "legal"} for e in r["events"]] == q["events"]
        assert {k: v for k, v in r.items() if k != "events"} == {
            k: v for k, v in q.items() if k != "events"}
    assert all(n >= 1 for n in _features(recs).values()), _features(recs)
    check = [sys.executable, "-m", "sichuan_env.records.record", "check"]
    res = subprocess.run([*check, str(with_legal)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert (res.returncode, res.stdout) == (0, "200 records OK\n"), res.stdout + res.stderr
    bad = tmp_path / "bad.jsonl"
    r = next(r for r in recs if _features([r])["several_hu"])
    i = next(i for i in range(1, len(r["events"])) if r["events"][i]["act"] == "hu"
             and "pass" in r["events"][i]["legal"] and r["events"][i - 1]["act"] == "hu")
    r["events"][i]["legal"].remove("hu")
    bad.write_text(json.dumps(r) + "\n")
    res = subprocess.run([*check, str(bad)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert res.returncode == 1 and f"event {i}" in res.stdout and "'legal'" in res.stdout


def test_run_arena_legal_records(tmp_path):
    path = tmp_path / "r.jsonl"
    run_arena(["rules", "random", "greedy", "random"], deals=8, seed=4, tables=8,
              records=path, record_deals=8, legal=True)
    from sichuan_env.records.record import read_jsonl, replay

    recs = read_jsonl(path)
    assert len(recs) == 8
    for rec in recs:
        mine = replay(rec)  # raises on any menu that differs from the engine's
        assert [e["legal"] for e in mine["events"]] == [e["legal"] for e in rec["events"]]


def test_cli_legal_needs_records(capsys):
    with pytest.raises(SystemExit) as err:
        main(["--seats", "random,random,random,random", "--deals", "4", "--legal"])
    assert err.value.code == 2
    assert "--records" in capsys.readouterr().err.splitlines()[-1]


def test_non_duplicate_mode():
    res = run_arena(["greedy", "random", "random", "random"], deals=10, duplicate=False,
                    seed=1, tables=4)
    assert res.deals == 10 and list(res.unit) == list(range(10))
    assert (res.agent[:, 0] == res.names.index("greedy")).all()


# ----------------------------------------------------------------------------- specs, paths

ROOT = Path(__file__).resolve().parent.parent


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "sichuan_agents.arena", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def test_cli_bot_from_a_file(tmp_path):
    out = tmp_path / "new" / "folder" / "r.json"
    res = _cli("--seats", "tests/data/mybot.py:MyBot,random,random,random", "--deals", "200",
               "--tables", "64", "--no-progress", "--out", str(out))
    assert res.returncode == 0, res.stderr
    data = json.loads(out.read_text())
    assert data["deals"] == 200
    assert set(data["agents"]) == {"tests/data/mybot.py:MyBot", "random"}
    assert data["agents"]["tests/data/mybot.py:MyBot"]["seat_deals"] == 200


@pytest.mark.parametrize("seats, words", [
    ("tests/data/mybot.py:Nope,random,random,random", "has no attribute 'Nope'"),
    ("tests/data/mybot.py:Illegal,random,random,random", "failed validation"),
    ("nobot,random,random,random", "unknown agent 'nobot'; known agents:"),
    ("no_pkg.mod:Bot,random,random,random", "no module named 'no_pkg'"),
])
def test_cli_broken_spec_is_one_line_and_exit_2(seats, words):
    res = _cli("--seats", seats, "--deals", "40", "--no-progress")
    assert res.returncode == 2
    assert res.stderr.startswith("error: ") and words in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert res.stdout == ""


def test_output_paths_checked_before_any_deal(tmp_path, monkeypatch, capsys):
    import sichuan_agents.arena as arena

    def no_run(*a, **k):
        raise AssertionError("the arena ran although the output path is unusable")

    monkeypatch.setattr(arena, "run_arena", no_run)
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for flag in ("--out", "--records"):
        rc = main(["--seats", "random,random,random,random", "--deals", "40", "--no-progress",
                   flag, str(blocker / "sub" / "r.json")])
        assert rc == 2
        assert "cannot create the folder" in capsys.readouterr().err
    rc = main(["--seats", "random,random,random,random", "--deals", "40", "--no-progress",
               "--out", str(tmp_path)])
    assert rc == 2 and "is a folder" in capsys.readouterr().err
    assert prepare_output(tmp_path / "x" / "y" / "r.json") == tmp_path / "x" / "y" / "r.json"
    assert (tmp_path / "x" / "y").is_dir()


def test_agent_objects_and_specs_mix():
    from sichuan_env.seats.agent import make_agent

    bot = make_agent(f"{ROOT / 'tests/data/mybot.py'}:MyBot?prefer=low")
    res = run_arena([bot, "random", "random", "random"], deals=16, seed=2, tables=8)
    assert res.deals == 16 and len(res.names) == 2


def test_statistics_equal_the_records_of_the_same_deals():
    """Per deal and seat, the arena's Hu, self-drawn, deal-in, win-value and flower-pig
    figures (read from the engine's StepInfo) equal those of the deals' game records."""
    from sichuan_agents.arena import _make_agents, _play
    from sichuan_env.records.game import Game

    rules = get_rules("mahjongsoft")
    D = 40
    seeds = np.arange(D) + 900
    names, objs, seat_agent = _make_agents(["greedy", "rules", "random", "random"], 3)
    deal_agent = np.tile(seat_agent, (D, 1))
    out, end_reason, logs = _play(objs, names, seeds, deal_agent, rules, 7, D, None)
    want = {k: np.zeros((D, 4)) for k in ("hu", "self_drawn", "deal_ins", "win_value")}
    pigs_paid = np.zeros((D, 4), bool)
    for d in range(D):
        g = Game.new(int(seeds[d]), rules)
        for a in logs[d]:
            g.play(int(a))
        rec = g.record()
        assert rec["scores"] == out["points"][d].tolist()
        by_window: dict[int, int] = {}
        for w in rec["wins"]:
            want["hu"][d, w["seat"]] += 1
            want["win_value"][d, w["seat"]] += w["value"]
            if w["from"] is None:
                want["self_drawn"][d, w["seat"]] += 1
            else:  # key: the event that opened the window (the payer's discard or kong)
                opened = max(i for i in range(w["event"])
                             if rec["events"][i]["seat"] == w["from"])
                by_window[opened] = w["from"]
        for payer in by_window.values():  # one deal-in per claim window won
            want["deal_ins"][d, payer] += 1
        for p in rec["payments"]:
            if p["reason"] == "flower_pig":
                pigs_paid[d, p["from"]] = True
    for k, v in want.items():
        assert np.array_equal(out[k], v), k
    assert want["self_drawn"].sum() > 0 and want["deal_ins"].sum() > 0
    # every penalised flower pig is counted (a pig that never discarded pays nothing)
    assert (out["pig"][pigs_paid] == 1).all()


@pytest.mark.slow  # a Ray instance starts (half a minute or more on a loaded machine)
def test_walls_on_ray_give_a_local_runs_results():
    """``address`` plays the slices of walls as Ray tasks (here a local Ray instance): the
    results are those of a local run with as many workers, random agents' draws
    included, and of one worker for the deterministic bots."""
    seats = ["greedy", "random", "greedy", "random"]
    local = run_arena(seats, 24, seed=3, tables=4, workers=2)
    ray = run_arena(seats, 24, seed=3, tables=4, workers=2, address="local")
    assert ray.workers == local.workers == 2
    for field in ("points", "hu", "self_drawn", "deal_ins", "win_value", "pig", "kong",
                  "end_reason", "seeds"):
        np.testing.assert_array_equal(getattr(local, field), getattr(ray, field))
    bots = ["greedy", "rules", "greedy", "rules"]
    one = run_arena(bots, 8, seed=4, tables=4)
    spread = run_arena(bots, 8, seed=4, tables=4, workers=2, address="local")
    np.testing.assert_array_equal(one.points, spread.points)
    from sichuan_agents.bots.greedy import GreedyAgent

    with pytest.raises(ValueError, match="spec strings"):
        run_arena([GreedyAgent()] * 4, 8, address="local")


def test_arena_address_that_answers_nothing_is_one_line(capsys):
    from sichuan_agents.arena import main

    with pytest.raises(SystemExit) as e:
        main(["--seats", "greedy,greedy,greedy,greedy", "--deals", "4",
              "--address", "127.0.0.1:1"])
    assert e.value.code == 2
    assert "no Ray cluster answers" in capsys.readouterr().err

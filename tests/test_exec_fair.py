"""A fair table for exec: bots: no process is asked about two seats of one deal, with
--isolate-walls none sees two rotations of one wall; the run tells bots when a table ends
(`end`), names a bot by ?name=, says when a dropped bot's points are not its own; every
fault keeps the bot's last stderr lines; timeouts count over the limit; every process
gets its own match id; --claim-window paces the turns."""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from sichuan_agents.arena import main as arena_main
from sichuan_agents.arena import run_arena
from sichuan_env.core import engine
from sichuan_env.core.seeding import arena_wall_seed
from sichuan_env.core.state import PHASE_NAMES
from sichuan_env.seats.agent import make_agent
from sichuan_env.seats.bot_process import live_processes
from sichuan_env.seats.protocol import view_messages
from sichuan_env.seats.view import seat_view

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
TURN = PHASE_NAMES.index("turn")
RECORD_BOT = ROOT / "tests" / "support" / "record_bot.py"
FAULT_BOT = ROOT / "tests" / "support" / "fault_bot.py"


@pytest.fixture(autouse=True)
def _no_process_left():
    yield
    assert not live_processes(), "a bot process was left running"


def _log(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _hands(seeds: np.ndarray) -> dict[tuple[int, tuple[str, ...]], int]:
    """(seat, starting hand) -> wall seed, for the walls ``seeds``."""
    walls = np.unique(seeds)
    st = engine.reset(walls, "mil")
    out = {}
    for t, w in enumerate(walls.tolist()):
        for s in range(4):
            hand = view_messages(seat_view(st, s, np.array([t])))[0]["hand"]
            out[(s, tuple(hand))] = w
    return out


def _seen(log: list[dict], seeds: np.ndarray) -> dict[int, list[tuple[int, int]]]:
    """pid -> the (wall seed, seat) of every table it was asked about."""
    hands = _hands(seeds)
    seen = defaultdict(list)
    for e in log:
        if e["type"] == "request" and e["hand"] is not None:
            seen[e["pid"]].append((hands[(e["seat"], tuple(e["hand"]))], e["seat"]))
    return seen


def test_no_process_is_asked_about_two_seats_of_one_deal(tmp_path):
    log = tmp_path / "log.jsonl"
    bot = f"exec:{PY} {RECORD_BOT} {log}?tables=64"
    res = run_arena([bot, bot, "rules", bot], deals=12, duplicate=False, seed=3, tables=12)
    entries = _log(log)
    seen = _seen(entries, res.seeds)  # every deal has its own wall here
    pairs = [p for v in seen.values() for p in v]
    assert sorted(pairs) == sorted((int(res.seeds[d]), s) for d in range(12)
                                   for s in (0, 1, 3))  # every (deal, seat) asked once
    for pid, got in seen.items():
        deals = [w for w, _ in got]
        assert len(deals) == len(set(deals)), f"process {pid} saw two seats of one deal"
    assert len(seen) == 3  # one process per seat of a deal, not more
    assert res.bots[bot]["processes"] == 3
    # every table's end is said, to the process that played it
    tables = {(e["pid"], e["table"]) for e in entries if e["type"] == "request"}
    ends = [(e["pid"], e["table"]) for e in entries if e["type"] == "end"]
    assert sorted(ends) == sorted(tables)


def test_one_seat_per_deal_is_one_process(tmp_path):
    log = tmp_path / "log.jsonl"
    bot = f"exec:{PY} {RECORD_BOT} {log}?tables=64"
    res = run_arena([bot, "rules", "rules", "rules"], deals=8, seed=3, tables=8)
    assert len({e["pid"] for e in _log(log)}) == 1 and res.bots[bot]["processes"] == 1


@pytest.mark.parametrize("isolate", [False, True])
def test_isolate_walls_keeps_each_process_to_one_deal_of_a_wall(tmp_path, isolate):
    log = tmp_path / "log.jsonl"
    bot = f"exec:{PY} {RECORD_BOT} {log}?tables=64"
    res = run_arena([bot, "rules", bot, "rules"], deals=16, seed=3, tables=16,
                    isolate_walls=isolate)
    seen = _seen(_log(log), res.seeds)
    assert sum(len(v) for v in seen.values()) == 32  # 16 deals, two seats each
    twice = [pid for pid, got in seen.items() if len({w for w, _ in got}) < len(got)]
    if isolate:
        assert not twice, "a process saw two deals of one wall"
    else:
        assert twice  # without the option a process plays several rotations of a wall


def test_the_arena_cli_isolates_walls(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    bot = f"exec:{PY} {RECORD_BOT} {log}?tables=64"
    out = tmp_path / "r.json"
    code = arena_main(["--seats", f"{bot},rules,rules,rules", "--deals", "8", "--seed", "3",
                       "--isolate-walls", "--no-progress", "--out", str(out)])
    assert code == 0
    seeds = np.repeat([arena_wall_seed(3, w) for w in range(2)], 4)
    seen = _seen(_log(log), seeds)
    assert len(seen) == 4 and all(len({w for w, _ in v}) == len(v) for v in seen.values())


def test_name_option_names_the_agent_in_results(tmp_path, capsys):
    spec = f"exec:{PY} {FAULT_BOT} ok?name=mine&tables=8"
    res = run_arena([spec, "rules", "rules", "rules"], deals=4, seed=1, tables=4)
    assert "mine" in res.names and "mine" in res.stats and "mine" in res.bots
    assert spec not in res.table() and "mine" in res.table()
    with pytest.raises(ValueError, match="two agents go by the name 'mine'"):
        run_arena([spec, f"exec:{PY} {FAULT_BOT} ok?name=mine", "rules", "rules"], deals=4)


def test_a_dropped_bot_is_not_credited_with_points(capsys):
    spec = f"exec:{PY} {FAULT_BOT} every_not_json 1?faults=0&tables=8"
    res = run_arena([spec, "rules", "rules", "rules"], deals=8, seed=1, tables=8)
    assert res.bots[spec]["dropped"]
    table = res.table()
    line = next(x for x in table.splitlines() if x.startswith(spec))
    assert "dropped: not measured" in line and "+0.000" not in line
    assert "not measured" in next(x for x in table.splitlines() if " - " in x)
    d = res.to_dict()
    assert d["agents"][spec]["mean"] is None and d["agents"][spec]["dropped"]
    assert d["agents"]["rules"]["mean"] is not None
    assert all(p["mean"] is None for p in d["pairwise"])


def test_timeouts_count_over_the_limit():
    spec = f"exec:{PY} {FAULT_BOT} timeout 5?timeout=0.5&first_timeout=20"
    res = run_arena([spec, "rules", "rules", "rules"], deals=4, seed=1, tables=4)
    rep = res.bots[spec]
    assert [f["kind"] for f in rep["faults"]] == ["timeout"]
    assert rep["timing"]["over_limit"] >= 1


def test_every_process_gets_its_own_match_id(tmp_path):
    log = tmp_path / "log.jsonl"
    crash = make_agent(f"exec:{PY} {FAULT_BOT} every_crash 40?tables=4")
    rec = make_agent(f"exec:{PY} {RECORD_BOT} {log}")
    rec2 = make_agent(f"exec:{PY} {RECORD_BOT} {log}")
    try:
        run_arena([crash, "rules", "rules", "rules"], deals=4, seed=1, tables=4)
        assert crash.restarts >= 1
        ids = crash.matches + rec.matches + rec2.matches
        assert len(ids) == len(set(ids)) and len(ids) >= 4
    finally:
        for a in (crash, rec, rec2):
            a.close()
    hellos = [e["match"] for e in _log(log) if e["type"] == "hello"]
    assert len(hellos) == 2 and len(set(hellos)) == 2


def test_claim_window_paces_the_turns():
    window = 0.03
    t0 = time.monotonic()
    res = run_arena(["rules"] * 4, deals=1, seed=2, tables=1, claim_window=window,
                    keep_logs=True)
    took = time.monotonic() - t0
    st = engine.reset(res.seeds[:1], res.rules)
    turns = 0
    for a in res.logs[0]:
        turns += int(st.phase[0] == TURN)
        st, _, _ = engine.step(st, np.array([a]))
    assert turns > 20 and took >= window * (turns - 1)
    with pytest.raises(ValueError, match="claim_window"):
        run_arena(["rules"] * 4, deals=4, claim_window=-1)


def test_claim_window_out_of_range_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        arena_main(["--seats", "rules,rules,rules,rules", "--deals", "4",
                    "--claim-window", "-1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and "--claim-window must be 0..60" in err[-1]

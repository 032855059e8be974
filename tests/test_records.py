"""Game records: round trip through replay, tampering detection, the CLIs, self-play."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.records.game import Game
from sichuan_env.records.record import (
    PAYMENT_REASONS,
    RecordError,
    RecordMismatch,
    event_action,
    read_jsonl,
    replay,
    write_jsonl,
)
from sichuan_env.records.selfplay import deal_seed, selfplay

PRESETS = ["mil", "mahjongsoft"]


@pytest.fixture(scope="module")
def records() -> dict[tuple[str, bool], list[dict]]:
    return {
        (preset, legal): list(selfplay(60, seed=3, rules=preset, tables=16, legal=legal))
        for preset in PRESETS
        for legal in (False, True)
    }


def _random_game(seed: int, rules: Rules | str, rng: np.random.Generator, *,
                 greedy: bool = False) -> Game:
    """Random legal play; ``greedy`` always takes Hu, then kong, then pung when offered."""
    g = Game.new(seed, rules)
    while not g.done:
        legal = g.legal()
        if greedy:
            for a in ("hu", "kong", "pung"):
                if a in legal:
                    legal = [a]
                    break
            else:
                kongs = [x for x in legal if x.startswith("kong")]
                legal = kongs or legal
        g.play(legal[int(rng.integers(len(legal)))])
    return g


@pytest.fixture(scope="module")
def win_records() -> list[dict]:
    rng = np.random.default_rng(7)
    out = []
    for seed in range(40):
        preset = PRESETS[seed % 2]
        out.append(_random_game(seed, preset, rng, greedy=True).record(legal=seed % 4 < 2))
    assert sum(1 for r in out if r["wins"]) >= 5
    return out


def test_greedy_game_records_replay(win_records) -> None:
    for rec in win_records:
        replay(rec)


# ----------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("legal", [False, True])
def test_selfplay_records_replay(records, preset: str, legal: bool) -> None:
    recs = records[(preset, legal)]
    assert len(recs) == 60
    for rec in recs:
        assert rec["rules"]["preset"] == preset
        assert all(("legal" in e) == legal for e in rec["events"])
        replay(rec)


@pytest.mark.parametrize("preset", PRESETS)
def test_game_records_replay_and_match_selfplay(records, preset: str) -> None:
    """Records from Game (the lead's builder) replay, and self-play records equal the
    Game records of the same moves."""
    rng = np.random.default_rng(1)
    for seed in range(25):
        g = _random_game(seed, preset, rng)
        replay(g.record(legal=True))
        replay(g.record(legal=False))
    for rec in records[(preset, True)][:30]:
        g = Game.new(rec["seed"], preset)
        for e in rec["events"]:
            if not e.get("auto"):
                g.play(event_action(e))
        assert g.record(legal=True) == rec


def test_multi_deal_match_records_replay() -> None:
    rng = np.random.default_rng(2)
    rules = get_rules("mahjongsoft").replace(deals_per_match=3)
    for seed in (1, 2, 3):
        g = _random_game(seed, rules, rng)
        recs = g.finished_records + [g.record(legal=True)]
        assert len(recs) == 3
        for i, rec in enumerate(recs):
            assert rec["deal_index"] == i
            replay(rec)
        assert recs[1]["dealer"] == recs[0]["next_dealer"]
        assert recs[2]["dealer"] == recs[1]["next_dealer"]


# ----------------------------------------------------------------------------- tampering


def _pick(recs: list[dict], cond) -> dict:
    for rec in recs:
        if cond(rec):
            return copy.deepcopy(rec)
    raise AssertionError("no record fits")  # pragma: no cover


def _mismatch(rec: dict) -> RecordMismatch:
    with pytest.raises(RecordMismatch) as err:
        replay(rec)
    return err.value


def test_changed_payment_is_found(records) -> None:
    rec = _pick(records[("mil", False)], lambda r: len(r["payments"]) >= 2)
    j = len(rec["payments"]) // 2
    rec["payments"][j]["points"] += 1
    err = _mismatch(rec)
    assert err.field == f"payments[{j}].points"
    assert err.event == rec["payments"][j]["event"]
    assert f"event {err.event}" in str(err) and "points" in str(err)
    rec = _pick(records[("mil", False)], lambda r: len(r["payments"]) >= 1)
    rec["payments"][0]["to"], rec["payments"][0]["from"] = (
        rec["payments"][0]["from"], rec["payments"][0]["to"] or 0)
    assert _mismatch(rec).field.startswith("payments[0]")
    rec = _pick(records[("mil", False)], lambda r: len(r["payments"]) >= 1)
    rec["payments"].pop()
    assert "payments" in _mismatch(rec).field
    rec = _pick(records[("mil", False)], lambda r: True)
    rec["payments"].append({"event": 0, "from": 0, "to": 1, "points": 1, "reason": "hu"})
    assert "payments" in _mismatch(rec).field


def test_changed_win_end_scores_dealer_are_found(win_records) -> None:
    recs = win_records
    rec = _pick(recs, lambda r: len(r["wins"]) >= 1)
    rec["wins"][0]["fans"]["Full Flush"] = 2
    rec["wins"][0]["fans"]["Kong"] = 3
    err = _mismatch(rec)
    assert err.field == "wins[0].fans" and err.seat == rec["wins"][0]["seat"]
    rec = _pick(recs, lambda r: len(r["wins"]) >= 1)
    rec["wins"][0]["value"] *= 2
    assert _mismatch(rec).field == "wins[0].value"
    for field, change in (("scores", lambda r: r["scores"][::-1] if r["scores"] != r["scores"][
            ::-1] else [s + 1 for s in r["scores"]]),
            ("next_dealer", lambda r: (r["next_dealer"] + 1) % 4),
            ("end", lambda r: "three_hu" if r["end"] == "wall_exhausted" else "wall_exhausted")):
        rec = copy.deepcopy(recs[0])
        rec[field] = change(rec)
        assert _mismatch(rec).field == field


def test_changed_discard_is_found(records) -> None:
    rec = _pick(records[("mil", False)], lambda r: True)
    i = next(i for i, e in enumerate(rec["events"])
             if e["act"] == "discard" and not e.get("auto") and i > 8)
    seat = rec["events"][i]["seat"]
    hand_tiles = {e["tile"] for e in rec["events"][:i] if "tile" in e} | set(rec["wall"])
    other = next(t for t in sorted(hand_tiles) if t != rec["events"][i]["tile"])
    rec["events"][i]["tile"] = other
    err = _mismatch(rec)
    assert err.event is not None and err.event >= i
    if err.event == i:
        assert err.seat == seat and "illegal" in str(err)


def test_removed_or_reordered_event_is_found(records) -> None:
    base = _pick(records[("mil", True)], lambda r: len(r["events"]) > 12)
    rec = copy.deepcopy(base)
    del rec["events"][10]
    err = _mismatch(rec)
    assert err.event is not None and err.event >= 10 and "event" in str(err)
    rec = copy.deepcopy(base)
    rec["events"].pop()
    err = _mismatch(rec)
    assert err.field == "events" and "not over" in str(err)
    rec = copy.deepcopy(base)
    rec["events"].append(dict(rec["events"][-1]))
    assert _mismatch(rec).field == "events"
    rec = copy.deepcopy(base)  # a seat acting out of turn
    k = next(i for i, e in enumerate(rec["events"]) if i > 4 and not e.get("auto"))
    rec["events"][k]["seat"] = (rec["events"][k]["seat"] + 1) % 4
    err = _mismatch(rec)
    assert (err.event, err.field) == (k, "seat")


def test_auto_marks_are_checked(records) -> None:
    base = _pick(records[("mil", False)], lambda r: True)
    rec = copy.deepcopy(base)
    i = next(i for i, e in enumerate(rec["events"]) if e.get("auto"))
    rec["events"][i]["auto"] = False  # present, so it must be right
    err = _mismatch(rec)
    assert (err.event, err.field) == (i, "auto")
    for e in rec["events"]:  # absent: the format does not have the mark
        e.pop("auto", None)
    assert replay(rec)["events"][i]["auto"] is True
    rec = copy.deepcopy(base)
    j = next(i for i, e in enumerate(rec["events"]) if not e.get("auto") and i > 4)
    rec["events"][j]["auto"] = True
    err = _mismatch(rec)
    assert (err.event, err.field) == (j, "auto")


def test_wrong_legal_list_is_found(records) -> None:
    base = _pick(records[("mahjongsoft", True)], lambda r: True)
    rec = copy.deepcopy(base)
    i = next(i for i, e in enumerate(rec["events"]) if len(e["legal"]) > 1)
    rec["events"][i]["legal"] = rec["events"][i]["legal"][1:]
    err = _mismatch(rec)
    assert (err.event, err.field, err.seat) == (i, "legal", rec["events"][i]["seat"])
    rec = copy.deepcopy(base)
    i = next(i for i, e in enumerate(rec["events"]) if e.get("auto"))
    rec["events"][i]["legal"] = ["pass"]
    assert (_mismatch(rec).event, _mismatch(rec).field) == (i, "legal")


@pytest.mark.parametrize("change, words", [
    (lambda r: r.update(format="sichuan-record/0"), "format"),
    (lambda r: r.pop("wall"), "wall"),
    (lambda r: r["hands"][1].pop(), "seat 1"),
    (lambda r: r["hands"].pop(), "hands"),
    (lambda r: r["hands"][2].__setitem__(0, "0m"), "malformed tile"),
    (lambda r: r["hands"][2].__setitem__(0, "C5"), "canonical"),
    (lambda r: r["wall"].__setitem__(0, 5), "tile"),
    (lambda r: r["wall"].extend(["1m"] * 5), "wall"),
    (lambda r: r.update(dealer=4), "dealer"),
    (lambda r: r["rules"].update(fan_cap="3"), "rules"),
    (lambda r: r["rules"].update(colour="red"), "rules"),
    (lambda r: r["events"][0].update(act="chow"), "event 0"),
    (lambda r: r["events"][0].update(seat=7), "event 0"),
    (lambda r: r["payments"].append({"event": 0}), "payment"),
    (lambda r: r.update(end="draw"), "end"),
    (lambda r: r.update(scores=[0, 0, 0]), "scores"),
    (lambda r: r["wins"].append({"event": 0, "seat": 0, "tile": "1m", "from": None,
                                 "fans": {"Big Four Winds": 1}, "value": 1}), "fans"),
])
def test_malformed_records_are_rejected(records, change, words: str) -> None:
    rec = copy.deepcopy(records[("mil", False)][0])
    change(rec)
    with pytest.raises(RecordError, match=words) as err:
        replay(rec)
    assert isinstance(err.value, ValueError)


def test_five_copies_are_rejected(records) -> None:
    rec = copy.deepcopy(records[("mil", False)][0])
    kind = rec["hands"][0][0]
    rec["wall"] = [t for t in rec["wall"] if t != kind]
    rec["wall"] += [kind] * 2
    need = 5 - sum(h.count(kind) for h in rec["hands"]) - rec["wall"].count(kind)
    rec["wall"] += [kind] * max(0, need)
    rec["wall"] = rec["wall"][-55:]
    with pytest.raises(RecordError, match="copies"):
        replay(rec)


# ----------------------------------------------------------------------------- files, CLI


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_jsonl_round_trip_and_errors(records, tmp_path: Path) -> None:
    recs = records[("mil", True)][:5]
    path = tmp_path / "r.jsonl"
    assert write_jsonl(recs, path) == 5
    assert read_jsonl(path) == recs
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(ValueError, match="line 6"):
        read_jsonl(path)


def _check_fields(rec: dict, legal: bool, preset: str) -> None:
    for f in ("format", "rules", "seed", "dealer", "hands", "wall", "events", "payments",
              "wins", "end", "scores", "next_dealer"):
        assert f in rec, f
    assert rec["format"] == "sichuan-record/1"
    assert set(rec["rules"]) == {f.name for f in fields(Rules)}
    assert Rules.from_dict(rec["rules"]) == get_rules(preset)
    assert isinstance(rec["seed"], int)
    assert [len(h) for h in rec["hands"]] == [14 if s == rec["dealer"] else 13
                                              for s in range(4)]
    assert len(rec["wall"]) == 55
    assert all(h == sorted(h, key=lambda t: ("mps".index(t[1]), t[0])) for h in rec["hands"])
    assert [(e["seat"], e["act"]) for e in rec["events"][:4]] == [(s, "void") for s in range(4)]
    for e in rec["events"]:
        assert {"seat", "act"} <= set(e)
        if e["act"] == "void":
            assert ("tile" in e) != ("suit" in e)
        if e["act"] == "discard":
            assert "tile" in e
        if legal:
            assert e["legal"] == sorted(e["legal"]) and e["legal"]
    scores = [0, 0, 0, 0]
    for p in rec["payments"]:
        assert set(p) == {"event", "from", "to", "points", "reason"}
        assert p["reason"] in PAYMENT_REASONS and 0 <= p["event"] < len(rec["events"])
        assert (p["to"] is None) == (p["reason"] == "flower_pig")
        scores[p["from"]] -= p["points"]
        if p["to"] is not None:
            scores[p["to"]] += p["points"]
    assert scores == rec["scores"]
    for w in rec["wins"]:
        assert set(w) >= {"event", "seat", "tile", "from", "fans", "value"}
        assert rec["events"][w["event"]]["act"] == "hu"
        assert rec["events"][w["event"]]["seat"] == w["seat"]
    assert rec["end"] in ("three_hu", "wall_exhausted")
    assert 0 <= rec["next_dealer"] <= 3


@pytest.mark.slow
def test_selfplay_and_check_cli(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "games.jsonl"
    r = _run("sichuan_env.records.selfplay", "--deals", "40", "--seed", "9", "--out", str(out),
             "--legal", "--rules", "mahjongsoft", "--tables", "8", cwd=root)
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 40
    for line in lines:
        _check_fields(json.loads(line), legal=True, preset="mahjongsoft")
    r = _run("sichuan_env.records.record", "check", str(out), cwd=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().splitlines()[-1] == "40 records OK"
    # tamper with two records: the check names each and exits 1
    recs = [json.loads(line) for line in lines]
    recs[3]["scores"][0] += 5
    recs[7]["events"][0]["seat"] = 2
    bad = tmp_path / "bad.jsonl"
    write_jsonl(recs, bad)
    r = _run("sichuan_env.records.record", "check", str(bad), cwd=root)
    assert r.returncode == 1
    assert "record 3" in r.stdout and "scores" in r.stdout
    assert "record 7" in r.stdout and "event 0" in r.stdout
    assert "2 of 40 records failed" in r.stdout
    r = _run("sichuan_env.records.record", "check", str(tmp_path / "missing.jsonl"), cwd=root)
    assert r.returncode == 1


@pytest.mark.slow
def test_selfplay_cli_default_rules_without_legal(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "g.jsonl"
    r = _run("sichuan_env.records.selfplay", "--deals", "10", "--seed", "1", "--out", str(out),
             cwd=root)
    assert r.returncode == 0, r.stderr
    for rec in read_jsonl(out):
        _check_fields(rec, legal=False, preset="mil")
        assert all("legal" not in e for e in rec["events"])


def test_selfplay_is_deterministic(tmp_path: Path) -> None:
    def dump(**kw) -> bytes:
        path = tmp_path / "x.jsonl"
        write_jsonl(selfplay(**kw), path)
        return path.read_bytes()

    a = dump(deals=30, seed=5, rules="mil", tables=8, legal=True)
    assert a == dump(deals=30, seed=5, rules="mil", tables=8, legal=True)
    assert a == dump(deals=30, seed=5, rules="mil", tables=3, legal=True)
    assert a == dump(deals=30, seed=5, rules="mil", tables=64, legal=True)
    assert a != dump(deals=30, seed=6, rules="mil", tables=8, legal=True)
    first = json.loads(a.splitlines()[0])
    assert first["seed"] == deal_seed(5, 0)
    assert [r["seed"] for r in selfplay(3, seed=5)] == [deal_seed(5, i) for i in range(3)]
    assert list(selfplay(0, seed=1)) == []

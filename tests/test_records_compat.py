"""Records written by other programs: the independent records in ``tests/data`` replay
(``independent-wall-end-in-window.jsonl``: deals whose wall runs out inside a claim
window answered by several seats), what the format leaves open (the ``auto`` mark, the
order of simultaneous payments, wins and claim answers) is accepted, and malformed input
of any kind gives a located ``RecordError`` or ``RecordMismatch``, never another
exception."""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sichuan_env.records.game import Game
from sichuan_env.records.record import (
    RecordError,
    RecordMismatch,
    check_file,
    iter_jsonl,
    read_jsonl,
    replay,
    write_jsonl,
)
from sichuan_env.records.selfplay import selfplay

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
PRESETS = ["mil", "mahjongsoft"]


@pytest.fixture(scope="module")
def independent() -> dict[str, list[dict]]:
    return {p: read_jsonl(DATA / f"independent-{p}.jsonl") for p in PRESETS}


def _moves(events: list[dict]) -> list[tuple]:
    return [(e["seat"], e["act"], e.get("tile"), e.get("suit")) for e in events]


def _multiset(entries: list[dict]) -> Counter:
    return Counter(json.dumps(x, sort_keys=True) for x in entries)


# ----------------------------------------------------------------------------- acceptance


@pytest.mark.parametrize("preset", PRESETS)
def test_every_independent_record_replays(independent, preset: str) -> None:
    recs = independent[preset]
    assert len(recs) == 200
    for n, rec in enumerate(recs):
        assert rec["rules"]["preset"] == preset
        assert not any("auto" in e for e in rec["events"])
        mine = replay(rec)
        assert _moves(mine["events"]) == _moves(rec["events"])
        assert [e["legal"] for e in mine["events"]] == [e["legal"] for e in rec["events"]]
        assert _multiset(mine["payments"]) == _multiset(rec["payments"])
        assert _multiset(mine["wins"]) == _multiset(rec["wins"])
        for f in ("end", "scores", "next_dealer"):
            assert mine[f] == rec[f]
        if n:  # each deal continues the match of the one before
            assert rec["dealer"] == recs[n - 1]["next_dealer"]


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_check_cli_accepts_the_independent_files(preset: str) -> None:
    r = _run("check", str(DATA / f"independent-{preset}.jsonl"))
    assert (r.returncode, r.stdout, r.stderr) == (0, "200 records OK\n", "")


def test_payments_and_wins_of_one_event_in_any_order(independent) -> None:
    rng = np.random.default_rng(0)
    shuffled = 0
    for rec in independent["mil"][:80] + independent["mahjongsoft"][:80]:
        rec = copy.deepcopy(rec)
        for name in ("payments", "wins"):
            entries = rec[name]
            by_event: dict[int, list[dict]] = {}
            for x in entries:
                by_event.setdefault(x["event"], []).append(x)
            out = []
            for ev in sorted(by_event):
                group = by_event[ev]
                perm = rng.permutation(len(group))
                shuffled += int((perm != np.arange(len(group))).any())
                out += [group[k] for k in perm]
            rec[name] = out
        replay(rec)
    assert shuffled >= 20


def _answer_runs(events: list[dict]) -> list[tuple[int, int]]:
    """[start, stop) of each run of two or more answers to one claim window (a claim
    menu always offers "pass", a turn's never does)."""
    runs, i = [], 0
    while i < len(events):
        j = i
        while j < len(events) and "pass" in events[j]["legal"]:
            j += 1
        if j - i >= 2:
            runs.append((i, j))
        i = max(j, i + 1)
    return runs


def _window_of(events: list[dict], i: int) -> tuple[int, int] | None:
    """[start, stop) of the claim window (one or more answers) holding event ``i``, or
    None when ``i`` is a turn's move."""
    if "pass" not in events[i]["legal"]:
        return None
    start, stop = i, i + 1
    while start > 0 and "pass" in events[start - 1]["legal"]:
        start -= 1
    while stop < len(events) and "pass" in events[stop]["legal"]:
        stop += 1
    return start, stop


def _is_wall_end(rec: dict, pay: dict) -> bool | None:
    """Whether ``pay`` is a wall-end payment, told from the record alone as the format
    says (wall-end payments at the last event; a Shoot-after-Kong refund at the first
    ``hu`` of its window); None where a refund at the last event could be either (the
    window's first ``hu`` is the last event)."""
    if pay["reason"] in ("ready", "flower_pig"):
        return True
    last = len(rec["events"]) - 1
    if pay["reason"] != "kong_refund" or rec["end"] != "wall_exhausted" or pay["event"] != last:
        return False
    window = _window_of(rec["events"], last)
    hus = [] if window is None else [i for i in range(*window)
                                     if rec["events"][i]["act"] == "hu"]
    return None if hus and min(hus) == last else True


def _reorder_answers(rec: dict, start: int, stop: int, perm: list[int]) -> dict | None:
    """The record with the answers events[start:stop] put in order ``perm``, payments and
    wins re-pointed as the format says: a Shoot-after-Kong refund at the first hu of the
    window, wall-end payments at the last event of the deal. None where the record does
    not say which refunds are wall-end ones (see :func:`_is_wall_end`)."""
    wall_end = [_is_wall_end(rec, p) for p in rec["payments"]]
    if None in wall_end:
        return None
    rec = copy.deepcopy(rec)
    new_pos = {start + k: start + perm.index(k) for k in range(stop - start)}
    rec["events"][start:stop] = [rec["events"][start + k] for k in perm]
    hu_positions = [i for i in range(start, stop) if rec["events"][i]["act"] == "hu"]
    for p, at_end in zip(rec["payments"], wall_end, strict=True):
        if at_end:
            continue
        if p["reason"] == "kong_refund" and start <= p["event"] < stop:
            p["event"] = min(hu_positions)
        else:
            p["event"] = new_pos.get(p["event"], p["event"])
    for w in rec["wins"]:
        w["event"] = new_pos.get(w["event"], w["event"])
    return rec


def test_claim_answers_in_any_order(independent) -> None:
    tried = 0
    several_hu = 0
    for rec in independent["mil"] + independent["mahjongsoft"]:
        for start, stop in _answer_runs(rec["events"]):
            n = stop - start
            for perm in ([*range(n)][::-1], [*range(1, n), 0]):
                moved = _reorder_answers(rec, start, stop, perm)
                if moved is None:
                    continue
                mine = replay(moved)
                assert _moves(mine["events"]) == _moves(moved["events"])
                assert _multiset(mine["payments"]) == _multiset(moved["payments"])
                assert _multiset(mine["wins"]) == _multiset(moved["wins"])
                tried += 1
            several_hu += sum(e["act"] == "hu" for e in rec["events"][start:stop]) >= 2
    assert tried >= 100 and several_hu >= 5


WALL_END_IN_WINDOW = DATA / "independent-wall-end-in-window.jsonl"


def _wall_end_in_window() -> list[dict]:
    return read_jsonl(WALL_END_IN_WINDOW)


def test_wall_end_inside_a_claim_window_replays() -> None:
    """Deals that end with the wall exhausted while several seats answer the last
    discard (a hu, then another answer): every wall-end payment, kong refunds of
    not-ready seats included, is at the last event, not at the first hu."""
    recs = _wall_end_in_window()
    assert len(recs) == 9
    for rec in recs:
        last = len(rec["events"]) - 1
        window = _window_of(rec["events"], last)
        assert rec["end"] == "wall_exhausted" and window is not None
        assert window[1] - window[0] >= 2 and rec["events"][window[0]]["act"] == "hu"
        refunds_at_end = [p for p in rec["payments"]
                          if p["reason"] == "kong_refund" and p["event"] == last]
        assert refunds_at_end
        mine = replay(rec)
        assert _multiset(mine["payments"]) == _multiset(rec["payments"])
        assert _multiset(mine["wins"]) == _multiset(rec["wins"])
        moved = copy.deepcopy(rec)  # the same refunds at the first hu are wrong
        for p in moved["payments"]:
            if p["reason"] == "kong_refund" and p["event"] == last:
                p["event"] = window[0]
        with pytest.raises(RecordMismatch) as err:
            replay(moved)
        assert err.value.event == window[0] and err.value.field.startswith("payments")


def test_check_cli_accepts_the_wall_end_in_window_file() -> None:
    r = _run("check", str(WALL_END_IN_WINDOW))
    assert (r.returncode, r.stdout, r.stderr) == (0, "9 records OK\n", "")


def _generated(source: tuple[str, int]) -> list[dict]:
    """Records of one source: ("selfplay-mil" / "selfplay-mahjongsoft", run seed) gives two
    deals of random play with legal lists; ("wall-end", n) the n-th wall-end record;
    ("mil" / "mahjongsoft", n) the n-th independent record; ("arena", n) the n-th
    bot-played deal."""
    kind, n = source
    if kind == "arena":
        return [_arena_records()[n]]
    if kind.startswith("selfplay-"):
        return list(selfplay(2, seed=n, rules=kind.removeprefix("selfplay-"), legal=True))
    if kind == "wall-end":
        return [_WALL_END[n]]
    return [_INDEPENDENT[kind][n]]


@functools.cache
def _arena_records() -> list[dict]:
    """Bot-played deals with their menus (the arena's ``--legal`` records): several Hu on
    one discard, robbed kongs, shoot-after-kong and ready hands at the wall end occur."""
    import tempfile

    from sichuan_agents.arena import run_arena

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "arena.jsonl"
        run_arena(["rules", "greedy", "rules", "greedy"], deals=60, seed=9, tables=60,
                  records=path, record_deals=60, legal=True)
        return read_jsonl(path)


_WALL_END = _wall_end_in_window()
_INDEPENDENT = {p: read_jsonl(DATA / f"independent-{p}.jsonl") for p in PRESETS}
SOURCES = st.one_of(
    st.tuples(st.sampled_from(["selfplay-mil", "selfplay-mahjongsoft"]),
              st.integers(0, 2**40)),
    st.tuples(st.just("wall-end"), st.integers(0, len(_WALL_END) - 1)),
    st.tuples(st.sampled_from(PRESETS), st.integers(0, 199)),
    st.tuples(st.just("arena"), st.integers(0, 59)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=SOURCES, data=st.data())
def test_shuffled_answers_of_every_claim_window_replay(source, data) -> None:
    """Every claim window of a record, its answers shuffled (payments and wins re-pointed
    as the format says), still replays to the same deal; the engine puts wall-end
    payments at the last event of the shuffled record."""
    for rec in _generated(source):
        moved = rec
        for start, stop in _answer_runs(rec["events"]):
            perm = data.draw(st.permutations(range(stop - start)), label="answers")
            moved = _reorder_answers(moved, start, stop, list(perm))
            if moved is None:  # a refund the record alone cannot place: rare
                break
        if moved is None:
            continue
        mine = replay(moved)
        assert _moves(mine["events"]) == _moves(moved["events"])
        assert _multiset(mine["payments"]) == _multiset(moved["payments"])
        assert _multiset(mine["wins"]) == _multiset(moved["wins"])
        last = len(moved["events"]) - 1
        assert all(p["event"] == last for p in mine["payments"]
                   if p["reason"] in ("ready", "flower_pig"))


def test_answers_moved_out_of_their_window_are_found(independent) -> None:
    rec = next(r for r in independent["mil"] if _answer_runs(r["events"]))
    start, stop = _answer_runs(rec["events"])[0]
    rec = copy.deepcopy(rec)
    answer = rec["events"].pop(start)
    rec["events"].insert(stop + 1, answer)  # after the next discard
    with pytest.raises(RecordMismatch) as err:
        replay(rec)
    assert err.value.event is not None and start <= err.value.event <= stop + 1


def test_wrong_auto_marks_are_found(independent) -> None:
    rec = copy.deepcopy(independent["mil"][0])
    mine = replay(rec)
    forced = next(i for i, e in enumerate(mine["events"]) if e.get("auto"))
    free = next(i for i, e in enumerate(mine["events"]) if not e.get("auto") and i > 4)
    for i, mark, words in ((forced, False, "auto\": false"), (free, True, "marked")):
        bad = copy.deepcopy(rec)
        bad["events"][i]["auto"] = mark
        with pytest.raises(RecordMismatch, match=words) as err:
            replay(bad)
        assert (err.value.event, err.value.field) == (i, "auto")
    ok = copy.deepcopy(rec)
    ok["events"][forced]["auto"] = True
    replay(ok)


def test_legal_lists_in_the_wrong_order_are_named(independent) -> None:
    rec = copy.deepcopy(independent["mahjongsoft"][0])
    i = next(i for i, e in enumerate(rec["events"]) if len(e["legal"]) > 2)
    rec["events"][i]["legal"].reverse()
    with pytest.raises(RecordMismatch, match="plain string order") as err:
        replay(rec)
    assert (err.value.event, err.value.field) == (i, "legal")


def test_rules_may_leave_out_deals_per_match_only(independent) -> None:
    rec = copy.deepcopy(independent["mil"][0])
    assert "deals_per_match" not in rec["rules"]
    rec["rules"]["deals_per_match"] = 4  # a match option: the deal replays alike
    replay(rec)
    del rec["rules"]["fan_cap"]
    with pytest.raises(RecordError, match="fan_cap missing") as err:
        replay(rec)
    assert err.value.field == "rules"


# ----------------------------------------------------------------------------- malformed


@pytest.mark.parametrize("change, field, event", [
    (lambda r: r["events"][5].update(seat="1"), "seat", 5),
    (lambda r: r["events"][5].pop("act"), "act", 5),
    (lambda r: r["events"][5].update(tile="5z"), "tile", 5),
    (lambda r: r["events"][5].update(tile=5), "tile", 5),
    (lambda r: r["events"][5].update(legal="discard 5m"), "legal", 5),
    (lambda r: r["events"][5].update(legal=["discard 5x"]), "legal", 5),
    (lambda r: r["events"][5].update(auto="yes"), "auto", 5),
    (lambda r: r["events"][0].pop("tile") and r["events"][0].update(suit="z"), "suit", 0),
    (lambda r: r["events"].__setitem__(3, ["void", "1m"]), None, 3),
    (lambda r: r.update(events={}), "events", None),
    (lambda r: r["hands"][0].__setitem__(2, "10m"), "hands[0][2]", None),
    (lambda r: r["wall"].__setitem__(7, None), "wall[7]", None),
    (lambda r: r["hands"][1].__setitem__(0, r["hands"][0][0]) or r["hands"][2].__setitem__(
        0, r["hands"][0][0]) or r["hands"][3].__setitem__(0, r["hands"][0][0]) or r[
        "wall"].__setitem__(0, r["hands"][0][0]), "hands", None),
    (lambda r: r.update(seed="42"), "seed", None),
    (lambda r: r.update(rules=["mil"]), "rules", None),
    (lambda r: r["payments"].__setitem__(0, 3), "payments[0]", None),
    (lambda r: r["payments"][0].pop("reason"), "payments[0]", None),
    (lambda r: r["payments"][0].update(points=1.5), "payments[0].points", None),
    (lambda r: r["payments"][0].update(event=-1), "payments[0].event", None),
    (lambda r: r["payments"][0].update(to="x"), "payments[0].to", None),
    (lambda r: r["wins"][0].update(tile="0p"), "wins[0].tile", None),
    (lambda r: r["wins"][0].update(fans=[]), "wins[0].fans", None),
    (lambda r: r.update(next_dealer=None), "next_dealer", None),
    (lambda r: r.pop("scores"), "scores", None),
])
def test_malformed_fields_are_located(independent, change, field, event) -> None:
    rec = copy.deepcopy(next(r for r in independent["mil"] if r["wins"] and r["payments"]))
    change(rec)
    with pytest.raises(RecordError) as err:
        replay(rec)
    assert (err.value.field, err.value.event) == (field, event)
    text = str(err.value)
    if field is not None:
        assert f"field {field!r}" in text
    if event is not None:
        assert f"event {event}" in text


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sichuan_env.records.record", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_check_cli_on_broken_files(independent, tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in independent["mil"][:6]]
    cases = {
        "empty.jsonl": ("", "no record"),
        "blank.jsonl": ("\n \n", "no record"),
        "text.jsonl": ("This is not JSON.\nNor is this.\n", "not valid JSON"),
        "cut.jsonl": ("\n".join(lines[:5]) + "\n" + lines[5][: len(lines[5]) // 2],
                      "cut short"),
        "binary.jsonl": (b"\x89PNG\r\n\x1a\n\xff\xfe\x00".decode("latin-1"), "UTF-8"),
        "array.jsonl": ("[1, 2, 3]\n", "JSON object"),
    }
    for name, (text, words) in cases.items():
        path = tmp_path / name
        path.write_bytes(text.encode("latin-1" if name == "binary.jsonl" else "utf-8"))
        r = _run("check", str(path))
        assert r.returncode == 1, name
        assert r.stderr == "" and "Traceback" not in r.stdout, name
        assert words in r.stdout, (name, r.stdout)
        assert "line" in r.stdout or "no record" in r.stdout
    r = _run("check", str(tmp_path / "cut.jsonl"))
    assert r.stdout.splitlines() == [r.stdout.splitlines()[0], "1 of 6 records failed"]
    assert r.stdout.startswith("record 5: RecordError: line 6: not valid JSON")
    r = _run("check", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 1 and r.stdout == "" and len(r.stderr.splitlines()) == 1
    assert "cannot read" in r.stderr and "Traceback" not in r.stderr
    r = _run("check", str(tmp_path / "cut.jsonl"), "--show", "-1")
    assert r.returncode == 2 and "Traceback" not in r.stderr


@pytest.mark.slow
def test_check_cli_shows_the_first_n_problems(independent, tmp_path: Path) -> None:
    recs = copy.deepcopy(independent["mahjongsoft"][:12])
    for n in (1, 4, 5, 8, 9, 11):
        recs[n]["scores"][0] += 1
    path = tmp_path / "bad.jsonl"
    write_jsonl(recs, path)
    r = _run("check", str(path), "--show", "3")
    out = r.stdout.splitlines()
    assert r.returncode == 1
    assert out == [
        *(f"record {n} (seed {recs[n]['seed']}): RecordMismatch: line {n + 1}, field "
          f"'scores': record {recs[n]['scores']}, engine {independent['mahjongsoft'][n]['scores']}"
          for n in (1, 4, 5)),
        "6 of 12 records failed; the first 3 shown",
    ]
    r = _run("check", str(path), "--show", "0")
    assert r.stdout == "6 of 12 records failed; the first 0 shown\n"


# ----------------------------------------------------------------------------- fuzzing


def _seed_records() -> list[dict]:
    recs = read_jsonl(DATA / "independent-mil.jsonl")[:3]
    recs += read_jsonl(DATA / "independent-mahjongsoft.jsonl")[:3]
    recs += list(selfplay(3, seed=11, rules="mahjongsoft", legal=True))
    return recs


SEEDS = _seed_records()
TILES = [f"{r}{s}" for s in "mps" for r in range(1, 10)]
ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 60), st.sampled_from(TILES),
    st.sampled_from(["0m", "5z", "C5", "", "hu", "pass", "kong", "void", "discard 5m", "m"]),
    st.floats(allow_nan=False, allow_infinity=False), st.lists(st.sampled_from(TILES),
                                                               max_size=3),
    st.dictionaries(st.sampled_from(["seat", "act", "tile", "event"]), st.integers(0, 3),
                    max_size=2),
)


def _paths(x, path=()) -> list[tuple]:
    out = [path]
    if isinstance(x, dict):
        for k, v in x.items():
            out += _paths(v, (*path, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += _paths(v, (*path, i))
    return out


def _replay_or_clear_error(rec) -> dict | None:
    try:
        return replay(rec)
    except (RecordError, RecordMismatch) as err:
        text = str(err)
        assert text and "Traceback" not in text
        return None


def _same_deal(mutated: dict, original: dict) -> None:
    """A mutated record that still replays tells the same deal as its original."""
    mine, theirs = replay(mutated), replay(original)
    assert _moves(mine["events"]) == _moves(theirs["events"])
    assert _multiset(mine["payments"]) == _multiset(theirs["payments"])
    assert _multiset(mine["wins"]) == _multiset(theirs["wins"])
    for f in ("end", "scores", "next_dealer"):
        assert mutated[f] == original[f]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_mutated_records(data) -> None:
    original = SEEDS[data.draw(st.integers(0, len(SEEDS) - 1), label="record")]
    rec = copy.deepcopy(original)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = _paths(rec)
        path = paths[data.draw(st.integers(0, len(paths) - 1), label="path")]
        op = data.draw(st.sampled_from(["replace", "delete", "swap", "duplicate"]), label="op")
        if not path:
            rec = data.draw(ODD_VALUES) if op == "replace" else rec
            continue
        parent = rec
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        if op == "replace":
            parent[key] = data.draw(ODD_VALUES, label="value")
        elif op == "delete":
            del parent[key]
        elif isinstance(parent, list) and len(parent) > 1:
            other = data.draw(st.integers(0, len(parent) - 1), label="other")
            if op == "swap":
                parent[key], parent[other] = parent[other], parent[key]
            else:
                parent.insert(other, copy.deepcopy(parent[key]))
    if _replay_or_clear_error(rec) is not None:
        _same_deal(rec, original)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_cut_and_corrupted_lines(tmp_path_factory, data) -> None:
    text = json.dumps(SEEDS[data.draw(st.integers(0, len(SEEDS) - 1))])
    cut = data.draw(st.integers(0, len(text)))
    flip = data.draw(st.integers(0, len(text) - 1))
    raw = bytearray(text[:cut].encode())
    if data.draw(st.booleans()) and flip < len(raw):
        raw[flip] = data.draw(st.integers(0, 255))
    path = tmp_path_factory.mktemp("cut") / "r.jsonl"
    path.write_bytes(bytes(raw) + b"\n")
    for _, rec in iter_jsonl(path):
        if not isinstance(rec, RecordError):
            _replay_or_clear_error(rec)
    out = _Sink()
    bad = check_file(path, out)
    assert bad in (0, 1) and out.lines[-1].endswith(("records OK", "failed", "problem(s))"))
    if cut < len(text):
        assert bad == 1


class _Sink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, s: str) -> None:
        self.lines += [x for x in s.split("\n") if x]


def _shoot_after_kong_record(second_answer: str) -> tuple[dict, int]:
    """A deal where seat 0 declares a concealed kong and discards 9p; seat 1 and seat 2
    may both Hu on it: seat 1 does, seat 2 answers ``second_answer``. Returns the record
    and the index of seat 1's answer."""
    hands = ["1m1m1m1m2m3m4m5p6p7p8p8p9p1s", "1p2p3p4p5p6p7p2s3s4s5s5s9m",
             "1s2s3s4s5s6s7s8s9s2p2p9p8m", "2m5m8m3s6s9s2s7m4m7s1s6m1p"]
    head, tail = ["8p", "2p", "3m", "5m"], ["9m"]
    used = Counter(h[i:i + 2] for h in hands for i in range(0, len(h), 2))
    used.update(head + tail)
    rest = [t for t in (f"{r}{s}" for s in "mps" for r in range(1, 10))
            for _ in range(4 - used[t])]
    g = Game.from_deal(hands, "".join(head + rest + tail), dealer=0, rules="mil")
    for a in ["void 1s", "void 9m", "void 8m", "void 1p", "discard 1s", "kong 1m",
              "discard 9p"]:
        g.play(a)
    assert (g.current_seat, g.legal()) == (1, ["hu", "pass"])
    answer_at = len(g.events)
    g.play("hu")
    assert (g.current_seat, g.legal()) == (2, ["hu", "pass"])
    g.play(second_answer)
    while not g.done:
        g.play(g.legal()[0])
    rec = g.record(legal=True)
    refunds = [p for p in rec["payments"] if p["reason"] == "kong_refund"]
    assert len(refunds) == 3 and {p["event"] for p in refunds} == {answer_at}
    return rec, answer_at


@pytest.mark.parametrize("second_answer", ["pass", "hu"])
def test_kong_refund_follows_the_first_hu_of_reordered_answers(second_answer: str) -> None:
    rec, a = _shoot_after_kong_record(second_answer)
    replay(rec)
    moved = _reorder_answers(rec, a, a + 2, [1, 0])
    assert moved is not None
    first_hu = a if second_answer == "hu" else a + 1
    assert {p["event"] for p in moved["payments"] if p["reason"] == "kong_refund"} == {first_hu}
    mine = replay(moved)
    assert _multiset(mine["payments"]) == _multiset(moved["payments"])
    if second_answer == "pass":  # a refund left at the (now) pass event is wrong
        bad = copy.deepcopy(moved)
        for p in bad["payments"]:
            if p["reason"] == "kong_refund":
                p["event"] = a
        with pytest.raises(RecordMismatch) as err:
            replay(bad)
        assert err.value.event == a and err.value.field.startswith("payments")

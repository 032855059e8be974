"""Game records (``sichuan-record/1``, see RECORD_FORMAT.md): build, replay, store.

* :class:`RecordBuilder` turns the engine's :class:`~sichuan_env.engine.Ledger` entries of
  one table into a record dict (used by :mod:`sichuan_env.selfplay` and by :func:`replay`).
* :func:`replay` re-runs a record through the engine and raises :class:`RecordMismatch`
  naming the event index, seat and field of the first difference.
* :func:`write_jsonl` / :func:`read_jsonl`: one record per line.

Command line::

    python -m sichuan_env.records check FILE.jsonl

replays every record and prints ``N records OK``, or the first mismatch of each bad record
and exits with status 1.

Events that the engine made by itself (the forced discard of a set-aside tile) carry
``"auto": true``; :func:`replay` requires them to be marked so and does not play them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env import engine
from sichuan_env.actions import (
    ACTION_STRINGS,
    DISCARD,
    HU,
    KONG,
    MELDED_KONG,
    N_ACTIONS,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
    action_from_str,
)
from sichuan_env.hands import FAN_NAMES
from sichuan_env.rules import Rules
from sichuan_env.state import END_NAMES, State
from sichuan_env.tiles import N_KINDS, SUITS, parse_tile, tile_str

RECORD_FORMAT = "sichuan-record/1"
WALL_SIZE = 55

EVENT_ACTS = ("void", "discard", "kong", "pung", "hu", "pass")
PAYMENT_REASONS = (
    "hu", "self_drawn_hu", "concealed_kong", "melded_kong", "promoted_kong", "kong_refund",
    "ready", "flower_pig",
)
END_VALUES = ("three_hu", "wall_exhausted")
REQUIRED_FIELDS = (
    "format", "rules", "seed", "dealer", "hands", "wall", "events", "payments", "wins",
    "end", "scores", "next_dealer",
)
PAYMENT_FIELDS = ("event", "from", "to", "points", "reason")
WIN_FIELDS = ("event", "seat", "tile", "from", "fans", "value")

__all__ = [
    "RECORD_FORMAT",
    "RecordBuilder",
    "RecordError",
    "RecordMismatch",
    "event_action",
    "event_dict",
    "read_jsonl",
    "replay",
    "validate_record",
    "write_jsonl",
]


class RecordError(ValueError):
    """A record that is not well formed (checked before any replay)."""


class RecordMismatch(ValueError):  # noqa: N818 (the name the project uses)
    """The engine disagrees with a record. ``event`` (index or None), ``seat`` and ``field``
    say where; the message says what."""

    def __init__(self, message: str, *, event: int | None = None, seat: int | None = None,
                 field: str | None = None) -> None:
        where = []
        if event is not None:
            where.append(f"event {event}")
        if seat is not None:
            where.append(f"seat {seat}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
        self.event = event
        self.seat = seat
        self.field = field


# ----------------------------------------------------------------------------- events


def event_dict(seat: int, action: int) -> dict[str, Any]:
    """The record event of engine action ``action`` taken by ``seat``."""
    a = int(action)
    if a < VOID_TILE:
        return {"seat": seat, "act": "discard", "tile": tile_str(a - DISCARD)}
    if a < VOID_SUIT:
        return {"seat": seat, "act": "void", "tile": tile_str(a - VOID_TILE)}
    if a < KONG:
        return {"seat": seat, "act": "void", "suit": SUITS[a - VOID_SUIT]}
    if a < PUNG:
        return {"seat": seat, "act": "kong", "tile": tile_str(a - KONG)}
    names = {PUNG: "pung", MELDED_KONG: "kong", HU: "hu", PASS: "pass"}
    if a not in names:
        raise ValueError(f"action {a} out of range 0..{N_ACTIONS - 1}")
    return {"seat": seat, "act": names[a]}


def event_action(event: dict[str, Any]) -> int:
    """The engine action of a record event (``ValueError`` if malformed)."""
    act = event.get("act")
    if act == "void":
        if "tile" in event:
            return action_from_str(f"void {event['tile']}")
        return action_from_str(f"void {event.get('suit')}")
    if act == "discard":
        return action_from_str(f"discard {event.get('tile')}")
    if act == "kong":
        return action_from_str(f"kong {event['tile']}") if "tile" in event else MELDED_KONG
    if act in ("pung", "hu", "pass"):
        return action_from_str(act)
    raise ValueError(f"unknown event act {act!r}")


# ----------------------------------------------------------------------------- builder


class RecordBuilder:
    """Builds the record of the deal now on ``table`` of ``state`` from ledger entries.

    Create it right after the deal is dealt (before any decision), then call
    :meth:`feed` with each step's ledger entries for this table, in order. ``legal`` keeps
    the offered options on every event. Entries after the deal's ``end`` are not taken:
    :meth:`feed` returns how many entries it consumed (a ``deal`` entry is not consumed).
    """

    def __init__(self, state: State, table: int = 0, *, seed: int | None = None,
                 legal: bool = False) -> None:
        t = int(table)
        hands = []
        for seat in range(4):
            counts = state.hand[t, seat].astype(np.intp)
            hands.append([tile_str(k) for k in np.repeat(np.arange(N_KINDS), counts)])
        front, back = int(state.wall_front[t]), int(state.wall_back[t])
        self.legal = legal
        self.finished = False
        self.record: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "rules": state.rules.to_dict(),
            "seed": None if seed is None else int(seed),
            "deal_index": int(state.deal_index[t]),
            "dealer": int(state.dealer[t]),
            "hands": hands,
            "wall": [tile_str(k) for k in state.wall[t, front:back]],
            "events": [],
            "payments": [],
            "wins": [],
        }
        self._last_event_of: dict[int, int] = {}  # seat -> its latest event's index
        self._step_first = 0  # index of the current step's first event
        self._new_payments: list[dict[str, Any]] = []
        self._new_wins: list[dict[str, Any]] = []
        self._kong_paid: list[tuple[int, int, int]] = []  # outstanding (from, to, points)

    def feed(self, entries: Iterable[tuple[Any, ...]], legal_now: Sequence[str] | None = None,
             ) -> int:
        """Take one step's entries of this table. ``legal_now``: the options offered at the
        step's decision (put on its first non-auto event). Returns entries consumed.

        A step's payments and wins are listed in event order (claims are answered one seat
        at a time but resolved together), and each ``kong_refund`` is split into one
        refund per original kong payment (RULES.md section 12, points 10 and 13)."""
        n = 0
        first = True
        self._step_first = len(self.record["events"])
        for entry in entries:
            if self.finished or entry[0] == "deal":
                break
            n += 1
            kind = entry[0]
            if kind == "event":
                _, _, seat, a, auto = entry
                legal = None
                if self.legal:
                    if auto or not first or legal_now is None:
                        legal = [ACTION_STRINGS[a]]
                    else:
                        legal = list(legal_now)
                if not auto:
                    first = False
                self._event(seat, a, auto, legal)
            elif kind == "pay":
                self._pay(*entry[2:])
            elif kind == "win":
                self._win(*entry[2:])
            elif kind == "end":
                self._flush()
                self._end(entry[2], entry[3])
        self._flush()
        return n

    def _flush(self) -> None:
        rec = self.record
        rec["payments"].extend(sorted(self._new_payments, key=lambda p: p["event"]))
        rec["wins"].extend(sorted(self._new_wins, key=lambda w: w["event"]))
        self._new_payments = []
        self._new_wins = []

    def _event(self, seat: int, a: int, auto: bool, legal: list[str] | None) -> None:
        rec = self.record
        ev = event_dict(seat, a)
        if auto:
            ev["auto"] = True
        if legal is not None:
            ev["legal"] = legal
        self._last_event_of[seat] = len(rec["events"])
        rec["events"].append(ev)

    def _event_index(self, event: int, seat: int) -> int:
        """Record index of a step's event (``event`` >= 0), or of the latest event of
        ``seat`` (``event`` -1: its claim answered in an earlier step)."""
        if event >= 0:
            return self._step_first + event
        return self._last_event_of[seat]

    def _pay(self, frm: int, to: int, points: int, reason: str, event: int, cause: int,
             ) -> None:
        ev = self._event_index(event, cause)
        if reason == "kong_refund":
            for pts in self._refunded(payer=int(to), receiver=int(frm), points=int(points)):
                self._new_payments.append({"event": ev, "from": int(frm), "to": int(to),
                                           "points": pts, "reason": reason})
            return
        pay = {"event": ev, "from": int(frm), "to": None if to < 0 else int(to),
               "points": int(points), "reason": reason}
        self._new_payments.append(pay)
        if reason in ("concealed_kong", "promoted_kong", "melded_kong"):
            self._kong_paid.append((int(frm), int(to), int(points)))

    def _refunded(self, payer: int, receiver: int, points: int) -> list[int]:
        """Points of the outstanding kong payments payer -> receiver that a refund of
        ``points`` returns: the most recent first (a Shoot after Kong refund returns this
        turn's kongs; the wall end returns all that are left), listed in payment order."""
        taken: list[int] = []
        left = points
        for i in range(len(self._kong_paid) - 1, -1, -1):
            if left <= 0:
                break
            f, r, p = self._kong_paid[i]
            if f == payer and r == receiver and p <= left:
                taken.append(i)
                left -= p
        if left != 0:
            raise ValueError(
                f"a kong refund of {points} from seat {receiver} to seat {payer} matches no "
                "kong payments"
            )
        out = [self._kong_paid[i][2] for i in sorted(taken)]
        for i in taken:  # descending indices
            del self._kong_paid[i]
        return out

    def _win(self, seat: int, tile: int, frm: int, fans: Sequence[int], value: int,
             event: int) -> None:
        self._new_wins.append({
            "event": self._event_index(event, seat),
            "seat": int(seat), "tile": tile_str(tile), "from": None if frm < 0 else int(frm),
            "fans": {FAN_NAMES[i]: int(c) for i, c in enumerate(fans) if c},
            "value": int(value),
        })

    def _end(self, reason: int, next_dealer: int) -> None:
        rec = self.record
        rec["end"] = END_NAMES[reason]
        scores = [0, 0, 0, 0]
        for p in rec["payments"]:
            scores[p["from"]] -= p["points"]
            if p["to"] is not None:
                scores[p["to"]] += p["points"]
        rec["scores"] = scores
        rec["next_dealer"] = int(next_dealer)
        self.finished = True


def split_entries(entries: Iterable[tuple[Any, ...]]) -> dict[int, list[tuple[Any, ...]]]:
    """Ledger entries grouped by table, each table's in order."""
    out: dict[int, list[tuple[Any, ...]]] = {}
    for e in entries:
        out.setdefault(e[1], []).append(e)
    return out


# ----------------------------------------------------------------------------- validation


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _tile(x: Any, where: str) -> int:
    if not isinstance(x, str):
        raise RecordError(f"{where}: a tile must be a string like '5m', got {x!r}")
    try:
        k = parse_tile(x)
    except ValueError as err:
        raise RecordError(f"{where}: malformed tile {x!r}: {err}") from None
    if tile_str(k) != x:
        raise RecordError(f"{where}: tile {x!r} is not in the canonical form {tile_str(k)!r}")
    return k


def _seat(x: Any, where: str, *, nullable: bool = False) -> None:
    if nullable and x is None:
        return
    if not _is_int(x) or not 0 <= x <= 3:
        raise RecordError(f"{where}: a seat 0..3 is expected, got {x!r}")


def validate_record(record: Any) -> Rules:
    """Check the structure of a record; returns its rules. Raises :class:`RecordError`."""
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
    if record.get("format") != RECORD_FORMAT:
        raise RecordError(
            f"field 'format': expected {RECORD_FORMAT!r}, got {record.get('format')!r}"
        )
    missing = [f for f in REQUIRED_FIELDS if f not in record]
    if missing:
        raise RecordError(f"missing field(s): {', '.join(missing)}")
    if not isinstance(record["rules"], dict):
        raise RecordError("field 'rules': an object of rule options is expected")
    try:
        rules = Rules.from_dict(record["rules"])
    except (ValueError, TypeError) as err:
        raise RecordError(f"field 'rules': {err}") from None
    dealer = record["dealer"]
    _seat(dealer, "field 'dealer'")
    hands = record["hands"]
    if not isinstance(hands, list) or len(hands) != 4:
        raise RecordError("field 'hands': a list of 4 hands is expected")
    counts = np.zeros(N_KINDS, np.int64)
    for seat, hand in enumerate(hands):
        want = 14 if seat == dealer else 13
        if not isinstance(hand, list) or len(hand) != want:
            n = len(hand) if isinstance(hand, list) else hand
            raise RecordError(
                f"field 'hands', seat {seat}: {want} tiles expected "
                f"({'dealer' if seat == dealer else 'not the dealer'}), got {n}"
            )
        for j, x in enumerate(hand):
            counts[_tile(x, f"field 'hands', seat {seat}, tile {j}")] += 1
    wall = record["wall"]
    if not isinstance(wall, list) or len(wall) > WALL_SIZE:
        raise RecordError(f"field 'wall': a list of at most {WALL_SIZE} tiles is expected")
    for j, x in enumerate(wall):
        counts[_tile(x, f"field 'wall', tile {j}")] += 1
    if (counts > 4).any():
        k = int(np.argmax(counts))
        raise RecordError(
            f"fields 'hands' + 'wall': {int(counts[k])} copies of {tile_str(k)} (at most 4)"
        )
    events = record["events"]
    if not isinstance(events, list):
        raise RecordError("field 'events': a list is expected")
    for i, e in enumerate(events):
        where = f"event {i}"
        if not isinstance(e, dict):
            raise RecordError(f"{where}: an object is expected, got {e!r}")
        _seat(e.get("seat"), f"{where}, field 'seat'")
        if e.get("act") not in EVENT_ACTS:
            raise RecordError(f"{where}, field 'act': one of {EVENT_ACTS} expected, "
                              f"got {e.get('act')!r}")
        if e["act"] == "void" and ("tile" in e) == ("suit" in e):
            raise RecordError(f"{where}: a void event has exactly one of 'tile' or 'suit'")
        if e["act"] == "void" and "suit" in e and e["suit"] not in tuple(SUITS):
            raise RecordError(f"{where}, field 'suit': 'm', 'p' or 's' expected, "
                              f"got {e['suit']!r}")
        if e["act"] == "discard" and "tile" not in e:
            raise RecordError(f"{where}: a discard event needs 'tile'")
        if "tile" in e:
            if e["act"] not in ("void", "discard", "kong"):
                raise RecordError(f"{where}: a {e['act']} event has no 'tile'")
            _tile(e["tile"], f"{where}, field 'tile'")
        if "auto" in e and not isinstance(e["auto"], bool):
            raise RecordError(f"{where}, field 'auto': true or false expected")
        if "legal" in e:
            lg = e["legal"]
            if not isinstance(lg, list) or not all(isinstance(x, str) for x in lg):
                raise RecordError(f"{where}, field 'legal': a list of action strings expected")
            for x in lg:
                try:
                    action_from_str(x)
                except ValueError as err:
                    raise RecordError(f"{where}, field 'legal': {err}") from None
    payments = record["payments"]
    if not isinstance(payments, list):
        raise RecordError("field 'payments': a list is expected")
    for j, p in enumerate(payments):
        where = f"payment {j}"
        if not isinstance(p, dict) or any(f not in p for f in PAYMENT_FIELDS):
            raise RecordError(f"{where}: an object with {', '.join(PAYMENT_FIELDS)} expected")
        if not _is_int(p["event"]) or p["event"] < 0:
            raise RecordError(f"{where}, field 'event': an event index expected, "
                              f"got {p['event']!r}")
        _seat(p["from"], f"{where}, field 'from'")
        _seat(p["to"], f"{where}, field 'to'", nullable=True)
        if not _is_int(p["points"]):
            raise RecordError(f"{where}, field 'points': an integer expected")
        if p["reason"] not in PAYMENT_REASONS:
            raise RecordError(f"{where}, field 'reason': one of {PAYMENT_REASONS} expected, "
                              f"got {p['reason']!r}")
    wins = record["wins"]
    if not isinstance(wins, list):
        raise RecordError("field 'wins': a list is expected")
    for j, w in enumerate(wins):
        where = f"win {j}"
        if not isinstance(w, dict) or any(f not in w for f in WIN_FIELDS):
            raise RecordError(f"{where}: an object with {', '.join(WIN_FIELDS)} expected")
        if not _is_int(w["event"]) or w["event"] < 0:
            raise RecordError(f"{where}, field 'event': an event index expected, "
                              f"got {w['event']!r}")
        _seat(w["seat"], f"{where}, field 'seat'")
        _seat(w["from"], f"{where}, field 'from'", nullable=True)
        _tile(w["tile"], f"{where}, field 'tile'")
        if not isinstance(w["fans"], dict) or any(
            f not in FAN_NAMES or not _is_int(c) for f, c in w["fans"].items()
        ):
            raise RecordError(f"{where}, field 'fans': fan names of RULES.md section 6 "
                              f"with integer counts expected, got {w['fans']!r}")
        if not _is_int(w["value"]):
            raise RecordError(f"{where}, field 'value': an integer expected")
    if record["end"] not in END_VALUES:
        raise RecordError(f"field 'end': one of {END_VALUES} expected, got {record['end']!r}")
    scores = record["scores"]
    if not isinstance(scores, list) or len(scores) != 4 or not all(_is_int(s) for s in scores):
        raise RecordError("field 'scores': a list of 4 integers expected")
    _seat(record["next_dealer"], "field 'next_dealer'")
    return rules


# ----------------------------------------------------------------------------- replay


def _ev_str(e: dict[str, Any]) -> str:
    parts = [str(e.get("act"))]
    if "tile" in e:
        parts.append(str(e["tile"]))
    if "suit" in e:
        parts.append(str(e["suit"]))
    return " ".join(parts)


def _same_move(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("seat", "act", "tile", "suit"))


def replay(record: dict[str, Any]) -> None:
    """Re-run ``record`` through the engine; raise :class:`RecordMismatch` (or
    :class:`RecordError` for a malformed record) at the first difference."""
    rules = validate_record(record)
    play_rules = rules.replace(deals_per_match=1)  # one deal: the record's own
    hands = [[parse_tile(x) for x in h] for h in record["hands"]]
    counts = [np.bincount(np.asarray(h, np.intp), minlength=N_KINDS).astype(np.int8)
              for h in hands]
    wall = [parse_tile(x) for x in record["wall"]]
    st = engine.reset_from_deal(counts, wall, dealer=record["dealer"], rules=play_rules)
    builder = RecordBuilder(st, 0, seed=record.get("seed"), legal=True)
    made = builder.record["events"]
    events = record["events"]
    i = 0
    while True:
        while i < len(made):  # events the engine made itself
            if i >= len(events):
                raise RecordMismatch(
                    f"the engine made the move {_ev_str(made[i])!r} itself (auto); the record "
                    f"ends before it", event=i, seat=made[i]["seat"], field="events")
            e = events[i]
            if not _same_move(e, made[i]):
                raise RecordMismatch(
                    f"the engine made the move {_ev_str(made[i])!r} of seat {made[i]['seat']} "
                    f"itself (auto); the record has {_ev_str(e)!r} of seat {e.get('seat')}",
                    event=i, seat=e.get("seat"), field="act")
            if not e.get("auto", False):
                raise RecordMismatch(
                    f"{_ev_str(e)!r} was made by the engine itself; the record does not mark "
                    "it \"auto\": true", event=i, seat=e["seat"], field="auto")
            if "legal" in e and e["legal"] != made[i]["legal"]:
                raise RecordMismatch(
                    f"legal options differ: record {e['legal']}, engine {made[i]['legal']}",
                    event=i, seat=e["seat"], field="legal")
            i += 1
        if i >= len(events):
            break
        e = events[i]
        seat = e["seat"]
        if bool(st.done[0]):
            raise RecordMismatch(
                f"the deal is already over ({builder.record.get('end')}) but the record goes "
                f"on with {_ev_str(e)!r}", event=i, seat=seat, field="events")
        if e.get("auto", False):
            raise RecordMismatch(
                f"marked \"auto\" but the engine made no move itself here: it waits for a "
                f"decision of seat {int(st.current[0])}", event=i, seat=seat, field="auto")
        current = int(st.current[0])
        if seat != current:
            raise RecordMismatch(
                f"the record has seat {seat} ({_ev_str(e)!r}) but the engine asks seat "
                f"{current}", event=i, seat=seat, field="seat")
        try:
            a = event_action(e)
        except ValueError as err:
            raise RecordError(f"event {i}: {err}") from None
        mask = engine.legal_mask(st)
        legal_now = sorted(ACTION_STRINGS[x] for x in np.flatnonzero(mask[0]))
        if "legal" in e and e["legal"] != legal_now:
            extra = sorted(set(e["legal"]) - set(legal_now))
            lack = sorted(set(legal_now) - set(e["legal"]))
            raise RecordMismatch(
                f"legal options differ: record {e['legal']}, engine {legal_now} "
                f"(only in the record: {extra}; only in the engine: {lack})",
                event=i, seat=seat, field="legal")
        if not mask[0, a]:
            raise RecordMismatch(
                f"illegal action {ACTION_STRINGS[a]!r}; legal: {legal_now}",
                event=i, seat=seat, field="act")
        ledger = engine.Ledger()
        st, _, _ = engine.step(st, [a], mask=mask, ledger=ledger)
        builder.feed(ledger.entries, legal_now)
        i += 1
    if not builder.finished:
        raise RecordMismatch(
            f"the record ends after {len(events)} events but the deal is not over: seat "
            f"{int(st.current[0])} is to act", event=len(events), field="events")
    _compare(record, builder.record)


def _compare(record: dict[str, Any], mine: dict[str, Any]) -> None:
    for name, fields in (("payments", PAYMENT_FIELDS), ("wins", WIN_FIELDS)):
        theirs, ours = record[name], mine[name]
        for j in range(max(len(theirs), len(ours))):
            if j >= len(theirs):
                o = ours[j]
                raise RecordMismatch(
                    f"{name}[{j}] missing from the record; the engine has {o}",
                    event=o["event"], seat=o.get("seat", o.get("from")), field=name)
            t = theirs[j]
            if j >= len(ours):
                raise RecordMismatch(
                    f"{name}[{j}] = {t} is not made by the engine (it has {len(ours)})",
                    event=t["event"], seat=t.get("seat", t.get("from")), field=name)
            o = ours[j]
            for f in fields:
                if t[f] != o[f]:
                    raise RecordMismatch(
                        f"{name}[{j}].{f}: record {t[f]!r}, engine {o[f]!r} (engine {name[:-1]}"
                        f" {o})", event=t["event"], seat=t.get("seat", t.get("from")),
                        field=f"{name}[{j}].{f}")
    for f in ("end", "scores", "next_dealer"):
        if record[f] != mine[f]:
            raise RecordMismatch(f"record {record[f]!r}, engine {mine[f]!r}", field=f)


# ----------------------------------------------------------------------------- files


def write_jsonl(records: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write records one per line (compact JSON); returns how many."""
    n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":"), ensure_ascii=False))
            f.write("\n")
            n += 1
    return n


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read records written by :func:`write_jsonl` (blank lines skipped)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, line {lineno}: not valid JSON: {err}") from None
    return out


def check_file(path: str | Path, out: Any = None) -> int:
    """Replay every record of a JSONL file; print a summary; return the number of bad
    records."""
    out = out or sys.stdout
    records = read_jsonl(path)
    bad = 0
    for n, rec in enumerate(records):
        try:
            replay(rec)
        except ValueError as err:
            bad += 1
            seed = rec.get("seed") if isinstance(rec, dict) else None
            print(f"record {n} (seed {seed}): {type(err).__name__}: {err}", file=out)
    if bad:
        print(f"{bad} of {len(records)} records failed", file=out)
    else:
        print(f"{len(records)} records OK", file=out)
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sichuan_env.records",
                                     description="Game records (sichuan-record/1).")
    sub = parser.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="replay every record of a JSONL file")
    chk.add_argument("file")
    args = parser.parse_args(argv)
    try:
        bad = check_file(args.file)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Game records (``sichuan-record/1``, see docs/record_format.md): build, replay, store.

* :class:`RecordBuilder` turns the engine's :class:`~sichuan_env.core.engine.Ledger` entries of
  one table into a record dict (used by :mod:`sichuan_env.records.selfplay` and by :func:`replay`).
* :func:`replay` re-runs a record through the engine and raises :class:`RecordMismatch`
  naming the event index, seat and field of the first difference, or :class:`RecordError`
  for a record that is not well formed; :func:`replay_steps` yields the table after each
  decision (the replay viewer uses it).
* :func:`write_jsonl` / :func:`read_jsonl` / :func:`iter_jsonl`: one record per line.

Command line::

    python -m sichuan_env.records.record check FILE.jsonl [--show N]

replays every record, prints the first N problems (record number, line, seed, event, seat,
field) and one summary line (``N records OK`` or ``K of N records failed``), and exits
with status 1 on any problem, 0 otherwise.

Records of other programs: everything the format leaves open is accepted. Events that the
engine made by itself (the forced discard of a set-aside tile) carry ``"auto": true`` in
this project's records; the mark is not part of the format, so a record may leave it out,
but a mark that is present must be right. Payments and wins caused by one event are
simultaneous and compared as multisets; so are the answers to one claim window, which may
be listed in any order (a Shoot-after-Kong refund then points at the window's first ``hu``
as listed, and wall-end payments at the record's last event, also when the deal ends
inside a claim window).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.actions import (
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
from sichuan_env.core.hands import FAN_NAMES
from sichuan_env.core.rules import Rules
from sichuan_env.core.state import ANS_NONE, CLAIM, END_NAMES, ROB, State
from sichuan_env.core.tiles import N_KINDS, SUITS, parse_tile, tile_str
from sichuan_env.core.vocab import WALL_SIZE

RECORD_FORMAT = "sichuan-record/1"

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
    "ReplayStep",
    "replay",
    "replay_steps",
    "validate_record",
    "write_jsonl",
]


class _RecordProblem(ValueError):  # noqa: N818 (base of RecordError and RecordMismatch)
    """A problem with a record, located by ``line`` (in a JSONL file), ``event`` (index in
    the record's ``events``), ``seat`` and ``field``; ``str()`` puts the place first."""

    def __init__(self, message: str, *, line: int | None = None, event: int | None = None,
                 seat: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.event = event
        self.seat = seat
        self.field = field

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.event is not None:
            where.append(f"event {self.event}")
        if self.seat is not None:
            where.append(f"seat {self.seat}")
        if self.field is not None:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class RecordError(_RecordProblem):
    """A record (or a records file) that is not well formed: not JSON, a missing field, a
    wrong type, an unknown tile, an impossible deal. Found before any move is replayed."""


class RecordMismatch(_RecordProblem):  # noqa: N818 (the name the project uses)
    """The engine disagrees with a well-formed record. ``event`` (index or None), ``seat``
    and ``field`` say where; the message says what."""


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
        self._settling = False  # after the ledger's "settle": wall-end payments
        self._new_wall_end: list[dict[str, Any]] = []
        #: index in ``record["payments"]`` of the first wall-end payment (``ready``,
        #: ``flower_pig``, a not-ready seat's ``kong_refund``); None before the wall end
        self.wall_end_from: int | None = None
        self._kong_paid: list[tuple[int, int, int]] = []  # outstanding (from, to, points)

    def feed(self, entries: Iterable[tuple[Any, ...]], legal_now: Sequence[str] | None = None,
             ) -> int:
        """Take one step's entries of this table. ``legal_now``: the options offered at the
        step's decision (put on its first non-auto event). Returns entries consumed.

        A step's payments and wins are listed in event order (claims are answered one seat
        at a time but resolved together), and each ``kong_refund`` is split into one
        refund per original kong payment (docs/rules.md section 12, points 10 and 13)."""
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
            elif kind == "settle":
                self._settling = True
            elif kind == "end":
                self._flush()
                self._end(entry[2], entry[3])
        self._flush()
        return n

    def _flush(self) -> None:
        rec = self.record
        rec["payments"].extend(sorted(self._new_payments, key=lambda p: p["event"]))
        rec["wins"].extend(sorted(self._new_wins, key=lambda w: w["event"]))
        if self._new_wall_end:  # all at the step's last event: after the others
            self.wall_end_from = len(rec["payments"])
            rec["payments"].extend(self._new_wall_end)
        self._new_payments = []
        self._new_wins = []
        self._new_wall_end = []

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
        new = self._new_wall_end if self._settling else self._new_payments
        if reason == "kong_refund":
            for pts in self._refunded(payer=int(to), receiver=int(frm), points=int(points)):
                new.append({"event": ev, "from": int(frm), "to": int(to), "points": pts,
                            "reason": reason})
            return
        pay = {"event": ev, "from": int(frm), "to": None if to < 0 else int(to),
               "points": int(points), "reason": reason}
        new.append(pay)
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

# Rule options a record must list: every one that changes how a deal is played.
# ``deals_per_match`` is about matches, not one deal: a record may leave it out.
OPTIONAL_RULE_OPTIONS = ("deals_per_match",)
CLAIM_ACTS = ("pass", "pung", "hu", "kong")  # "kong" without a tile


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _kind(x: Any) -> str:
    return "null" if x is None else type(x).__name__


def _tile(x: Any, *, field: str, event: int | None = None) -> int:
    if not isinstance(x, str):
        raise RecordError(f"a tile must be a string like '5m', got {x!r} ({_kind(x)})",
                          event=event, field=field)
    try:
        k = parse_tile(x)
    except ValueError as err:
        raise RecordError(f"malformed tile {x!r}: {err}", event=event, field=field) from None
    if tile_str(k) != x:
        raise RecordError(f"tile {x!r} is not in the canonical form {tile_str(k)!r}",
                          event=event, field=field)
    return k


def _seat(x: Any, *, field: str, event: int | None = None, nullable: bool = False) -> None:
    if nullable and x is None:
        return
    if not _is_int(x) or not 0 <= x <= 3:
        what = "a seat 0..3 or null" if nullable else "a seat 0..3"
        raise RecordError(f"{what} is expected, got {x!r}", event=event, field=field)


def _rules(options: Any) -> Rules:
    if not isinstance(options, dict):
        raise RecordError(f"an object of rule options is expected, got {_kind(options)}",
                          field="rules")
    known = [f.name for f in dataclass_fields(Rules)]
    missing = [n for n in known if n not in options and n not in OPTIONAL_RULE_OPTIONS]
    if missing:
        raise RecordError(f"rule option(s) {', '.join(missing)} missing (a record lists every "
                          "rule option)", field="rules")
    try:
        return Rules.from_dict(options)
    except (ValueError, TypeError) as err:
        raise RecordError(str(err), field="rules") from None


def _validate_event(i: int, e: Any) -> None:
    if not isinstance(e, dict):
        raise RecordError(f"an object is expected, got {e!r}", event=i)
    if "seat" not in e or "act" not in e:
        raise RecordError("an event needs 'seat' and 'act'", event=i,
                          field="seat" if "seat" not in e else "act")
    _seat(e["seat"], event=i, field="seat")
    act = e["act"]
    if act not in EVENT_ACTS:
        raise RecordError(f"one of {', '.join(EVENT_ACTS)} expected, got {act!r}",
                          event=i, field="act")
    if act == "void" and ("tile" in e) == ("suit" in e):
        raise RecordError("a void event has exactly one of 'tile' or 'suit'", event=i,
                          field="tile")
    if "suit" in e:
        if act != "void":
            raise RecordError(f"a {act} event has no 'suit'", event=i, field="suit")
        if e["suit"] not in tuple(SUITS):
            raise RecordError(f"'m', 'p' or 's' expected, got {e['suit']!r}", event=i,
                              field="suit")
    if act == "discard" and "tile" not in e:
        raise RecordError("a discard event needs 'tile'", event=i, field="tile")
    if "tile" in e:
        if act not in ("void", "discard", "kong"):
            raise RecordError(f"a {act} event has no 'tile'", event=i, field="tile")
        _tile(e["tile"], event=i, field="tile")
    if "auto" in e and not isinstance(e["auto"], bool):
        raise RecordError(f"true or false expected, got {e['auto']!r}", event=i, field="auto")
    if "legal" in e:
        lg = e["legal"]
        if not isinstance(lg, list) or not all(isinstance(x, str) for x in lg):
            raise RecordError("a list of action strings is expected", event=i, field="legal")
        for x in lg:
            try:
                action_from_str(x)
            except ValueError as err:
                raise RecordError(str(err), event=i, field="legal") from None


def _validate_entry(name: str, j: int, x: Any, fields: tuple[str, ...]) -> None:
    """The common part of a payment or a win: an object with ``fields`` and an event
    index."""
    where = f"{name}[{j}]"
    if not isinstance(x, dict):
        raise RecordError(f"an object with {', '.join(fields)} is expected, got {_kind(x)}",
                          field=where)
    missing = [f for f in fields if f not in x]
    if missing:
        raise RecordError(f"missing {', '.join(missing)}", field=where)
    ev = x["event"]
    if not _is_int(ev) or ev < 0:  # one past the events is found by the replay
        raise RecordError(f"an event index 0, 1, ... is expected, got {ev!r}",
                          field=f"{where}.event")


def validate_record(record: Any) -> Rules:
    """Check the structure of a record; returns its rules. Raises :class:`RecordError`
    naming the field (and the event) at fault. Fields not named by the format are
    allowed and ignored; so is a missing ``auto`` mark."""
    if not isinstance(record, dict):
        raise RecordError(f"a record must be a JSON object, got {_kind(record)}")
    if record.get("format") != RECORD_FORMAT:
        raise RecordError(f"expected {RECORD_FORMAT!r}, got {record.get('format')!r}",
                          field="format")
    missing = [f for f in REQUIRED_FIELDS if f not in record]
    if missing:
        raise RecordError(f"missing field(s): {', '.join(missing)}", field=missing[0])
    rules = _rules(record["rules"])
    seed = record["seed"]
    if seed is not None and not _is_int(seed):
        raise RecordError(f"an integer or null is expected, got {seed!r}", field="seed")
    if "deal_index" in record and not (_is_int(record["deal_index"])
                                       and record["deal_index"] >= 0):
        raise RecordError("a deal index 0, 1, ... is expected", field="deal_index")
    dealer = record["dealer"]
    _seat(dealer, field="dealer")
    hands = record["hands"]
    if not isinstance(hands, list) or len(hands) != 4:
        raise RecordError("a list of 4 hands is expected", field="hands")
    counts = np.zeros(N_KINDS, np.int64)
    for seat, hand in enumerate(hands):
        want = 14 if seat == dealer else 13
        if not isinstance(hand, list) or len(hand) != want:
            n = len(hand) if isinstance(hand, list) else repr(hand)
            raise RecordError(
                f"seat {seat}: {want} tiles expected "
                f"({'dealer' if seat == dealer else 'not the dealer'}), got {n}",
                field="hands")
        for j, x in enumerate(hand):
            counts[_tile(x, field=f"hands[{seat}][{j}]")] += 1
    wall = record["wall"]
    if not isinstance(wall, list) or len(wall) > WALL_SIZE:
        n = f"{len(wall)} tiles" if isinstance(wall, list) else _kind(wall)
        raise RecordError(f"a list of at most {WALL_SIZE} tiles is expected, got {n}",
                          field="wall")
    for j, x in enumerate(wall):
        counts[_tile(x, field=f"wall[{j}]")] += 1
    if (counts > 4).any():
        k = int(np.argmax(counts))
        raise RecordError(f"{int(counts[k])} copies of {tile_str(k)} in the hands and wall "
                          "(at most 4)", field="hands")
    events = record["events"]
    if not isinstance(events, list):
        raise RecordError(f"a list is expected, got {_kind(events)}", field="events")
    for i, e in enumerate(events):
        _validate_event(i, e)
    payments = record["payments"]
    if not isinstance(payments, list):
        raise RecordError(f"a list is expected, got {_kind(payments)}", field="payments")
    for j, p in enumerate(payments):
        _validate_entry("payments", j, p, PAYMENT_FIELDS)
        where = f"payments[{j}]"
        _seat(p["from"], field=f"{where}.from")
        _seat(p["to"], field=f"{where}.to", nullable=True)
        if not _is_int(p["points"]):
            raise RecordError(f"an integer is expected, got {p['points']!r}",
                              field=f"{where}.points")
        if p["reason"] not in PAYMENT_REASONS:
            raise RecordError(f"one of {', '.join(PAYMENT_REASONS)} expected, got "
                              f"{p['reason']!r}", field=f"{where}.reason")
    wins = record["wins"]
    if not isinstance(wins, list):
        raise RecordError(f"a list is expected, got {_kind(wins)}", field="wins")
    for j, w in enumerate(wins):
        _validate_entry("wins", j, w, WIN_FIELDS)
        where = f"wins[{j}]"
        _seat(w["seat"], field=f"{where}.seat")
        _seat(w["from"], field=f"{where}.from", nullable=True)
        _tile(w["tile"], field=f"{where}.tile")
        if not isinstance(w["fans"], dict) or any(
            f not in FAN_NAMES or not _is_int(c) for f, c in w["fans"].items()
        ):
            raise RecordError(f"fan names of docs/rules.md section 6 with integer counts expected, "
                              f"got {w['fans']!r}", field=f"{where}.fans")
        if not _is_int(w["value"]):
            raise RecordError(f"an integer is expected, got {w['value']!r}",
                              field=f"{where}.value")
    if record["end"] not in END_VALUES:
        raise RecordError(f"one of {', '.join(END_VALUES)} expected, got {record['end']!r}",
                          field="end")
    scores = record["scores"]
    if not isinstance(scores, list) or len(scores) != 4 or not all(_is_int(s) for s in scores):
        raise RecordError(f"a list of 4 integers is expected, got {scores!r}", field="scores")
    _seat(record["next_dealer"], field="next_dealer")
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


def _is_claim_answer(e: dict[str, Any]) -> bool:
    return e["act"] in CLAIM_ACTS and "tile" not in e


def _legal_differs(e: dict[str, Any], engine_legal: list[str], i: int) -> RecordMismatch:
    if sorted(e["legal"]) == engine_legal:
        why = "the same options, but not in plain string order (Python's sorted)"
    else:
        extra = sorted(set(e["legal"]) - set(engine_legal))
        lack = sorted(set(engine_legal) - set(e["legal"]))
        why = f"only in the record: {extra}; only in the engine: {lack}"
    return RecordMismatch(f"legal options differ: record {e['legal']}, engine "
                          f"{engine_legal} ({why})", event=i, seat=e["seat"], field="legal")


@dataclass
class ReplayStep:
    """One decision of a replayed record and what followed it.

    ``events``: the record indices of the events it applied (the decision first, then any
    move the engine made itself, such as a forced discard); ``legal``: the options the
    engine offered at the decision; ``state``: the table after it; ``payments`` and
    ``wins``: those it caused, in the record's event numbering."""

    events: list[int]
    legal: list[str]
    state: State
    payments: list[dict[str, Any]]
    wins: list[dict[str, Any]]


class _Positions:
    """Where the engine's events lie in the record. ``order[p]``: the record index of the
    event the engine applied at position ``p`` (claim answers may be listed in another
    order than the engine asks them); ``window[p]``: the position that opened the claim
    window a claim answer at ``p`` belongs to."""

    def __init__(self, n: int, builder: RecordBuilder) -> None:
        self.order = list(range(n))
        self.window: dict[int, int] = {}
        self.builder = builder

    def payments(self, start: int, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The engine's payments from index ``start`` on, renumbered (:meth:`payment`);
        wall-end payments point at the record's last event, whatever order the answers
        of the deal's last claim window are listed in."""
        pays = self.builder.record["payments"]
        wall_end = self.builder.wall_end_from
        return [dict(x, event=len(events) - 1)
                if wall_end is not None and j >= wall_end else self.payment(x, events)
                for j, x in enumerate(pays[start:], start)]

    def first_hu(self, window: int, events: list[dict[str, Any]]) -> int | None:
        hus = [self.order[p] for p, w in self.window.items()
               if w == window and events[self.order[p]]["act"] == "hu"]
        return min(hus) if hus else None

    def payment(self, pay: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
        """A payment of the engine's record (not a wall-end one), renumbered: a
        Shoot-after-Kong ``kong_refund`` points at the first ``hu`` of its claim window in
        the record's order."""
        pos = pay["event"]
        first = None
        if pay["reason"] == "kong_refund" and pos in self.window:
            first = self.first_hu(self.window[pos], events)
        return dict(pay, event=self.order[pos] if first is None else first)

    def win(self, win: dict[str, Any]) -> dict[str, Any]:
        return dict(win, event=self.order[win["event"]])


def replay_steps(record: dict[str, Any]) -> Iterator[ReplayStep]:
    """Re-run ``record`` through the engine one decision at a time, yielding a
    :class:`ReplayStep` for the deal (no events yet) and after each decision. Raises like
    :func:`replay` at the first difference (payments, wins, end, scores and next dealer
    are checked after the last step). Each step's ``state`` is a new object."""
    rules = validate_record(record)
    play_rules = rules.replace(deals_per_match=1)  # one deal: the record's own
    counts = [np.bincount(np.asarray([parse_tile(x) for x in h], np.intp),
                          minlength=N_KINDS).astype(np.int8) for h in record["hands"]]
    wall = [parse_tile(x) for x in record["wall"]]
    try:
        st = engine.reset_from_deal(counts, wall, dealer=record["dealer"], rules=play_rules)
    except ValueError as err:
        raise RecordError(f"impossible deal: {err}", field="hands") from None
    builder = RecordBuilder(st, 0, seed=record.get("seed"), legal=True)
    made = builder.record["events"]
    events = record["events"]
    pos = _Positions(len(events), builder)
    order = pos.order
    window_open = -1
    p = 0
    step_start = 0
    legal_now: list[str] = []
    n_pay = n_win = 0
    yield ReplayStep(events=[], legal=[], state=st, payments=[], wins=[])  # the deal
    while True:
        while p < len(made):  # moves the engine made itself
            if p >= len(events):
                raise RecordMismatch(
                    f"the engine made the move {_ev_str(made[p])!r} itself (auto); the record "
                    "ends before it", event=p, seat=made[p]["seat"], field="events")
            i = order[p]
            e = events[i]
            if not _same_move(e, made[p]):
                raise RecordMismatch(
                    f"the engine made the move {_ev_str(made[p])!r} of seat {made[p]['seat']} "
                    f"itself (a forced discard); the record has {_ev_str(e)!r} of seat "
                    f"{e['seat']}", event=i, seat=e["seat"], field="act")
            if e.get("auto", True) is not True:
                raise RecordMismatch(
                    f"{_ev_str(e)!r} was made by the engine itself (a forced discard) but the "
                    "record marks it \"auto\": false", event=i, seat=e["seat"], field="auto")
            if "legal" in e and e["legal"] != made[p]["legal"]:
                raise _legal_differs(e, made[p]["legal"], i)
            window_open = p
            p += 1
        if p > step_start:
            pays = builder.record["payments"]
            wins = builder.record["wins"]
            yield ReplayStep(
                events=order[step_start:p], legal=legal_now, state=st,
                payments=pos.payments(n_pay, events),
                wins=[pos.win(x) for x in wins[n_win:]])
            n_pay, n_win = len(pays), len(wins)
            step_start = p
        if p >= len(events):
            break
        if bool(st.done[0]):
            e = events[order[p]]
            raise RecordMismatch(
                f"the deal is already over ({builder.record.get('end')}) but the record goes "
                f"on with {_ev_str(e)!r}", event=order[p], seat=e["seat"], field="events")
        current = int(st.current[0])
        in_window = int(st.phase[0]) in (CLAIM, ROB)
        if in_window and events[order[p]]["seat"] != current:
            # simultaneous answers: take this seat's answer from later in the same window
            pending = sum(1 for s in range(4) if st.claim_opts[0, s]
                          and st.claim_answer[0, s] == ANS_NONE)
            for q in range(p + 1, min(p + pending, len(events))):
                e = events[order[q]]
                if not _is_claim_answer(e):
                    break
                if e["seat"] == current:
                    order[p], order[q] = order[q], order[p]
                    break
        i = order[p]
        e = events[i]
        seat = e["seat"]
        if "auto" in e and e["auto"]:
            raise RecordMismatch(
                f"marked \"auto\" but the engine made no move itself here: it waits for a "
                f"decision of seat {current}", event=i, seat=seat, field="auto")
        if seat != current:
            raise RecordMismatch(
                f"the record has seat {seat} ({_ev_str(e)!r}) but the engine asks seat "
                f"{current}", event=i, seat=seat, field="seat")
        a = event_action(e)
        mask = st.legal_action_mask
        legal_now = sorted(ACTION_STRINGS[x] for x in np.flatnonzero(mask[0]))
        if "legal" in e and e["legal"] != legal_now:
            raise _legal_differs(e, legal_now, i)
        if not mask[0, a]:
            raise RecordMismatch(f"illegal action {ACTION_STRINGS[a]!r}; legal: {legal_now}",
                                 event=i, seat=seat, field="act")
        if in_window:
            pos.window[p] = window_open
        else:
            window_open = p
        ledger = engine.Ledger()
        st, _, _ = engine.step(st, [a], ledger=ledger)
        builder.feed(ledger.entries, legal_now)
        p += 1
    if not builder.finished:
        raise RecordMismatch(
            f"the record ends after {len(events)} events but the deal is not over: seat "
            f"{int(st.current[0])} is to act", event=len(events), field="events")
    mine = dict(builder.record)
    evs: list[dict[str, Any]] = [{}] * len(order)
    for q, e in enumerate(builder.record["events"]):
        evs[order[q]] = e
    mine["events"] = evs
    mine["payments"] = pos.payments(0, events)
    mine["wins"] = [pos.win(x) for x in builder.record["wins"]]
    _compare(record, mine)
    return mine


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """Re-run ``record`` through the engine; raise :class:`RecordMismatch` (or
    :class:`RecordError` for a malformed record) at the first difference. Returns the
    engine's own record of the deal, with events in the record's order.

    What the format leaves open is accepted: an event the engine makes itself (the forced
    discard of a set-aside tile) may or may not carry ``"auto": true`` (a wrong mark is a
    mismatch); the answers to one claim window may come in any order; payments and wins
    caused by one event are compared as multisets."""
    steps = replay_steps(record)
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


def _entry_key(name: str, x: dict[str, Any]) -> tuple[Any, ...]:
    fields = PAYMENT_FIELDS if name == "payments" else WIN_FIELDS
    return tuple(sorted(x[f].items()) if f == "fans" else x[f] for f in fields)


def _compare(record: dict[str, Any], mine: dict[str, Any]) -> None:
    """Payments and wins as multisets per event (their order within one event is not
    information), then ``end``, ``scores`` and ``next_dealer``."""
    for name, fields in (("payments", PAYMENT_FIELDS), ("wins", WIN_FIELDS)):
        theirs: dict[int, list[int]] = {}
        for j, x in enumerate(record[name]):
            theirs.setdefault(x["event"], []).append(j)
        ours: dict[int, list[dict[str, Any]]] = {}
        for x in mine[name]:
            ours.setdefault(x["event"], []).append(x)
        for ev in sorted(set(theirs) | set(ours)):
            left = list(ours.get(ev, []))
            unmatched = []
            for j in theirs.get(ev, []):
                key = _entry_key(name, record[name][j])
                hit = next((k for k, o in enumerate(left) if _entry_key(name, o) == key), None)
                if hit is None:
                    unmatched.append(j)
                else:
                    del left[hit]
            if not unmatched and not left:
                continue
            if unmatched:
                j = unmatched[0]
                t = record[name][j]
                seat = t["seat"] if name == "wins" else t["from"]
                if left:  # name the first field that differs from the closest engine entry
                    o = min(left, key=lambda o: sum(o[f] != t[f] for f in fields))
                    f = next(f for f in fields if o[f] != t[f])
                    raise RecordMismatch(
                        f"{name}[{j}].{f}: record {t[f]!r}, engine {o[f]!r} (record {t}; "
                        f"engine {o})", event=ev, seat=seat, field=f"{name}[{j}].{f}")
                raise RecordMismatch(f"{name}[{j}] = {t} is not made by the engine",
                                     event=ev, seat=seat, field=name)
            o = left[0]
            raise RecordMismatch(f"the engine makes {name[:-1]} {o}; the record lacks it",
                                 event=ev, seat=o["seat"] if name == "wins" else o["from"],
                                 field=name)
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


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON or RecordError)`` for every non-blank line of a JSONL
    file, so that one bad line does not hide the others. A file with no record at all
    yields one :class:`RecordError`. ``OSError`` if the file cannot be opened."""
    n = 0
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                n += 1
                yield lineno, RecordError("not UTF-8 text (is this a records file?)",
                                          line=lineno)
                continue
            if not line.strip():
                continue
            n += 1
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as err:
                cut = " (the line is cut short)" if err.pos >= len(line.rstrip()) else ""
                yield lineno, RecordError(f"not valid JSON{cut}: {err.msg} at column "
                                          f"{err.colno}", line=lineno)
            except RecursionError:
                yield lineno, RecordError("JSON nested too deeply", line=lineno)
    if n == 0:
        yield 0, RecordError(f"{path}: the file holds no record (it is empty)")


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read records written by :func:`write_jsonl` (blank lines skipped). Raises
    :class:`RecordError` (with the line number) for a line that is not JSON and for a
    file with no record."""
    out = []
    for _, rec in iter_jsonl(path):
        if isinstance(rec, RecordError):
            raise rec
        out.append(rec)
    return out


def check_file(path: str | Path, out: Any = None, *, show: int = 10) -> int:
    """Replay every record of a JSONL file; print the first ``show`` problems (one line
    each: line number, seed, what and where) and then one summary line. Returns the
    number of problems (bad lines and records that do not replay)."""
    out = out or sys.stdout
    total = bad = 0
    for n, (lineno, rec) in enumerate(iter_jsonl(path)):
        err: _RecordProblem | None = None
        total += lineno > 0  # line 0: the file holds no record
        if isinstance(rec, RecordError):
            err = rec
        else:
            try:
                replay(rec)
            except _RecordProblem as problem:
                problem.line = lineno
                err = problem
        if err is None:
            continue
        bad += 1
        if bad <= show:
            seed = rec.get("seed") if isinstance(rec, dict) else None
            label = f" (seed {seed})" if seed is not None else ""
            print(f"record {n}{label}: {type(err).__name__}: {err}", file=out)
    if bad == 0:
        print(f"{total} records OK", file=out)
    else:
        more = f"; the first {show} shown" if bad > show else ""
        if total:
            print(f"{bad} of {total} records failed{more}", file=out)
        else:
            print(f"no record could be read ({bad} problem(s))", file=out)
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sichuan_env.records.record",
                                     description="Game records (sichuan-record/1).")
    sub = parser.add_subparsers(dest="command", required=True)
    chk = sub.add_parser("check", help="replay every record of a JSONL file; exit 1 on any "
                         "problem")
    chk.add_argument("file")
    chk.add_argument("--show", type=int, default=10, metavar="N",
                     help="print the first N problems (default 10)")
    args = parser.parse_args(argv)
    if args.show < 0:
        parser.error("--show must be 0 or more")
    try:
        bad = check_file(args.file, show=args.show)
    except OSError as err:
        print(f"error: cannot read {args.file}: {err.strerror or err}", file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

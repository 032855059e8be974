"""The messages of the bot protocol ``sichuan-bot/1`` (docs/protocol.md): built from a
:class:`~sichuan_env.seats.view.SeatView` and nothing else, and read back into one.

* :func:`view_messages` turns one row of a seat view into the JSON object ``view`` of a
  request (seats absolute, tiles as strings); :func:`views_from_messages` turns such
  objects back into a :class:`SeatView` of n rows, exactly (a bot written in Python, such
  as :mod:`sichuan_env.seats.bot_server`, gets the very arrays the arena's own bots get).
* :func:`view_events` lists what changed between two such objects of one seat as events
  in the notation of ``sichuan-record/1`` (docs/record_format.md), with the seat's own
  answer first: what the seat has seen since its previous request.
* :class:`Stream` keeps, for one seat of one deal, the previous view and answer, and
  builds each ``request`` line.

Since every message is computed from seat views alone, a message cannot hold what the
seat may not know (``tests/test_protocol.py`` changes every hidden fact and finds the
messages byte-identical). The module does no input or output; the process side is
:mod:`sichuan_env.seats.exec_agent` and :mod:`sichuan_env.seats.bot_server`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.core.actions import ACTION_STRINGS, action_from_str
from sichuan_env.core.rules import Rules
from sichuan_env.core.state import PHASE_NAMES, RIVER_SIZE
from sichuan_env.core.vocab import MELD_NAMES, N_KINDS, SUITS
from sichuan_env.seats.view import SeatView

SCHEMA_FILE = Path(__file__).with_name("protocol.schema.json")
"""The protocol's messages as JSON Schema 2020-12 (shipped with the package)."""


def json_schema() -> dict[str, Any]:
    """The protocol's JSON Schema (:data:`SCHEMA_FILE`), for a bot author's validator."""
    return json.loads(SCHEMA_FILE.read_text())

__all__ = [
    "PROTOCOL", "ProtocolError", "TILES", "view_messages", "views_from_messages",
    "view_events", "Stream", "hello_message", "dumps", "loads", "legal_strings", "legal_lists",
    "parse_answer", "answer_action",
]

PROTOCOL = "sichuan-bot/1"
#: tile strings by kind
TILES: tuple[str, ...] = tuple(f"{k % 9 + 1}{SUITS[k // 9]}" for k in range(N_KINDS))
_KIND_OF = {t: k for k, t in enumerate(TILES)}
_MELD_CODE = {name: code for code, name in enumerate(MELD_NAMES) if name}
_PHASE_CODE = {name: code for code, name in enumerate(PHASE_NAMES)}


class ProtocolError(ValueError):
    """A message that does not follow ``sichuan-bot/1`` (one line saying what is wrong)."""


try:  # the same bytes, about five times faster (the ``bots`` extra)
    import orjson
except ImportError:  # pragma: no cover - depends on the installed extras
    orjson = None


def dumps(message: dict[str, Any]) -> str:
    """One message as one line of compact JSON (no newline): ``json.dumps`` with
    separators ``,`` and ``:``, written by orjson when it is installed (the same text for
    these messages: ASCII strings, integers, booleans, null)."""
    if orjson is not None:
        return orjson.dumps(message).decode()
    return json.dumps(message, separators=(",", ":"))


def loads(line: str | bytes) -> Any:
    """One JSON text (orjson when installed); ``ValueError`` when it is not JSON."""
    if orjson is not None:
        return orjson.loads(line)
    return json.loads(line)


_TILE_OBJECTS = np.array(TILES + (None,), dtype=object)  # index -1: None
_KINDS = np.arange(N_KINDS)


def _tile_lists(counts: np.ndarray) -> list[list[str]]:
    """Per row of (n, 27) tile counts, the tiles as strings in kind order."""
    n = counts.shape[0]
    flat = _TILE_OBJECTS[np.repeat(np.tile(_KINDS, n), counts.reshape(-1))].tolist()
    ends = np.cumsum(counts.sum(1, dtype=np.int64)).tolist()
    out, lo = [], 0
    for hi in ends:
        out.append(flat[lo:hi])
        lo = hi
    return out


def view_messages(v: SeatView) -> list[dict[str, Any]]:
    """Every row of the seat view ``v`` as the request's ``view`` object
    (docs/protocol.md): every field of :class:`SeatView`, per-seat lists in absolute seat
    order."""
    n = v.seat.shape[0]
    seat = v.seat.astype(np.int64)
    absolute = (np.arange(4)[None, :] - seat[:, None]) % 4  # (n, 4): relative seat of s
    rows = np.arange(n)[:, None]

    def by_seat(a: np.ndarray) -> np.ndarray:  # (n, 4, ...) relative -> absolute order
        return a[rows, absolute]

    river = by_seat(v.river)
    river_len = by_seat(v.river_len).astype(np.int64)
    valid = np.arange(river.shape[2])[None, None, :] < river_len[:, :, None]
    river_tiles = _TILE_OBJECTS[river[valid]].tolist()
    river_ends = np.cumsum(river_len.reshape(-1)).tolist()
    meld = by_seat(v.meld)
    mi, ms, mk = np.nonzero(meld)
    meld_lists: list[list[list[dict[str, str]]]] = [[[], [], [], []] for _ in range(n)]
    for i, s, k, code in zip(mi.tolist(), ms.tolist(), mk.tolist(),
                             meld[mi, ms, mk].tolist(), strict=True):
        meld_lists[i][s].append({"type": MELD_NAMES[code], "tile": TILES[k]})
    hands = _tile_lists(v.hand)
    live = _tile_lists(v.live_discards)
    won = _tile_lists(v.won_tiles)
    void = by_seat(v.void).tolist()
    revealed = by_seat(v.void_revealed).tolist()
    hu = by_seat(v.hu).tolist()
    hu_tile = _TILE_OBJECTS[by_seat(v.hu_tile)].tolist()
    scores = by_seat(v.scores).tolist()
    match = by_seat(v.match_scores).tolist()
    drawn = _TILE_OBJECTS[v.drawn].tolist()
    aside = _TILE_OBJECTS[v.set_aside].tolist()
    claim = _TILE_OBJECTS[v.claim_tile].tolist()
    dealer = ((v.dealer + seat) % 4).tolist()
    active = ((v.active + seat) % 4).tolist()
    phase, deal_index = v.phase.tolist(), v.deal_index.tolist()
    wall_left, passed_hu = v.wall_left.tolist(), v.passed_hu.tolist()
    out = []
    lo = 0
    for i, me in enumerate(seat.tolist()):
        rivers = []
        for j in range(4 * i, 4 * i + 4):
            hi = river_ends[j]
            rivers.append(river_tiles[lo:hi])
            lo = hi
        out.append({
            "seat": me,
            "phase": PHASE_NAMES[phase[i]],
            "deal_index": deal_index[i],
            "dealer": dealer[i],
            "wall_left": wall_left[i],
            "hand": hands[i],
            "drawn": drawn[i],
            "set_aside": aside[i],
            "passed_hu": passed_hu[i],
            "void": [SUITS[x] if x >= 0 else None for x in void[i]],
            "void_revealed": revealed[i],
            "melds": meld_lists[i],
            "rivers": rivers,
            "hu": hu[i],
            "hu_tile": hu_tile[i],
            "live_discards": live[i],
            "won_tiles": won[i],
            "claim_tile": claim[i],
            "active": active[i],
            "scores": scores[i],
            "match_scores": match[i],
        })
    return out


def _kinds(tiles: Any, where: str) -> list[int]:
    try:
        return [_KIND_OF[t] for t in tiles]
    except (KeyError, TypeError):
        bad = next((t for t in tiles if not isinstance(t, str) or t not in _KIND_OF), tiles)
        raise ProtocolError(f"{where}: {bad!r} is not a tile (rank digit and suit letter, "
                            "e.g. '5m')") from None


def _counts(tiles: Any, where: str) -> np.ndarray:
    return np.bincount(_kinds(tiles, where), minlength=N_KINDS)


def views_from_messages(messages: Sequence[dict[str, Any]]) -> SeatView:
    """The :class:`SeatView` (n rows) of n ``view`` objects made by :func:`view_messages`:
    the inverse of it. Raises :class:`ProtocolError` naming a malformed field."""
    n = len(messages)
    i8 = np.int8
    v = SeatView(
        np.zeros(n, i8), np.zeros(n, i8), np.zeros((n, N_KINDS), i8), np.full(n, -1, i8),
        np.full(n, -1, i8), np.zeros(n, np.int16), np.full((n, 4), -1, i8),
        np.zeros((n, 4), np.bool_), np.zeros((n, 4, N_KINDS), i8),
        np.full((n, 4, RIVER_SIZE), -1, i8), np.zeros((n, 4), i8), np.zeros((n, 4), np.bool_),
        np.full((n, 4), -1, i8), np.zeros((n, N_KINDS), i8), np.zeros((n, N_KINDS), i8),
        np.full(n, -1, i8), np.zeros(n, i8), np.zeros(n, i8), np.zeros(n, np.int16),
        np.zeros((n, 4), np.int32), np.zeros((n, 4), np.int32), np.zeros(n, np.int16),
    )
    one = {"seat": [], "phase": [], "deal_index": [], "dealer": [], "wall_left": [],
           "drawn": [], "set_aside": [], "passed_hu": [], "claim_tile": [], "active": []}
    four = {"void": [], "void_revealed": [], "hu": [], "hu_tile": [], "scores": [],
            "match_scores": []}
    suit_of = {None: -1, "m": 0, "p": 1, "s": 2}
    tile_of = {None: -1, **_KIND_OF}
    for i, m in enumerate(messages):
        try:
            me = m["seat"]
            if me not in (0, 1, 2, 3) or isinstance(me, bool):
                raise ProtocolError(f"view.seat must be 0..3, got {me!r}")
            order = [(r + me) % 4 for r in range(4)]  # the absolute seat of relative r
            one["seat"].append(me)
            one["phase"].append(_PHASE_CODE[m["phase"]])
            one["deal_index"].append(m["deal_index"])
            one["dealer"].append((m["dealer"] - me) % 4)
            one["wall_left"].append(m["wall_left"])
            one["passed_hu"].append(m["passed_hu"])
            one["active"].append((m["active"] - me) % 4)
            for key in ("drawn", "set_aside", "claim_tile"):
                one[key].append(tile_of[m[key]])
            v.hand[i] = _counts(m["hand"], "view.hand")
            v.live_discards[i] = _counts(m["live_discards"], "view.live_discards")
            v.won_tiles[i] = _counts(m["won_tiles"], "view.won_tiles")
            four["void"].append([suit_of[m["void"][s]] for s in order])
            four["hu_tile"].append([tile_of[m["hu_tile"][s]] for s in order])
            for key in ("void_revealed", "hu", "scores", "match_scores"):
                four[key].append([m[key][s] for s in order])
            for r, s in enumerate(order):
                for meld in m["melds"][s]:
                    k = _kinds((meld["tile"],), "view.melds")[0]
                    v.meld[i, r, k] = _MELD_CODE[meld["type"]]
                river = m["rivers"][s]
                v.river_len[i, r] = len(river)
                if river:
                    v.river[i, r, : len(river)] = _kinds(river, "view.rivers")
        except ProtocolError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as err:
            raise ProtocolError(f"malformed view object: {type(err).__name__}: {err}") from None
    if n:
        for key, values in one.items():
            getattr(v, key)[:] = values
        for key, values in four.items():
            getattr(v, key)[:] = values
    return v


# ----------------------------------------------------------------------------- events

def _own_event(seat: int, action: str, prev: dict[str, Any] | None,
               cur: dict[str, Any]) -> dict[str, Any]:
    """The seat's own answer as an event: the action's words, with the tile a claim took
    (the previous view's tile under claim), the meld it made and the tile of a Hu."""
    words = action.split()
    event: dict[str, Any] = {"seat": seat, "act": words[0]}
    if len(words) == 2:
        event["suit" if words[0] == "void" and words[1] in SUITS else "tile"] = words[1]
    elif words[0] in ("pung", "kong") and prev is not None and prev["claim_tile"]:
        event["tile"] = prev["claim_tile"]
    elif words[0] == "hu" and cur["hu_tile"][seat] is not None:
        event["tile"] = cur["hu_tile"][seat]
    if words[0] in ("pung", "kong") and "tile" in event:
        kind = next((m["type"] for m in cur["melds"][seat] if m["tile"] == event["tile"]),
                    None)
        if kind is not None:
            event["meld"] = kind
    return event


def _next_live(seat: int, done: set[int]) -> int | None:
    return next(((seat + d) % 4 for d in (1, 2, 3, 4) if (seat + d) % 4 not in done), None)


class _Moves:
    """One seat's visible moves since the previous view, not yet placed in order."""

    __slots__ = ("discards", "claims", "kongs", "hu")

    def __init__(self) -> None:
        self.discards: list[list[dict[str, Any]]] = []  # each: [revealed suit?, discard]
        self.claims: list[dict[str, Any]] = []  # pung and melded kong: after a discard
        self.kongs: list[dict[str, Any]] = []  # concealed, promoted, postponed: own turn
        self.hu: dict[str, Any] | None = None

    def __bool__(self) -> bool:
        return bool(self.discards or self.claims or self.kongs or self.hu)


def _in_turn_order(moves: dict[int, _Moves], start: int, last: tuple[int, str] | None,
                   done: set[int]) -> list[dict[str, Any]]:
    """The seats' moves replayed in the order of play: after a discard, a seat with a
    claim of that tile (pung, melded kong) moves next, seats whose Hu was on that tile
    win, otherwise the next seat still playing moves: its kongs, then its next discard
    (or its self-drawn Hu). When the play cannot be followed further (the present is
    reached, or the views do not tell), what is left follows seat by seat."""
    out: list[dict[str, Any]] = []
    cur: int | None = start if last is None else None
    for _ in range(256):
        if last is not None:
            y, t = last
            last = None
            others = [(y + d) % 4 for d in (1, 2, 3)]
            claimer = next((x for x in others if any(c["tile"] == t for c in moves[x].claims)),
                           None)
            if claimer is not None:
                claim = next(c for c in moves[claimer].claims if c["tile"] == t)
                moves[claimer].claims.remove(claim)
                out.append(claim)
                cur = claimer
            else:
                winners = [x for x in others if moves[x].hu is not None
                           and moves[x].hu.get("tile") == t and not moves[x].discards]
                for x in winners:
                    out.append(moves[x].hu)
                    moves[x].hu = None
                    done.add(x)
                cur = _next_live(winners[-1] if winners else y, done)
        if cur is None or not moves[cur]:
            break
        m = moves[cur]
        out.extend(m.kongs)
        m.kongs = []
        if m.discards:
            run = m.discards.pop(0)
            out.extend(run)
            last = (cur, run[-1]["tile"])
        elif m.hu is not None:  # self-drawn
            out.append(m.hu)
            m.hu = None
            done.add(cur)
            cur = _next_live(cur, done)
        else:
            break
    for d in range(4):  # what is left
        m = moves[(start + d) % 4]
        for run in m.discards:
            out.extend(run)
        out.extend(m.claims + m.kongs + ([m.hu] if m.hu is not None else []))
    return out


def view_events(prev: dict[str, Any] | None, cur: dict[str, Any],
                answered: str | None = None) -> list[dict[str, Any]]:
    """What the seat of the ``view`` object ``cur`` has seen since its ``view`` object
    ``prev`` (None: since the deal began), as ``sichuan-record/1`` events (docs/protocol.md,
    "Events"): the seat's own answer to ``prev`` (``answered``, an action string) first;
    then every seat's visible moves (a revealed forbidden suit, melds, discards, Hu; the
    seat's own forced discards) in the order of play as far as the views tell it
    (:func:`_in_turn_order`, from the seat that moved next: the dealer after the
    forbidden-suit choices); then the tile the seat has just drawn."""
    me = cur["seat"]
    events: list[dict[str, Any]] = []
    own: dict[str, Any] = {}
    if answered is not None:
        own = _own_event(me, answered, prev, cur)
        events.append(own)
    own_act = own.get("act")
    if prev is None and cur["void"][me] is not None and own_act != "void":
        events.append({"seat": me, "act": "void", "suit": cur["void"][me]})
    moves = {s: _Moves() for s in range(4)}
    for s, m in moves.items():
        melds, river = cur["melds"][s], cur["rivers"][s]
        if prev is None:
            was_revealed, was_melds, was_river, was_hu = False, [], 0, False
        else:
            was_revealed, was_melds = prev["void_revealed"][s], prev["melds"][s]
            was_river, was_hu = len(prev["rivers"][s]), prev["hu"][s]
        if s == me and own_act == "discard":
            was_river += 1
        if melds != was_melds:
            before = {x["tile"]: x["type"] for x in was_melds}
            for x in melds:
                t, kind = x["tile"], x["type"]
                if before.get(t) == kind or (s == me and own.get("meld") == kind
                                             and own.get("tile") == t):
                    continue
                event = {"seat": s, "act": "pung" if kind == "pung" else "kong", "tile": t,
                         "meld": kind}
                (m.claims if kind in ("pung", "melded_kong") else m.kongs).append(event)
        reveal = s != me and cur["void_revealed"][s] and not was_revealed
        for t in river[was_river:]:
            event = {"seat": s, "act": "discard", "tile": t}
            if s == me:
                event["auto"] = True
            run = [event]
            if reveal:  # shown with its first discard
                run.insert(0, {"seat": s, "act": "void", "suit": cur["void"][s]})
                reveal = False
            m.discards.append(run)
        if cur["hu"][s] and not was_hu and not (s == me and own_act == "hu"):
            m.hu = {"seat": s, "act": "hu"}
            if cur["hu_tile"][s] is not None:
                m.hu["tile"] = cur["hu_tile"][s]
    fresh = prev is None or prev["phase"] == "void"
    start = cur["dealer"] if fresh else (prev["active"] + 1) % 4
    done = {x for x in range(4) if prev is not None and prev["hu"][x]}
    last = None  # (seat, tile) of the discard (or added kong) that others may answer
    if prev is not None and prev["phase"] in ("claim", "rob") and own_act in (None, "pass"):
        last = (prev["active"], prev["claim_tile"])
    elif own_act in ("discard", "kong") and "tile" in own:
        last = (me, own["tile"])
    events.extend(_in_turn_order(moves, start, last, done))
    if cur["drawn"] is not None:
        events.append({"seat": me, "act": "draw", "tile": cur["drawn"]})
    return events


def legal_strings(mask: np.ndarray) -> list[str]:
    """The legal actions of a (88,) mask as action strings, in action order."""
    return [ACTION_STRINGS[a] for a in np.flatnonzero(mask)]


_ACTION_OBJECTS = np.array(ACTION_STRINGS, dtype=object)


def legal_lists(masks: np.ndarray) -> list[list[str]]:
    """:func:`legal_strings` of every row of (n, 88) masks."""
    rows, acts = np.nonzero(masks)
    flat = _ACTION_OBJECTS[acts].tolist()
    ends = np.cumsum(np.bincount(rows, minlength=masks.shape[0])).tolist()
    out, lo = [], 0
    for hi in ends:
        out.append(flat[lo:hi])
        lo = hi
    return out


def parse_answer(line: str | bytes) -> dict[str, Any]:
    """One line a bot wrote, as a JSON object; :class:`ProtocolError` when it is not one."""
    try:
        msg = loads(line)
    except ValueError as err:
        text = line.decode(errors="replace") if isinstance(line, bytes) else line
        where = getattr(err, "msg", str(err)), getattr(err, "colno", "?")
        raise ProtocolError(f"not JSON ({where[0]} at column {where[1]}): "
                            f"{text.strip()[:120]!r}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message is a JSON object, got {type(msg).__name__}")
    return msg


_ACTION_INDEX = {text: a for a, text in enumerate(ACTION_STRINGS)}


def answer_action(msg: dict[str, Any], legal: Sequence[str]) -> int:
    """The action index an ``action`` message names, checked against the ``legal`` action
    strings of its request. :class:`ProtocolError` for an unknown or illegal action."""
    text = msg.get("action")
    if not isinstance(text, str):
        raise ProtocolError(f"the answer has no action string: {dumps(msg)[:120]}")
    a = _ACTION_INDEX.get(text)
    if a is None:  # not in the canonical spelling: the parser says what is wrong
        try:
            a = action_from_str(text)
        except ValueError as err:
            raise ProtocolError(f"unknown action {text!r}: {err}") from None
    if ACTION_STRINGS[a] not in legal:
        raise ProtocolError(f"illegal action {text!r}; legal: {', '.join(legal)}")
    return a


def hello_message(rules: Rules | None, match: str, tables: int,
                  seat: int | None = None) -> dict[str, Any]:
    """The first message to a bot: protocol, rule options, seat (None: any), match id and
    the most requests it may be sent at once (``tables``)."""
    return {"type": "hello", "protocol": PROTOCOL,
            "rules": None if rules is None else rules.to_dict(), "seat": seat,
            "match": match, "tables": int(tables)}


class Stream:
    """One seat of one deal as the bot sees it: a table id, the previous ``view`` object
    and the answer to it. :meth:`request` builds the next request."""

    __slots__ = ("table", "prev", "answered")

    def __init__(self, table: int) -> None:
        self.table = table
        self.prev: dict[str, Any] | None = None
        self.answered: str | None = None

    def continues(self, cur: dict[str, Any]) -> bool:
        """Whether ``cur`` can follow this stream's previous view (same seat and deal, not
        a new forbidden-suit choice, every river and the wall only grown or shrunk as play
        does)."""
        p = self.prev
        if p is None:
            return True
        if (cur["seat"] != p["seat"] or cur["deal_index"] != p["deal_index"]
                or cur["phase"] == "void" or cur["wall_left"] > p["wall_left"]):
            return False
        return all(cur["rivers"][s][: len(p["rivers"][s])] == p["rivers"][s]
                   for s in range(4))

    def request(self, rid: int, view: dict[str, Any], legal: list[str]) -> dict[str, Any]:
        """The request ``rid`` for the ``view`` object now, with the events since the
        previous one; remembers ``view`` for the next."""
        events = view_events(self.prev, view, self.answered)
        self.prev = view
        self.answered = None
        return {"type": "request", "id": rid, "table": self.table, "events": events,
                "view": view, "legal": legal}

"""One table, readable: play a deal by action strings and read its record.

``Game`` wraps the batched engine with batch size 1 and keeps the game record
(``sichuan-record/1``, see RECORD_FORMAT.md) as the deal goes. It is the convenient way to
script a deal, to test a rule, or to watch a bot play; training code uses the batched
engine or the environments instead.

>>> g = Game.new(seed=7)
>>> g.current_seat, g.phase
(0, 'void')
>>> g.play(g.legal()[0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sichuan_env import engine
from sichuan_env.actions import (
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
    action_to_str,
)
from sichuan_env.engine import IllegalActionError, Ledger
from sichuan_env.hands import FAN_NAMES
from sichuan_env.rules import Rules, get_rules
from sichuan_env.state import END_NAMES, MELD_NAMES, PHASE_NAMES, State
from sichuan_env.tiles import SUITS, format_hand, tile_str

RECORD_FORMAT = "sichuan-record/1"

__all__ = ["Game", "IllegalActionError", "RECORD_FORMAT", "event_action"]


def event_action(event: dict[str, Any]) -> int:
    """The engine action of a record event."""
    act = event["act"]
    if act == "void":
        if "tile" in event:
            return action_from_str(f"void {event['tile']}")
        return action_from_str(f"void {event['suit']}")
    if act == "discard":
        return action_from_str(f"discard {event['tile']}")
    if act == "kong":
        return action_from_str(f"kong {event['tile']}") if "tile" in event else MELDED_KONG
    if act in ("pung", "hu", "pass"):
        return action_from_str(act)
    raise ValueError(f"unknown event act {act!r} in {event}")


def _event_dict(seat: int, a: int) -> dict[str, Any]:
    if a < VOID_TILE:
        return {"seat": seat, "act": "discard", "tile": tile_str(a - DISCARD)}
    if a < VOID_SUIT:
        return {"seat": seat, "act": "void", "tile": tile_str(a - VOID_TILE)}
    if a < KONG:
        return {"seat": seat, "act": "void", "suit": SUITS[a - VOID_SUIT]}
    if a < PUNG:
        return {"seat": seat, "act": "kong", "tile": tile_str(a - KONG)}
    return {"seat": seat, "act": {PUNG: "pung", MELDED_KONG: "kong", HU: "hu", PASS: "pass"}[a]}


class Game:
    """A single table driven by action strings, with its game record."""

    def __init__(self, state: State, *, seed: int | None = None) -> None:
        if state.batch_size != 1:
            raise ValueError("Game wraps exactly one table")
        self._st = state
        self._seed = seed
        self.finished_records: list[dict[str, Any]] = []
        self._start_record()

    # ------------------------------------------------------------------ construction
    @classmethod
    def new(cls, seed: int, rules: Rules | str | None = "mil", *, dealer: int = 0) -> Game:
        return cls(engine.reset([seed], _rules(rules), dealer=dealer), seed=seed)

    @classmethod
    def from_deal(
        cls,
        hands: Sequence[str | Sequence[int]],
        wall: str | Sequence[int],
        dealer: int = 0,
        rules: Rules | str | None = "mil",
    ) -> Game:
        return cls(engine.reset_from_deal(hands, wall, dealer=dealer, rules=_rules(rules)))

    # ------------------------------------------------------------------ reading
    @property
    def state(self) -> State:
        return self._st

    @property
    def rules(self) -> Rules:
        return self._st.rules

    @property
    def done(self) -> bool:
        return bool(self._st.done[0])

    @property
    def phase(self) -> str:
        return PHASE_NAMES[int(self._st.phase[0])]

    @property
    def current_seat(self) -> int | None:
        return None if self.done else int(self._st.current[0])

    @property
    def wall_left(self) -> int:
        return int(self._st.wall_left[0])

    @property
    def scores(self) -> list[int]:
        return [int(x) for x in self._st.scores[0]]

    @property
    def match_scores(self) -> list[int]:
        return [int(x) for x in (self._st.match_scores[0] + (0 if self.done else
                                                               self._st.scores[0]))]

    @property
    def hu_seats(self) -> list[int]:
        return [w["seat"] for w in self.wins]

    @property
    def end(self) -> str | None:
        return self._record.get("end")

    @property
    def next_dealer(self) -> int | None:
        return self._record.get("next_dealer")

    @property
    def dealer(self) -> int:
        return int(self._st.dealer[0])

    def hand(self, seat: int) -> str:
        return format_hand(self._st.hand[0, seat])

    def set_aside(self, seat: int) -> str | None:
        k = int(self._st.set_aside[0, seat])
        return None if k < 0 else tile_str(k)

    def void(self, seat: int) -> str | None:
        v = int(self._st.void[0, seat])
        return None if v < 0 else SUITS[v]

    def melds(self, seat: int) -> list[tuple[str, str]]:
        m = self._st.meld[0, seat]
        return [(MELD_NAMES[int(m[k])], tile_str(k)) for k in np.flatnonzero(m)]

    def discards(self, seat: int) -> list[str]:
        n = int(self._st.river_len[0, seat])
        return [tile_str(k) for k in self._st.river[0, seat, :n]]

    @property
    def events(self) -> list[dict[str, Any]]:
        return self._record["events"]

    @property
    def payments(self) -> list[dict[str, Any]]:
        return self._record["payments"]

    @property
    def wins(self) -> list[dict[str, Any]]:
        return self._record["wins"]

    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(engine.legal_mask(self._st)[0])]

    def legal(self) -> list[str]:
        return sorted(action_to_str(a) for a in self.legal_actions())

    def record(self, legal: bool = False) -> dict[str, Any]:
        """The current deal's record (the last one once the match is over)."""
        rec = dict(self._record)
        rec["events"] = [
            {k: v for k, v in e.items() if legal or k != "legal"} for e in self._record["events"]
        ]
        return rec

    # ------------------------------------------------------------------ playing
    def play(self, action: str | int) -> None:
        """Apply one decision for :attr:`current_seat`. An illegal one raises
        :class:`IllegalActionError` and changes nothing."""
        if self.done:
            raise IllegalActionError("the deal is over: no seat is to act")
        a = action_from_str(action) if isinstance(action, str) else int(action)
        mask = engine.legal_mask(self._st)
        if not (0 <= a < N_ACTIONS) or not mask[0, a]:
            name = action_to_str(a) if 0 <= a < N_ACTIONS else f"action {a}"
            raise IllegalActionError(
                f"seat {self.current_seat}: illegal action {name!r}; legal: {self.legal()}"
            )
        legal_now = sorted(action_to_str(x) for x in np.flatnonzero(mask[0]))
        ledger = Ledger()
        st, _, _ = engine.step(self._st, [a], ledger=ledger, mask=mask)
        self._st = st
        self._consume(ledger, legal_now)

    # ------------------------------------------------------------------ record keeping
    def _start_record(self) -> None:
        st = self._st
        hands = []
        for seat in range(4):
            counts = st.hand[0, seat]
            hands.append([tile_str(k) for k in np.repeat(np.arange(27), counts)])
        wall = [tile_str(k) for k in st.wall[0, st.wall_front[0] : st.wall_back[0]]]
        self._record: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "rules": st.rules.to_dict(),
            "seed": self._seed,
            "deal_index": int(st.deal_index[0]),
            "dealer": int(st.dealer[0]),
            "hands": hands,
            "wall": wall,
            "events": [],
            "payments": [],
            "wins": [],
        }
        self._last_hu: dict[int, int] = {}
        self._last_kong: dict[int, int] = {}
        self._window_first_hu: int | None = None
        self._settling = False
        self._kong_payments: list[dict[str, Any]] = []

    def _consume(self, ledger: Ledger, legal_now: list[str]) -> None:
        first = True
        new_payments: list[dict[str, Any]] = []
        new_wins: list[dict[str, Any]] = []
        for entry in ledger.entries:
            kind = entry[0]
            rec = self._record
            if kind == "event":
                _, _, seat, a, auto = entry
                ev = _event_dict(seat, a)
                if auto:
                    ev["auto"] = True
                    ev["legal"] = [action_to_str(a)]
                else:
                    ev["legal"] = legal_now if first else [action_to_str(a)]
                    first = False
                idx = len(rec["events"])
                rec["events"].append(ev)
                if ev["act"] in ("discard",) or (ev["act"] == "kong" and "tile" in ev):
                    self._window_first_hu = None
                if ev["act"] == "hu":
                    self._last_hu[seat] = idx
                    if self._window_first_hu is None:
                        self._window_first_hu = idx
                if ev["act"] == "kong":
                    self._last_kong[seat] = idx
            elif kind == "pay":
                _, _, frm, to, pts, reason = entry
                last = len(rec["events"]) - 1
                if self._settling or reason in ("ready", "flower_pig"):
                    ev_idx = last
                elif reason in ("hu", "self_drawn_hu"):
                    ev_idx = self._last_hu.get(to, last)
                elif reason in ("concealed_kong", "promoted_kong", "melded_kong"):
                    ev_idx = self._last_kong.get(to, last)
                elif reason == "kong_refund":
                    ev_idx = self._window_first_hu if self._window_first_hu is not None else last
                else:  # pragma: no cover
                    ev_idx = last
                if reason == "kong_refund":
                    for original in self._take_kong_payments(payer=to, receiver=frm, points=pts):
                        new_payments.append({"event": ev_idx, "from": frm, "to": to,
                                             "points": original["points"],
                                             "reason": "kong_refund"})
                    continue
                payment = {"event": ev_idx, "from": frm, "to": None if to < 0 else to,
                           "points": pts, "reason": reason}
                new_payments.append(payment)
                if reason.endswith("kong"):
                    self._kong_payments.append(payment)
            elif kind == "win":
                _, _, seat, tile, frm, fans, value = entry
                new_wins.append({
                    "event": self._last_hu.get(seat, len(rec["events"]) - 1),
                    "seat": seat, "tile": tile_str(tile), "from": None if frm < 0 else frm,
                    "fans": {FAN_NAMES[i]: int(c) for i, c in enumerate(fans) if c},
                    "value": int(value),
                })
            elif kind == "settle":
                self._settling = True
            elif kind == "end":
                self._flush(new_payments, new_wins)
                _, _, reason, next_dealer = entry
                rec["end"] = END_NAMES[reason]
                scores = [0, 0, 0, 0]
                for p in rec["payments"]:
                    scores[p["from"]] -= p["points"]
                    if p["to"] is not None:
                        scores[p["to"]] += p["points"]
                rec["scores"] = scores
                rec["next_dealer"] = int(next_dealer)
                self._settling = False
            elif kind == "deal":
                self.finished_records.append(self.record(legal=True))
                self._start_record()
        self._flush(new_payments, new_wins)

    def _flush(self, payments: list[dict[str, Any]], wins: list[dict[str, Any]]) -> None:
        """Append one step's payments and wins in event order (claims are decided one seat
        at a time but resolved together; the record lists them as the events go)."""
        self._record["payments"].extend(sorted(payments, key=lambda p: p["event"]))
        self._record["wins"].extend(sorted(wins, key=lambda w: w["event"]))
        payments.clear()
        wins.clear()

    def _take_kong_payments(self, payer: int, receiver: int, points: int) -> list[dict]:
        """The outstanding kong payments from payer to receiver that a refund of ``points``
        returns: the most recent ones (a Shoot after Kong refund returns this turn's kongs;
        the wall-end refund returns all that are left)."""
        taken: list[dict[str, Any]] = []
        left = points
        for p in reversed(self._kong_payments):
            if left <= 0:
                break
            if p["from"] == payer and p["to"] == receiver and p["points"] <= left:
                taken.append(p)
                left -= p["points"]
        if left != 0:  # pragma: no cover - engine and record disagree
            raise RuntimeError(f"kong refund of {points} from {receiver} to {payer} unmatched")
        order = {id(p): i for i, p in enumerate(self._kong_payments)}
        for p in taken:
            self._kong_payments.remove(p)
        return sorted(taken, key=lambda p: order[id(p)])


def _rules(rules: Rules | str | None) -> Rules:
    return rules if isinstance(rules, Rules) else get_rules(rules)


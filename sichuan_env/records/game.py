"""One table, readable: play a deal by action strings and read its record.

``Game`` wraps the batched engine with batch size 1 and keeps the game record
(``sichuan-record/1``, see docs/record_format.md) as the deal goes. It is the convenient way to
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

from sichuan_env.core import engine
from sichuan_env.core.actions import (
    N_ACTIONS,
    action_from_str,
    action_to_str,
)
from sichuan_env.core.engine import IllegalActionError, Ledger
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.state import MELD_NAMES, PHASE_NAMES, State
from sichuan_env.core.tiles import SUITS, format_hand, tile_str
from sichuan_env.records.record import RECORD_FORMAT, RecordBuilder, event_action

__all__ = ["Game", "IllegalActionError", "RECORD_FORMAT", "event_action"]


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
        return cls(engine.reset([seed], get_rules(rules), dealer=dealer), seed=seed)

    @classmethod
    def from_deal(
        cls,
        hands: Sequence[str | Sequence[int]],
        wall: str | Sequence[int],
        dealer: int = 0,
        rules: Rules | str | None = "mil",
    ) -> Game:
        return cls(engine.reset_from_deal(hands, wall, dealer=dealer, rules=get_rules(rules)))

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
        return [int(a) for a in np.flatnonzero(self._st.legal_action_mask[0])]

    def legal(self) -> list[str]:
        return sorted(action_to_str(a) for a in self.legal_actions())

    def render(self, viewer: int | None = None, ascii: bool = False,
               format: str = "text") -> str:
        """The table as ``format`` ``"text"`` (Unicode tiles, or ``ascii``), ``"html"`` or
        ``"svg"`` (:func:`sichuan_env.records.svg.render_svg`); ``viewer`` hides the others'
        hands."""
        if format == "text":
            from sichuan_env.records.render import render_text

            return render_text(self._st, 0, viewer=viewer, ascii=ascii)
        if format == "html":
            from sichuan_env.records.render import render_html

            return render_html(self._st, 0, viewer=viewer)
        if format == "svg":
            from sichuan_env.records.svg import render_svg

            return render_svg(self._st, 0, viewer=viewer)
        raise ValueError(f"format must be 'text', 'html' or 'svg', got {format!r}")

    def _repr_svg_(self) -> str:
        return self.render(format="svg")

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
        mask = self._st.legal_action_mask
        if not (0 <= a < N_ACTIONS) or not mask[0, a]:
            name = action_to_str(a) if 0 <= a < N_ACTIONS else f"action {a}"
            raise IllegalActionError(
                f"seat {self.current_seat}: illegal action {name!r}; legal: {self.legal()}"
            )
        legal_now = sorted(action_to_str(x) for x in np.flatnonzero(mask[0]))
        ledger = Ledger()
        st, _, _ = engine.step(self._st, [a], ledger=ledger)
        self._st = st
        self._consume(ledger, legal_now)

    # ------------------------------------------------------------------ record keeping
    def _start_record(self) -> None:
        self._builder = RecordBuilder(self._st, 0, seed=self._seed, legal=True)
        self._record = self._builder.record

    def _consume(self, ledger: Ledger, legal_now: list[str]) -> None:
        entries = ledger.entries
        used = self._builder.feed(entries, legal_now)
        if used < len(entries) and entries[used][0] == "deal":
            # the deal ended and the match dealt the next one inside this step
            self.finished_records.append(self.record(legal=True))
            self._start_record()
            self._builder.feed(entries[used + 1 :], None)

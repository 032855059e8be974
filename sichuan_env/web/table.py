"""One browser game: a deal of one human seat against three bots, and what the human sees.

:class:`WebGame` owns a :class:`~sichuan_env.game.Game` and plays the bot seats whenever
they are to act. Everything it hands out for the page is built by :func:`public_table`
from the human seat's :class:`~sichuan_env.view.SeatView` (plus the number of tiles each
seat has standing, which every player at a table can count) and by :func:`public_moves`,
which drops or shortens the moves the human may not know: the other seats' set-aside
tiles and indicator suits, their passes, their claims that did not take effect (a pung
beaten by a Hu), their self-drawn winning tiles and the fans of their wins. The seed is
kept back until the deal is over (it determines the wall).

The full record (every hand, the wall) is only given out once the deal is over
(:meth:`WebGame.record`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from sichuan_env.actions import action_from_str, action_to_str
from sichuan_env.driver import choose
from sichuan_env.engine import IllegalActionError
from sichuan_env.game import Game
from sichuan_env.rules import Rules
from sichuan_env.state import PHASE_NAMES
from sichuan_env.tiles import N_KINDS, SUITS, tile_str
from sichuan_env.view import SeatView, seat_view
from sichuan_env.vocab import MELD_NAMES, MELDED_KONG, PUNG, SEAT_WINDS

__all__ = ["GameError", "SharedAgent", "WebGame", "public_moves", "public_table", "warm_up"]

_ROW = np.zeros(1, np.intp)
REASONS = {
    "hu": "Hu", "self_drawn_hu": "self-drawn Hu", "concealed_kong": "concealed kong",
    "melded_kong": "melded kong", "promoted_kong": "promoted kong",
    "kong_refund": "kong refund", "ready": "ready hand at the wall end",
    "flower_pig": "flower pig",
}


class GameError(ValueError):
    """A request the game refuses; ``status`` is the HTTP status that fits it."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


#: Held around every engine step and bot decision of any web game: games played in
#: parallel threads corrupted each other's deals without it (records that did not replay).
ENGINE_LOCK = threading.Lock()


class SharedAgent:
    """An agent shared by many games' threads: one call at a time (:data:`ENGINE_LOCK`)."""

    def __init__(self, agent: Any, label: str) -> None:
        self.agent = agent
        self.label = label

    def choose(self, game: Game) -> int:
        with ENGINE_LOCK:
            return int(choose(game.state, _ROW, [self.agent], names=[self.label])[0])


def _tiles(counts: np.ndarray) -> list[str]:
    return [tile_str(int(k)) for k in np.repeat(np.arange(N_KINDS), counts)]


def _who(seat: int, human: int) -> str:
    return "you" if seat == human else f"seat {seat}"


def public_table(view: SeatView, standing: Sequence[int], names: Sequence[str],
                 legal: Sequence[str]) -> dict[str, Any]:
    """The table as the viewer of the one-row ``view`` sees it, seats in absolute order.

    ``standing``: tiles standing in each seat's hand (absolute order; a count anyone at the
    table sees); ``names``: who plays each seat; ``legal``: the viewer's legal actions
    (empty when it is not to act)."""
    h = int(view.seat[0])
    seats = []
    for s in range(4):
        r = (s - h) % 4
        melds = [{"meld": MELD_NAMES[int(view.meld[0, r, k])], "tile": tile_str(int(k))}
                 for k in np.flatnonzero(view.meld[0, r])]
        void = int(view.void[0, r])
        hu_tile = int(view.hu_tile[0, r])
        seats.append({
            "seat": s, "name": names[s], "you": s == h,
            "wind": SEAT_WINDS[(s - (h + int(view.dealer[0])) % 4) % 4],
            "standing": int(standing[s]),
            "void": SUITS[void] if void >= 0 else None,
            "melds": melds,
            "river": [tile_str(int(k)) for k in view.river[0, r, :int(view.river_len[0, r])]],
            "hu": bool(view.hu[0, r]),
            "hu_tile": tile_str(hu_tile) if hu_tile >= 0 else None,
            "score": int(view.scores[0, r]),
        })
    aside = int(view.set_aside[0])
    drawn = int(view.drawn[0])
    claim = int(view.claim_tile[0])
    phase = PHASE_NAMES[int(view.phase[0])]
    return {
        "you": h,
        "phase": phase,
        "wall": int(view.wall_left[0]),
        "dealer": (h + int(view.dealer[0])) % 4,
        "active": None if phase == "done" else (h + int(view.active[0])) % 4,
        "claim_tile": tile_str(claim) if claim >= 0 else None,
        "hand": _tiles(view.hand[0]),
        "drawn": tile_str(drawn) if drawn >= 0 else None,
        "aside": tile_str(aside) if aside >= 0 else None,
        "seats": seats,
        "legal": sorted(legal),
    }


def public_moves(events: Sequence[dict[str, Any]], human: int, before: SeatView,
                 after: SeatView) -> list[str]:
    """What the viewer ``human`` learns of the ``events`` of one step, as sentences:
    its own moves in full, the others' public moves, and the others' claims that took
    effect (a meld that appeared between the views ``before`` and ``after``)."""
    lines = []
    for e in events:
        seat, act = e["seat"], e["act"]
        r = (seat - human) % 4
        who = _who(seat, human)
        mine = seat == human
        if act == "void":
            if mine:
                what = (f"show an indicator for suit {e['suit']}" if "suit" in e
                        else f"set {e['tile']} aside")
                lines.append(f"you {what} (forbidden suit)")
            else:
                lines.append(f"{who} chooses a forbidden suit")
        elif act == "discard":
            verb = "discard" if mine else "discards"
            forced = " (the set-aside tile)" if e.get("auto") else ""
            lines.append(f"{who} {verb} {e['tile']}{forced}")
        elif act == "kong" and "tile" in e:
            lines.append(f"{who} {'declare' if mine else 'declares'} a kong of {e['tile']}")
        elif act == "hu":
            tile = int(after.hu_tile[0, r])
            on = f" on {tile_str(tile)}" if tile >= 0 else " (self-drawn, tile face down)"
            lines.append(f"{who} {'declare' if mine else 'declares'} Hu{on}")
        elif mine:  # pung, kong claims and passes: only the viewer's own
            lines.append({"pung": "you claim a pung", "kong": "you claim a kong",
                          "pass": "you pass"}[act])
    for r in range(1, 4):
        grew = np.flatnonzero((after.meld[0, r] != before.meld[0, r])
                              & np.isin(after.meld[0, r], (PUNG, MELDED_KONG)))
        for k in grew:
            what = "pung" if after.meld[0, r, k] == PUNG else "kong"
            lines.append(f"seat {(human + r) % 4} claims a {what} of {tile_str(int(k))}")
    return lines


def _payment_text(p: dict[str, Any], human: int) -> str:
    to = "nobody" if p["to"] is None else _who(p["to"], human)
    payer = _who(p["from"], human)
    return (f"{payer} {'pay' if p['from'] == human else 'pays'} {to} {p['points']} "
            f"({REASONS.get(p['reason'], p['reason'])})")


class WebGame:
    """A human seat and three bots at one table, one deal at a time.

    ``agents``: four entries in seat order, ``None`` for the human's seat and a
    :class:`SharedAgent` for each bot seat. ``seed``: the first deal's seed; deal ``n``
    of this game is dealt from ``seed + n``, dealer seat 0. ``rules`` with several deals
    per match are played one deal at a time."""

    def __init__(self, agents: Sequence[SharedAgent | None], rules: Rules, seed: int) -> None:
        humans = [s for s, a in enumerate(agents) if a is None]
        if len(agents) != 4 or len(humans) != 1:
            raise ValueError("a web game needs four seats, exactly one of them the human's")
        self.human = humans[0]
        self.agents = list(agents)
        self.names = ["you" if a is None else a.label for a in agents]
        # one deal at a time: a match of several deals would deal the next one inside a step
        self.rules = rules if rules.deals_per_match == 1 else rules.replace(deals_per_match=1)
        self.base_seed = seed
        self.deal_number = -1
        self.lock = threading.Lock()
        self.frames_at_start = self.new_deal()

    # ------------------------------------------------------------------ playing
    def new_deal(self) -> list[dict[str, Any]]:
        """Deal the next deal and play the bots up to the human's first decision; returns
        the frames of the bots' moves (see :meth:`act`)."""
        self.deal_number += 1
        with ENGINE_LOCK:
            self.game = Game.new(self.base_seed + self.deal_number, self.rules)
        self.step = 0
        self.log: list[str] = []
        return self._run_bots()

    @property
    def done(self) -> bool:
        return self.game.done

    def _view(self) -> SeatView:
        return seat_view(self.game.state, self.human, _ROW)

    def _apply(self, action: int) -> dict[str, Any] | None:
        with ENGINE_LOCK:
            return self._apply_locked(action)

    def _apply_locked(self, action: int) -> dict[str, Any] | None:
        g = self.game
        before = self._view()
        n_events, n_pay = len(g.events), len(g.payments)
        g.play(action)
        after = self._view()
        lines = public_moves(g.events[n_events:], self.human, before, after)
        lines += [_payment_text(p, self.human) for p in g.payments[n_pay:]]
        if not lines:  # a move the human may not know about (another seat's pass)
            return None
        self.log.extend(lines)
        return {"moves": lines, "table": self.table(legal=False)}

    def _run_bots(self) -> list[dict[str, Any]]:
        frames = []
        while not self.game.done and self.game.current_seat != self.human:
            agent = self.agents[self.game.current_seat]
            frame = self._apply(agent.choose(self.game))
            if frame is not None:
                frames.append(frame)
        return frames

    def act(self, step: Any, action: Any) -> list[dict[str, Any]]:
        """Play the human's ``action`` (a string such as ``"discard 5m"``) at decision
        number ``step``, then the bots up to the human's next decision. Returns one frame
        per step with visible moves: ``{"moves": [...], "table": ...}``. Raises
        :class:`GameError` (and changes nothing) for a malformed, stale or illegal request.

        ``step`` counts the human's decisions in this deal only: a count of every decision
        would tell how many claims the other seats passed on."""
        if isinstance(step, bool) or not isinstance(step, int):
            raise GameError(f"'step' must be an integer, got {step!r}", 400)
        if not isinstance(action, str):
            raise GameError(f"'action' must be a string such as 'discard 5m', got {action!r}",
                            400)
        try:
            a = action_from_str(action)
        except ValueError as err:
            raise GameError(str(err), 400) from None
        if self.game.done:
            raise GameError("the deal is over: start a new deal")
        if step != self.step:
            raise GameError(f"stale step {step}: the game is at step {self.step}; reload the "
                            "table")
        if self.game.current_seat != self.human:  # cannot happen between requests
            raise GameError("it is not your turn")
        legal = self.legal()
        if action_to_str(a) not in legal:
            raise GameError(f"illegal action {action_to_str(a)!r}; legal: {', '.join(legal)}",
                            422)
        try:
            frame = self._apply(a)
        except IllegalActionError as err:  # the mask said yes; keep the message if not
            raise GameError(str(err), 422) from None
        self.step += 1
        frames = [] if frame is None else [frame]
        return frames + self._run_bots()

    # ------------------------------------------------------------------ reading
    def legal(self) -> list[str]:
        """The human's legal actions now (empty when a bot is to act or the deal is over)."""
        if self.game.done or self.game.current_seat != self.human:
            return []
        return self.game.legal()

    def table(self, legal: bool = True) -> dict[str, Any]:
        """The table from the human's seat (:func:`public_table`)."""
        st = self.game.state
        standing = [int(st.hand[0, s].sum()) for s in range(4)]
        return public_table(self._view(), standing, self.names, self.legal() if legal else [])

    def settlement(self) -> dict[str, Any] | None:
        """The deal's result once it is over (None before): end, scores, payments and wins
        as the human may know them (others' fans and face-down tiles left out), seed."""
        if not self.game.done:
            return None
        wins = []
        for w in self.game.wins:
            shown = w["seat"] == self.human or w["from"] is not None
            wins.append({
                "seat": w["seat"], "from": w["from"], "value": w["value"],
                "tile": w["tile"] if shown else None,
                "fans": w["fans"] if w["seat"] == self.human else None,
            })
        return {
            "end": self.game.end, "scores": self.game.scores, "seed": self.game.record()["seed"],
            "payments": [_payment_text(p, self.human) for p in self.game.payments],
            "wins": wins,
        }

    def state(self, frames: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """What the page gets: the table, the step, the deal's public log, the frames of
        the latest moves, and the settlement once the deal is over."""
        return {
            "step": self.step, "deal": self.deal_number, "done": self.done,
            "rules": self.rules.preset, "table": self.table(),
            "log": list(self.log), "frames": frames or [],
            "settlement": self.settlement(),
        }

    def record(self) -> dict[str, Any]:
        """The finished deal's ``sichuan-record/1`` record (every hand and the wall), with
        the players' names under ``"players"``. Refused while the deal is on."""
        if not self.game.done:
            raise GameError("the record is given out when the deal is over")
        rec = self.game.record()
        rec["players"] = list(self.names)
        return rec


def warm_up(agents: Sequence[SharedAgent | None], rules: Rules, seed: int = 0) -> None:
    """Play one deal with these bots (the human's moves: the first legal ones), so that the
    compiled kernels are ready before the first browser asks (on a fresh checkout they
    compile for about a minute)."""
    game = WebGame(agents, rules, seed)
    while not game.done:
        game.act(game.step, game.legal()[0])

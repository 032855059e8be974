"""One browser game: a deal of one human seat against three bots, and what the human sees.

:class:`WebGame` owns a :class:`~sichuan_env.records.game.Game` and its bots
(:class:`~sichuan_env.play.web.bots.GameBots`: agent objects of this game alone, reset at each
deal, a time limit per decision and a fallback), and plays the bot seats whenever they
are to act. Everything it hands out for the page is built by :func:`public_table` from
the human seat's :class:`~sichuan_env.seats.view.SeatView` (plus the number of tiles each seat
has standing, which every player at a table can count) and by
:func:`~sichuan_env.records.public_log.public_moves`. A frame of the bots' moves is taken only at
a state the human observes (:func:`sichuan_env.seats.view.unobserved`): a claim window that
does not ask the human is never shown, its moves go into the frame of its outcome.

Each deal is dealt from its own seed, drawn by the game's :class:`DealSeeds` (64 secret
bits per deal, or a fixed sequence for reproducible local play); the seed is kept back
until the deal is over, and then shows that deal only. The full record (every hand, the
wall) is only given out once the deal is over (:meth:`WebGame.record`).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from sichuan_env.core.actions import KONG, PUNG, VOID_TILE, action_from_str, action_to_str
from sichuan_env.core.engine import IllegalActionError
from sichuan_env.core.rules import Rules
from sichuan_env.core.state import CLAIM, PHASE_NAMES, ROB
from sichuan_env.core.tiles import N_KINDS, SUITS, tile_str
from sichuan_env.core.vocab import MELD_NAMES, SEAT_WINDS
from sichuan_env.play.web.bots import BotSpec, GameBots
from sichuan_env.play.web.workers import BotWorkers
from sichuan_env.records.game import Game
from sichuan_env.records.public_log import payment_text, public_moves
from sichuan_env.seats.view import SeatView, seat_view, unobserved

__all__ = ["MIN_CLAIM_WINDOW", "DealSeeds", "GameError", "WebGame", "claim_window_for",
           "public_moves", "public_table", "warm_up"]

_ROW = np.zeros(1, np.intp)
SEED_BITS = 64


class GameError(ValueError):
    """A request the game refuses; ``status`` is the HTTP status that fits it."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


class DealSeeds:
    """The seed of each deal of a game: ``fixed`` None draws every deal's seed
    independently from :mod:`secrets` (64 bits), so that no finished deal tells anything
    of the next; an int gives deal ``n`` the seed ``fixed + n`` (reproducible local play:
    anyone who knows the seed knows every deal)."""

    def __init__(self, fixed: int | None = None) -> None:
        self.fixed = fixed

    def seed(self, deal_number: int) -> int:
        if self.fixed is not None:
            return (self.fixed + deal_number) % 2**SEED_BITS
        return secrets.randbits(SEED_BITS)


def _tiles(counts: np.ndarray) -> list[str]:
    return [tile_str(int(k)) for k in np.repeat(np.arange(N_KINDS), counts)]


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


class WebGame:
    """A human seat and three bots at one table, one deal at a time.

    ``seats``: four entries in seat order, ``None`` for the human's seat and a
    :class:`~sichuan_env.play.web.bots.BotSpec` for each bot seat (this game builds its own
    agents from them); ``seeds`` the deals' seeds (default: secret draws). ``rules`` with
    several deals per match are played one deal at a time. ``time_limit`` and
    ``fallback``: see :class:`~sichuan_env.play.web.bots.GameBots`; ``label`` names the game
    in the server's log; ``workers`` the worker processes of isolated bot seats.

    ``claim_window``: seconds that the claim window of every discard (and the rob window
    of every kong) takes at least, whether or not a seat had an option (see
    :meth:`_close_window`); 0: no padding."""

    def __init__(self, seats: Sequence[BotSpec | None], rules: Rules,
                 seeds: DealSeeds | None = None, *, time_limit: float = 10.0,
                 fallback: str | None = "rules", label: str = "",
                 workers: BotWorkers | None = None, claim_window: float = 0.0) -> None:
        humans = [s for s, a in enumerate(seats) if a is None]
        if len(seats) != 4 or len(humans) != 1:
            raise ValueError("a web game needs four seats, exactly one of them the human's")
        self.human = humans[0]
        self.bots = GameBots(seats, time_limit=time_limit, fallback=fallback, label=label,
                             workers=workers)
        self.names = self.bots.names
        # one deal at a time: a match of several deals would deal the next one inside a step
        self.rules = rules if rules.deals_per_match == 1 else rules.replace(deals_per_match=1)
        self.seeds = seeds or DealSeeds()
        self.deal_number = -1
        self.notices: list[str] = []
        self.claim_window = float(claim_window)
        self.windows = 0  # windows padded, and those that took longer than claim_window
        self.windows_over = 0
        self.frames_at_start = self.new_deal()

    # ------------------------------------------------------------------ playing
    def new_deal(self) -> list[dict[str, Any]]:
        """Deal the next deal (its own seed), reset the bots and play them up to the
        human's first decision; returns the frames of the bots' moves (see :meth:`act`)."""
        self.deal_number += 1
        self.start(Game.new(self.seeds.seed(self.deal_number), self.rules))
        return self._run_bots_or_stop()

    def start(self, game: Game) -> None:
        """Begin ``game`` as this game's current deal (without playing the bots)."""
        self.game = game
        self.bots.reset()
        self.step = 0
        self.log: list[str] = []
        self.notices = []
        self.stopped: str | None = None  # the deal stopped on a server error
        self._pending: list[str] = []

    @property
    def done(self) -> bool:
        return self.game.done

    def close(self) -> None:
        """The game is dropped (expired): its bots' resources go."""
        self.bots.close()

    def _view(self) -> SeatView:
        return seat_view(self.game.state, self.human, _ROW)

    def _apply(self, action: int) -> dict[str, Any] | None:
        """Play one decision; the frame of the moves the human learns, taken at the next
        state the human observes (None: nothing to show yet)."""
        g = self.game
        before = self._view()
        n_events, n_pay = len(g.events), len(g.payments)
        g.play(action)
        after = self._view()
        lines = public_moves(g.events[n_events:], self.human, before, after)
        lines += [payment_text(p, self.human) for p in g.payments[n_pay:]]
        self._pending += lines
        if not self._pending or (not g.done and unobserved(g.state, self.human)):
            return None  # nothing new, or a window the human may not know is open
        lines, self._pending = self._pending, []
        self.log.extend(lines)
        return {"moves": lines, "table": self.table(legal=False)}

    @staticmethod
    def _may_open_window(action: int, phase: int) -> bool:
        """Whether other seats may be asked about ``action`` (played in ``phase``): a
        discard or a kong (a claim or rob window opens when some seat has an option), or
        an answer in a window (the seats after it may be asked). Public: a move of the
        seat to act, never whether a window opened."""
        return action < VOID_TILE or KONG <= action < PUNG or phase in (CLAIM, ROB)

    def _close_window(self, since: float) -> None:
        """End the time of a possible window begun at ``since`` (``time.monotonic``): wait
        until ``claim_window`` seconds have gone by. The bots' answers in a window that
        does not ask the human are not shown, and with this they take no visible time
        either: a discard costs ``claim_window`` whether nobody could claim or bots
        could and passed (unless their answers took longer)."""
        self.windows += 1
        rest = since + self.claim_window - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        elif self.claim_window > 0:
            self.windows_over += 1

    def _run_bots_or_stop(self, window: float | None = None) -> list[dict[str, Any]]:
        """:meth:`_run_bots`; when it raises (a fault of the server: a failing bot is
        replaced by the fallback, and that by the first legal move), the deal is stopped
        with a notice that says so, and the error raised (a 500 for the request)."""
        try:
            return self._run_bots(window)
        except Exception as err:
            self.stopped = (f"this deal stopped on an error of the server "
                            f"({type(err).__name__}): start a new deal")
            self.notices.append(self.stopped)
            raise

    def _run_bots(self, window: float | None = None) -> list[dict[str, Any]]:
        """The bots' moves up to the human's next decision; ``window``: when a window may
        have opened (see :meth:`_close_window`), None if not."""
        frames = []
        while True:
            g = self.game
            bot = not g.done and g.current_seat != self.human
            phase = int(g.state.phase[0])
            if window is not None and not (bot and phase in (CLAIM, ROB)):
                self._close_window(window)  # the window is over (or never opened)
                window = None
            if not bot:
                return frames
            decision = self.bots.decide(g)
            if decision.notice is not None:
                self.notices.append(decision.notice)
            began = time.monotonic()
            frame = self._apply(decision.action)
            if window is None and self._may_open_window(decision.action, phase):
                window = began
            if frame is not None:
                frames.append(frame)

    def act(self, step: Any, action: Any, deal: Any = None) -> list[dict[str, Any]]:
        """Play the human's ``action`` (a string such as ``"discard 5m"``) at decision
        number ``step`` of deal number ``deal`` (None: not checked), then the bots up to
        the human's next decision. Returns one frame per observed state with visible
        moves: ``{"moves": [...], "table": ...}``. Raises :class:`GameError` (and changes
        nothing) for a malformed, stale or illegal request.

        ``step`` counts the human's decisions in this deal only: a count of every decision
        would tell how many claims the other seats passed on."""
        for name, value in (("deal", deal), ("step", step)):
            if (value is not None or name == "step") and (isinstance(value, bool)
                                                           or not isinstance(value, int)):
                raise GameError(f"'{name}' must be an integer, got {value!r}", 400)
        if not isinstance(action, str):
            raise GameError(f"'action' must be a string such as 'discard 5m', got {action!r}",
                            400)
        try:
            a = action_from_str(action)
        except ValueError as err:
            raise GameError(str(err), 400) from None
        if deal is not None and deal != self.deal_number:
            raise GameError(f"stale deal {deal}: the game is at deal {self.deal_number}; "
                            "reload the table")
        if self.stopped is not None:
            raise GameError(self.stopped)
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
        phase = int(self.game.state.phase[0])
        began = time.monotonic()
        try:
            frame = self._apply(a)
        except IllegalActionError as err:  # the mask said yes; keep the message if not
            raise GameError(str(err), 422) from None
        self.step += 1
        self.notices = []
        frames = [] if frame is None else [frame]
        window = began if self._may_open_window(a, phase) else None
        return frames + self._run_bots_or_stop(window)

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
        as the human may know them (others' fans and face-down tiles left out), and this
        deal's seed (it replays this deal and tells nothing of the next)."""
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
            # a string: a 64-bit seed is no exact JSON number for the page's script
            "end": self.game.end, "scores": self.game.scores,
            "seed": str(self.game.record()["seed"]),
            "payments": [payment_text(p, self.human) for p in self.game.payments],
            "wins": wins,
        }

    def state(self, frames: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """What the page gets: the table, the deal and step, the deal's public log, the
        frames of the latest moves, the notices of bots that failed (a fallback played
        for them), and the settlement once the deal is over."""
        return {
            "step": self.step, "deal": self.deal_number, "done": self.done,
            "rules": self.rules.preset, "table": self.table(),
            "log": list(self.log), "frames": frames or [], "notices": list(self.notices),
            "settlement": self.settlement(),
        }

    def record(self) -> dict[str, Any]:
        """The finished deal's ``sichuan-record/1`` record (every hand and the wall), with
        the players' shown names under ``"players"``. Refused while the deal is on."""
        if not self.game.done:
            raise GameError("the record is given out when the deal is over")
        rec = self.game.record()
        rec["players"] = list(self.names)
        return rec


def warm_up(seats: Sequence[BotSpec | None], rules: Rules, seed: int = 0,
            time_limit: float = 600.0) -> list[tuple[int, bool, float]]:
    """Play one deal with these bots (the human's moves: the first legal ones), so that the
    compiled kernels are ready before the first browser asks (on a fresh checkout they
    compile for about a minute) and a bot that fails is found before the server starts:
    its error is raised (no fallback plays for it here). Returns each of the bots'
    answers as ``(seat, in a claim or rob window, seconds)`` (for
    :func:`claim_window_for`)."""
    game = WebGame(seats, rules, DealSeeds(seed), time_limit=time_limit, fallback=None)
    answers: list[tuple[int, bool, float]] = []
    decide = game.bots.decide

    def timed(g: Game) -> Any:
        seat, window = int(g.current_seat), int(g.state.phase[0]) in (CLAIM, ROB)
        t = time.perf_counter()
        out = decide(g)
        answers.append((seat, window, time.perf_counter() - t))
        return out

    game.bots.decide = timed  # type: ignore[method-assign]
    try:
        while not game.done:
            game.act(game.step, game.legal()[0])
    finally:
        game.close()  # the programs of its exec: bots end
    return answers


#: The least padding of a claim window (seconds): a few answers of a quick bot.
MIN_CLAIM_WINDOW = 0.010


def claim_window_for(answers: Sequence[tuple[int, bool, float]], time_limit: float) -> float:
    """The claim window to pad to for bots that answered ``answers`` (:func:`warm_up`):
    every bot seat asked, each taking twice its median answer in a window (the median
    of all its answers when it was asked in fewer than three windows; the median: the
    first answers of a fresh process pay for compiling); at least
    :data:`MIN_CLAIM_WINDOW`, at most ``time_limit``."""
    total = 0.0
    for seat in sorted({a[0] for a in answers}):
        mine = [t for s, w, t in answers if s == seat and w]
        if len(mine) < 3:
            mine = [t for s, _, t in answers if s == seat]
        total += 2 * sorted(mine)[len(mine) // 2]
    return min(float(time_limit), max(MIN_CLAIM_WINDOW, total))

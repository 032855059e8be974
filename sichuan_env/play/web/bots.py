"""The bots of one browser game: their own agent objects, a time limit per decision, and a
named fallback when a bot fails.

:class:`BotSpec` says how to build a seat's bot (an agent spec for
:func:`sichuan_env.seats.agent.make_agent`) and how the page names it (:func:`display_name`:
never a server file path). Each :class:`GameBots` builds its own agent objects from the
specs, so no agent is shared between games, and resets them at each deal.

:meth:`GameBots.decide` asks a seat's bot for its move on a copy of the table, in a
thread of :data:`BOT_THREADS`, and waits at most ``time_limit`` seconds. When the bot
raises, returns an illegal action or runs out of time, the error is logged with the
game and the seat, and the fallback agent (``rules`` by default; its own object per
game) plays that decision; the returned :class:`Decision` says so, for the page. A bot
that ran out of time keeps its seat's agent busy until it returns; the fallback plays
the seat until then (the late answer is dropped).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, NamedTuple

from sichuan_env.play.web.bot_spec import BotSpec, choose_one, display_name
from sichuan_env.play.web.workers import BotWorkers
from sichuan_env.records.game import Game

__all__ = ["BOT_THREADS", "BotSpec", "Decision", "GameBots", "display_name"]

log = logging.getLogger("sichuan_env.play.web")

#: The threads bot decisions run in (a decision that ran out of time keeps its thread
#: until it returns; the pool is large enough for several such).
BOT_THREADS = ThreadPoolExecutor(max_workers=32, thread_name_prefix="sichuan-bot")


class Decision(NamedTuple):
    action: int
    notice: str | None  # None: the seat's own bot decided; else what went wrong, for the page


class GameBots:
    """The bot seats of one game: ``specs`` in seat order (None: the human's seat).

    ``time_limit``: seconds per decision; ``fallback``: the spec of the agent that plays a
    decision the seat's bot could not (None: the bot's error is raised, as when the
    server tries its bots before it starts); ``label``: names the game in the log;
    ``workers``: the processes of the seats whose spec is ``isolated``."""

    def __init__(self, specs: Sequence[BotSpec | None], *, time_limit: float = 10.0,
                 fallback: str | None = "rules", label: str = "",
                 workers: BotWorkers | None = None) -> None:
        self.specs = list(specs)
        self.time_limit = float(time_limit)
        self.label = label or f"@{id(self):x}"
        self._workers = workers if any(sp is not None and sp.isolated
                                       for sp in self.specs) else None
        self.worker = self._workers.assign() if self._workers is not None else None
        # this game's own agent objects (those of isolated seats live in its worker)
        self.agents: list[Any] = [None if sp is None or self._isolated(sp)
                                  else sp.build(seed=s) for s, sp in enumerate(self.specs)]
        preset = next((sp.preset for sp in self.specs if sp is not None), "mil")
        self.fallback_spec = None if fallback is None else BotSpec(fallback, preset)
        self.fallback_name = "" if fallback is None else display_name(fallback)
        self._fallback: Any = None
        self._busy: dict[int, Future] = {}  # seat -> a decision still running after its time
        self.failures = 0

    def _isolated(self, spec: BotSpec) -> bool:
        return spec.isolated and self.worker is not None

    def close(self) -> None:
        """The game is over for good: its agents in the worker are dropped, and the
        programs of its ``exec:`` bots ended."""
        for agent in self.agents:
            if callable(getattr(agent, "close", None)):
                agent.close()
        if self.worker is not None and self._workers is not None:
            self.worker.send("drop", self.label)
            self._workers.release(self.worker)
            self.worker = None

    @property
    def names(self) -> list[str]:
        return ["you" if sp is None else sp.shown for sp in self.specs]

    def reset(self) -> None:
        """Called at each new deal: every bot's ``reset`` (when it has one)."""
        if self.worker is not None:
            self.worker.send("reset", self.label)
        for s, agent in enumerate(self.agents):
            if agent is None or s in self._busy:
                continue
            reset = getattr(agent, "reset", None)
            if callable(reset):
                try:
                    reset()
                except Exception:
                    log.exception("game %s seat %d (%s): reset failed", self.label, s,
                                  self.specs[s].spec)
        if self._fallback is not None and callable(getattr(self._fallback, "reset", None)):
            self._fallback.reset()

    def fallback(self) -> Any:
        """This game's fallback agent (built on first use)."""
        if self._fallback is None:
            assert self.fallback_spec is not None
            self._fallback = self.fallback_spec.build(seed=0)
        return self._fallback

    def decide(self, game: Game) -> Decision:
        """The move of the seat to act in ``game`` (a bot seat)."""
        seat = int(game.current_seat)
        agent = self.agents[seat]
        busy = self._busy.get(seat)
        if busy is not None and busy.done():
            del self._busy[seat]
            busy = None
        if busy is not None:
            return self._fallen_back(game, seat, f"seat {seat}'s bot is still busy with an "
                                     "earlier decision")
        state = game.state.copy()  # the bot reads its own copy: a late bot changes nothing
        spec = self.specs[seat]
        name = spec.spec
        try:
            if self._isolated(spec):
                assert self.worker is not None
                future = self.worker.ask(self.label, seat, name, spec.preset, state,
                                         self.time_limit)
            else:
                future = BOT_THREADS.submit(choose_one, state, agent, name)
            try:
                action = int(future.result(timeout=self.time_limit))
            except FutureTimeout:
                self._busy[seat] = future  # the fallback plays the seat until it returns
                raise TimeoutError from None
        except TimeoutError:
            if self.fallback_spec is None:
                raise
            log.error("game %s seat %d (%s): no decision within %.1f s; %s plays it",
                      self.label, seat, name, self.time_limit, self.fallback_name)
            return self._fallen_back(game, seat, f"seat {seat}'s bot took longer than "
                                     f"{self.time_limit:g} s")
        except Exception as err:
            if self.fallback_spec is None:
                raise
            log.error("game %s seat %d (%s): the bot failed: %s: %s; %s plays it",
                      self.label, seat, name, type(err).__name__, err, self.fallback_name,
                      exc_info=err)
            kind = getattr(err, "kind", type(err).__name__)  # a worker's: the bot's own
            return self._fallen_back(game, seat, f"seat {seat}'s bot failed ({kind})")
        return Decision(action, None)

    def _fallen_back(self, game: Game, seat: int, why: str) -> Decision:
        if self.fallback_spec is None:  # only after a timeout, which raised already
            raise RuntimeError(why)
        self.failures += 1
        try:
            action = choose_one(game.state.copy(), self.fallback(), self.fallback_spec.spec)
        except Exception as err:  # the fallback failed too: the deal still goes on
            log.error("game %s seat %d: the fallback %s failed too: %s: %s; the first legal "
                      "move is played", self.label, seat, self.fallback_spec.spec,
                      type(err).__name__, err, exc_info=err)
            self._fallback = None  # built afresh for its next decision
            kind = getattr(err, "kind", type(err).__name__)
            return Decision(first_legal(game), f"{why}, and the {self.fallback_name} "
                                               f"bot failed too ({kind}): the first legal "
                                               "move was played for it")
        return Decision(action, f"{why}: the {self.fallback_name} bot played this move "
                                "for it")


def first_legal(game: Game) -> int:
    """The lowest legal action of the seat to act (the engine's mask: never fails)."""
    return int(game.legal_actions()[0])

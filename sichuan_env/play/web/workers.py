"""Bot worker processes: slow bots think outside the server's process.

A bot that thinks long (``search``) holds the Python interpreter lock of the process it
runs in for most of its decision, which would slow every other game of the server. A
:class:`BotWorker` is a process of its own (started with ``spawn``) that keeps the agent
objects of the games assigned to it (one object per game and seat, built on first use,
reset at each deal, dropped with the game) and answers one decision at a time over a
pipe. :class:`BotWorkers` assigns each game to the worker with the fewest games.

A decision that does not come within its time limit kills the worker (the server
started it, nothing else shares it) and starts a fresh one, so a bot that hangs costs
its worker's games their agents' memory (rebuilt on their next decision), never the
server. A worker that dies is restarted the same way.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
import traceback
from collections.abc import Sequence
from typing import Any

from sichuan_env.play.web.bot_spec import BotSpec, choose_one

__all__ = ["BotWorker", "BotWorkers", "WorkerError"]


class WorkerError(RuntimeError):
    """A bot in a worker process failed: ``kind`` names its exception (``RuntimeError``),
    the message is the exception's."""

    def __init__(self, message: str, kind: str = "WorkerError") -> None:
        super().__init__(message)
        self.kind = kind


def _worker_main(conn: Any) -> None:
    """The worker process: answer requests until the pipe closes."""
    from sichuan_env.records.game import Game

    agents: dict[tuple[str, int], Any] = {}
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        kind = msg[0]
        if kind == "decide":
            _, key, seat, spec, preset, state = msg
            try:
                agent = agents.get((key, seat))
                if agent is None:
                    agent = agents[(key, seat)] = BotSpec(spec, preset).build(seed=seat)
                conn.send(("ok", choose_one(state, agent, spec)))
            except Exception as err:
                conn.send(("error", type(err).__name__, str(err), traceback.format_exc()))
        elif kind == "reset":
            for (k, _), agent in agents.items():
                if k == msg[1] and callable(getattr(agent, "reset", None)):
                    try:
                        agent.reset()
                    except Exception:
                        agents[(k, _)] = None
            for k in [k for k, a in agents.items() if a is None]:
                del agents[k]
        elif kind == "drop":
            for k in [k for k in agents if k[0] == msg[1]]:
                del agents[k]
        elif kind == "warm":  # build each spec once and play a deal's first decisions
            _, specs, preset = msg
            try:
                for spec in specs:
                    agent = BotSpec(spec, preset).build(seed=0)
                    g = Game.new(0, preset)
                    for _ in range(8):
                        g.play(choose_one(g.state, agent, spec))
                conn.send(("ok", None))
            except Exception as err:
                conn.send(("error", type(err).__name__, str(err), traceback.format_exc()))


class BotWorker:
    """One worker process; :meth:`decide` is called from any thread (one at a time)."""

    def __init__(self, warm: Sequence[str] = (), preset: str = "mil") -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()  # one decision at a time
        self._send_lock = threading.Lock()  # one message at a time into the pipe
        self.warm_specs = list(warm)
        self.preset = preset
        self.restarts = -1
        self.games = 0
        self._start()

    def _start(self) -> None:
        parent, child = self._ctx.Pipe()
        self.proc = self._ctx.Process(target=_worker_main, args=(child,), daemon=True,
                                      name="sichuan-bot-worker")
        self.proc.start()
        child.close()
        self.conn = parent
        self.restarts += 1
        if self.warm_specs:
            with self._send_lock:
                self.conn.send(("warm", self.warm_specs, self.preset))
            self._warming = True
        else:
            self._warming = False

    def _restart(self) -> None:
        try:
            self.conn.close()
        finally:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
            self._start()

    def wait_ready(self, timeout: float) -> None:
        """Wait for the warm-up (at server start); raises :class:`WorkerError` when it
        failed or did not end in time."""
        with self._lock:
            self._finish_warm(timeout)

    def _finish_warm(self, timeout: float) -> None:
        if not self._warming:
            return
        if not self.conn.poll(timeout):
            raise TimeoutError(f"the bot worker did not warm up within {timeout:g} s")
        reply = self.conn.recv()
        self._warming = False
        if reply[0] == "error":
            raise WorkerError(f"{reply[1]}: {reply[2]}", reply[1])

    def decide(self, key: str, seat: int, spec: str, preset: str, state: Any,
               timeout: float) -> int:
        """The action of ``spec``'s agent of game ``key`` at ``seat`` for ``state``; raises
        ``TimeoutError`` (the worker is restarted) or :class:`WorkerError`."""
        deadline = time.monotonic() + timeout
        if not self._lock.acquire(timeout=timeout):
            raise TimeoutError("the bot worker is busy with other games' decisions")
        try:
            try:
                self._finish_warm(max(0.0, deadline - time.monotonic()))
                with self._send_lock:
                    self.conn.send(("decide", key, seat, spec, preset, state))
                answered = self.conn.poll(max(0.0, deadline - time.monotonic()))
                reply = self.conn.recv() if answered else None
            except TimeoutError:  # the warm-up did not end in time (an OSError too)
                answered = False
            except (EOFError, OSError) as err:
                self._restart()
                raise WorkerError(f"the bot worker stopped ({type(err).__name__}); "
                                  "restarted") from None
            if not answered:
                self._restart()
                raise TimeoutError(f"no decision within {timeout:g} s (worker restarted)")
        finally:
            self._lock.release()
        if reply[0] == "error":
            raise WorkerError(f"{reply[2]}\n{reply[3]}", reply[1])
        return int(reply[1])

    def send(self, *msg: Any) -> None:
        """A message without an answer (``reset`` or ``drop`` of a game's agents)."""
        # not behind a decision in progress: only the sending is one at a time; a dead
        # worker is restarted at its next decision, its games' agents rebuilt
        with self._send_lock, contextlib.suppress(OSError, ValueError):
            self.conn.send(msg)

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)


class BotWorkers:
    """``n`` :class:`BotWorker` processes (each warmed with the ``warm`` specs); each game
    goes to the one with the fewest games."""

    def __init__(self, n: int, warm: Sequence[str] = (), preset: str = "mil") -> None:
        self.workers = [BotWorker(warm, preset) for _ in range(n)]
        self._lock = threading.Lock()

    def wait_ready(self, timeout: float = 600.0) -> None:
        for w in self.workers:
            w.wait_ready(timeout)

    def assign(self) -> BotWorker:
        with self._lock:
            w = min(self.workers, key=lambda w: w.games)
            w.games += 1
            return w

    def release(self, worker: BotWorker) -> None:
        with self._lock:
            worker.games -= 1

    def close(self) -> None:
        for w in self.workers:
            w.close()

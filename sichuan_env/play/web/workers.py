"""Bot worker processes: slow bots think outside the server's process.

A bot that thinks long (``search``) holds the Python interpreter lock of the process it
runs in for most of its decision, which would slow every other game of the server. A
:class:`BotWorker` is a process of its own (started with ``spawn``) that keeps the agent
objects of the games assigned to it (one object per game and seat, built on first use,
reset at each deal, dropped with the game). :class:`BotWorkers` assigns each game to the
worker with the fewest games.

**Games do not queue behind each other.** A worker answers every decision in a thread
of its own, as soon as it is asked (each request carries an id; the answers come back in
any order), so a bot that takes long delays its own game only: a bot that waits (a
program of its own, ``exec:``, a network, a sleep) costs the other games of its worker
nothing, and one that computes shares the worker's interpreter with them instead of
making them wait for its end. Each decision has its own time limit
(:meth:`BotWorker.ask` returns a future; the caller waits on it). A decision that ran
out of time keeps running in the worker, its seat played by the fallback until it
returns (:class:`~sichuan_env.play.web.bots.GameBots`); one that has not returned ``grace``
seconds after its limit is taken for hung: the worker is killed and started again (the
decisions it was thinking then fail, and their games' fallback plays them), so a hung
bot costs its worker's games their agents (rebuilt on their next decision), never the
server. A worker that dies is restarted the same way.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import threading
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sichuan_env.play.web.bot_spec import BotSpec, choose_one

__all__ = ["BotWorker", "BotWorkers", "WorkerError"]

#: Decisions one worker thinks about at once (more wait for a thread).
WORKER_THREADS = 64


class WorkerError(RuntimeError):
    """A bot in a worker process failed: ``kind`` names its exception (``RuntimeError``),
    the message is the exception's."""

    def __init__(self, message: str, kind: str = "WorkerError") -> None:
        super().__init__(message)
        self.kind = kind


def _worker_main(conn: Any) -> None:
    """The worker process: answer requests until the pipe closes; each decision in a
    thread of its own (answered with its request id)."""
    from sichuan_env.records.game import Game

    agents: dict[tuple[str, int], Any] = {}
    running: set[tuple[str, int]] = set()  # (game, seat) with a decision in progress
    lock = threading.Lock()  # agents and running
    send_lock = threading.Lock()
    pool = ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="bot")

    def send(msg: tuple) -> None:
        with send_lock, contextlib.suppress(OSError, ValueError):
            conn.send(msg)

    def failed(rid: int, err: Exception) -> tuple:
        return ("error", rid, type(err).__name__, str(err), traceback.format_exc())

    def decide(rid: int, key: str, seat: int, spec: str, preset: str, state: Any) -> None:
        try:
            with lock:
                agent = agents.get((key, seat))
            if agent is None:
                agent = BotSpec(spec, preset).build(seed=seat)
                with lock:
                    agents[(key, seat)] = agent
            send(("ok", rid, choose_one(state, agent, spec)))
        except Exception as err:
            send(failed(rid, err))
        finally:
            with lock:
                running.discard((key, seat))

    def warm(rid: int, specs: list[str], preset: str) -> None:
        # build each spec once and play a deal's first decisions
        try:
            for spec in specs:
                agent = BotSpec(spec, preset).build(seed=0)
                g = Game.new(0, preset)
                for _ in range(8):
                    g.play(choose_one(g.state, agent, spec))
            send(("ok", rid, None))
        except Exception as err:
            send(failed(rid, err))

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        kind = msg[0]
        if kind == "decide":
            _, rid, key, seat, spec, preset, state = msg
            with lock:
                running.add((key, seat))
            pool.submit(decide, rid, key, seat, spec, preset, state)
        elif kind == "reset":  # a seat still thinking about an old decision is left alone
            with lock:
                mine = [(k, a) for k, a in agents.items()
                        if k[0] == msg[1] and k not in running]
            for k, agent in mine:
                if callable(getattr(agent, "reset", None)):
                    try:
                        agent.reset()
                    except Exception:
                        with lock:
                            agents.pop(k, None)
        elif kind == "drop":
            with lock:
                for k in [k for k in agents if k[0] == msg[1]]:
                    agent = agents.pop(k)
                    if callable(getattr(agent, "close", None)):
                        with contextlib.suppress(Exception):
                            agent.close()
        elif kind == "warm":
            _, rid, specs, preset = msg
            pool.submit(warm, rid, specs, preset)


class _Asked:
    __slots__ = ("future", "hung_at")

    def __init__(self, future: Future, hung_at: float) -> None:
        self.future, self.hung_at = future, hung_at


class BotWorker:
    """One worker process. :meth:`ask` may be called from any thread, any number at
    once; a reader thread hands each answer to its request's future and restarts the
    process when it dies or a decision hangs (``grace`` seconds past its limit)."""

    def __init__(self, warm: Sequence[str] = (), preset: str = "mil",
                 grace: float = 30.0) -> None:
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()  # the process, the pipe and the requests
        self._ids = itertools.count()
        self._asked: dict[int, _Asked] = {}
        self.warm_specs = list(warm)
        self.preset = preset
        self.grace = float(grace)
        self.restarts = -1
        self.games = 0
        self._closed = False
        self._warm: Future | None = None
        with self._lock:
            self._start()

    # ------------------------------------------------------------------ the process
    def _start(self) -> None:  # with self._lock held
        parent, child = self._ctx.Pipe()
        self.proc = self._ctx.Process(target=_worker_main, args=(child,), daemon=True,
                                      name="sichuan-bot-worker")
        self.proc.start()
        child.close()
        self.conn = parent
        self.restarts += 1
        reader = threading.Thread(target=self._read, args=(parent,), daemon=True,
                                  name="sichuan-bot-worker-reader")
        reader.start()
        if self.warm_specs:
            self._warm = self._send_request(("warm",), (self.warm_specs, self.preset),
                                            hung_at=float("inf"))

    def _send_request(self, head: tuple, body: tuple, hung_at: float) -> Future:
        # with self._lock held
        rid = next(self._ids)
        future: Future = Future()
        self._asked[rid] = _Asked(future, hung_at)
        try:
            self.conn.send((*head, rid, *body))
        except (OSError, ValueError) as err:
            del self._asked[rid]
            future.set_exception(WorkerError(f"the bot worker stopped ({type(err).__name__})"))
        return future

    def _fail_all(self, why: str) -> None:  # with self._lock held
        asked, self._asked = self._asked, {}
        for a in asked.values():
            if not a.future.done():
                a.future.set_exception(WorkerError(why))

    def _kill(self) -> None:  # with self._lock held
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)

    def _restart(self, conn: Any, why: str) -> None:
        """Kill and start again the process of ``conn`` (unless that was done already),
        failing the decisions it was thinking."""
        with self._lock:
            if conn is not self.conn or self._closed:
                return
            self._kill()
            self._fail_all(why)
            self._start()

    def _read(self, conn: Any) -> None:
        """The reader thread of one process: answers to their futures; a dead or hung
        process restarted."""
        while True:
            try:
                ready = conn.poll(0.25)
                reply = conn.recv() if ready else None
            except (EOFError, OSError):
                self._restart(conn, "the bot worker stopped; restarted")
                return
            if reply is not None:
                with self._lock:
                    asked = self._asked.pop(reply[1], None) if conn is self.conn else None
                if asked is not None and not asked.future.done():
                    if reply[0] == "ok":
                        asked.future.set_result(reply[2])
                    else:
                        asked.future.set_exception(
                            WorkerError(f"{reply[3]}\n{reply[4]}", reply[2]))
                continue
            now = time.monotonic()
            with self._lock:
                if conn is not self.conn:
                    return
                hung = any(a.hung_at < now for a in self._asked.values())
            if hung:
                self._restart(conn, "a bot of this worker hung: the worker was restarted")
                return

    # ------------------------------------------------------------------ requests
    def wait_ready(self, timeout: float) -> None:
        """Wait for the warm-up (at server start); raises :class:`WorkerError` when it
        failed, ``TimeoutError`` when it did not end in time."""
        warm = self._warm
        if warm is None:
            return
        try:
            warm.result(timeout)
        except TimeoutError:
            raise TimeoutError(f"the bot worker did not warm up within {timeout:g} s") from None

    def ask(self, key: str, seat: int, spec: str, preset: str, state: Any,
            timeout: float) -> Future:
        """The future action of ``spec``'s agent of game ``key`` at ``seat`` for
        ``state``; it fails with :class:`WorkerError` (the bot's error, or its worker
        stopped). ``timeout``: the decision's limit (the worker is restarted when it
        has not returned ``grace`` seconds after it)."""
        with self._lock:
            return self._send_request(("decide",), (key, seat, spec, preset, state),
                                      hung_at=time.monotonic() + timeout + self.grace)

    def decide(self, key: str, seat: int, spec: str, preset: str, state: Any,
               timeout: float) -> int:
        """:meth:`ask` and wait: the action, or ``TimeoutError`` (the decision goes on
        in the worker) or :class:`WorkerError`."""
        future = self.ask(key, seat, spec, preset, state, timeout)
        try:
            return int(future.result(timeout))
        except TimeoutError:
            raise TimeoutError(f"no decision within {timeout:g} s") from None

    def send(self, *msg: Any) -> None:
        """A message without an answer (``reset`` or ``drop`` of a game's agents)."""
        with self._lock, contextlib.suppress(OSError, ValueError):
            self.conn.send(msg)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._kill()
            self._fail_all("the bot worker was closed")


class BotWorkers:
    """``n`` :class:`BotWorker` processes (each warmed with the ``warm`` specs); each game
    goes to the one with the fewest games."""

    def __init__(self, n: int, warm: Sequence[str] = (), preset: str = "mil",
                 grace: float = 30.0) -> None:
        self.workers = [BotWorker(warm, preset, grace) for _ in range(n)]
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

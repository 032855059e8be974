"""``exec:COMMAND``: a bot in any language, run as a process that speaks ``sichuan-bot/1``.

:func:`exec_agent` builds an :class:`ExecAgent` from the spec
``exec:COMMAND[?key=value&...]`` (:func:`sichuan_env.seats.agent.make_agent` sends every
``exec:`` spec here), for example ``exec:./mybot``, ``exec:node bot.js?tables=64``,
``exec:python -m sichuan_env.seats.bot_server rules``. Options:

================  ==========  ===========================================================
key               default     meaning
================  ==========  ===========================================================
``timeout``       1.0         seconds the bot has for one decision (from the request)
``first_timeout`` 30.0        seconds for ``hello`` and for the requests sent before the
                              first answer after a (re)start
``tables``        1           requests the bot may have at once (it may accept fewer in
                              its ``hello`` answer)
``fallback``      ``rules``   the agent that plays a decision the bot failed (any spec
                              of :func:`~sichuan_env.seats.agent.make_agent` but ``exec:``)
``faults``        20          faults allowed; one more drops the bot from the run (the
                              fallback plays the rest of its decisions) with one line on
                              stderr
``name``          the spec    the name results use
``log``           none        a file for the bot's stderr (at most ``log_bytes``)
``log_bytes``     1000000
``cwd``           none        the folder the program runs in
================  ==========  ===========================================================

**Play.** The agent reads seat views (``needs = "view"``) and takes the callers' table
ids (``takes_tables``, :func:`sichuan_env.seats.driver.choose`): each seat of each deal is one
protocol *table* (:class:`sichuan_env.seats.protocol.Stream`), and every request carries the
events since that seat's previous request and its whole view
(:mod:`sichuan_env.seats.protocol`). One ``act_batch`` sends the requests of all its rows, at
most ``tables`` unanswered at a time, and collects the answers in any order.

**Faults.** A timeout, a crash (stdout closed), a line that is not a JSON object, an
answer without a known request id, an unknown or an illegal action: the decision is
played by the fallback agent and the fault is kept (:attr:`ExecAgent.faults`: kind,
request id, table, seat, detail, the bot's last stderr lines); a program that timed out
or died is killed and started again (with ``hello``), and its tables start over (the next
request of each carries the events of the deal so far). Past the fault budget, or when a
restart fails, the bot is dropped. A program that cannot start or fails its first
``hello`` raises :class:`~sichuan_env.seats.bot_process.BotStartError` (one line naming it).

**Time.** Every answer's delay is measured (:meth:`ExecAgent.timing`: decisions, mean,
max, over-limit count).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from itertools import count
from typing import Any

import numpy as np

from sichuan_env.core.actions import ACTION_STRINGS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.seats.bot_process import BotGoneError, BotProcess, BotStartError
from sichuan_env.seats.driver import NO_OBSERVATION, agent_needs, check_actions
from sichuan_env.seats.observation import planes_from_view
from sichuan_env.seats.protocol import (
    PROTOCOL,
    ProtocolError,
    Stream,
    answer_action,
    dumps,
    hello_message,
    legal_lists,
    parse_answer,
    view_messages,
)
from sichuan_env.seats.view import SeatView

__all__ = ["ExecAgent", "exec_agent", "EXEC_PREFIX", "FAULT_KINDS"]

EXEC_PREFIX = "exec:"
#: The kinds of fault, as written in results and records.
FAULT_KINDS = ("timeout", "crash", "not_json", "bad_answer", "unknown_action",
               "illegal_action")
_MATCHES = count(1)


class _Request:
    __slots__ = ("rid", "row", "table", "stream", "legal", "line", "sent", "deadline")

    def __init__(self, rid: int, row: int, table: int, stream: Stream, legal: list[str],
                 line: str) -> None:
        self.rid, self.row, self.table, self.stream = rid, row, table, stream
        self.legal, self.line = legal, line
        self.sent = 0.0
        self.deadline = 0.0


class ExecAgent:
    """A bot program speaking ``sichuan-bot/1`` (see the module docstring)."""

    needs = "view"
    takes_tables = True

    def __init__(self, command: str, *, timeout: float = 1.0, first_timeout: float = 30.0,
                 tables: int = 1, fallback: str = "rules", faults: int = 20,
                 name: str | None = None, log: str | None = None, log_bytes: int = 1_000_000,
                 cwd: str | None = None, rules: Rules | str | None = None,
                 build: Callable[[str], Any]) -> None:
        if not isinstance(command, str) or not command.strip():
            raise ValueError("exec: needs a command, e.g. exec:./mybot")
        for key, value, low in (("timeout", timeout, 0.0), ("first_timeout", first_timeout, 0.0),
                                ("tables", tables, 1), ("faults", faults, 0)):
            if not isinstance(value, int | float) or isinstance(value, bool) or value < low \
                    or (low > 0 and value == 0):
                raise ValueError(f"{key} must be a number >= {low}, got {value!r}")
            if key in ("timeout", "first_timeout") and value <= 0:
                raise ValueError(f"{key} must be > 0 seconds, got {value!r}")
        if isinstance(fallback, str) and fallback.strip().lower().startswith(EXEC_PREFIX):
            raise ValueError("the fallback must be an agent of this project, not exec:")
        self.command = command.strip()
        self.name = name or f"{EXEC_PREFIX}{self.command}"
        self.timeout = float(timeout)
        self.first_timeout = float(first_timeout)
        self.max_tables = int(tables)
        self.budget = int(faults)
        self.log, self.log_bytes, self.cwd = log, int(log_bytes), cwd
        self.rules = get_rules(rules)
        self.match = f"{self.name}#{next(_MATCHES)}"
        self.fallback_spec = fallback
        self.fallback = build(fallback)
        self.faults: list[dict[str, Any]] = []
        self.fault_events = 0
        self.restarts = 0
        self.dropped: str | None = None
        self.bot_name = self.bot_version = ""
        self._streams: dict[tuple[int, int], Stream] = {}
        self._table_ids = count()
        self._request_ids = count()
        self._decisions = 0
        self._time_total = 0.0
        self._time_max = 0.0
        self._over = 0
        self._new_faults: list[dict[str, Any]] = []
        self._given_up: set[int] = set()  # ids played by the fallback: a late answer is ignored
        self.proc: BotProcess | None = None
        self._start()

    # ------------------------------------------------------------------ process

    def _start(self) -> None:
        """Start the program and exchange ``hello``; BotStartError when it fails."""
        proc = BotProcess(self.command, cwd=self.cwd, log=self.log, log_bytes=self.log_bytes)
        try:
            proc.send(dumps(hello_message(self.rules, self.match, self.max_tables)) + "\n")
            deadline = time.monotonic() + self.first_timeout
            try:
                lines = proc.lines(deadline)
            except BotGoneError as err:
                raise BotStartError(self._failed_hello(proc, str(err))) from None
            if not lines:
                raise BotStartError(self._failed_hello(
                    proc, f"no answer to hello within {self.first_timeout:g} s"))
            try:
                msg = parse_answer(lines[0])
            except ProtocolError as err:
                raise BotStartError(self._failed_hello(proc, str(err))) from None
            if msg.get("type") != "hello" or msg.get("protocol", PROTOCOL) != PROTOCOL:
                raise BotStartError(self._failed_hello(
                    proc, f"expected a hello answer of {PROTOCOL}, got {dumps(msg)[:120]}"))
            tables = msg.get("tables", 1)
            if not isinstance(tables, int) or isinstance(tables, bool) or tables < 1:
                raise BotStartError(self._failed_hello(
                    proc, f"its hello says tables={tables!r}: a whole number >= 1"))
            self.tables = min(self.max_tables, tables)
            self.bot_name = str(msg.get("name", ""))
            self.bot_version = str(msg.get("version", ""))
            proc.leftover = lines[1:]  # type: ignore[attr-defined]
        except BaseException:
            proc.close(grace=0)
            raise
        self.proc = proc
        self._first = True
        self._streams.clear()  # a new process knows no table: each starts over

    def _failed_hello(self, proc: BotProcess, what: str) -> str:
        tail = proc.stderr_tail() if proc.proc.poll() is not None else []
        if not tail:
            time.sleep(0.05)  # let the stderr thread catch the last words
            tail = proc.stderr_tail()
        said = f" (stderr: {' | '.join(tail[-3:])})" if tail else ""
        return f"bot {self.command!r} failed its hello: {what}{said}"

    def __deepcopy__(self, memo: dict) -> ExecAgent:
        raise TypeError("an exec: agent runs a program and is not copied: build another")

    def close(self) -> None:
        """End the program (see :meth:`BotProcess.close`)."""
        if self.proc is not None:
            self.proc.close()
            self.proc = None

    def __del__(self) -> None:  # the atexit hook of bot_process ends it otherwise
        # not contextlib: at interpreter exit its module may already be gone
        try:  # noqa: SIM105
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ faults

    def _fault(self, kind: str, req: _Request | None, detail: str,
               seats: np.ndarray) -> None:
        proc = self.proc
        if proc is not None and kind in ("crash",):
            time.sleep(0.02)  # the stderr thread reads the last lines
        entry = {"kind": kind, "request": None if req is None else req.rid,
                 "table": None if req is None else req.table,
                 "seat": None if req is None else int(seats[req.row]),
                 "detail": detail[:300], "fallback": self.fallback_spec,
                 "stderr": [] if proc is None else proc.stderr_tail()[-5:]}
        self.faults.append(entry)
        self._new_faults.append(entry)
        self.fault_events += 1

    def take_faults(self) -> list[dict[str, Any]]:
        """The faults since the previous call (each names ``table``: the caller's table
        id of the decision, and ``seat``)."""
        out, self._new_faults = self._new_faults, []
        return out

    def _check_budget(self) -> None:
        if self.dropped is None and self.fault_events > self.budget:
            last = self.faults[-1]
            self.dropped = (f"{self.name} dropped after {self.fault_events} faults (budget "
                            f"{self.budget}; last: {last['kind']}: {last['detail'][:80]}); "
                            f"{self.fallback_spec} plays its remaining decisions")
            print(f"sichuan: {self.dropped}", file=sys.stderr, flush=True)
            self.close()

    def _restart(self) -> None:
        self.close()
        if self.dropped is not None:
            return
        try:
            self._start()
            self.restarts += 1
        except BotStartError as err:
            self.dropped = (f"{self.name} dropped: the restart failed: {err}; "
                            f"{self.fallback_spec} plays its remaining decisions")
            print(f"sichuan: {self.dropped}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ play

    def act(self, observation: SeatView, mask: np.ndarray) -> int:
        obs = SeatView(*(np.asarray(f)[None] for f in observation))
        return int(self.act_batch(obs, np.asarray(mask)[None])[0])

    def reset(self) -> None:
        """Nothing to do: a new deal is seen in the views (a new protocol table)."""

    def act_batch(self, views: SeatView, masks: np.ndarray,
                  tables: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """(n,) actions for the n rows of ``views`` (``tables``: the callers' table ids of
        the rows, default 0..n-1)."""
        masks = np.asarray(masks)
        n = masks.shape[0]
        out = np.full(n, -1, np.int64)
        if n == 0:
            return out
        seats = np.asarray(views.seat).astype(np.int64)
        table_ids = list(range(n)) if tables is None else [int(t) for t in tables]
        if self.dropped is None and self.proc is not None:
            self._ask(views, masks, seats, table_ids, out)
        todo = np.flatnonzero(out < 0)
        if todo.size:
            out[todo] = self._fallback(views, masks, todo)
        for i in range(n):  # what each seat answered, for its next request's events
            stream = self._streams.get((table_ids[i], int(seats[i])))
            if stream is not None:
                stream.answered = ACTION_STRINGS[out[i]]
        return out

    def _fallback(self, views: SeatView, masks: np.ndarray, rows: np.ndarray) -> np.ndarray:
        sub = SeatView(*(np.asarray(f)[rows] for f in views))
        needs = agent_needs(self.fallback)
        inputs: Any = sub
        if needs == "planes":
            inputs = planes_from_view(sub, self.rules)
        elif needs == "nothing":
            inputs = NO_OBSERVATION(rows.size)
        acts = self.fallback.act_batch(inputs, masks[rows])
        return check_actions(acts, masks[rows], rows, np.asarray(sub.seat),
                             who=f"{self.fallback_spec} (fallback of {self.name})")

    def _ask(self, views: SeatView, masks: np.ndarray, seats: np.ndarray,
             table_ids: list[int], out: np.ndarray) -> None:
        msgs = view_messages(views)
        legals = legal_lists(masks)
        pending: list[_Request] = []
        for i, view in enumerate(msgs):
            key = (table_ids[i], int(seats[i]))
            stream = self._streams.get(key)
            if stream is None or not stream.continues(view):
                if stream is not None and self.proc is not None:
                    self.proc.send(dumps({"type": "end", "table": stream.table}) + "\n")
                stream = self._streams[key] = Stream(next(self._table_ids))
            rid = next(self._request_ids)
            legal = legals[i]
            req = _Request(rid, i, table_ids[i], stream, legal,
                           dumps(stream.request(rid, view, legal)))
            pending.append(req)
        pending.reverse()  # popped from the end: first row first
        waiting: dict[int, _Request] = {}
        while (pending or waiting) and self.proc is not None:
            proc = self.proc
            batch = []
            while pending and len(waiting) < self.tables:
                req = pending.pop()
                limit = self.first_timeout if self._first else self.timeout
                req.sent = time.monotonic()
                req.deadline = req.sent + limit
                waiting[req.rid] = req
                batch.append(req.line)
            if batch:
                proc.send("\n".join(batch) + "\n")
            deadline = min(r.deadline for r in waiting.values())
            try:
                leftover = getattr(proc, "leftover", None)
                if leftover:
                    lines, proc.leftover = leftover, []  # type: ignore[attr-defined]
                else:
                    lines = proc.lines(deadline)
            except BotGoneError as err:
                self._lost(waiting, pending, "crash", f"the bot died: {err}", seats)
                continue
            now = time.monotonic()
            if not lines:
                late = min(waiting.values(), key=lambda r: r.deadline)
                self._lost(waiting, pending, "timeout",
                           f"no answer within {late.deadline - late.sent:g} s", seats,
                           first=late)
                continue
            for line in lines:
                if not line.strip():
                    continue
                self._answer(line, waiting, out, seats, now)
            self._check_budget()
            if self.dropped is not None:
                return

    def _answer(self, line: bytes, waiting: dict[int, _Request], out: np.ndarray,
                seats: np.ndarray, now: float) -> None:
        try:
            msg = parse_answer(line)
        except ProtocolError as err:
            oldest = _oldest(waiting)
            if oldest is not None:
                del waiting[oldest.rid]
                self._given_up.add(oldest.rid)
            self._fault("not_json", oldest, str(err), seats)
            return
        rid = msg.get("id")
        req = waiting.get(rid) if isinstance(rid, int) and not isinstance(rid, bool) else None
        if req is None:
            if rid in self._given_up:  # answered after the fallback played it: ignored
                self._given_up.discard(rid)
                return
            oldest = _oldest(waiting)
            if oldest is not None:
                del waiting[oldest.rid]
                self._given_up.add(oldest.rid)
            self._fault("bad_answer", oldest, f"an answer without the id of a waiting "
                        f"request: {line.decode(errors='replace')[:120]}", seats)
            return
        del waiting[rid]
        self._first = False  # the program is up: the plain limit from now on
        took = now - req.sent
        self._decisions += 1
        self._time_total += took
        self._time_max = max(self._time_max, took)
        if took > req.deadline - req.sent:
            self._over += 1
        try:
            a = answer_action(msg, req.legal)
        except ProtocolError as err:
            kind = "illegal_action" if str(err).startswith("illegal") else "unknown_action"
            self._fault(kind, req, str(err), seats)
            return
        out[req.row] = a

    def _lost(self, waiting: dict[int, _Request], pending: list[_Request], kind: str,
              detail: str, seats: np.ndarray, first: _Request | None = None) -> None:
        """The program timed out or died: a fault on ``first`` (default the oldest
        waiting request); every unanswered request goes to the fallback; restart."""
        first = first or _oldest(waiting)
        self._fault(kind, first, detail, seats)
        waiting.clear()
        self._given_up.clear()  # the old process is gone
        self._check_budget()
        if self.dropped is None:
            self._restart()
        # requests built for the old process refer to its tables: the rows not sent yet
        # are played by the fallback this time (their tables start over next time)
        pending.clear()

    # ------------------------------------------------------------------ reports

    def timing(self) -> dict[str, Any]:
        """Decisions answered, mean and max seconds per decision, answers over the limit."""
        n = self._decisions
        return {"decisions": n, "mean_s": self._time_total / n if n else None,
                "max_s": self._time_max if n else None, "over_limit": self._over,
                "limit_s": self.timeout, "first_limit_s": self.first_timeout}

    def clear_report(self) -> None:
        """Start the faults and timing of :meth:`report` afresh (e.g. for another run with
        the same program)."""
        self.faults, self._new_faults = [], []
        self.fault_events = self.restarts = self._decisions = self._over = 0
        self._time_total = self._time_max = 0.0

    def report(self) -> dict[str, Any]:
        """What results files keep of this bot: program, name, timing, faults, drop."""
        return {"command": self.command, "bot": self.bot_name, "version": self.bot_version,
                "tables": getattr(self, "tables", None), "timing": self.timing(),
                "faults": self.faults, "fault_count": self.fault_events,
                "restarts": self.restarts, "dropped": self.dropped,
                "fallback": self.fallback_spec}

    def __repr__(self) -> str:
        return f"ExecAgent({self.command!r})"


def _oldest(waiting: dict[int, _Request]) -> _Request | None:
    """The waiting request sent first (the dict keeps the order of sending)."""
    return next(iter(waiting.values()), None)


def exec_agent(target: str, kwargs: dict[str, Any], *, build: Callable[[str], Any],
               preset: str | None = None) -> ExecAgent:
    """The agent of the spec ``exec:COMMAND?...`` (``target`` is ``exec:COMMAND``,
    ``kwargs`` the parsed options); ``build(spec)`` makes the fallback agent
    (:func:`sichuan_env.seats.agent.make_agent` passes itself). Raises ValueError (BotStartError
    included) with one line."""
    command = target[len(EXEC_PREFIX):].strip()
    known = {"timeout", "first_timeout", "tables", "fallback", "faults", "name", "log",
             "log_bytes", "cwd"}
    bad = sorted(set(kwargs) - known)
    if bad:
        raise ValueError(f"unknown option {bad[0]!r}; options: {', '.join(sorted(known))}")
    if "fallback" in kwargs:
        kwargs["fallback"] = str(kwargs["fallback"])
    if "name" in kwargs:
        kwargs["name"] = str(kwargs["name"])
    return ExecAgent(command, rules=preset, build=build, **kwargs)

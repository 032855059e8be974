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
``name``          the spec    the name results use (:func:`~sichuan_env.seats.agent.seat_agents`)
``log``           none        a file for the bot's stderr (at most ``log_bytes``)
``log_bytes``     1000000
``cwd``           none        the folder the program runs in
``isolate_walls`` false       no process plays two deals of one wall (the arena sets it
                              with ``--isolate-walls``; the tournament by default)
================  ==========  ===========================================================

**Play.** The agent reads seat views (``needs = "view"``) and takes the callers' table
ids (``takes_tables``, :func:`sichuan_env.seats.driver.choose`): each seat of each deal is one
protocol *table* (:class:`sichuan_env.seats.protocol.Stream`), and every request carries the
events since that seat's previous request and its whole view
(:mod:`sichuan_env.seats.protocol`). One ``act_batch`` sends the requests of all its rows, at
most ``tables`` unanswered per process at a time, and collects the answers in any order.

**Isolation.** The agent runs the program in as many processes (*lanes*) as it needs so
that no process is asked about two seats of one deal: a table's seat goes to the first
lane that holds no other seat of that table (one process when the agent plays one seat
per deal, at most four). With ``isolate_walls``, a lane also never gets a deal of a wall
it has seen (:meth:`ExecAgent.start_tables` names the walls), so no process sees two
rotations of one duplicate wall. A new lane (process) starts when none fits; with more
than :data:`LANE_CAP` open, the idle ones are ended first. :meth:`ExecAgent.end_tables`
(the arena calls it when a deal ends) sends ``end`` for the tables of those deals.

**Faults.** A timeout, a crash (stdout closed), a line that is not a JSON object, an
answer without a known request id, an unknown or an illegal action: the decision is
played by the fallback agent and the fault is kept (:attr:`ExecAgent.faults`: kind,
request id, table, seat, match id of the process, detail, the bot's last stderr lines,
read up to the faulty line); a program that timed out
or died is killed and started again (with ``hello``), and its tables start over (the next
request of each carries the events of the deal so far). Past the fault budget, or when a
restart fails, the bot is dropped. A program that cannot start or fails its first
``hello`` raises :class:`~sichuan_env.seats.bot_process.BotStartError` (one line naming it).

**Time.** Every answer's delay is measured (:meth:`ExecAgent.timing`: decisions, mean,
max, over-limit count: late answers and timeouts).
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Sequence
from itertools import count
from typing import Any

import numpy as np

from sichuan_env.core.actions import ACTION_STRINGS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.seats.bot_process import BotGoneError, BotProcess, BotStartError, wait_lines
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
#: At most this many processes stay open when lanes that have seen a wall are left idle.
LANE_CAP = 8


class _Request:
    __slots__ = ("rid", "row", "table", "stream", "legal", "line", "sent", "deadline", "lane")

    def __init__(self, rid: int, row: int, table: int, stream: Stream, legal: list[str],
                 line: str, lane: _Lane) -> None:
        self.rid, self.row, self.table, self.stream = rid, row, table, stream
        self.legal, self.line, self.lane = legal, line, lane
        self.sent = 0.0
        self.deadline = 0.0


class _Lane:
    """One process of the program: its tables (streams), the walls it has seen."""

    __slots__ = ("index", "proc", "tables", "first", "leftover", "keys", "walls", "match",
                 "given_up")

    def __init__(self, index: int) -> None:
        self.index = index
        self.proc: BotProcess | None = None
        self.tables = 1
        self.first = True
        self.leftover: list[bytes] = []
        self.keys: set[tuple[int, int]] = set()  # (caller's table, seat) it plays now
        self.walls: set[Any] = set()
        self.match = ""
        self.given_up: set[int] = set()  # ids played by the fallback: a late answer is ignored


class ExecAgent:
    """A bot program speaking ``sichuan-bot/1`` (see the module docstring)."""

    needs = "view"
    takes_tables = True

    def __init__(self, command: str, *, timeout: float = 1.0, first_timeout: float = 30.0,
                 tables: int = 1, fallback: str = "rules", faults: int = 20,
                 name: str | None = None, log: str | None = None, log_bytes: int = 1_000_000,
                 cwd: str | None = None, isolate_walls: bool = False,
                 rules: Rules | str | None = None, build: Callable[[str], Any]) -> None:
        if not isinstance(command, str) or not command.strip():
            raise ValueError("exec: needs a command, e.g. exec:./mybot")
        for key, value, low in (("timeout", timeout, 0.0), ("first_timeout", first_timeout, 0.0),
                                ("tables", tables, 1), ("faults", faults, 0)):
            if not isinstance(value, int | float) or isinstance(value, bool) or value < low \
                    or (low > 0 and value == 0):
                raise ValueError(f"{key} must be a number >= {low}, got {value!r}")
            if key in ("timeout", "first_timeout") and value <= 0:
                raise ValueError(f"{key} must be > 0 seconds, got {value!r}")
        if not isinstance(isolate_walls, bool):
            raise ValueError(f"isolate_walls must be true or false, got {isolate_walls!r}")
        if isinstance(fallback, str) and fallback.strip().lower().startswith(EXEC_PREFIX):
            raise ValueError("the fallback must be an agent of this project, not exec:")
        self.command = command.strip()
        #: whether ``name`` was given (results then use it instead of the spec)
        self.name_given = bool(name)
        self.name = name or f"{EXEC_PREFIX}{self.command}"
        self.timeout = float(timeout)
        self.first_timeout = float(first_timeout)
        self.max_tables = int(tables)
        self.budget = int(faults)
        self.log, self.log_bytes, self.cwd = log, int(log_bytes), cwd
        self.isolate_walls = isolate_walls
        self.rules = get_rules(rules)
        self.matches: list[str] = []  # the match id of every process started
        self.fallback_spec = fallback
        self.fallback = build(fallback)
        self.faults: list[dict[str, Any]] = []
        self.fault_events = 0
        self.restarts = 0
        self.processes = 0  # processes started
        self.ends_sent = 0
        self.dropped: str | None = None
        self.bot_name = self.bot_version = ""
        self._streams: dict[tuple[int, int], Stream] = {}
        self._lane_of: dict[tuple[int, int], _Lane] = {}
        self._table_keys: dict[int, set[tuple[int, int]]] = {}
        self._table_wall: dict[int, Any] = {}
        self._lanes: list[_Lane] = []
        self._lane_ids = count()
        self._table_ids = count()
        self._request_ids = count()
        self._decisions = 0
        self._time_total = 0.0
        self._time_max = 0.0
        self._over = 0
        self._new_faults: list[dict[str, Any]] = []
        lane = _Lane(next(self._lane_ids))
        self._start(lane)  # BotStartError here: the program does not run
        self._lanes.append(lane)

    @property
    def match(self) -> str:
        """The match id of the process started last."""
        return self.matches[-1] if self.matches else ""

    @property
    def proc(self) -> BotProcess | None:
        """The first open process (None when none is open)."""
        return next((lane.proc for lane in self._lanes if lane.proc is not None), None)

    # ------------------------------------------------------------------ process

    def _start(self, lane: _Lane) -> None:
        """Start the program for ``lane`` and exchange ``hello``; BotStartError when it
        fails."""
        proc = BotProcess(self.command, cwd=self.cwd, log=self.log, log_bytes=self.log_bytes)
        match = f"{self.name}#{uuid.uuid4().hex[:12]}"  # new for every process started
        try:
            proc.send(dumps(hello_message(self.rules, match, self.max_tables)) + "\n")
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
            lane.tables = min(self.max_tables, tables)
            self.bot_name = str(msg.get("name", ""))
            self.bot_version = str(msg.get("version", ""))
            lane.leftover = lines[1:]
        except BaseException:
            proc.close(grace=0)
            raise
        lane.proc = proc
        lane.first = True
        lane.match = match
        lane.given_up.clear()
        self.matches.append(match)
        self.processes += 1
        for key in list(lane.keys):  # a new process knows no table: each starts over
            self._forget(key)

    def _failed_hello(self, proc: BotProcess, what: str) -> str:
        tail = proc.stderr_tail(settle=0.05)
        said = f" (stderr: {' | '.join(tail[-3:])})" if tail else ""
        return f"bot {self.command!r} failed its hello: {what}{said}"

    @property
    def tables(self) -> int:
        """Requests one process takes at once (the smaller of the offer and its hello)."""
        return self._lanes[0].tables if self._lanes else self.max_tables

    def __deepcopy__(self, memo: dict) -> ExecAgent:
        raise TypeError("an exec: agent runs a program and is not copied: build another")

    def close(self) -> None:
        """End the programs (see :meth:`BotProcess.close`)."""
        for lane in self._lanes:
            if lane.proc is not None:
                lane.proc.close()
                lane.proc = None
        self._lanes = []
        self._streams.clear()
        self._lane_of.clear()
        self._table_keys.clear()

    def __del__(self) -> None:  # the atexit hook of bot_process ends it otherwise
        # not contextlib: at interpreter exit its module may already be gone
        try:  # noqa: SIM105
            self.close()
        except Exception:
            pass

    # ------------------------------------------------------------------ tables and lanes

    def _forget(self, key: tuple[int, int]) -> Stream | None:
        stream = self._streams.pop(key, None)
        lane = self._lane_of.pop(key, None)
        if lane is not None:
            lane.keys.discard(key)
        keys = self._table_keys.get(key[0])
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._table_keys[key[0]]
        return stream

    def _end(self, key: tuple[int, int]) -> None:
        """Forget a table and tell its process (``end``)."""
        lane = self._lane_of.get(key)
        stream = self._forget(key)
        if stream is not None and lane is not None and lane.proc is not None:
            lane.proc.send(dumps({"type": "end", "table": stream.table}) + "\n")
            self.ends_sent += 1

    def end_tables(self, tables: Sequence[int] | np.ndarray) -> None:
        """The deals at the callers' ``tables`` are over: ``end`` to each of their seats'
        processes."""
        for t in np.asarray(tables, np.int64).ravel().tolist():
            for key in sorted(self._table_keys.get(t, ())):
                self._end(key)
            self._table_wall.pop(t, None)

    def start_tables(self, tables: Sequence[int] | np.ndarray,
                     walls: Sequence[Any] | np.ndarray) -> None:
        """New deals start at the callers' ``tables``, of the walls ``walls`` (any
        hashable key, e.g. the engine seed): what ``isolate_walls`` keeps apart."""
        tables = np.asarray(tables, np.int64).ravel().tolist()
        self.end_tables(tables)
        for t, w in zip(tables, np.asarray(walls).ravel().tolist(), strict=True):
            self._table_wall[t] = w

    def _lane_for(self, key: tuple[int, int]) -> _Lane | None:
        """The lane for a new table ``key``: none that plays another seat of that deal
        (nor, with ``isolate_walls``, has seen its wall); a new one when none fits. None
        when a new process cannot start (the bot is then dropped)."""
        t = key[0]
        busy = {self._lane_of[k] for k in self._table_keys.get(t, ()) if k != key}
        wall = self._table_wall.get(t) if self.isolate_walls else None
        for lane in self._lanes:
            if lane.proc is not None and lane not in busy and (wall is None
                                                               or wall not in lane.walls):
                break
        else:
            if len(self._lanes) >= LANE_CAP:  # idle lanes that cannot take this wall
                for old in [ln for ln in self._lanes if not ln.keys and ln not in busy]:
                    if old.proc is not None:
                        old.proc.close()
                    self._lanes.remove(old)
            lane = _Lane(next(self._lane_ids))
            try:
                self._start(lane)
            except BotStartError as err:
                self._drop(f"{self.name} dropped: a new process failed to start: {err}; "
                           f"{self.fallback_spec} plays its remaining decisions")
                return None
            self._lanes.append(lane)
        if wall is not None:
            lane.walls.add(wall)
        return lane

    # ------------------------------------------------------------------ faults

    def _fault(self, kind: str, req: _Request | None, detail: str,
               seats: np.ndarray, lane: _Lane) -> None:
        proc = lane.proc
        entry = {"kind": kind, "request": None if req is None else req.rid,
                 "table": None if req is None else req.table,
                 "seat": None if req is None else int(seats[req.row]),
                 "detail": detail[:300], "fallback": self.fallback_spec,
                 "match": lane.match,
                 "stderr": [] if proc is None else proc.stderr_tail(settle=0.05)[-5:]}
        self.faults.append(entry)
        self._new_faults.append(entry)
        self.fault_events += 1

    def take_faults(self) -> list[dict[str, Any]]:
        """The faults since the previous call (each names ``table``: the caller's table
        id of the decision, and ``seat``)."""
        out, self._new_faults = self._new_faults, []
        return out

    def _drop(self, text: str) -> None:
        self.dropped = text
        print(f"sichuan: {self.dropped}", file=sys.stderr, flush=True)
        self.close()

    def _check_budget(self) -> None:
        if self.dropped is None and self.fault_events > self.budget:
            last = self.faults[-1]
            self._drop(f"{self.name} dropped after {self.fault_events} faults (budget "
                       f"{self.budget}; last: {last['kind']}: {last['detail'][:80]}); "
                       f"{self.fallback_spec} plays its remaining decisions")

    def _restart(self, lane: _Lane) -> None:
        if lane.proc is not None:
            lane.proc.close()
            lane.proc = None
        if self.dropped is not None:
            return
        try:
            self._start(lane)
            self.restarts += 1
        except BotStartError as err:
            self._drop(f"{self.name} dropped: the restart failed: {err}; "
                       f"{self.fallback_spec} plays its remaining decisions")

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
        if self.dropped is None and self._lanes:
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
        pending: dict[_Lane, list[_Request]] = {}
        for i, view in enumerate(msgs):
            key = (table_ids[i], int(seats[i]))
            stream = self._streams.get(key)
            if stream is None or not stream.continues(view):
                if stream is not None:
                    self._end(key)
                lane = self._lane_for(key)
                if lane is None:  # dropped: the fallback plays
                    return
                stream = self._streams[key] = Stream(next(self._table_ids))
                self._lane_of[key] = lane
                lane.keys.add(key)
                self._table_keys.setdefault(key[0], set()).add(key)
            lane = self._lane_of[key]
            rid = next(self._request_ids)
            legal = legals[i]
            req = _Request(rid, i, table_ids[i], stream, legal,
                           dumps(stream.request(rid, view, legal)), lane)
            pending.setdefault(lane, []).append(req)
        for reqs in pending.values():
            reqs.reverse()  # popped from the end: first row first
        waiting: dict[_Lane, dict[int, _Request]] = {lane: {} for lane in pending}
        while self.dropped is None:
            for lane, reqs in pending.items():
                if lane.proc is None:
                    continue
                wait = waiting[lane]
                batch = []
                while reqs and len(wait) < lane.tables:
                    req = reqs.pop()
                    req.sent = time.monotonic()
                    req.deadline = req.sent + (self.first_timeout if lane.first
                                               else self.timeout)
                    wait[req.rid] = req
                    batch.append(req.line)
                if batch:
                    lane.proc.send("\n".join(batch) + "\n")
            active = [lane for lane, wait in waiting.items() if wait and lane.proc is not None]
            if not active:
                return
            got: dict[Any, Any] = {}
            for lane in active:  # lines that came with the hello answer
                if lane.leftover:
                    got[lane.proc], lane.leftover = lane.leftover, []
            if not got:
                deadline = min(r.deadline for lane in active for r in waiting[lane].values())
                got = wait_lines([lane.proc for lane in active], deadline)
            now = time.monotonic()
            if not got:  # a deadline passed: the lanes of the late requests
                for lane in active:
                    late = [r for r in waiting[lane].values() if r.deadline <= now]
                    if late:
                        self._over += len(late)
                        first = late[0]
                        self._lost(lane, waiting[lane], pending[lane], "timeout",
                                   f"no answer within {first.deadline - first.sent:g} s",
                                   seats, first=first)
                continue
            by_proc = {lane.proc: lane for lane in active}
            for proc, lines in got.items():
                lane = by_proc[proc]
                if isinstance(lines, BotGoneError):
                    self._lost(lane, waiting[lane], pending[lane], "crash",
                               f"the bot died: {lines}", seats)
                    continue
                for line in lines:
                    if line.strip():
                        self._answer(line, lane, waiting[lane], out, seats, now)
            self._check_budget()

    def _answer(self, line: bytes, lane: _Lane, waiting: dict[int, _Request],
                out: np.ndarray, seats: np.ndarray, now: float) -> None:
        try:
            msg = parse_answer(line)
        except ProtocolError as err:
            oldest = _oldest(waiting)
            if oldest is not None:
                del waiting[oldest.rid]
                lane.given_up.add(oldest.rid)
            self._fault("not_json", oldest, str(err), seats, lane)
            return
        rid = msg.get("id")
        req = waiting.get(rid) if isinstance(rid, int) and not isinstance(rid, bool) else None
        if req is None:
            if rid in lane.given_up:  # answered after the fallback played it: ignored
                lane.given_up.discard(rid)
                return
            oldest = _oldest(waiting)
            if oldest is not None:
                del waiting[oldest.rid]
                lane.given_up.add(oldest.rid)
            self._fault("bad_answer", oldest, f"an answer without the id of a waiting "
                        f"request: {line.decode(errors='replace')[:120]}", seats, lane)
            return
        del waiting[rid]
        lane.first = False  # the program is up: the plain limit from now on
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
            self._fault(kind, req, str(err), seats, lane)
            return
        out[req.row] = a

    def _lost(self, lane: _Lane, waiting: dict[int, _Request], pending: list[_Request],
              kind: str, detail: str, seats: np.ndarray, first: _Request | None = None
              ) -> None:
        """The program of ``lane`` timed out or died: a fault on ``first`` (default the
        oldest waiting request); its unanswered requests go to the fallback; restart."""
        first = first or _oldest(waiting)
        self._fault(kind, first, detail, seats, lane)
        waiting.clear()
        self._check_budget()
        if self.dropped is None:
            self._restart(lane)
        # requests built for the old process refer to its tables: the rows not sent yet
        # are played by the fallback this time (their tables start over next time)
        pending.clear()

    # ------------------------------------------------------------------ reports

    def timing(self) -> dict[str, Any]:
        """Decisions answered, mean and max seconds per decision, decisions over the
        limit (late answers and timeouts)."""
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
                "tables": self.tables, "timing": self.timing(),
                "faults": self.faults, "fault_count": self.fault_events,
                "restarts": self.restarts, "processes": self.processes,
                "dropped": self.dropped, "fallback": self.fallback_spec}

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
             "log_bytes", "cwd", "isolate_walls"}
    bad = sorted(set(kwargs) - known)
    if bad:
        raise ValueError(f"unknown option {bad[0]!r}; options: {', '.join(sorted(known))}")
    if "fallback" in kwargs:
        kwargs["fallback"] = str(kwargs["fallback"])
    if "name" in kwargs:
        kwargs["name"] = str(kwargs["name"])
    return ExecAgent(command, rules=preset, build=build, **kwargs)

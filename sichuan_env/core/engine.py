"""The batched game engine: pure functions over :class:`~sichuan_env.core.state.State`.

``reset(seeds, rules) -> state``; ``legal_mask(state) -> (B, 88) bool`` for the seat that
decides now (``state.current``), also kept in ``state.legal_action_mask`` after every
reset and step; ``step(state, actions) -> (state, rewards, done)`` with ``rewards`` (B, 4)
float32 points paid and received during the step and ``done`` (B,) the match is over. The
action layout is in :mod:`sichuan_env.core.actions`.

One step applies one decision per table. Everything that needs no decision happens inside
the step: draws, the forced discard of a set-aside tile (when the seat cannot kong instead),
claim windows nobody can claim in, payments, wall-end settlement and the next deal of a
match. After a discard (or a promoted/postponed kong) the seats with a legal claim are
asked one at a time counter-clockwise from the discarder; answers are hidden and resolved
together when the last one is in (Hu beats pung/kong; every Hu succeeds).

The rules live in :mod:`sichuan_env.core.engine_kernels`: compiled kernels that run one table's
state machine with scalar reads and writes, looping over the tables. One table and many
run the same code. This module checks input, calls the kernels and turns their per-step
log into :class:`StepInfo` arrays (``step(..., info=True)``) and :class:`Ledger` entries.
:func:`set_threads` lets large in-place steps run on several threads (same results).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numba
import numpy as np

from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.actions import N_ACTIONS, action_to_str
from sichuan_env.core.hand_kernels import hand_tables
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import table_keys
from sichuan_env.core.state import WALL_SIZE, State, empty_state
from sichuan_env.core.tiles import N_KINDS, as_counts, parse_kinds, tile_str

_SEED_LIMIT = 2**64
# After set_threads(n > 1), in-place steps of at least this many tables run on n threads.
PARALLEL_MIN_TABLES = 256
_THREADS = [1]


class IllegalActionError(ValueError):
    """An action that the seat to decide may not take. The state is left unchanged."""


class StepInfo(NamedTuple):
    """What one step did on each table, as fixed-shape arrays (batch axis first).

    Events are the decision (index 0) and the forced moves after it (``event_auto``).
    A win or payment names the event it belongs to: an index into this step's events, or
    -1 for the latest decision of its seat (``pay_cause``, or the winner) in an earlier
    step: a Hu or kong claim answered before the claim window was resolved. Unused
    entries hold -1 (0 for counts, values and fans; False for flags).
    """

    n_events: np.ndarray  # (B,) int8
    event_seat: np.ndarray  # (B, 5) int8
    event_action: np.ndarray  # (B, 5) int16
    event_auto: np.ndarray  # (B, 5) bool: a forced move (the discard of a set-aside tile)
    win: np.ndarray  # (B, 4) bool: the seat won in this step
    win_from: np.ndarray  # (B, 4) int8: the payer, -1 self-drawn
    win_tile: np.ndarray  # (B, 4) int8
    win_fans: np.ndarray  # (B, 4, 10) int8 in hands.FAN_NAMES order
    win_value: np.ndarray  # (B, 4) int32: hand value (without the self-draw bonus)
    win_event: np.ndarray  # (B, 4) int8
    n_payments: np.ndarray  # (B,) int16
    pay_from: np.ndarray  # (B, P) int8
    pay_to: np.ndarray  # (B, P) int8: -1 nobody (flower pig penalty)
    pay_points: np.ndarray  # (B, P) int32
    pay_reason: np.ndarray  # (B, P) int8: index into PAY_REASONS
    pay_event: np.ndarray  # (B, P) int8
    pay_cause: np.ndarray  # (B, P) int8: the seat whose decision it follows, -1 settlement
    settled: np.ndarray  # (B,) bool: the wall-end settlement happened
    flower_pig: np.ndarray  # (B, 4) bool: at the settlement, still holding its void suit
    ready: np.ndarray  # (B, 4) bool: at the settlement, waiting on a tile
    end_reason: np.ndarray  # (B,) int8: END_* of a deal that ended in this step, 0 none
    next_dealer: np.ndarray  # (B,) int8: of that deal, -1 none
    new_deal: np.ndarray  # (B,) bool: the next deal of the match was dealt


PAY_REASONS = ek.PAY_REASONS


def _empty_step_info(B: int) -> StepInfo:
    E, P = ek.MAX_EVENTS, ek.MAX_PAYMENTS
    i8 = np.int8
    return StepInfo(
        n_events=np.zeros(B, i8), event_seat=np.full((B, E), -1, i8),
        event_action=np.full((B, E), -1, np.int16), event_auto=np.zeros((B, E), bool),
        win=np.zeros((B, 4), bool), win_from=np.full((B, 4), -1, i8),
        win_tile=np.full((B, 4), -1, i8), win_fans=np.zeros((B, 4, 10), i8),
        win_value=np.zeros((B, 4), np.int32), win_event=np.full((B, 4), -1, i8),
        n_payments=np.zeros(B, np.int16), pay_from=np.full((B, P), -1, i8),
        pay_to=np.full((B, P), -1, i8), pay_points=np.zeros((B, P), np.int32),
        pay_reason=np.full((B, P), -1, i8), pay_event=np.full((B, P), -1, i8),
        pay_cause=np.full((B, P), -1, i8), settled=np.zeros(B, bool),
        flower_pig=np.zeros((B, 4), bool), ready=np.zeros((B, 4), bool),
        end_reason=np.zeros(B, i8), next_dealer=np.full(B, -1, i8),
        new_deal=np.zeros(B, bool),
    )


class Ledger:
    """Collects what happened, in order, for game records (slow path; off by default).

    Entries are tuples: ``("event", table, seat, action, auto)``,
    ``("pay", table, from, to, points, reason, event, cause)`` (``to`` -1 for nobody;
    ``event`` and ``cause`` as in :class:`StepInfo`),
    ``("win", table, seat, tile, from, fans, value, event)`` (``from`` -1 when
    self-drawn),
    ``("settle", table)`` before wall-end payments, ``("end", table, end_reason,
    next_dealer)`` and ``("deal", table)`` for a new deal.
    """

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []


# ----------------------------------------------------------------------------- reset


def reset(
    seeds: int | Sequence[int] | np.ndarray,
    rules: Rules | str | None = None,
    *,
    dealer: int | Sequence[int] = 0,
) -> State:
    """Deal B tables, one per seed (an int means one table). Seat ``dealer`` deals first."""
    rules = get_rules(rules)
    seed_list = _check_seeds(seeds)
    B = len(seed_list)
    dealers = np.asarray(dealer)
    if dealers.dtype.kind not in "iu" or dealers.ndim > 1 or (
            dealers.ndim == 1 and dealers.size != B):
        raise ValueError(f"dealer must be a seat 0..3 or one per table, got {dealer}")
    if ((dealers < 0) | (dealers > 3)).any():
        raise ValueError(f"dealer must be a seat 0..3, got {dealer}")
    st = empty_state(B, rules)
    _deal_into(st, seed_list, dealers)
    return st


def _deal_into(st: State, seed_list: list[int], dealers: np.ndarray) -> None:
    """Deal the first deal of a match from each seed into the blank tables of ``st``."""
    B = len(seed_list)
    st.key[:] = table_keys(seed_list)
    dealers = np.broadcast_to(dealers.astype(np.int8), (B,)).copy()
    ek.deal_tables(np.arange(B), dealers, False, *kernel_rule_args(st.rules), *st.arrays())


def redeal(state: State, seeds: int | Sequence[int] | np.ndarray, *, dealer: int = 0) -> None:
    """Deal new matches into ``state`` in place: afterwards it holds what
    ``reset(seeds, state.rules, dealer=dealer)`` returns, in its own arrays (so what was
    built on them, the in-place step's bag or a ``SeatEncoder``, stays valid; cheaper
    than ``reset`` and ``put_rows`` for a table dealt again and again)."""
    seed_list = _check_seeds(seeds)
    B = state.batch_size
    if len(seed_list) != B:
        raise ValueError(f"expected {B} seeds (one per table), got {len(seed_list)}")
    if type(dealer) is not int or not 0 <= dealer <= 3:
        raise ValueError(f"dealer must be a seat 0..3, got {dealer!r}")
    blanks = _BLANK.get(state.rules)
    if blanks is None:
        blanks = _BLANK.put(state.rules, {})
    blank = blanks.get(B) or blanks.setdefault(B, empty_state(B, state.rules))
    for dst, src in zip(state.arrays(), blank.arrays(), strict=True):
        np.copyto(dst, src)
    _deal_into(state, seed_list, np.array(dealer))


def _check_seeds(seeds: Any) -> list[int]:
    """Seeds as Python ints, each in 0 .. 2**64 - 1."""
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seeds = [seeds]
    if isinstance(seeds, np.ndarray):
        seeds = seeds.tolist() if seeds.ndim == 1 else [seeds]
    try:
        seed_list = list(seeds)
    except TypeError:
        seed_list = [seeds]
    ok = bool(seed_list) and all(
        isinstance(x, (int, np.integer)) and not isinstance(x, bool)
        and 0 <= int(x) < _SEED_LIMIT for x in seed_list)
    if not ok:
        bad = next((x for x in seed_list if not (
            isinstance(x, (int, np.integer)) and not isinstance(x, bool)
            and 0 <= int(x) < _SEED_LIMIT)), None)
        got = "an empty sequence" if not seed_list else repr(bad)
        raise ValueError(
            "seeds must be a non-empty sequence of integers in 0 .. 2**64 - 1 "
            f"(one per table), got {got}"
        )
    return [int(x) for x in seed_list]


def reset_from_deal(
    hands: Sequence[str | Sequence[int]],
    wall: str | Sequence[int],
    *,
    dealer: int = 0,
    rules: Rules | str | None = None,
) -> State:
    """One table from given hands (tile strings or count vectors; the dealer 14 tiles, the
    others 13) and a wall in draw order (a tile string or kinds; at most 55 tiles; a short
    wall simply makes a short deal)."""
    rules = get_rules(rules)
    if len(hands) != 4:
        raise ValueError(f"expected 4 hands, got {len(hands)}")
    if not 0 <= int(dealer) <= 3:
        raise ValueError(f"dealer must be a seat 0..3, got {dealer}")
    counts = np.stack([as_counts(h) for h in hands])
    for seat in range(4):
        want = 14 if seat == dealer else 13
        if counts[seat].sum() != want:
            raise ValueError(
                f"seat {seat} must be dealt {want} tiles, got {int(counts[seat].sum())}"
            )
    wall_kinds = parse_kinds(wall) if isinstance(wall, str) else [int(k) for k in wall]
    if len(wall_kinds) > WALL_SIZE:
        raise ValueError(f"the wall holds at most {WALL_SIZE} tiles, got {len(wall_kinds)}")
    total = counts.sum(0) + np.bincount(np.asarray(wall_kinds, dtype=np.intp),
                                        minlength=N_KINDS)[:N_KINDS]
    if (total > 4).any():
        k = int(np.argmax(total))
        raise ValueError(f"more than four copies of {tile_str(k)} in the hands and wall")
    st = empty_state(1, rules)
    ek.reset_fields(0, int(dealer), *st.arrays())
    st.hand[0] = counts
    st.wall[0, : len(wall_kinds)] = wall_kinds
    st.wall_back[0] = len(wall_kinds)
    ek.refresh_waits(*kernel_rule_args(rules), *st.arrays())
    ek.masks(st.legal_action_mask, *kernel_rule_args(rules), *st.arrays())
    return st



def reset_done(state: State) -> State:
    """Start a new match (next episode number, seat 0 dealing) on every finished table."""
    st = state.copy()
    ix = np.flatnonzero(st.done)
    if ix.size:
        new_matches(st, ix)
    return st


def new_matches(state: State, rows: np.ndarray) -> None:
    """Start a new match on tables ``rows`` of ``state``, in place (what
    :func:`reset_done` does to each finished table, without copying the batch)."""
    rows = np.ascontiguousarray(rows, np.int64)
    ek.deal_tables(rows, np.zeros(rows.size, np.int8), True, *kernel_rule_args(state.rules),
                   *state.arrays())


# ----------------------------------------------------------------------------- kernels' input


@functools.lru_cache(maxsize=64)
def _rules_array(rules: Rules) -> np.ndarray:
    return np.array([getattr(rules, f) for f in ek.RULE_FIELDS], dtype=np.int64)


class _Recent:
    """The values kept for the last few objects (at most ``size``), found by identity
    (``is``): each entry holds its object, so an entry never answers for another object,
    and the most recent comes first."""

    __slots__ = ("entries", "size")

    def __init__(self, size: int) -> None:
        self.entries: list[tuple[Any, Any]] = []
        self.size = size

    def get(self, obj: Any) -> Any:
        """The value kept for ``obj``, or None."""
        entries = self.entries
        try:
            for i, entry in enumerate(entries):
                if entry[0] is obj:
                    if i:  # another thread may move entries meanwhile: the value is entry's
                        entries.remove(entry)
                        entries.insert(0, entry)
                    return entry[1]
        except ValueError:  # removed by another thread in between: still the right value
            return entry[1]
        return None

    def put(self, obj: Any, value: Any) -> Any:
        """Keep ``value`` for ``obj`` (dropping the oldest entry when full); returns it."""
        self.entries.insert(0, (obj, value))
        del self.entries[self.size:]
        return value


_RULE_ARGS = _Recent(8)
_BLANK = _Recent(4)  # per Rules object: {batch size: a blank State} (for redeal)


def kernel_rule_args(rules: Rules) -> tuple[np.ndarray, ...]:
    """The rule options and hand lookup tables, as the compiled kernels of
    :mod:`sichuan_env.core.engine_kernels` take them (kept for the last few Rules objects,
    found by identity: hashing a Rules object costs more than a step of one table)."""
    hit = _RULE_ARGS.get(rules)
    if hit is None:
        hit = _RULE_ARGS.put(rules, (_rules_array(rules), *hand_tables()))
    return hit


def _new_log(B: int) -> tuple[np.ndarray, np.ndarray]:
    """A step log for B tables: (B, LOG_SIZE, LOG_WIDTH) int32 rows and (B,) lengths."""
    return np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32), np.zeros(B, np.int32)


class _InPlace:
    """What the in-place steps of one State keep from step to step: a step log of their
    own (its contents are valid until the next step), the bag of the State's arrays with
    the compiled step that takes it, and the bags of a threaded step.

    The compiled step is the entry point of :func:`engine_kernels.step_bag` for exactly
    the argument types of :meth:`step`, called without numba's type dispatch (which costs
    more than a step of one table)."""

    __slots__ = ("state", "log", "log_len", "bag", "run", "threads", "bags", "bounds",
                 "logs", "log_lens")

    def __init__(self, st: State) -> None:
        self.state = st
        self.log, self.log_len = _new_log(st.batch_size)
        rewards = np.zeros((st.batch_size, 4), np.float32)
        self.bag = ek.state_bag(*kernel_rule_args(st.rules), self.log, self.log_len, rewards,
                                *st.arrays())
        sig = (numba.typeof(np.zeros(1, np.int64)), numba.types.boolean, numba.types.boolean,
               numba.typeof(np.zeros(1, bool)), numba.typeof(self.log),
               numba.typeof(self.log_len), numba.typeof(rewards), numba.typeof(self.bag))
        self.run = ek.step_bag.compile(sig)
        self.threads = 0
        self.bags: tuple[Any, ...] = ()
        self.bounds = np.zeros(0, np.int64)
        self.logs: tuple[np.ndarray, ...] = ()
        self.log_lens: tuple[np.ndarray, ...] = ()

    def step(self, acts: np.ndarray, validate: bool, autoreset: bool, done: np.ndarray,
             rewards: np.ndarray) -> int:
        """One step of every table; the kernels' answer (-1, -2 or the first illegal table)."""
        k = _THREADS[0]
        if k > 1 and self.state.batch_size >= PARALLEL_MIN_TABLES:
            return self._step_parallel(k, acts, validate, autoreset, done, rewards)
        return self.run(acts, bool(validate), bool(autoreset), done, self.log, self.log_len,
                        rewards, self.bag)

    def _step_parallel(self, k: int, acts: np.ndarray, validate: bool, autoreset: bool,
                       done: np.ndarray, rewards: np.ndarray) -> int:
        """:func:`engine_kernels.step_bags_parallel` on ``k`` threads (numba's thread count
        of the calling thread is restored afterwards)."""
        if self.threads != k:
            self.bags, self.bounds = parallel_bags(self.state, k, self.log, self.log_len,
                                                   rewards)
            self.logs = tuple(self.log.view() for _ in range(k))
            self.log_lens = tuple(self.log_len.view() for _ in range(k))
            self.threads = k
        before = numba.get_num_threads()
        if before != k:
            numba.set_num_threads(k)
        try:
            return ek.step_bags_parallel(acts, bool(validate), bool(autoreset), done,
                                         self.bags, self.bounds, self.logs, self.log_lens,
                                         tuple(rewards.view() for _ in range(k)))
        finally:
            if before != k:
                numba.set_num_threads(before)


_IN_PLACE = _Recent(4)  # the last few States stepped in place
_COPY_LOGS = threading.local()  # per thread: {batch size: the log of copying steps}


def _copy_logs() -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """This thread's step logs of copying steps, by batch size (one log per thread, so
    that threads stepping their own states never write into each other's log)."""
    logs = getattr(_COPY_LOGS, "logs", None)
    if logs is None:
        logs = _COPY_LOGS.logs = {}
    return logs


def _copy_log(B: int) -> tuple[np.ndarray, np.ndarray]:
    """The step log that steps of B tables which copy the state share (in this thread)."""
    logs = _copy_logs()
    if len(logs) >= 16:
        logs.clear()
    return logs.setdefault(B, _new_log(B))


# ----------------------------------------------------------------------------- legal mask


def legal_mask(state: State) -> np.ndarray:
    """(B, 88) bool: the actions the seat ``state.current`` may take on each table, computed
    from the state (equal to ``state.legal_action_mask`` of a state the engine made).

    Finished tables have no legal action (a step ignores them)."""
    out = np.zeros((state.batch_size, N_ACTIONS), dtype=bool)
    ek.masks(out, *kernel_rule_args(state.rules), *state.arrays())
    return out


# ----------------------------------------------------------------------------- step


def set_threads(n: int) -> None:
    """Run in-place steps of :data:`PARALLEL_MIN_TABLES` tables or more on ``n`` threads
    (numba's, at most ``NUMBA_NUM_THREADS``); 1, the default, steps on the calling thread.

    Every table gets the same result whatever ``n``. Threads pay on a machine whose cores
    are free: each step waits for its slowest thread, so on cores busy with other work
    (a training job, a second process) more threads can make a step several times
    slower (least so with ``NUMBA_THREADING_LAYER=workqueue``, whose idle threads do not
    spin)."""
    _THREADS[0] = check_threads(n)


def check_threads(n: Any) -> int:
    """``n`` as an int when it is an integer in 1..``NUMBA_NUM_THREADS`` (numba's thread
    limit), else a ``ValueError`` that says so."""
    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= limit:
        raise ValueError(f"threads must be an integer in 1..{limit} (NUMBA_NUM_THREADS), "
                         f"got {n!r}")
    return int(n)


def get_threads() -> int:
    """The number of threads of large in-place steps (see :func:`set_threads`)."""
    return _THREADS[0]


def parallel_bags(st: State, threads: int, log: np.ndarray, log_len: np.ndarray,
                  rewards: np.ndarray) -> tuple[tuple[Any, ...], np.ndarray]:
    """``threads`` bags of the state's arrays for :func:`engine_kernels.step_bags_parallel`,
    each built from views of its own, and the bounds of each thread's tables (equal
    shares of the batch)."""
    args = kernel_rule_args(st.rules)
    bags = tuple(ek.state_bag(*(a.view() for a in args), log.view(), log_len.view(),
                              rewards.view(), *(a.view() for a in st.arrays()))
                 for _ in range(threads))
    bounds = np.linspace(0, st.batch_size, threads + 1).astype(np.int64)
    return bags, bounds


def step(
    state: State,
    actions: np.ndarray | Sequence[int] | int,
    *,
    inplace: bool = False,
    validate: bool = True,
    ledger: Ledger | None = None,
    autoreset: bool = False,
    info: bool = False,
) -> tuple[State, np.ndarray, np.ndarray] | tuple[State, np.ndarray, np.ndarray, StepInfo]:
    """Apply one decision per table: ``actions[i]`` for seat ``state.current[i]``.

    Returns ``(state, rewards (B, 4) float32, done (B,) bool)``, and with ``info`` a
    fourth item, the :class:`StepInfo` of the step (wins, payments, forced moves; the
    engine always logs them, ``info`` only builds the arrays). ``rewards`` are the sums
    of the step's payments per seat. Finished tables ignore
    their action. With ``validate`` (the default; it costs little) an illegal action raises
    :class:`IllegalActionError` (naming the table, seat, action and the legal options)
    before anything changes. With ``autoreset`` a table whose match ended starts a new one
    (``done`` is still True for that step). ``inplace`` reuses the given state's arrays
    (faster; no copy; the engine then keeps the last few States stepped in place, so that
    their arrays cross into the kernels as one object; large batches use the threads of
    :func:`set_threads`). The legal actions are checked from the state itself.
    """
    B = state.phase.shape[0]
    acts = actions
    if not (type(acts) is np.ndarray and acts.dtype == np.int64 and acts.shape == (B,)
            and acts.flags.c_contiguous):
        acts = _check_actions(actions, B)
    st = state if inplace else state.copy()
    rewards = np.empty((B, 4), dtype=np.float32)  # the kernel zeroes each table's row
    done = np.empty(B, dtype=bool)
    if inplace:  # the same State again and again: its arrays cross as one bag
        path = _IN_PLACE.get(st) or _IN_PLACE.put(st, _InPlace(st))
        bad = path.step(acts, validate, autoreset, done, rewards)
        log, log_len = path.log, path.log_len
    else:
        log, log_len = _copy_logs().get(B) or _copy_log(B)
        bad = ek.step_serial(acts, validate, autoreset, done, *kernel_rule_args(st.rules), log,
                             log_len, rewards, *st.arrays())
    if bad != -1:
        _step_failed(state, bad, acts)
    if ledger is not None:
        _to_ledger(ledger, log, log_len)
    if info:
        return st, rewards, done, _step_info(log, log_len)
    return st, rewards, done


def _step_failed(state: State, bad: int, acts: np.ndarray) -> None:
    """Raise for the kernels' answer ``bad`` (-2, or the first illegal table)."""
    if bad == -2:  # pragma: no cover - sized for the rules
        raise RuntimeError("engine step log overflow (or automatic moves that did not settle)")
    _raise_illegal(state, int(bad), int(acts[bad]))


class InPlaceStepper:
    """``step(state, actions, inplace=True)`` of one State again and again, with less
    work per call (what the AEC env does at each decision): ``actions`` must be a (B,)
    int64 C-contiguous array (not checked); illegal actions still raise
    :class:`IllegalActionError` and change nothing. The returned ``(rewards, done)`` are
    the stepper's own arrays, overwritten by the next call."""

    __slots__ = ("state", "rewards", "done", "_path", "_serial")

    def __init__(self, state: State) -> None:
        self.state = state
        self._path = _IN_PLACE.get(state) or _IN_PLACE.put(state, _InPlace(state))
        self.rewards = np.zeros((state.batch_size, 4), np.float32)
        self.done = np.zeros(state.batch_size, bool)
        self._serial = state.batch_size < PARALLEL_MIN_TABLES  # never threaded

    def __call__(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = self._path
        if self._serial:  # the compiled step directly
            bad = p.run(actions, True, False, self.done, p.log, p.log_len, self.rewards, p.bag)
        else:
            bad = p.step(actions, True, False, self.done, self.rewards)
        if bad != -1:
            _step_failed(self.state, bad, actions)
        return self.rewards, self.done


def _check_actions(actions: Any, B: int) -> np.ndarray:
    """``actions`` as a (B,) int64 array, or a clear error."""
    acts = np.asarray(actions)
    if acts.dtype != np.int64:
        if acts.dtype.kind not in "iu" and acts.size:
            raise ValueError(f"actions must be integers, got dtype {acts.dtype}")
        acts = acts.astype(np.int64)
    acts = acts.reshape(-1)
    if acts.shape != (B,):
        raise ValueError(f"expected {B} actions (one per table), got shape {acts.shape}")
    return np.ascontiguousarray(acts)


def _step_info(log: np.ndarray, log_len: np.ndarray) -> StepInfo:
    out = _empty_step_info(log_len.shape[0])
    if not ek.fill_step_info(log, log_len, *out):  # pragma: no cover - sized for the rules
        raise RuntimeError("engine step log overflow")
    return out


def _raise_illegal(state: State, i: int, a: int) -> None:
    row = legal_mask(state.take([i]))[0]
    name = action_to_str(a) if 0 <= a < N_ACTIONS else "out of range"
    legal = [action_to_str(x) for x in np.flatnonzero(row)]
    raise IllegalActionError(
        f"table {i}, seat {int(state.current[i])}: illegal action {a} ({name}); "
        f"legal: {sorted(legal)}"
    )


def _to_ledger(ledger: Ledger, log: np.ndarray, log_len: np.ndarray) -> None:
    out = ledger.entries
    reasons = ek.PAY_REASONS
    for t in np.flatnonzero(log_len).tolist():
        for row in log[t, : log_len[t]].tolist():
            typ = row[0]
            if typ == ek.LOG_EVENT:
                out.append(("event", t, row[1], row[2], bool(row[3])))
            elif typ == ek.LOG_PAY:
                out.append(("pay", t, row[1], row[2], row[3], reasons[row[4]], row[6], row[5]))
            elif typ == ek.LOG_WIN:
                out.append(("win", t, row[1], row[2], row[3], row[ek.FAN0:ek.FAN0 + 10],
                            row[4], row[5]))
            elif typ == ek.LOG_SETTLE:
                out.append(("settle", t))
            elif typ == ek.LOG_END:
                out.append(("end", t, row[1], row[2]))
            else:
                out.append(("deal", t))

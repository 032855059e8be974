"""The one loop that lets agents play seats of a batch of tables.

Every place where agents choose moves (the vector env's opponents, the single-agent env's
opponents, the arena, :func:`sichuan_env.seats.agent.validate_agent`, terminal play) goes
through this module:

1. :func:`agent_input` builds what an agent declares it needs, for the seats to act at
   the given tables;
2. :func:`choose` calls ``act_batch`` once per agent with all its rows and checks the
   returned actions against the legal masks kept in the state (:func:`check_actions`:
   one check, one error message naming agent, table, seat, action and the legal options);
   the built-in random agent's moves are drawn by a compiled kernel instead
   (:func:`uniform_legal_actions`: the same draws and moves as its ``act_batch``);
3. :func:`play_step` does that and steps the engine in place (optionally with
   auto-reset); tables that are not to move are left alone;
4. :func:`play_until_learner` repeats :func:`play_step` for the seats that agents play
   until every table is finished or waits for a learner seat (the environments'
   opponents, play-outs), adding up the points paid meanwhile.

The agents of a set of seats are built from specs by
:func:`sichuan_env.seats.agent.seat_agents` (one seed formula,
:func:`sichuan_env.core.seeding.agent_seed`),
which gives the ``agents`` list and the seat-to-agent indices these functions take.

**What an agent needs.** An agent declares it with the attribute ``needs``:

===========  ==================================================================================
``needs``    ``act_batch`` receives as its first argument
===========  ==================================================================================
"planes"     (default) ``(n, C, 27)`` float32 observation planes
             (:func:`sichuan_env.seats.observation.encode`)
"view"       a :class:`~sichuan_env.seats.view.SeatView` of the n rows (small integer arrays, seats
             relative to the viewer; :func:`sichuan_env.seats.view.seat_view`)
"nothing"    :func:`NO_OBSERVATION` ``(n, 0)`` float32: the agent reads the masks only
===========  ==================================================================================

An agent without ``needs`` gets planes.

Single actions given by a caller (a PettingZoo ``step(action)``, a Gymnasium learner
action) are checked by :func:`check_action`: a Python or numpy integer (or a 0-d integer
array), legal in the mask; anything else (``None``, a string, a float) raises a
``TypeError`` that says what it got, an illegal integer an
:class:`~sichuan_env.core.engine.IllegalActionError`; nothing changes in either case.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS, action_to_str
from sichuan_env.core.engine import IllegalActionError
from sichuan_env.core.jit import njit
from sichuan_env.core.state import State
from sichuan_env.seats.observation import encode
from sichuan_env.seats.view import SeatView, seat_view

__all__ = [
    "NEEDS", "NO_OBSERVATION", "agent_needs", "agent_input", "check_actions", "check_action",
    "choose", "play_step", "agent_label", "input_row", "uniform_legal_actions",
    "builtin_random_rng", "play_until_learner", "opponent_seats", "HOLD_LIMIT", "legal_in",
]

#: The values of an agent's ``needs`` attribute.
NEEDS = ("nothing", "view", "planes")

TableLabel = Callable[[int], str]


def NO_OBSERVATION(n: int) -> np.ndarray:  # noqa: N802 - reads as a constant
    """The placeholder passed to agents that need nothing but the masks: (n, 0) float32."""
    return np.zeros((n, 0), np.float32)


def agent_needs(agent: object) -> str:
    """What ``agent`` needs: "nothing", "view" or "planes" (see the module docstring)."""
    needs = getattr(agent, "needs", None)
    if needs is None:
        return "planes"
    if needs not in NEEDS:
        raise ValueError(f"{agent_label(agent)}: needs must be one of {', '.join(NEEDS)}, "
                         f"got {needs!r}")
    return needs


def agent_label(agent: object) -> str:
    """How messages name an agent: its ``name`` attribute when it has one, else repr."""
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else repr(agent)


def agent_input(agent: object, state: State, seats: np.ndarray | int,
                rows: np.ndarray | None = None) -> np.ndarray | SeatView:
    """What ``agent`` gets for seat ``seats[i]`` at table ``rows[i]``: planes, a seat view
    or the placeholder, as its ``needs`` says."""
    needs = agent_needs(agent)
    if needs == "planes":
        return encode(state, seats, rows)
    if needs == "view":
        return seat_view(state, seats, rows)
    return NO_OBSERVATION(state.batch_size if rows is None else np.asarray(rows).reshape(-1).size)


def _default_label(t: int) -> str:
    return f"table {t}"


def check_actions(actions: Any, masks: np.ndarray, rows: np.ndarray, seats: np.ndarray, *,
                  who: str, table_label: TableLabel | None = None) -> np.ndarray:
    """The (n,) int64 actions ``actions`` returned for the n ``rows`` (tables, with the
    seats to act ``seats``) whose legal masks are ``masks`` (n, 88), after one check:
    ``ValueError`` for a wrong shape or non-integer actions, :class:`IllegalActionError`
    for the first action outside its mask, naming ``who``, the table (``table_label(t)``,
    default ``"table t"``), the seat, the action and the legal options."""
    n = len(rows)
    acts = np.asarray(actions)
    if acts.shape != (n,):
        raise ValueError(f"{who} returned actions of shape {acts.shape}, expected ({n},)")
    if acts.dtype.kind not in "iu" and n:
        raise ValueError(f"{who} returned {acts.dtype} actions, expected integers")
    acts = acts.astype(np.int64, copy=False)
    ok = legal_in(acts, masks)
    if not ok.all():
        j = int(np.argmin(ok))
        label = (table_label or _default_label)(int(rows[j]))
        raise IllegalActionError(
            f"{who} chose illegal action {_action_text(int(acts[j]))} at {label}, seat "
            f"{int(seats[j])}; legal: {_legal_text(masks[j])}")
    return acts


def legal_in(actions: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(n,) bool: ``actions[i]`` (int64) is an action 0..87 that ``masks[i]`` (n, 88)
    allows (the test :func:`check_actions` makes; callers that replace illegal actions
    instead of raising use it too)."""
    ok = (actions >= 0) & (actions < N_ACTIONS)
    ok[ok] = masks[np.flatnonzero(ok), actions[ok]]
    return ok


def _action_text(a: int) -> str:
    name = action_to_str(a) if 0 <= a < N_ACTIONS else "out of range"
    return f"{a} ({name})"


def _legal_text(mask: np.ndarray) -> str:
    return str(sorted(action_to_str(x) for x in np.flatnonzero(mask)))


def check_action(action: Any, mask: np.ndarray, who: str) -> int:
    """One action given by a caller, checked against the (88,) legal ``mask``: returns it
    as an int. A Python or numpy integer (or a 0-d integer array) is accepted; anything
    else raises ``TypeError`` saying what it got; an integer outside the mask raises
    :class:`IllegalActionError` naming ``who``, the action and the legal options."""
    value = action
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{who}: an action is an integer 0..{N_ACTIONS - 1} (Python or numpy), "
                        f"got {action!r} ({type(action).__name__}); legal: {_legal_text(mask)}")
    a = int(value)
    if not (0 <= a < N_ACTIONS and mask[a]):
        raise IllegalActionError(f"{who}: illegal action {_action_text(a)}; legal: "
                                 f"{_legal_text(mask)}")
    return a


def choose(state: State, rows: np.ndarray, agents: Sequence[Any], who: np.ndarray | None = None,
           *, names: Sequence[str] | None = None, table_label: TableLabel | None = None,
           method: str = "act_batch") -> np.ndarray:
    """(len(rows),) int64 legal actions for the seats to act (``state.current``) at tables
    ``rows``: row ``i`` is played by ``agents[who[i]]`` (``who`` None: all by
    ``agents[0]``). Each agent is called once, in the order of ``agents``, with all its
    rows (in the order of ``rows``); ``names`` name them in messages (default
    :func:`agent_label`). ``method="act"`` calls ``act`` row by row instead (what
    :func:`~sichuan_env.seats.agent.validate_agent` checks too)."""
    if method not in ("act_batch", "act"):
        raise ValueError(f"method must be 'act_batch' or 'act', got {method!r}")
    rows = np.asarray(rows, np.intp)
    out = np.zeros(rows.size, np.int64)
    mask = state.legal_action_mask
    seats = state.current[rows].astype(np.intp)
    for k, agent in enumerate(agents):
        sel = slice(None) if who is None else np.flatnonzero(who == k)
        r = rows[sel]
        if not r.size:
            if who is None:
                break
            continue
        rng = builtin_random_rng(agent) if method == "act_batch" else None
        if rng is not None:  # its own draws and moves, compiled; legal by construction
            out[sel] = uniform_legal_actions(rng, mask, r)
            if who is None:
                break
            continue
        s = seats[sel]
        m = mask[r]
        inputs = agent_input(agent, state, s, r)
        label = names[k] if names is not None else agent_label(agent)
        if method == "act":
            acts = [agent.act(input_row(inputs, i), m[i]) for i in range(r.size)]
            for i, one in enumerate(acts):
                if isinstance(one, bool) or not isinstance(one, int | np.integer):
                    raise ValueError(f"{label}: act returned {one!r} "
                                     f"({type(one).__name__}) at table {int(r[i])}, expected "
                                     "an int")
            acts = np.array(acts, np.int64)
            label = f"{label} (act)"
        elif getattr(agent, "takes_tables", False):  # e.g. exec: bots, which keep per-table
            acts = agent.act_batch(inputs, m, tables=r)  # state: the rows are table ids
        else:
            acts = agent.act_batch(inputs, m)
        out[sel] = check_actions(acts, m, r, s, who=label, table_label=table_label)
        if who is None:
            break
    return out


def builtin_random_rng(agent: object) -> np.random.Generator | None:
    """The generator of the built-in :class:`~sichuan_env.seats.agent.RandomAgent` (exactly that
    class, not a subclass, with a numpy Generator), else None: :func:`choose` then draws
    its moves with :func:`uniform_legal_actions`, the same draws and moves as its
    ``act_batch`` without the per-call Python. The class says so in its own namespace
    (``uniform_legal_actions_rng``, not inherited by a subclass)."""
    if not vars(type(agent)).get("uniform_legal_actions_rng", False):
        return None
    rng = getattr(agent, "rng", None)
    return rng if isinstance(rng, np.random.Generator) else None


def input_row(inputs: np.ndarray | SeatView, i: int) -> Any:
    """Row ``i`` of an agent's input without the batch axis (what ``act`` gets): one plane
    stack, or one row of a seat view."""
    if isinstance(inputs, SeatView):
        return SeatView(*(f[i] for f in inputs))
    return inputs[i]


def play_step(state: State, rows: np.ndarray, agents: Sequence[Any],
              who: np.ndarray | None = None, *, names: Sequence[str] | None = None,
              table_label: TableLabel | None = None, autoreset: bool = False,
              info: bool = False) -> tuple:
    """One move at each table of ``rows`` chosen by its agent (:func:`choose`), applied
    in place; every other unfinished table is held (marked finished for the step, which
    the engine leaves alone, and restored). Returns ``(actions of rows, engine.step's
    result)``: ``(state, rewards, done)`` plus the :class:`StepInfo` with ``info``."""
    rows = np.asarray(rows, np.intp)
    acts = choose(state, rows, agents, who, names=names, table_label=table_label)
    full = np.zeros(state.batch_size, np.int64)
    full[rows] = acts
    hold = ~state.done
    hold[rows] = False
    held = np.flatnonzero(hold)
    if held.size:
        state.done[held] = True
    try:
        result = engine.step(state, full, inplace=True, autoreset=autoreset, info=info)
    finally:
        if held.size:
            state.done[held] = False
    if held.size:
        result[2][held] = False  # the held tables did not finish
    return acts, result


#: A ``hold_limit`` for :func:`play_until_learner` (what the vector env uses): more tables
#: held than this (waiting for a learner, finished, or not among the rows), the moving ones
#: are played on a copy and written back (a held table still costs the engine its legal mask
#: at every step; a copy costs its own step buffers).
HOLD_LIMIT = 256

#: What :func:`play_until_learner` calls for finished tables: ``(batch, rows, tables)``.
Finished = Callable[[State, np.ndarray, np.ndarray], None]


def play_until_learner(state: State, seat_agent: np.ndarray, agents: Sequence[Any], *,
                       rows: np.ndarray | None = None, rewards: np.ndarray | None = None,
                       names: Sequence[str] | None = None,
                       table_label: TableLabel | None = None,
                       finished: Finished | None = None, hold_limit: int | None = None,
                       max_moves: int = 100_000) -> np.ndarray:
    """Play the seats that agents play at tables ``rows`` (default: all, in order) until
    each of those tables is finished or waits for a learner seat, with :func:`play_step`;
    returns the (B, 4) float64 points paid meanwhile (added to ``rewards``, updated after
    every round, when given).

    ``seat_agent`` is (4,) or (B, 4) int: the index in ``agents`` of the agent playing
    each seat (of each table), -1 for a learner seat, whose decisions the caller makes.
    Every table moves at once: one ``act_batch`` per agent per round, its rows in table
    order.

    ``finished`` (optional) is called before each round with the tables of ``rows`` that
    are finished: ``finished(batch, rows_in_batch, tables)``, where ``batch`` is ``state``
    or a copy of some of its tables (``tables``: their indices in ``state``); it must start
    a new match on them in ``batch`` (``engine.new_matches``), after which they play on in
    the same round. Without it a finished table stops. With ``hold_limit`` (e.g.
    :data:`HOLD_LIMIT`), when more than that many tables of a batch of more than 16 would be
    held, the moving ones are played on a copy and written back (the same moves and
    points)."""
    B = state.batch_size
    total = np.zeros((B, 4), np.float64) if rewards is None else rewards
    seat_agent = np.asarray(seat_agent)
    if seat_agent.shape not in ((4,), (B, 4)) or seat_agent.dtype.kind not in "iu":
        raise ValueError(f"seat_agent must be (4,) or ({B}, 4) integers, got "
                         f"{seat_agent.dtype} {seat_agent.shape}")
    if seat_agent.size and int(seat_agent.max()) >= len(agents):
        raise ValueError(f"seat_agent names agent {int(seat_agent.max())}, but "
                         f"{len(agents)} agents are given")
    if rows is not None:
        rows = np.asarray(rows, np.intp)
    if B == 1 and (rows is None or rows.size == 1):  # one table: nothing to hold
        return _play_one_table(state, seat_agent.reshape(-1, 4)[0], agents, total, names,
                               table_label, finished, max_moves)
    _play_rounds(state, rows, None, seat_agent, agents, total, names, table_label, finished,
                 hold_limit, max_moves)
    return total


def opponent_seats(opponents: Sequence[Any], learner: np.ndarray) -> tuple[list, np.ndarray]:
    """The ``agents`` and (B, 4) ``seat_agent`` of :func:`play_until_learner` for B tables
    where seat ``learner[t]`` is the learner's and the three seats after it (in turn
    order) are played by ``opponents[0]``, ``[1]``, ``[2]``: one agent when the three are
    the same object, else the three as given (an object given twice is called once per
    seat position)."""
    learner = np.asarray(learner, np.intp).reshape(-1)
    if len(opponents) != 3:
        raise ValueError(f"opponents: three agents, got {len(opponents)}")
    if opponents[0] is opponents[1] is opponents[2]:
        agents, pos = list(opponents[:1]), np.zeros((learner.size, 4), np.intp)
    else:  # 0..2: the opponent after the learner
        agents, pos = list(opponents), (np.arange(4) - learner[:, None]) % 4 - 1
    pos[np.arange(learner.size), learner] = -1
    return agents, pos


def _play_rounds(state: State, rows: np.ndarray | None, tables: np.ndarray | None,
                 seat_agent: np.ndarray, agents: Sequence[Any], total: np.ndarray,
                 names: Sequence[str] | None, table_label: TableLabel | None,
                 finished: Finished | None, hold_limit: int | None, max_moves: int) -> None:
    """:func:`play_until_learner` on ``rows`` of ``state`` (None: all), whose row ``i`` is
    the caller's table ``tables[i]`` (None: ``i``)."""
    B = state.batch_size
    label = table_label
    if tables is not None:
        outer = table_label or _default_label
        label = lambda t: outer(int(tables[t]))  # noqa: E731
    per_table = seat_agent.ndim == 2
    every = np.arange(B) if rows is None else rows
    for _ in range(max_moves):
        done = state.done if rows is None else state.done[rows]
        if done.any():
            if finished is not None:
                ended = every[done]
                finished(state, ended, ended if tables is None else tables[ended])
                done = state.done if rows is None else state.done[rows]
            live = every[~done] if done.any() else every
        else:
            live = every
        seats = state.current[live].astype(np.intp)
        if per_table:
            who = seat_agent[live if tables is None else tables[live], seats]
        else:
            who = seat_agent[seats]
        moving = who >= 0
        n_moving = int(np.count_nonzero(moving))
        if not n_moving:
            return
        if n_moving < live.size:
            live, who = live[moving], who[moving]
        if hold_limit is not None and B > 16 and B - n_moving > hold_limit:  # on a copy
            sub = state.take(live)
            _play_rounds(sub, None, live if tables is None else tables[live], seat_agent,
                         agents, total, names, table_label, finished, hold_limit, max_moves)
            state.put_rows(live, sub)
            continue
        one = len(agents) == 1  # every row the one agent's: no split by agent
        _, (_, r, _) = play_step(state, live, agents, None if one else who, names=names,
                                 table_label=label)
        if tables is None:
            total += r
        else:
            total[tables] += r
    raise RuntimeError(f"agents did not reach a learner decision within {max_moves} moves")


def _play_one_table(state: State, seat_agent: np.ndarray, agents: Sequence[Any],
                    total: np.ndarray, names: Sequence[str] | None,
                    table_label: TableLabel | None, finished: Finished | None,
                    max_moves: int) -> np.ndarray:
    """:func:`play_until_learner` of a batch of one table (the same choices and steps,
    with less bookkeeping per move)."""
    row = np.zeros(1, np.intp)
    action = np.zeros(1, np.int64)
    for _ in range(max_moves):
        if state.done[0]:
            if finished is None:
                return total
            finished(state, row, row)
            if state.done[0]:
                return total
        k = int(seat_agent[state.current[0]])
        if k < 0:
            return total
        action[0] = choose(state, row, (agents[k],), names=None if names is None else
                           (names[k],), table_label=table_label)[0]
        _, r, _ = engine.step(state, action, inplace=True)
        total += r
    raise RuntimeError(f"agents did not reach a learner decision within {max_moves} moves")


@njit
def _first_without_legal(mask, rows):
    """-1, or the first i whose table rows[i] has no legal action in ``mask``."""
    for i in range(rows.shape[0]):
        row = mask[rows[i]]
        legal = False
        for a in range(row.shape[0]):
            if row[a]:
                legal = True
                break
        if not legal:
            return i
    return -1


@njit
def _first_best_legal(u, mask, rows, out):
    """out[i] = the first legal action of table rows[i] with the largest u[i] (every
    table has one)."""
    for i in range(rows.shape[0]):
        row = mask[rows[i]]
        best = 0
        best_u = np.float32(-1.0)
        for a in range(row.shape[0]):
            if row[a] and u[i, a] > best_u:
                best = a
                best_u = u[i, a]
        out[i] = best


def uniform_legal_actions(rng: np.random.Generator, masks: np.ndarray,
                          rows: np.ndarray) -> np.ndarray:
    """(len(rows),) int64: a uniformly drawn legal action of each table ``rows[i]`` (legal
    actions ``masks[rows[i]]``, (B, 88) bool): the same draws from ``rng`` and the same
    actions as :meth:`sichuan_env.seats.agent.RandomAgent.act_batch` given ``masks[rows]``
    (one float32 per action and row, the largest legal one), without copying the masks.
    A table with no legal action raises ``ValueError`` and draws nothing."""
    rows = np.ascontiguousarray(rows, np.intp)
    out = np.empty(rows.size, np.int64)
    if not rows.size:
        return out
    bad = _first_without_legal(masks, rows)
    if bad >= 0:
        raise ValueError(f"row {bad} of the masks has no legal action")
    u = rng.random((rows.size, N_ACTIONS), dtype=np.float32)
    _first_best_legal(u, masks, rows, out)
    return out

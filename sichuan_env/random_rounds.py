"""Opponent rounds of the built-in random agent, played inside one compiled call.

The vector env (:mod:`sichuan_env.vector`) lets its opponents move round after round
until every table waits for its learner seat. When every opponent is the built-in
:class:`~sichuan_env.agent.RandomAgent`, :func:`play_rounds` plays those rounds in one
compiled call per engine batch instead of one Python round trip per round.

**Same moves, same draws.** A round of the Python path (``driver.choose`` ->
``driver.uniform_legal_actions``) draws ``rng.random((n, 88), dtype=float32)`` for its
``n`` opponent tables (in table order) and plays the first legal action with the largest
number of each row. numpy's float32 draws are consecutive 32-bit outputs of the bit
generator whatever the sizes of the calls, so the draws of all rounds are one stream:
:class:`UniformStream` draws a block of it in Python, the kernel consumes it 88 numbers a
move (returning for more when a round does not fit), and :meth:`UniformStream.close`
leaves the generator exactly where the Python path leaves it: for numpy's PCG64 (and
PCG64DXSM, the default generator's kinds) by jumping ahead from the saved state
(``advance``) and restoring the 32-bit buffer; for any other bit generator by drawing the
used count again from the saved state.

**Rounds.** A round is what the Python path does: when a table has finished its match the
kernel returns (the caller records the episode and starts a new match, :func:`new_matches`)
and is called again; otherwise every table whose seat to act is not its learner gets one
move and is stepped (``engine_kernels._step_table``, the engine's own step of one table),
adding its learner's reward to the caller's accumulator. A table stepped alone and a
table stepped in a batch run the same code, so the result is the Python path's whatever
the batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sichuan_env import engine
from sichuan_env import engine_kernels as ek
from sichuan_env.actions import N_ACTIONS
from sichuan_env.jit import njit
from sichuan_env.state import State

__all__ = ["RoundsRunner", "UniformStream", "new_matches", "play_rounds",
           "ALL_WAITING", "FINISHED", "NEED_DRAWS", "NO_LEGAL", "LOG_OVERFLOW"]

# What play_rounds returns in its first item (the second is the stream position, the third
# a detail: the draws the next round needs, or the table concerned).
ALL_WAITING, FINISHED, NEED_DRAWS, NO_LEGAL, LOG_OVERFLOW = range(5)


@njit
def play_rounds(bag, rb, log, log_len, rewards, done_out, learner, acc, u, pos, first_actions,
                step_first):
    """Rounds of uniform random moves on the tables of ``bag`` (a StateBag) until every
    table waits for its learner seat ``learner[t]`` or one has finished (see the module
    docstring). With ``step_first`` every table is first stepped with ``first_actions``
    (the learners' moves, checked by the caller). ``acc[t]`` (float64) adds the learner's
    reward of every step (+0.0 for a table that waits: what the Python path adds).
    Reads the uniforms ``u[pos:]``, 88 a move. Returns ``(status, pos, detail)``."""
    C = ek.Ctx(rb.rules, rb.flags3, rb.complete, rb.packed, rb.shift, rb.mask, rb.mask7, log,
               log_len, rewards)
    B = learner.shape[0]
    size = log.shape[1]
    if step_first:
        for t in range(B):
            ek._step_table(bag, C, t, first_actions[t], ek._NO, done_out)
            if log_len[t] > size:
                return LOG_OVERFLOW, pos, t
            acc[t] += rewards[t, learner[t]]
    while True:
        n_opp = 0
        for t in range(B):
            if bag.done[t]:
                return FINISHED, pos, t
            if bag.current[t] != learner[t]:
                row = bag.legal_action_mask[t]
                legal = False
                for a in range(N_ACTIONS):
                    if row[a]:
                        legal = True
                        break
                if not legal:
                    return NO_LEGAL, pos, t
                n_opp += 1
        if n_opp == 0:
            return ALL_WAITING, pos, 0
        need = n_opp * N_ACTIONS
        if pos + need > u.shape[0]:
            return NEED_DRAWS, pos, need
        for t in range(B):
            if bag.current[t] == learner[t]:
                acc[t] += 0.0
                continue
            row = bag.legal_action_mask[t]
            best = 0
            best_u = np.float32(-1.0)
            for a in range(N_ACTIONS):
                if row[a] and u[pos + a] > best_u:
                    best = a
                    best_u = u[pos + a]
            pos += N_ACTIONS
            ek._step_table(bag, C, t, ek._i(best), ek._NO, done_out)
            if log_len[t] > size:
                return LOG_OVERFLOW, pos, t
            acc[t] += rewards[t, learner[t]]


class UniformStream:
    """The float32 uniforms of ``rng``, drawn in blocks and consumed in order by
    :func:`play_rounds`; :meth:`close` leaves ``rng`` as if exactly the consumed numbers had
    been drawn (see the module docstring). ``block`` is the first block's size."""

    def __init__(self, rng: np.random.Generator, block: int) -> None:
        self.rng = rng
        self._start = rng.bit_generator.state
        self.buffer = rng.random(max(int(block), N_ACTIONS), dtype=np.float32)
        self.pos = 0  # read position in ``buffer``
        self._before = 0  # numbers consumed before ``buffer``'s first one
        self._drawn = self.buffer.size  # numbers drawn from rng in all
        self._closed = False

    @property
    def used(self) -> int:
        """The numbers consumed so far."""
        return self._before + self.pos

    def extend(self, need: int) -> None:
        """Make at least ``need`` numbers readable from ``pos`` (drawing more)."""
        left = self.buffer[self.pos:]
        more = max(int(need) - left.size, left.size + self.buffer.size // 2, N_ACTIONS)
        self._before += self.pos
        self.buffer = np.concatenate([left, self.rng.random(more, dtype=np.float32)])
        self._drawn += more
        self.pos = 0

    def close(self) -> None:
        """Leave the generator exactly ``used`` numbers after where it was."""
        if self._closed:
            return
        self._closed = True
        if self.used != self._drawn:
            rewind(self.rng, self._start, self.used)


def rewind(rng: np.random.Generator, start: dict[str, Any], used: int) -> None:
    """Set ``rng`` to its state ``start`` (a ``bit_generator.state``) followed by ``used``
    float32 draws."""
    bg = rng.bit_generator
    if type(bg) not in (np.random.PCG64, np.random.PCG64DXSM):
        bg.state = start
        rng.random(used, dtype=np.float32)
        return
    # A float32 takes one 32-bit output: the buffered upper half of the previous 64-bit
    # output when there is one, else the lower half of a new one (the upper half buffered).
    buffered = bool(start["has_uint32"])
    fresh = used - (1 if buffered and used else 0)  # 32-bit outputs taken from new words
    state = dict(start)
    if fresh == 0:
        state["has_uint32"] = int(buffered and not used)
        bg.state = state
        return
    words = (fresh + 1) // 2
    state["has_uint32"] = 0
    bg.state = state
    if words > 1:
        bg.advance(words - 1)
    last = int(bg.random_raw())
    state = bg.state
    state["has_uint32"] = fresh % 2
    state["uinteger"] = last >> 32
    bg.state = state


def new_matches(state: State, rows: np.ndarray) -> None:
    """Start a new match on tables ``rows``, in place (what :func:`engine.reset_done`
    does to a finished table, without copying the batch)."""
    rows = np.ascontiguousarray(rows, np.int64)
    ek.deal_tables(rows, np.zeros(rows.size, np.int8), True, *engine._rule_args(state.rules),
                   *state.arrays())


class RoundsRunner:
    """The compiled rounds' buffers for one engine batch (its bag, log and scratch), kept
    while the batch's arrays stay the same."""

    def __init__(self, state: State) -> None:
        B = state.batch_size
        self.state = state
        self.bag = ek.state_bag(*state.arrays())
        self.rule_bag = ek.rule_bag(*engine._rule_args(state.rules))
        self.log = np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32)
        self.log_len = np.zeros(B, np.int32)
        self.rewards = np.zeros((B, 4), np.float32)
        self.done_out = np.zeros(B, bool)
        self.no_actions = np.zeros(B, np.int64)

    def run(self, stream: UniformStream, learner: np.ndarray, acc: np.ndarray,
            first_actions: np.ndarray | None) -> tuple[int, int]:
        """One :func:`play_rounds` call (``learner`` int8, ``acc`` float64, contiguous);
        returns ``(status, detail)`` after advancing ``stream`` (drawing more when asked
        and calling again)."""
        step_first = first_actions is not None
        acts = first_actions if step_first else self.no_actions
        while True:
            status, pos, detail = play_rounds(
                self.bag, self.rule_bag, self.log, self.log_len, self.rewards, self.done_out,
                learner, acc, stream.buffer, stream.pos, acts, step_first)
            stream.pos = pos
            if status != NEED_DRAWS:
                return status, detail
            stream.extend(detail)
            step_first = False

"""Opponent rounds of the built-in random agent, played inside one compiled call.

The vector env (:mod:`sichuan_env.envs.vector`) lets its opponents move round after round
until every table waits for its learner seat. When every opponent is the built-in
:class:`~sichuan_env.seats.agent.RandomAgent`, :func:`play_rounds` plays those rounds in one
compiled call per engine batch instead of one Python round trip per round.

**Same moves, same draws.** A round of the Python path (``driver.choose`` ->
``driver.uniform_legal_actions``) draws ``rng.random((n, 88), dtype=float32)`` for its
``n`` opponent tables (in table order) and plays the first legal action with the largest
number of each row. numpy's float32 draws are consecutive 32-bit outputs of the bit
generator whatever the sizes of the calls, so the draws of all rounds are one stream,
consumed 88 numbers a move (:class:`UniformStream`). For numpy's PCG64 (the generator of
``default_rng``) the kernel computes that stream itself from the generator's state (a
128-bit LCG with numpy's XSL-RR output and 32-bit buffer), and the state is written
back. For another bit generator a block of the stream is drawn in Python (the kernel
returns for more when a round does not fit) and :meth:`UniformStream.close` leaves the
generator where the Python path leaves it: for PCG64 and PCG64DXSM by jumping ahead from
the saved state (``advance``) and restoring the 32-bit buffer; for any other by drawing
the used count again from the saved state.

**Rounds.** A round is what the Python path does: when a table has finished its match the
kernel returns (the caller records the episode and starts a new match, :func:`engine.new_matches`)
and is called again; otherwise every table whose seat to act is not its learner gets one
move and is stepped (``engine_kernels._step_table``, the engine's own step of one table),
adding its learner's reward to the caller's accumulator. A table stepped alone and a
table stepped in a batch run the same code, so the result is the Python path's whatever
the batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.jit import njit
from sichuan_env.core.state import State

__all__ = ["RoundsRunner", "UniformStream", "play_rounds",
           "ALL_WAITING", "FINISHED", "NEED_DRAWS", "NO_LEGAL", "LOG_OVERFLOW"]

# What play_rounds returns in its first item (the second is the stream position, the third
# a detail: the draws the next round needs, or the table concerned).
ALL_WAITING, FINISHED, NEED_DRAWS, NO_LEGAL, LOG_OVERFLOW = range(5)


# numpy's PCG64: a 128-bit LCG (state = state * MULT + inc) whose 64-bit output is the
# XSL-RR of the new state; a float32 takes a 32-bit half (numpy's buffered next_uint32).
# The state travels as uint64[6]: state high, low, inc high, low, has_uint32, uinteger.
_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_MULT_LO = np.uint64(0x4385DF649FCCF645)
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S8 = np.uint64(8)
_S58 = np.uint64(58)
_S64 = np.uint64(64)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_F24 = np.float32(1.0 / 16777216.0)


@njit(inline="always")
def _mul_hi(a, b):
    """The upper 64 bits of the 128-bit product of two uint64."""
    a_lo, a_hi = a & _M32, a >> _S32
    b_lo, b_hi = b & _M32, b >> _S32
    lo_lo = a_lo * b_lo
    mid1 = a_hi * b_lo + (lo_lo >> _S32)
    mid2 = a_lo * b_hi + (mid1 & _M32)
    return a_hi * b_hi + (mid1 >> _S32) + (mid2 >> _S32)


@njit(inline="always")
def _pcg_next64(g):
    hi, lo = g[0], g[1]
    new_lo = lo * _MULT_LO
    new_hi = _mul_hi(lo, _MULT_LO) + lo * _MULT_HI + hi * _MULT_LO
    lo2 = new_lo + g[3]
    carry = _ONE if lo2 < new_lo else _ZERO
    hi2 = new_hi + g[2] + carry
    g[0] = hi2
    g[1] = lo2
    v = hi2 ^ lo2
    r = hi2 >> _S58
    if r == _ZERO:
        return v
    return (v >> r) | (v << (_S64 - r))


@njit(inline="always")
def _pcg_next_float(g):
    """numpy's ``next_float`` of a PCG64 whose state is ``g``."""
    if g[4] != _ZERO:
        g[4] = _ZERO
        x = g[5]
    else:
        n = _pcg_next64(g)
        g[4] = _ONE
        g[5] = n >> _S32
        x = n & _M32
    return np.float32(x >> _S8) * _F24


@njit(inline="always")
def _mul_add128(a_hi, a_lo, b_hi, b_lo, c_hi, c_lo):
    """(a * b + c) mod 2**128 of three 128-bit numbers as (high, low) uint64 halves."""
    lo = a_lo * b_lo
    hi = _mul_hi(a_lo, b_lo) + a_lo * b_hi + a_hi * b_lo
    lo2 = lo + c_lo
    carry = _ONE if lo2 < lo else _ZERO
    return hi + c_hi + carry, lo2


@njit(inline="always")
def _xsl_rr(hi, lo):
    v = hi ^ lo
    r = hi >> _S58
    if r == _ZERO:
        return v
    return (v >> r) | (v << (_S64 - r))


@njit(inline="always")
def _pcg_pick(g, J, row):
    """The action :func:`sichuan_env.seats.driver.uniform_legal_actions` picks for the legal
    ``row`` (88,) from the PCG64 state ``g``, which is advanced by 88 float32 numbers.
    With the 32-bit buffer empty the 88 numbers are the halves of the next 44 words, and
    only the words of legal actions are computed, each by a jump from the current state
    (``J[k]``: the multiplier and increment of k steps, see ``pcg_jumps``)."""
    best = 0
    best_u = np.float32(-1.0)
    if g[4] != _ZERO:  # an odd start: number by number
        for a in range(N_ACTIONS):
            x = _pcg_next_float(g)
            if row[a] and x > best_u:
                best = a
                best_u = x
        return best
    s_hi, s_lo = g[0], g[1]
    last = -1
    word = _ZERO
    for a in range(N_ACTIONS):
        if not row[a]:
            continue
        w = a >> 1
        if w != last:
            k = w + 1
            hi, lo = _mul_add128(J[k, 0], J[k, 1], s_hi, s_lo, J[k, 2], J[k, 3])
            word = _xsl_rr(hi, lo)
            last = w
        x = (word & _M32) if (a & 1) == 0 else (word >> _S32)
        u = np.float32(x >> _S8) * _F24
        if u > best_u:
            best = a
            best_u = u
    k = N_ACTIONS // 2
    hi, lo = _mul_add128(J[k, 0], J[k, 1], s_hi, s_lo, J[k, 2], J[k, 3])
    g[0] = hi
    g[1] = lo
    g[5] = _xsl_rr(hi, lo) >> _S32  # the upper half of the last word, taken from the buffer
    return best


_JUMPS: dict[int, np.ndarray] = {}


def pcg_jumps(inc: int) -> np.ndarray:
    """(45, 4) uint64: for k = 0..44 steps of numpy's PCG64 with increment ``inc``, the
    multiplier and increment (high, low halves of each) with state_k = A_k * state + C_k
    (mod 2**128). Kept per increment (a generator's increment never changes)."""
    hit = _JUMPS.get(inc)
    if hit is not None:
        return hit
    mult = (int(_MULT_HI) << 64) | int(_MULT_LO)
    out = np.zeros((N_ACTIONS // 2 + 1, 4), np.uint64)
    a, c = 1, 0
    for k in range(out.shape[0]):
        out[k] = [a >> 64, a & _MASK64, c >> 64, c & _MASK64]
        a, c = (a * mult) % (1 << 128), (c * mult + inc) % (1 << 128)
    if len(_JUMPS) > 64:
        _JUMPS.clear()
    _JUMPS[inc] = out
    return out


@njit
def pcg_pick(g, J, row):
    """:func:`_pcg_pick` (for the tests)."""
    return _pcg_pick(g, J, row)


@njit
def pcg_floats(g, n):
    """``n`` float32 numbers of the PCG64 state ``g`` (uint64[6], advanced): what
    ``Generator(PCG64).random(n, dtype=float32)`` returns (for the tests)."""
    out = np.empty(n, np.float32)
    for i in range(n):
        out[i] = _pcg_next_float(g)
    return out


@njit
def play_rounds(bag, log, log_len, rewards, done_out, learner, acc, u, pos, first_actions,
                step_first, pcg, jumps, use_pcg):
    """Rounds of uniform random moves on the tables of ``bag`` (a StateBag) until every
    table waits for its learner seat ``learner[t]`` or one has finished (see the module
    docstring). With ``step_first`` every table is first stepped with ``first_actions``
    (the learners' moves, checked by the caller). ``acc[t]`` (float64) adds the learner's
    reward of every step (+0.0 for a table that waits: what the Python path adds).
    Reads the uniforms ``u[pos:]``, 88 a move, or with ``use_pcg`` draws them from the PCG64
    state ``pcg`` (uint64[6], see ``_pcg_next_float``; ``jumps``: :func:`pcg_jumps`).
    Returns ``(status, pos, detail)``."""
    ek._use_outputs(bag, log, log_len, rewards)
    B = learner.shape[0]
    size = log.shape[1]
    if step_first:
        for t in range(B):
            ek._step_table(bag, t, first_actions[t], ek._NO, done_out)
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
        if not use_pcg and pos + need > u.shape[0]:
            return NEED_DRAWS, pos, need
        for t in range(B):
            if bag.current[t] == learner[t]:
                acc[t] += 0.0
                continue
            row = bag.legal_action_mask[t]
            best = 0
            best_u = np.float32(-1.0)
            if use_pcg:
                best = _pcg_pick(pcg, jumps, row)
            else:
                for a in range(N_ACTIONS):
                    if row[a] and u[pos + a] > best_u:
                        best = a
                        best_u = u[pos + a]
            pos += N_ACTIONS
            ek._step_table(bag, t, ek._i(best), ek._NO, done_out)
            if log_len[t] > size:
                return LOG_OVERFLOW, pos, t
            acc[t] += rewards[t, learner[t]]


class UniformStream:
    """The float32 uniforms of ``rng`` consumed in order by :func:`play_rounds`; after
    :meth:`close` ``rng`` is as if exactly the consumed numbers had been drawn.

    For numpy's PCG64 (what ``default_rng`` makes) the kernel draws them itself from the
    generator's state (``pcg``, written back by :meth:`close`); for any other bit
    generator they are drawn here in blocks (``buffer``, read from ``pos``; the first
    block ``block`` numbers) and the generator is rewound to the numbers used (see the
    module docstring)."""

    def __init__(self, rng: np.random.Generator, block: int) -> None:
        self.rng = rng
        self._start = rng.bit_generator.state
        self.use_pcg = type(rng.bit_generator) is np.random.PCG64
        if self.use_pcg:
            st = self._start["state"]
            self.pcg = np.array([st["state"] >> 64, st["state"] & _MASK64, st["inc"] >> 64,
                                 st["inc"] & _MASK64, self._start["has_uint32"],
                                 self._start["uinteger"]], np.uint64)
            self.jumps = pcg_jumps(st["inc"])
            self.buffer = np.zeros(0, np.float32)
        else:
            self.pcg = np.zeros(6, np.uint64)
            self.jumps = np.zeros((1, 4), np.uint64)
            self.buffer = rng.random(max(int(block), N_ACTIONS), dtype=np.float32)
        self.pos = 0  # read position in ``buffer`` (numbers used since it was drawn)
        self._before = 0  # numbers consumed before ``buffer``'s first one
        self._drawn = self.buffer.size  # numbers drawn from rng in all
        self._closed = False

    @property
    def used(self) -> int:
        """The numbers consumed so far."""
        return self._before + self.pos

    def extend(self, need: int) -> None:
        """Make at least ``need`` numbers readable from ``pos`` (drawing more)."""
        if self.use_pcg:
            return
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
        if self.use_pcg:
            g = [int(x) for x in self.pcg]
            self.rng.bit_generator.state = {
                "bit_generator": "PCG64",
                "state": {"state": (g[0] << 64) | g[1], "inc": (g[2] << 64) | g[3]},
                "has_uint32": g[4], "uinteger": g[5]}
        elif self.used != self._drawn:
            rewind(self.rng, self._start, self.used)


_MASK64 = (1 << 64) - 1


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


class RoundsRunner:
    """The compiled rounds' buffers for one engine batch (its bag, log and scratch), kept
    while the batch's arrays stay the same."""

    def __init__(self, state: State) -> None:
        B = state.batch_size
        self.state = state
        self.log = np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32)
        self.log_len = np.zeros(B, np.int32)
        self.rewards = np.zeros((B, 4), np.float32)
        self.bag = ek.state_bag(*engine.kernel_rule_args(state.rules), self.log, self.log_len,
                                self.rewards, *state.arrays())
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
                self.bag, self.log, self.log_len, self.rewards, self.done_out,
                learner, acc, stream.buffer, stream.pos, acts, step_first, stream.pcg,
                stream.jumps, stream.use_pcg)
            stream.pos = pos
            if status != NEED_DRAWS:
                return status, detail
            stream.extend(detail)
            step_first = False

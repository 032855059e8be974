"""Compiled play-outs for the search agent: tables played to the end of the deal inside one
compiled loop, with no Python call per table or per step.

:func:`play_out` takes a batch of tables (a :class:`~sichuan_env.state.State` whose rules
end a match after one deal), applies one given first action per table, then lets a
compiled rollout policy choose every later decision of every seat, and steps each table
with the engine's own one-table transition (``engine_kernels._step_table``) until it is
done. It returns the tables' final points of the deal.

Rollout policies (:data:`ROLLOUT_POLICIES`):

``waits`` -- a small heuristic written for speed, not a copy of a Python bot:

* void choice: the suit with the fewest tiles (ties: the lower suit); the tile set aside
  is that suit's kind with the fewest copies (ties: the one nearest a terminal, then the
  lower kind); an indicator card when the suit is empty;
* own turn: Hu whenever legal; else the first legal kong; else a void-suit tile when one
  is held (the lowest kind); else the discard that leaves the hand waiting on the most
  unseen copies (copies not in the seat's hand, any meld, the live discards or the won
  tiles); when no discard leaves the hand ready, the most isolated tile (fewest
  neighbours within two ranks: 4 per extra copy of the kind, 2 per tile one rank away,
  1 per tile two ranks away; ties: the rank nearest a terminal, then the lower kind);
* claims: Hu whenever offered; a melded kong whenever offered; a pung when the seat holds
  no tile one rank away from the claimed kind (a pair that is not part of a sequence
  shape); otherwise pass.

``random`` -- uniform over the legal actions, drawn from a splitmix64 stream kept in the
table's ``key`` field (so tables given the same key draw the same numbers).

The kernels are cached like the package's own (:mod:`sichuan_env.jit`), in a folder named
by a hash of this file and the fingerprint of ``sichuan_env``'s sources: they inline the
engine's step, so a change to either compiles them again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numba
import numpy as np

import sichuan_env
from sichuan_env import engine
from sichuan_env import engine_kernels as ek
from sichuan_env import hand_kernels as hk
from sichuan_env.actions import (
    DISCARD,
    HU,
    KONG,
    MELDED_KONG,
    N_ACTIONS,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
)
from sichuan_env.jit import numba_cache_dir, source_fingerprint
from sichuan_env.state import ANS_PASS, CLAIM, ROB, TURN, VOID, State
from sichuan_env.vocab import MELD_TILES

ROLLOUT_POLICIES = ("waits", "random")
POLICY_WAITS, POLICY_RANDOM = 0, 1

_i = np.int64
_U = np.uint64
_TILES_OF_MELD_CODE = MELD_TILES.astype(np.int64)


def _kernel_dir() -> str:
    """``<cache>/search-<hash of this file>-<fingerprint of sichuan_env>``."""
    mine = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
    engine_dir = Path(sichuan_env.__file__).resolve().parent
    return str(Path(numba_cache_dir()) / f"search-{mine}-{source_fingerprint(engine_dir)}")


def _njit(**options: Any) -> Any:
    """``numba.njit(cache=True)`` caching into :func:`_kernel_dir`."""
    options.setdefault("cache", True)

    def compiled(f: Any) -> Any:
        numba.config.CACHE_DIR = _kernel_dir()
        try:
            return numba.njit(**options)(f)
        finally:
            numba.config.CACHE_DIR = numba_cache_dir()

    return compiled


@_njit(inline="always")
def _near_terminal(k):
    r = k % 9
    return min(r, 8 - r)


@_njit()
def _void_choice(hand):
    """(action) the waits policy's void choice for one hand ``hand`` (27,)."""
    best = 0
    best_n = 99
    for s in range(3):
        n = 0
        for k in range(9 * s, 9 * s + 9):
            n += hand[k]
        if n < best_n:
            best_n = n
            best = s
    if best_n == 0:
        return VOID_SUIT + best
    pick = -1
    for k in range(9 * best, 9 * best + 9):
        if hand[k] > 0 and (pick < 0 or hand[k] < hand[pick] or (
                hand[k] == hand[pick] and _near_terminal(k) < _near_terminal(pick))):
            pick = k
    return VOID_TILE + pick


@_njit()
def _unseen(S, t, seat, out):
    """Copies of each kind that ``seat`` of table ``t`` cannot see, into ``out`` (27,)."""
    for k in range(27):
        n = 4 - _i(S.hand[t, seat, k]) - _i(S.live_discards[t, k]) - _i(S.won_tiles[t, k])
        for s in range(4):
            n -= _TILES_OF_MELD_CODE[S.meld[t, s, k]]
        out[k] = max(n, 0)


@_njit()
def _isolation(hand, k):
    """Neighbours of kind ``k`` in ``hand`` within two ranks (weighted, see module)."""
    r = k % 9
    base = k - r
    score = 4 * (_i(hand[k]) - 1)
    for d in (-2, -1, 1, 2):
        j = r + d
        if 0 <= j < 9:
            score += (2 if d in (-1, 1) else 1) * _i(hand[base + j])
    return score


@_njit()
def _turn_choice(S, t, seat, row):
    if row[HU]:
        return HU
    for k in range(27):
        if row[KONG + k]:
            return KONG + k
    n_legal = 0
    only = -1
    for k in range(27):
        if row[DISCARD + k]:
            n_legal += 1
            only = k
    if n_legal == 1:
        return DISCARD + only
    vd = _i(S.void[t, seat])
    if vd >= 0:
        for k in range(9 * vd, 9 * vd + 9):
            if row[DISCARD + k]:
                return DISCARD + k
    hand = S.hand[t, seat]
    unseen = np.empty(27, np.int64)
    _unseen(S, t, seat, unseen)
    n_melds = 0
    for k in range(27):
        if S.meld[t, seat, k] != 0:
            n_melds += 1
    best = -1
    best_live = 0
    for k in range(27):
        if not row[DISCARD + k]:
            continue
        hand[k] -= 1
        c0 = 0
        c1 = 0
        c2 = 0
        p = 1
        for r in range(9):
            c0 += _i(hand[r]) * p
            c1 += _i(hand[9 + r]) * p
            c2 += _i(hand[18 + r]) * p
            p *= 5
        bits = hk.wait_bits_of_codes(S.packed, S.shift, S.mask, S.mask7, c0, c1, c2,
                                     _i(n_melds), vd)
        hand[k] += 1
        live = 0
        for j in range(27):
            if (bits >> j) & 1:
                live += unseen[j]
        if live > best_live:
            best_live = live
            best = k
    if best >= 0:
        return DISCARD + best
    pick = -1
    pick_score = 0
    for k in range(27):
        if not row[DISCARD + k]:
            continue
        sc = _isolation(hand, k)
        if pick < 0 or sc < pick_score or (sc == pick_score
                                           and _near_terminal(k) < _near_terminal(pick)):
            pick = k
            pick_score = sc
    return DISCARD + pick


@_njit()
def _claim_choice(S, t, seat, row):
    if row[HU]:
        return HU
    if row[MELDED_KONG]:
        return MELDED_KONG
    if row[PUNG]:
        k = _i(S.claim_tile[t])
        r = k % 9
        near = 0
        if r > 0:
            near += S.hand[t, seat, k - 1]
        if r < 8:
            near += S.hand[t, seat, k + 1]
        if near == 0:
            return PUNG
    return PASS


@_njit()
def waits_action(S, t):
    """The ``waits`` policy's action for the seat to decide at table ``t``."""
    seat = _i(S.current[t])
    row = S.legal_action_mask[t]
    ph = S.phase[t]
    if ph == VOID:
        return _void_choice(S.hand[t, seat])
    if ph == TURN:
        return _turn_choice(S, t, seat, row)
    if ph in (CLAIM, ROB):
        return _claim_choice(S, t, seat, row)
    return PASS


@_njit()
def random_action(S, t):
    """Uniform over the legal actions; advances the table's ``key`` stream."""
    row = S.legal_action_mask[t]
    n = 0
    for a in range(N_ACTIONS):
        if row[a]:
            n += 1
    z = ek.splitmix_word(_U(S.key[t]))
    S.key[t] = z
    j = _i(z % _U(n))
    for a in range(N_ACTIONS):
        if row[a]:
            if j == 0:
                return a
            j -= 1
    return PASS


@_njit()
def _play_out(bag, first, policy, done_out, max_steps):
    S = bag
    B = first.shape[0]
    for t in range(B):
        ek._step_table(S, _i(t), _i(first[t]), False, done_out)
        for _ in range(max_steps):
            if S.done[t]:
                break
            a = random_action(S, _i(t)) if policy == POLICY_RANDOM else waits_action(S, _i(t))
            ek._step_table(S, _i(t), _i(a), False, done_out)
        if not S.done[t]:
            return t
    return -1


@_njit()
def policy_actions(bag, rows, policy):
    """The policy's actions at tables ``rows`` (for the tests)."""
    out = np.empty(rows.shape[0], np.int64)
    for i in range(rows.shape[0]):
        if policy == POLICY_RANDOM:
            out[i] = random_action(bag, _i(rows[i]))
        else:
            out[i] = waits_action(bag, _i(rows[i]))
    return out


@_njit()
def reopen_kernel(d, tile, robbing, me, own_opts, rules, flags3, complete, packed, shift,
                  mask, mask7, *arrays):
    """Open the claim window of ``tile`` offered by seat ``d`` again on every table (the
    options from the tables' hands), give seat ``me`` the options ``own_opts`` and make it
    the seat to answer; the seats asked before it (those with options) passed."""
    S = ek._bag_without_log(rules, flags3, complete, packed, shift, mask, mask7, arrays)
    for t in range(S.phase.shape[0]):
        ek._open_window(S, _i(t), d, tile, robbing)
        S.claim_opts[t, me] = own_opts
        for i in range(1, 4):
            s = (d + i) % 4
            if s == me:
                break
            if S.claim_opts[t, s] != 0:
                S.claim_answer[t, s] = ANS_PASS
        S.current[t] = me


def _bag(state: State) -> Any:
    B = state.batch_size
    log = np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32)
    log_len = np.zeros(B, np.int32)
    rewards = np.zeros((B, 4), np.float32)
    return ek.state_bag(*engine.kernel_rule_args(state.rules), log, log_len, rewards,
                        *state.arrays())


def policy_code(name: str) -> int:
    """The kernel code of a rollout policy name (``ValueError`` naming the known ones)."""
    if name not in ROLLOUT_POLICIES:
        raise ValueError(f"unknown rollout policy {name!r}; known: {', '.join(ROLLOUT_POLICIES)}")
    return ROLLOUT_POLICIES.index(name)


def choose_actions(state: State, rows: np.ndarray, policy: str = "waits") -> np.ndarray:
    """(n,) the rollout policy's actions for the seats to decide at tables ``rows``."""
    rows = np.ascontiguousarray(rows, np.int64)
    return policy_actions(_bag(state), rows, policy_code(policy))


def play_out(state: State, first: np.ndarray, policy: str = "waits") -> np.ndarray:
    """Apply ``first[i]`` (a legal action) at table ``i``, play every table to the end of
    the deal with the rollout policy (in place), and return the (B, 4) points of the
    deal. The state's rules must end a match after one deal (``deals_per_match=1``)."""
    if state.rules.deals_per_match != 1:
        raise ValueError("play_out needs rules with deals_per_match=1 (one deal per table)")
    first = np.ascontiguousarray(first, np.int64)
    if first.shape != (state.batch_size,):
        raise ValueError(f"expected {state.batch_size} first actions, got shape {first.shape}")
    done = np.zeros(state.batch_size, bool)
    bad = _play_out(_bag(state), first, policy_code(policy), done, 10_000)
    if bad >= 0:  # pragma: no cover - a deal ends within a few hundred decisions
        raise RuntimeError(f"table {bad} did not finish its deal")
    return state.scores.copy()

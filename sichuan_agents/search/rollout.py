"""Compiled play-outs for the search agent: tables played to the end of the deal inside one
compiled loop, with no Python call per table or per step.

:func:`play_out` takes a batch of tables (a :class:`~sichuan_env.core.state.State` whose rules
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

``greedy`` -- the greedy bot (:class:`sichuan_agents.bots.greedy.GreedyAgent`) compiled: the same
action at every decision (tested on every decision of played deals). Void choice: the
suit whose removal leaves the lowest shanten (ties: the fewest tiles), its most isolated
single set aside; own turn: Hu; a void-suit tile (most copies first); else the discard of
lowest shanten, among those the most live effective tiles (kinds that lower the shanten,
each weighted by its unseen copies), then the most isolated; a kong (the last legal one)
when its shanten is not above the best discard's; claims: Hu, else a melded kong or a
pung when the shanten does not rise. Shanten comes from the shanten tables' suit covers
(``hand_kernels.combine_covers``), counting melds as greedy does (by number, the void
suit's tiles left out), and waits from ``hand_kernels.wait_bits_of_codes``. It is about
three times as slow per play-out as ``waits``.

``rules`` -- the rules bot (:class:`sichuan_agents.bots.rules_bot.RulesAgent`, default options)
compiled: the same action at every decision (tested on every decision of played deals).
Greedy's void choice, kongs and claims, plus the bot's changes: the void-suit tile with the
least danger (its threat and tile risk, in the float32 and float64 steps numpy takes in
the bot, so that near-ties break alike); among the lowest-shanten discards at shanten 0 or
1, the look-ahead worth (the wait sum weighted by void bonus and hand value from
``hand_kernels.fans``, or the two-step worth of a 1-shanten hand); a pung greedy would
make passed when the worth after it and its best discard gains less than the margin; a
cheap Hu on a discard passed (``hand_kernels.theoretical_max`` of the other waits). The
worths are sums of quarter points, exact in float64 as in the bot's float32. About
twice as slow per play-out as ``greedy``.

The kernels are cached like the package's own (:mod:`sichuan_env.core.jit`), in a folder named
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
from sichuan_agents.bots.rules_bot import FAN_CAP, FISH_VALUE, PASS_HU_WALL, STEP_BASE, RulesAgent
from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek
from sichuan_env.core import hand_kernels as hk
from sichuan_env.core.actions import (
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
from sichuan_env.core.jit import numba_cache_dir, prange, source_fingerprint
from sichuan_env.core.state import ANS_PASS, CLAIM, ROB, TURN, VOID, State
from sichuan_env.core.tables import load_tables
from sichuan_env.core.vocab import MELD_KIND_OF_CODE, MELD_KIND_TILES, MELD_TILES

ROLLOUT_POLICIES = ("waits", "random", "greedy", "rules")
POLICY_WAITS, POLICY_RANDOM, POLICY_GREEDY, POLICY_RULES = 0, 1, 2, 3

_i = np.int64
_U = np.uint64
_TILES_OF_MELD_CODE = MELD_TILES.astype(np.int64)
_KIND_OF_MELD_CODE = MELD_KIND_OF_CODE.astype(np.int64)
_TILES_OF_MELD_KIND = MELD_KIND_TILES.astype(np.int64)
_POW5 = 5 ** np.arange(9, dtype=np.int64)
NO_SHANTEN = 99
_RULES = RulesAgent()  # the rules policy is the bot with its default options
VOID_BONUS = float(_RULES.void_bonus)
WAIT_VALUE = float(_RULES.wait_value)
PUNG_MARGIN = float(_RULES.pung_margin)
FISH_LIVE = int(_RULES.fish_live)


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
def _legal_discards(row):
    """How many discards the legal row ``row`` allows, and the last of them (-1: none)."""
    n = 0
    last = -1
    for k in range(27):
        if row[DISCARD + k]:
            n += 1
            last = k
    return n, last


@_njit()
def _turn_choice(S, t, seat, row):
    if row[HU]:
        return HU
    for k in range(27):
        if row[KONG + k]:
            return KONG + k
    n_legal, only = _legal_discards(row)
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


# ----------------------------------------------------------------------------- greedy


@_njit(inline="always")
def _iso10(hand, k):
    """Ten times greedy's isolation of kind ``k`` (``sichuan_agents.bots.greedy.isolation``), an
    integer: -10 x (held kinds within two ranks + held kinds within one rank + copies of
    ``k``) - the rank's distance to a terminal."""
    r = k % 9
    base = k - r
    nb = 0
    for d in range(-2, 3):
        j = r + d
        if 0 <= j < 9 and hand[base + j] > 0:
            nb += 2 if -1 <= d <= 1 else 1
    return -10 * (nb + _i(hand[k])) - min(r, 8 - r)


@_njit(inline="always")
def _shanten3(best, cover, c0, c1, c2, n_melds):
    """Shanten of the hand whose suits have base-5 codes c0, c1, c2 (the void suit's code
    0) with ``n_melds`` melds, from the plain suit covers (``hand_kernels.shanten`` for a
    hand whose suits hold no meld: greedy's way of counting melds, see
    :func:`_greedy_codes`). ``cover``: (3, 12) int64 work space."""
    for col in range(12):
        cover[0, col] = best[c0, col]
        cover[1, col] = best[c1, col]
        cover[2, col] = best[c2, col]
    return hk.combine_covers(cover, n_melds)


@_njit(inline="always")
def _shanten_plus(best, cover, codes, vd, k, dk, j, dj, n_melds):
    """:func:`_shanten3` of ``codes`` with ``dk`` more copies of kind ``k`` and ``dj`` of
    kind ``j`` (-1: none); the void suit ``vd`` stays at code 0."""
    c0 = codes[0]
    c1 = codes[1]
    c2 = codes[2]
    for kind, dn in ((k, dk), (j, dj)):
        if kind < 0 or kind // 9 == vd:
            continue
        s = kind // 9
        step = dn * _POW5[kind % 9]
        if s == 0:
            c0 += step
        elif s == 1:
            c1 += step
        else:
            c2 += step
    return _shanten3(best, cover, c0, c1, c2, n_melds)


@_njit()
def _greedy_codes(hand, vd, codes, raw):
    """Base-5 suit codes of ``hand`` into ``raw`` (3,) and, the void suit's set to 0, into
    ``codes`` (3,). Like ``sichuan_agents.bots.greedy.shanten``, shanten is taken with the void
    suit's
    tiles left out and the melds counted, not placed (exact for every hand a deal can
    hold: a seat has chosen its void suit before any meld)."""
    for s in range(3):
        c = 0
        for r in range(9):
            c += _i(hand[9 * s + r]) * _POW5[r]
        raw[s] = c
        codes[s] = 0 if s == vd else c


@_njit()
def _greedy_void(hand, best, cover):
    """greedy's void choice (``sichuan_agents.bots.greedy.choose_void``) for ``hand`` (27,)."""
    raw = np.empty(3, np.int64)
    codes = np.empty(3, np.int64)
    _greedy_codes(hand, -1, codes, raw)
    suit = 0
    score = 0
    per = np.zeros(3, np.int64)
    for s in range(3):
        for r in range(9):
            per[s] += hand[9 * s + r]
        c0 = 0 if s == 0 else raw[0]
        c1 = 0 if s == 1 else raw[1]
        c2 = 0 if s == 2 else raw[2]
        sc = 10 * _shanten3(best, cover, c0, c1, c2, 0) + per[s]
        if s == 0 or sc < score:
            score = sc
            suit = s
    if per[suit] == 0:
        a = VOID_SUIT + suit
    else:
        pick = -1
        top = 0
        for k in range(9 * suit, 9 * suit + 9):
            if hand[k] > 0:
                key = _iso10(hand, k) - 20 * _i(hand[k])
                if pick < 0 or key > top:
                    pick = k
                    top = key
        a = VOID_TILE + pick
    return a


@_njit()
def _greedy_seen(S, t, seat, mk, live):
    """What greedy reads of the seat's view (``sichuan_agents.bots.greedy.Seen``): its meld kinds
    into
    ``mk`` (27,) and the copies of each kind it cannot see into ``live`` (27,) (the
    face-down winning tiles of other seats' self-drawn Hu count as unseen); returns the
    number of its melds."""
    n_melds = 0
    for k in range(27):
        v = (_i(S.hand[t, seat, k]) + _i(S.live_discards[t, k]) + _i(S.won_tiles[t, k]))
        for s in range(4):
            v += _TILES_OF_MELD_KIND[_KIND_OF_MELD_CODE[S.meld[t, s, k]]]
        live[k] = v
        mk[k] = _KIND_OF_MELD_CODE[S.meld[t, seat, k]]
        if mk[k] != 0:
            n_melds += 1
    sa = _i(S.set_aside[t, seat])
    if sa >= 0:
        live[sa] += 1
    for r in range(1, 4):
        a = (seat + r) % 4
        k = _i(S.hu_tile[t, a])
        if k >= 0 and S.hu_from[t, a] == a:
            live[k] -= 1
    for k in range(27):
        live[k] = 4 - min(live[k], 4)
    return n_melds


@_njit()
def _live_effective(S, hand, k, sh, mk, n_melds, vd, live, codes, raw, best, cover):
    """greedy's live effective tiles (``sichuan_agents.bots.greedy.effective_tiles`` weighted by the
    unseen copies) of ``hand`` less one tile of kind ``k``, whose shanten is ``sh``."""
    total = 0
    hand[k] -= 1
    if sh == 0:
        r0 = raw[0]
        r1 = raw[1]
        r2 = raw[2]
        step = _POW5[k % 9]
        if k < 9:
            r0 -= step
        elif k < 18:
            r1 -= step
        else:
            r2 -= step
        bits = hk.wait_bits_of_codes(S.packed, S.shift, S.mask, S.mask7, r0, r1, r2,
                                     _i(n_melds), vd)
        for j in range(27):
            if (bits >> j) & 1 and j // 9 != vd and live[j] > 0 and (
                    _i(hand[j]) + _TILES_OF_MELD_KIND[mk[j]] < 4):
                total += live[j]
    else:
        for j in range(27):
            if j // 9 == vd or live[j] <= 0 or _i(hand[j]) + _TILES_OF_MELD_KIND[mk[j]] >= 4:
                continue
            r = j % 9
            near = False
            for d in range(-2, 3):
                if 0 <= r + d < 9 and hand[j + d] > 0:
                    near = True
                    break
            if near and _shanten_plus(best, cover, codes, vd, k, -1, j, 1, n_melds) < sh:
                total += live[j]
    hand[k] += 1
    return total


@_njit()
def _discard_shanten(row, hand, best, cover, codes, vd, n_melds, sh):
    """``sh[k]``: the shanten after each legal discard k (``NO_SHANTEN`` elsewhere);
    returns the lowest and how many discards reach it (greedy's and rules' first step)."""
    low = NO_SHANTEN
    for k in range(27):
        sh[k] = NO_SHANTEN
        if row[DISCARD + k] and hand[k] > 0:
            sh[k] = _shanten_plus(best, cover, codes, vd, k, -1, -1, 0, n_melds)
            low = min(low, sh[k])
    n_cand = 0
    for k in range(27):
        if sh[k] == low and low < NO_SHANTEN:
            n_cand += 1
    return low, n_cand


@_njit()
def _last_kong(row, hand, best, cover, codes, vd, n_melds, mk, low, out):
    """greedy's kong rule (rules keeps it): the last legal kong whose shanten after it is
    not above ``low``, the best discard's; ``out`` when there is none."""
    for k in range(27):
        if row[KONG + k]:
            held = _i(hand[k])
            drop = held if held == 4 else 1
            after = _shanten_plus(best, cover, codes, vd, k, -drop, -1, 0,
                                  n_melds + (1 if mk[k] == 0 else 0))
            if after <= low:
                out = KONG + k
    return out


@_njit()
def _greedy_turn(S, t, seat, row, best, cover):
    """greedy's own-turn choice (``sichuan_agents.bots.greedy.GreedyAgent._turn``)."""
    if row[HU]:
        return HU
    hand = S.hand[t, seat]
    vd = _i(S.void[t, seat])
    any_kong = False
    for k in range(27):
        if row[KONG + k]:
            any_kong = True
    n_disc, only = _legal_discards(row)
    if n_disc == 1 and not any_kong:
        return DISCARD + only
    if vd >= 0 and not any_kong:  # a void-suit tile: the most copies, then isolated
        pick = -1
        top = 0
        for k in range(9 * vd, 9 * vd + 9):
            if row[DISCARD + k] and hand[k] > 0:
                key = 1000 * _i(hand[k]) + _iso10(hand, k)
                if pick < 0 or key > top:
                    pick = k
                    top = key
        if pick >= 0:
            return DISCARD + pick
    mk = np.empty(27, np.int64)
    live = np.empty(27, np.int64)
    n_melds = _greedy_seen(S, t, seat, mk, live)
    codes = np.empty(3, np.int64)
    raw = np.empty(3, np.int64)
    _greedy_codes(hand, vd, codes, raw)
    sh = np.empty(27, np.int64)
    low, n_cand = _discard_shanten(row, hand, best, cover, codes, vd, n_melds, sh)
    out = -1
    top = 0
    for k in range(27):
        if low == NO_SHANTEN or sh[k] != low:
            continue
        key = _iso10(hand, k)
        if n_cand > 1:
            key += 1000 * _live_effective(S, hand, k, low, mk, n_melds, vd, live, codes,
                                          raw, best, cover)
        if out < 0 or key > top:
            out = DISCARD + k
            top = key
    return _last_kong(row, hand, best, cover, codes, vd, n_melds, mk, low, out)


@_njit()
def _greedy_claim(S, t, seat, row, best, cover):
    """greedy's answer to a discard or a promoted kong (``GreedyAgent._claim``)."""
    if row[HU]:
        return HU
    out = PASS
    if row[PUNG] or row[MELDED_KONG]:
        hand = S.hand[t, seat]
        vd = _i(S.void[t, seat])
        k = _i(S.claim_tile[t])
        n_melds = 0
        for j in range(27):
            if S.meld[t, seat, j] != 0:
                n_melds += 1
        codes = np.empty(3, np.int64)
        raw = np.empty(3, np.int64)
        _greedy_codes(hand, vd, codes, raw)
        before = _shanten3(best, cover, codes[0], codes[1], codes[2], n_melds)
        if row[PUNG] and _shanten_plus(best, cover, codes, vd, k, -2, -1, 0,
                                       n_melds + 1) <= before:
            out = PUNG
        if row[MELDED_KONG] and _shanten_plus(best, cover, codes, vd, k, -3, -1, 0,
                                              n_melds + 1) <= before:
            out = MELDED_KONG
    return out


@_njit()
def _legal_or_first(row, a):
    """``a`` when it is legal in ``row``, else the first legal action."""
    if a < 0 or not row[a]:
        for b in range(N_ACTIONS):
            if row[b]:
                return b
    return a


@_njit()
def greedy_action(S, t, best, cover):
    """The ``greedy`` policy's action for the seat to decide at table ``t`` (``best``:
    the shanten tables' suit covers; ``cover`` (3, 12) int64 work space)."""
    seat = _i(S.current[t])
    row = S.legal_action_mask[t]
    ph = S.phase[t]
    a = -1
    if ph == VOID:
        a = _greedy_void(S.hand[t, seat], best, cover)
    elif ph == TURN:
        a = _greedy_turn(S, t, seat, row, best, cover)
    elif ph in (CLAIM, ROB):
        a = _greedy_claim(S, t, seat, row, best, cover)
    return _legal_or_first(row, a)


# ----------------------------------------------------------------------------- rules

_F32 = np.float32
_BASE_RISK = np.array([0.7, 0.85, 1.0, 1.0, 1.0, 1.0, 1.0, 0.85, 0.7], np.float32)


@_njit(inline="always")
def _bump(c0, c1, c2, k, dn):
    """The suit codes c0, c1, c2 with ``dn`` more copies of kind ``k``."""
    step = dn * _POW5[k % 9]
    if k < 9:
        c0 += step
    elif k < 18:
        c1 += step
    else:
        c2 += step
    return c0, c1, c2


@_njit(inline="always")
def _drop_void(c0, c1, c2, vd):
    """The suit codes with the void suit's set to 0 (what greedy's shanten reads)."""
    return (0 if vd == 0 else c0), (0 if vd == 1 else c1), (0 if vd == 2 else c2)


@_njit()
def _rules_weights(S, t, seat, wgt):
    """The rules bot's wait weights (``RulesAgent.wait_weight``) into ``wgt`` (27,): 1, plus
    ``void_bonus`` per opponent still playing whose revealed void suit holds the kind."""
    for k in range(27):
        wgt[k] = 1.0
    for r in range(1, 4):
        a = (seat + r) % 4
        vd = _i(S.void[t, a])
        if S.hu[t, a] or not S.void_revealed[t, a] or vd < 0:
            continue
        for k in range(9 * vd, 9 * vd + 9):
            wgt[k] += VOID_BONUS


@_njit()
def _ready_worth(S, hand, c0, c1, c2, mk, n_melds, vd, live, wgt, valued, fan):
    """``RulesAgent.ready_scores`` of the standing hand ``hand`` (raw suit codes c0..c2):
    the sum over its waits with live copies of live copies x wait weight, times
    ``1 + wait_value (value - 1)`` when ``valued``."""
    bits = hk.wait_bits_of_codes(S.packed, S.shift, S.mask, S.mask7, c0, c1, c2,
                                 _i(n_melds), vd)
    total = 0.0
    if bits == 0:
        return total
    for j in range(27):
        if (bits >> j) & 1 and live[j] > 0 and (
                _i(hand[j]) + _TILES_OF_MELD_KIND[mk[j]] < 4):
            w = live[j] * wgt[j]
            if valued:
                fans = hk.fans(hand, j, mk, False, False, False, False, fan)
                w *= 1.0 + WAIT_VALUE * (hk.value_of(fans, FAN_CAP) - 1.0)
            total += w
    return total


@_njit(inline="always")
def _near_held(hand, j, vd):
    """Whether ``hand`` holds a tile of ``j``'s suit (not the void suit) within two ranks."""
    if j // 9 == vd:
        return False
    r = j % 9
    near = False
    for d in range(max(-r, -2), min(8 - r, 2) + 1):
        near = near or hand[j + d] > 0
    return near


@_njit()
def _two_step_worth(S, hand, c0, c1, c2, mk, n_melds, vd, live, wgt, best, cover, fan):
    """``RulesAgent.two_step_scores`` of the 1-shanten standing hand ``hand`` (raw codes
    c0..c2): over its effective draws t, live copies x (``STEP_BASE`` + the best wait sum
    after drawing t and discarding one tile, t's copy no longer live)."""
    z0, z1, z2 = _drop_void(c0, c1, c2, vd)
    out = 0.0
    for t in range(27):
        if (t // 9 == vd or live[t] <= 0
                or _i(hand[t]) + _TILES_OF_MELD_KIND[mk[t]] >= 4
                or not _near_held(hand, t, vd)):
            continue
        y0, y1, y2 = _bump(z0, z1, z2, t, 1)
        if _shanten3(best, cover, y0, y1, y2, n_melds) >= 1:
            continue
        d0, d1, d2 = _bump(c0, c1, c2, t, 1)
        hand[t] += 1
        live[t] -= 1
        top = 0.0
        for d in range(27):
            if hand[d] <= 0 or d // 9 == vd:
                continue
            e0, e1, e2 = _bump(d0, d1, d2, d, -1)
            hand[d] -= 1
            w = _ready_worth(S, hand, e0, e1, e2, mk, n_melds, vd, live, wgt, False, fan)
            hand[d] += 1
            if w > top:
                top = w
        hand[t] -= 1
        live[t] += 1
        out += live[t] * (STEP_BASE + top)
    return out


@_njit()
def _hand_worth(S, hand, c0, c1, c2, mk, n_melds, vd, live, wgt, best, cover, fan):
    """``RulesAgent.hand_worth`` of the standing hand ``hand`` (raw codes c0..c2):
    -1000 x shanten plus the look-ahead worth (ready, 1-shanten) or the live effective
    tiles (further), each capped at 998."""
    z0, z1, z2 = _drop_void(c0, c1, c2, vd)
    sh = _shanten3(best, cover, z0, z1, z2, n_melds)
    out = -1000.0 * sh
    if sh == 0:
        out += min(_ready_worth(S, hand, c0, c1, c2, mk, n_melds, vd, live, wgt, True,
                                fan), 998.0)
    elif sh == 1:
        out += min(_two_step_worth(S, hand, c0, c1, c2, mk, n_melds, vd, live, wgt, best,
                                   cover, fan), 998.0)
    elif sh >= 2:
        eff = 0
        for j in range(27):
            if (live[j] <= 0 or _i(hand[j]) + _TILES_OF_MELD_KIND[mk[j]] >= 4
                    or not _near_held(hand, j, vd)):
                continue
            y0, y1, y2 = _bump(z0, z1, z2, j, 1)
            if _shanten3(best, cover, y0, y1, y2, n_melds) < sh:
                eff += live[j]
        out += min(float(eff), 998.0)
    return out


@_njit()
def _pung_gain(S, hand, k, mk, n_melds, vd, live, wgt, best, cover, fan):
    """``RulesAgent.pung_gain``: the worth after punging kind ``k`` and the best discard,
    minus the worth of the hand as it stands."""
    raw = np.empty(3, np.int64)
    codes = np.empty(3, np.int64)
    _greedy_codes(hand, vd, codes, raw)
    now = _hand_worth(S, hand, raw[0], raw[1], raw[2], mk, n_melds, vd, live, wgt, best,
                      cover, fan)
    c0, c1, c2 = _bump(raw[0], raw[1], raw[2], k, -2)
    hand[k] -= 2
    kind = mk[k]
    mk[k] = 1
    after = -np.inf
    for d in range(27):
        if hand[d] <= 0 or d // 9 == vd:
            continue
        e0, e1, e2 = _bump(c0, c1, c2, d, -1)
        hand[d] -= 1
        w = _hand_worth(S, hand, e0, e1, e2, mk, n_melds + 1, vd, live, wgt, best, cover,
                        fan)
        hand[d] += 1
        if w > after:
            after = w
    mk[k] = kind
    hand[k] += 2
    return after - now


@_njit()
def _pass_cheap_hu(S, t, hand, k, mk, vd, live, fan):
    """``RulesAgent._pass_cheap_hu``: pass this Hu on a discard of kind ``k``."""
    val = hk.value_of(hk.fans(hand, k, mk, False, False, False, False, fan), FAN_CAP)
    tables = (S.flags3, S.complete, S.packed, S.shift, S.mask, S.mask7)
    waits = np.empty(27, np.bool_)
    big = hk.theoretical_max(tables, hand, mk, vd, FAN_CAP, waits) >= 4
    hk.wait_mask(tables, hand, mk, vd, waits)
    live_other = 0
    for j in range(27):
        if waits[j] and j != k:
            live_other += live[j]
    fish = live_other >= FISH_LIVE and val <= FISH_VALUE
    return (val <= 1 and big and live_other >= 2) or fish


@_njit()
def _rules_void_discard(S, t, seat, row, hand, vd, live):
    """``RulesAgent.choose_void_discard``: the void-suit tile with the least danger, then
    the most copies held; float32 and float64 steps as numpy takes them in the bot."""
    any_hu = S.hu[t, 0] or S.hu[t, 1] or S.hu[t, 2] or S.hu[t, 3]
    thr = np.zeros(4, np.float32)
    ov = np.full(4, -1, np.int64)
    own = np.zeros((4, 9), np.bool_)  # own discards of my void suit's kinds per seat
    for o in range(1, 4):
        a = (seat + o) % 4
        if S.void_revealed[t, a]:
            ov[o] = S.void[t, a]
        ln = _i(S.river_len[t, a])
        melds = 0
        for k in range(27):
            if S.meld[t, a, k] != 0:
                melds += 1
        for j in range(ln):
            x = _i(S.river[t, a, j])
            if x // 9 == vd:
                own[o, x - 9 * vd] = True
        m = _F32(melds)
        x = (_F32(ln) - _F32(4.0)) / _F32(10.0)
        x = min(max(x, _F32(0.0)), _F32(0.7)) + _F32(0.15) * m
        if melds >= 3:
            x = max(x, _F32(0.8))
        if any_hu:
            x = _F32(np.float64(x) + 0.1)
        last = _i(S.river[t, a, ln - 1]) if ln > 0 else -1
        if last >= 0 and ov[o] >= 0 and last // 9 == ov[o]:
            x = x * _F32(0.3)
        if S.hu[t, a] or ov[o] < 0:
            x = _F32(0.0)
        thr[o] = min(max(x, _F32(0.0)), _F32(1.0))
    pick = -1
    top = _F32(0.0)
    for k in range(9 * vd, 9 * vd + 9):
        if not row[DISCARD + k] or hand[k] <= 0:
            continue
        risk = np.float64(_BASE_RISK[k % 9]) * (0.5 if live[k] <= 0 else 1.0)
        dng = _F32(0.0)
        for o in range(1, 4):
            if ov[o] == vd:
                continue
            r = risk * (0.35 if own[o, k - 9 * vd] else 1.0)
            dng = _F32(np.float64(dng) + np.float64(thr[o]) * r)
        pref = _F32(_F32(hand[k]) * _F32(0.01)) - dng
        if pick < 0 or pref > top:
            pick = k
            top = pref
    return pick


@_njit()
def _rules_turn(S, t, seat, row, best, cover):
    """The rules bot's own-turn choice (greedy's with ``RulesAgent``'s void-tile order
    and look-ahead discards)."""
    if row[HU]:
        return HU
    hand = S.hand[t, seat]
    vd = _i(S.void[t, seat])
    any_kong = False
    for k in range(27):
        if row[KONG + k]:
            any_kong = True
    n_disc, only = _legal_discards(row)
    if n_disc == 1 and not any_kong:
        return DISCARD + only
    mk = np.empty(27, np.int64)
    live = np.empty(27, np.int64)
    n_melds = _greedy_seen(S, t, seat, mk, live)
    if vd >= 0 and not any_kong:
        pick = _rules_void_discard(S, t, seat, row, hand, vd, live)
        if pick >= 0:
            return DISCARD + pick
    codes = np.empty(3, np.int64)
    raw = np.empty(3, np.int64)
    _greedy_codes(hand, vd, codes, raw)
    sh = np.empty(27, np.int64)
    low, n_cand = _discard_shanten(row, hand, best, cover, codes, vd, n_melds, sh)
    look = n_cand > 1 and low <= 1
    wgt = np.empty(27, np.float64)
    if look:
        _rules_weights(S, t, seat, wgt)
    fan = np.empty(10, np.int64)
    out = -1
    top = 0.0
    for k in range(27):
        if low == NO_SHANTEN or sh[k] != low:
            continue
        key = float(_iso10(hand, k))
        if look:
            c0, c1, c2 = _bump(raw[0], raw[1], raw[2], k, -1)
            hand[k] -= 1
            if low == 0:
                w = _ready_worth(S, hand, c0, c1, c2, mk, n_melds, vd, live, wgt, True, fan)
            else:
                w = _two_step_worth(S, hand, c0, c1, c2, mk, n_melds, vd, live, wgt, best,
                                    cover, fan)
            hand[k] += 1
            key += 1000.0 * min(w, 998.0)
        elif n_cand > 1:
            key += 1000.0 * _live_effective(S, hand, k, low, mk, n_melds, vd, live, codes,
                                            raw, best, cover)
        if out < 0 or key > top:
            out = DISCARD + k
            top = key
    return _last_kong(row, hand, best, cover, codes, vd, n_melds, mk, low, out)


@_njit()
def _rules_claim(S, t, seat, row, best, cover):
    """The rules bot's answer to a discard or a promoted kong: greedy's, with cheap Hu on
    a discard passed and pungs judged by their look-ahead worth."""
    hand = S.hand[t, seat]
    vd = _i(S.void[t, seat])
    k = _i(S.claim_tile[t])
    if row[HU]:
        if S.phase[t] == CLAIM and _i(S.wall_back[t]) - _i(S.wall_front[t]) >= PASS_HU_WALL:
            mk = np.empty(27, np.int64)
            live = np.empty(27, np.int64)
            _greedy_seen(S, t, seat, mk, live)
            if _pass_cheap_hu(S, t, hand, k, mk, vd, live, np.empty(10, np.int64)):
                return PASS
        return HU
    out = _greedy_claim(S, t, seat, row, best, cover)
    if out != PUNG:
        return out
    if vd >= 0:
        for j in range(9 * vd, 9 * vd + 9):
            if hand[j] > 0:
                return out  # void tiles held: greedy's pung
    mk = np.empty(27, np.int64)
    live = np.empty(27, np.int64)
    n_melds = _greedy_seen(S, t, seat, mk, live)
    wgt = np.empty(27, np.float64)
    _rules_weights(S, t, seat, wgt)
    gain = _pung_gain(S, hand, k, mk, n_melds, vd, live, wgt, best, cover,
                      np.empty(10, np.int64))
    return PASS if gain < PUNG_MARGIN else PUNG


@_njit()
def rules_action(S, t, best, cover):
    """The ``rules`` policy's action for the seat to decide at table ``t`` (arguments as
    :func:`greedy_action`)."""
    seat = _i(S.current[t])
    row = S.legal_action_mask[t]
    ph = S.phase[t]
    a = -1
    if ph == VOID:
        a = _greedy_void(S.hand[t, seat], best, cover)
    elif ph == TURN:
        a = _rules_turn(S, t, seat, row, best, cover)
    elif ph in (CLAIM, ROB):
        a = _rules_claim(S, t, seat, row, best, cover)
    return _legal_or_first(row, a)


@_njit()
def _play_out_range(S, lo, hi, first, policy, done_out, max_steps, best):
    """Tables ``lo .. hi - 1`` played to the end of the deal; the first table that did not
    finish within ``max_steps`` decisions, or -1."""
    cover = np.empty((3, 12), np.int64)  # scratch of the greedy and rules policies
    for t in range(lo, hi):
        ek._step_table(S, _i(t), _i(first[t]), False, done_out)
        for _ in range(max_steps):
            if S.done[t]:
                break
            a = _policy_action(S, _i(t), policy, best, cover)
            ek._step_table(S, _i(t), _i(a), False, done_out)
        if not S.done[t]:
            return t
    return -1


@_njit()
def _play_out(bag, first, policy, done_out, max_steps, best):
    return _play_out_range(bag, _i(0), _i(first.shape[0]), first, policy, done_out,
                           max_steps, best)


@_njit(parallel=True)
def _play_out_threads(bags, bounds, firsts, policy, dones, max_steps, bests, bad):
    """:func:`_play_out_range` on ``len(bags)`` threads: thread ``w`` plays tables
    ``bounds[w] .. bounds[w + 1] - 1`` through ``bags[w]``, reading ``firsts[w]``,
    ``dones[w]`` and ``bests[w]`` (each thread's own views of the same arrays, as in
    ``engine_kernels.step_bags_parallel``). A table reads and writes only its own rows,
    so every table ends as it would on one thread."""
    for w in prange(len(bags)):
        bad[w] = _play_out_range(bags[w], _i(bounds[w]), _i(bounds[w + 1]), firsts[w],
                                 policy, dones[w], max_steps, bests[w])


@_njit(inline="always")
def _policy_action(S, t, policy, best, cover):
    if policy == POLICY_RANDOM:
        return random_action(S, t)
    if policy == POLICY_GREEDY:
        return greedy_action(S, t, best, cover)
    if policy == POLICY_RULES:
        return rules_action(S, t, best, cover)
    return waits_action(S, t)


@_njit()
def policy_actions(bag, rows, policy, best):
    """The policy's actions at tables ``rows`` (for the tests)."""
    out = np.empty(rows.shape[0], np.int64)
    cover = np.empty((3, 12), np.int64)
    for i in range(rows.shape[0]):
        out[i] = _policy_action(bag, _i(rows[i]), policy, best, cover)
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


def _outputs(B: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A step log, its lengths and a rewards array for ``B`` tables (the kernels' outputs)."""
    return (np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32), np.zeros(B, np.int32),
            np.zeros((B, 4), np.float32))


def _bag(state: State) -> Any:
    return ek.state_bag(*engine.kernel_rule_args(state.rules), *_outputs(state.batch_size),
                        *state.arrays())


_BEST: list[np.ndarray] = []


def _best() -> np.ndarray:
    """The shanten tables' per-suit covers (what the ``greedy`` policy reads)."""
    if not _BEST:
        _BEST.append(np.ascontiguousarray(load_tables()["best"]))
    return _BEST[0]


def policy_code(name: str) -> int:
    """The kernel code of a rollout policy name (``ValueError`` naming the known ones)."""
    if name not in ROLLOUT_POLICIES:
        raise ValueError(f"unknown rollout policy {name!r}; known: {', '.join(ROLLOUT_POLICIES)}")
    return ROLLOUT_POLICIES.index(name)


def choose_actions(state: State, rows: np.ndarray, policy: str = "waits") -> np.ndarray:
    """(n,) the rollout policy's actions for the seats to decide at tables ``rows``."""
    rows = np.ascontiguousarray(rows, np.int64)
    return policy_actions(_bag(state), rows, policy_code(policy), _best())


def play_out(state: State, first: np.ndarray, policy: str = "waits", threads: int = 1
             ) -> np.ndarray:
    """Apply ``first[i]`` (a legal action) at table ``i``, play every table to the end of
    the deal with the rollout policy (in place), and return the (B, 4) points of the
    deal. The state's rules must end a match after one deal (``deals_per_match=1``).
    ``threads`` > 1 splits the tables among that many of numba's threads (at most
    ``NUMBA_NUM_THREADS``); every table ends as it does on one thread."""
    if state.rules.deals_per_match != 1:
        raise ValueError("play_out needs rules with deals_per_match=1 (one deal per table)")
    first = np.ascontiguousarray(first, np.int64)
    if first.shape != (state.batch_size,):
        raise ValueError(f"expected {state.batch_size} first actions, got shape {first.shape}")
    engine.check_threads(threads)
    done = np.zeros(state.batch_size, bool)
    k = min(threads, state.batch_size)
    if k <= 1:
        bad = _play_out(_bag(state), first, policy_code(policy), done, 10_000, _best())
    else:
        bags, bounds = engine.parallel_bags(state, k, *_outputs(state.batch_size))
        worst = np.full(k, -1, np.int64)
        before = numba.get_num_threads()
        numba.set_num_threads(k)
        try:
            _play_out_threads(bags, bounds, tuple(first.view() for _ in range(k)),
                              policy_code(policy), tuple(done.view() for _ in range(k)),
                              10_000, tuple(_best().view() for _ in range(k)), worst)
        finally:
            numba.set_num_threads(before)
        bad = int(worst.max())
    if bad >= 0:  # pragma: no cover - a deal ends within a few hundred decisions
        raise RuntimeError(f"table {bad} did not finish its deal")
    return state.scores.copy()


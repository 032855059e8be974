"""The engine's rules as compiled kernels: a per-table state machine over the state arrays.

Every transition is written once, for one table ``t``, with scalar reads and writes on the
arrays of :class:`~sichuan_env.core.state.State`; the entry kernels loop over the tables. A
batch of one table and a batch of thousands run the same code, so a table never depends
on its batch. The state arrays, the rule options, hand lookups and the step's outputs
travel inside compiled code as one StructRef (a :class:`StateBag`, ``S`` in the helpers);
see the section "bags" below. The hot helpers are inlined (``inline="always"``).

The entry kernels take the state arrays as trailing positional arguments in the order of
``State._fields`` (without ``rules``) and build the bag inside (or take the bag itself);
the rule options come as :data:`RULE_FIELDS` in an int64 array and the hand lookups as the
arrays of :class:`~sichuan_env.core.hand_kernels.HandTables`.

Each seat's wait bits (``waits``: which kinds would complete its standing hand) are kept
in the state and recomputed whenever its concealed hand, melds or void change (the deal,
the void choice, a discard, a kong); a claim window's Hu checks and a self-drawn Hu after
a draw are bit tests on them (:func:`_wins_on`). ``engine.legal_mask`` (:func:`masks`) computes
the self-drawn Hu from the hand instead, so the tests compare the two.

An event index (of a payment or win) counts the step's LOG_EVENT rows: 0 is the decision,
-1 the seat's decision in an earlier step (see :func:`_event_of`).

What happens during a step is written to a per-table log (``log`` (B, LOG_SIZE, LOG_WIDTH)
int32, ``log_len`` (B,)): one row per entry, column 0 the entry type (``LOG_*``):

=============  ==============================================================
``LOG_EVENT``  seat, action, auto (1 for a forced move)
``LOG_PAY``    from, to (-1 nobody), points, reason (index in PAY_REASONS), the seat
               whose decision it follows (-1: the wall-end settlement), its event
``LOG_WIN``    seat, tile, from (-1 self-drawn), value, its event, then 10 fans
``LOG_SETTLE`` flower pigs and ready seats, as 4-bit sets (the settlement starts)
``LOG_END``    end reason, next dealer
``LOG_DEAL``   (the next deal of the match was dealt)
=============  ==============================================================
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.experimental import structref

from sichuan_env.core import hand_kernels as hk
from sichuan_env.core import seeding
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
from sichuan_env.core.jit import njit, prange
from sichuan_env.core.seeding import GOLDEN
from sichuan_env.core.state import (
    ANS_HU,
    ANS_KONG,
    ANS_NONE,
    ANS_PASS,
    ANS_PUNG,
    CLAIM,
    CONCEALED_KONG,
    DONE,
    END_THREE_HU,
    END_WALL,
    OPT_HU,
    OPT_KONG,
    OPT_PUNG,
    POSTPONED_KONG,
    PROMOTED_KONG,
    ROB,
    TURN,
    VOID,
    WALL_SIZE,
    State,
)
from sichuan_env.core.state import MELDED_KONG as MELD_MELDED_KONG
from sichuan_env.core.state import PUNG as MELD_PUNG

ARRAY_FIELDS = State._fields[:-1]

RULE_FIELDS = ("fan_cap", "strict_void", "self_draw_bonus", "flower_pig_penalty",
               "deals_per_match")
R_FAN_CAP, R_STRICT_VOID, R_BONUS, R_PIG, R_DEALS = range(5)

PAY_REASONS = ("hu", "self_drawn_hu", "concealed_kong", "melded_kong", "promoted_kong",
               "kong_refund", "ready", "flower_pig")
PAY_HU, PAY_SELF_DRAWN, PAY_CONCEALED, PAY_MELDED, PAY_PROMOTED, PAY_REFUND, PAY_READY, \
    PAY_PIG = range(8)

LOG_EVENT, LOG_PAY, LOG_WIN, LOG_SETTLE, LOG_END, LOG_DEAL = range(1, 7)
LOG_SIZE = 64  # entries per table and step (a step makes at most about 45)
LOG_WIDTH = 16
UNSETTLED = 1 << 20  # log_len of a table whose automatic moves did not settle
FAN0 = 6  # first fan column of a LOG_WIN row

_U = np.uint64
# the deal's hash: the one definition of seeding, compiled
splitmix_word = njit(inline="always")(seeding.splitmix_word)
# Arguments passed between kernels are cast to these types (``_i``: int64) or are these
# typed constants: numba compiles a function once per distinct argument types, and a plain
# literal or int8 array read would each make another copy.
_i = np.int64
_NO = np.bool_(False)
_YES = np.bool_(True)

# [wall has a tile, copies the claimer holds] -> the OPT_* bits of a discard claim
CLAIM_OPTS = np.array([[0, 0, OPT_PUNG, OPT_PUNG, OPT_PUNG],
                       [0, 0, OPT_PUNG, OPT_PUNG | OPT_KONG, OPT_PUNG]], np.int8)
# [30 * void kind + 5 * meld code + standing copies] -> a kong of that kind may be declared
KONG_OK = np.array([(h == 4 and not v) or (m == MELD_PUNG and h >= 1)
                    for v in range(2) for m in range(6) for h in range(5)])


def _next_non_hu_table() -> np.ndarray:
    """[16 * seat + Hu bits] -> the first seat after ``seat`` (counter-clockwise, seat
    itself last) that has not won; seat + 1 when every seat has won."""
    out = np.zeros(64, np.int8)
    for seat in range(4):
        for bits in range(16):
            cand = [(seat + i) % 4 for i in range(1, 5)]
            ok = [not (bits >> c) & 1 for c in cand]
            out[16 * seat + bits] = cand[ok.index(True)] if any(ok) else cand[0]
    return out


NEXT_NON_HU = _next_non_hu_table()
ANSWER_OF_ACTION = np.zeros(N_ACTIONS, np.int8)
ANSWER_OF_ACTION[[PASS, PUNG, MELDED_KONG, HU]] = [ANS_PASS, ANS_PUNG, ANS_KONG, ANS_HU]

# ----------------------------------------------------------------------------- bags
# Inside compiled code the state arrays travel as one StructRef (a "bag" holding references
# to the arrays, not copies), never as a tuple of 42 arrays: numba counts references of
# every array in a tuple each time the tuple is passed to a helper or copied (two atomic
# operations per array), which cost more than the rules themselves. A bag costs one count
# per helper call (an inlined helper too: its argument is a new reference) -- so the rule
# options, hand lookups and the step's outputs (log, rewards) ride in the same bag: one
# object per helper, not two (that halved the counting, a fifth of a large-batch step).
# :mod:`sichuan_env.core.engine` also keeps the bag of a State it steps in place, so that its
# arrays cross into compiled code as one object (unboxing costs about 65 ns an array);
# each step puts that step's log and rewards arrays into it.


@structref.register
class StateBagType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class StateBag(structref.StructRefProxy):
    """The context (:data:`CTX_FIELDS`) and the arrays of one State (not copies), as one
    argument of a compiled call."""


RULE_BAG_FIELDS = ("rules", "flags3", "complete", "packed", "shift", "mask", "mask7")
CTX_FIELDS = (*RULE_BAG_FIELDS, "log", "log_len", "rewards")
BAG_FIELDS = (*CTX_FIELDS, *ARRAY_FIELDS)
structref.define_proxy(StateBag, StateBagType, list(BAG_FIELDS))


@njit
def state_bag(rules, flags3, complete, packed, shift, mask, mask7, log, log_len, rewards,
              *arrays):
    """A :class:`StateBag`: the rule options and hand lookups, a step log and rewards
    array (replaced by each step), then the state arrays (in ``State._fields`` order)."""
    return StateBag(rules, flags3, complete, packed, shift, mask, mask7, log, log_len,
                    rewards, *arrays)


@njit
def _bag_without_log(rules, flags3, complete, packed, shift, mask, mask7, arrays):
    return StateBag(rules, flags3, complete, packed, shift, mask, mask7,
                    np.zeros((1, 1, LOG_WIDTH), np.int32), np.zeros(1, np.int32),
                    np.zeros((1, 4), np.float32), *arrays)


@njit(inline="always")
def _use_outputs(S, log, log_len, rewards):
    """Point the bag's step outputs at this step's arrays."""
    S.log = log
    S.log_len = log_len
    S.rewards = rewards


# ----------------------------------------------------------------------------- small parts


@njit(inline="always")
def _holds_void_tile(S, t, seat):
    """Whether ``seat`` of table ``t`` still holds a tile of its forbidden suit."""
    vd = S.void[t, seat]
    if vd >= 0:
        for k in range(9 * vd, 9 * vd + 9):
            if S.hand[t, seat, k] > 0:
                return True
    return False


@njit(inline="always")
def _log(S, t, typ, a, b, c, d):
    n = S.log_len[t]
    if n < S.log.shape[1]:
        row = S.log[t, n]
        row[0] = typ
        row[1] = a
        row[2] = b
        row[3] = c
        row[4] = d
        row[5] = 0
    S.log_len[t] = n + 1
    return n


@njit(inline="always")
def _event_of(S, t, n, cause):
    """The event of this step (index among its LOG_EVENT rows before row n) that a payment
    or win following a decision of seat ``cause`` belongs to: the step's decision when
    ``cause`` made it, the latest event for the settlement (``cause`` -1), else -1 (the
    seat's claim answered in an earlier step of the window)."""
    ne = 0
    first_seat = -1
    for j in range(min(n, S.log.shape[1])):
        if S.log[t, j, 0] == LOG_EVENT:
            if ne == 0:
                first_seat = S.log[t, j, 1]
            ne += 1
    if cause < 0:
        return ne - 1
    return 0 if (ne > 0 and first_seat == cause) else -1


@njit(inline="always")
def _pay(S, t, frm, to, points, reason, cause):
    """``frm`` pays ``points`` to ``to`` (-1: to nobody) because of a decision of seat
    ``cause`` (-1: the wall-end settlement)."""
    if points == 0:
        return
    S.scores[t, frm] -= points
    S.rewards[t, frm] -= points
    if to >= 0:
        S.scores[t, to] += points
        S.rewards[t, to] += points
    n = _log(S, t, _i(LOG_PAY), _i(frm), _i(to), _i(points), _i(reason))
    if n < S.log.shape[1]:
        S.log[t, n, 5] = cause
        S.log[t, n, 6] = _event_of(S, t, n, cause)


@njit(inline="always")
def _wall_left(S, t):
    return _i(S.wall_back[t]) - _i(S.wall_front[t])


@njit(inline="always")
def _hu_bits(S, t):
    bits = 0
    for s in range(4):
        if S.hu[t, s]:
            bits |= 1 << s
    return bits


@njit(inline="always")
def _n_hu(S, t):
    n = 0
    for s in range(4):
        if S.hu[t, s]:
            n += 1
    return n


@njit(inline="always")
def _next_non_hu(S, t, seat):
    return _i(NEXT_NON_HU[16 * seat + _hu_bits(S, t)])


@njit(inline="always")
def _n_melds(S, t, s):
    n = 0
    for k in range(27):
        if S.meld[t, s, k] != 0:
            n += 1
    return n


@njit
def _refresh_waits(S, t, s):
    """Recompute ``waits`` of seat s (after its concealed hand, melds or void changed):
    :func:`hand_kernels.wait_bits` of its hand, read here in place (no slice). Not inlined:
    it is called from many places, and inlined everywhere it made the first compile
    about a quarter longer."""
    hand = S.hand
    meld = S.meld
    c0 = 0
    c1 = 0
    c2 = 0
    p = 1
    n_melds = 0
    for r in range(9):
        c0 += _i(hand[t, s, r]) * p
        c1 += _i(hand[t, s, 9 + r]) * p
        c2 += _i(hand[t, s, 18 + r]) * p
        p *= 5
        n_melds += (1 if meld[t, s, r] != 0 else 0) + (1 if meld[t, s, 9 + r] != 0 else 0) + (
            1 if meld[t, s, 18 + r] != 0 else 0)
    S.waits[t, s] = hk.wait_bits_of_codes(S.packed, S.shift, S.mask, S.mask7, c0, c1, c2,
                                          n_melds, _i(S.void[t, s]))


@njit(inline="always")
def _wins_on(S, t, s, k):
    """Seat s's standing hand plus one tile of kind k wins (from the cached ``waits``)."""
    return (S.waits[t, s] >> k) & 1 != 0


@njit(inline="always")
def _self_drawn_complete(S, t, seat, vd, cached):
    """The 14-tile hand of ``seat`` (the seat in its turn) is complete. With ``cached``
    and a drawn tile, read from ``waits`` (of the hand without that tile)."""
    d = S.drawn_tile[t]
    if cached and d >= 0:
        return _wins_on(S, t, seat, d)
    return hk.is_complete(S.flags3, S.complete, S.hand[t, seat], -1, _n_melds(S, t, seat), vd)


# ----------------------------------------------------------------------------- dealing


@njit
def stable_order(keys):
    """``np.argsort(keys, kind="stable")`` of a uint64 array, for the 108 keys of a deal: a
    counting sort by the top byte, then an insertion sort (both stable) that only has to
    fix the few pairs sharing a top byte. Several times faster than numba's mergesort at
    this size, and the same order (a stable sort's order is unique)."""
    n = keys.shape[0]
    start = np.zeros(257, np.int64)
    for i in range(n):
        start[_i(keys[i] >> _U(56)) + 1] += 1
    for b in range(256):
        start[b + 1] += start[b]
    order = np.empty(n, np.int64)
    for i in range(n):
        b = _i(keys[i] >> _U(56))
        order[start[b]] = i
        start[b] += 1
    for i in range(1, n):
        o = order[i]
        key = keys[o]
        j = i
        while j > 0 and keys[order[j - 1]] > key:
            order[j] = order[j - 1]
            j -= 1
        order[j] = o
    return order


@njit
def _reset_deal_fields(S, t, dealer):
    S.wall[t, :] = -1
    S.wall_front[t] = 0
    S.wall_back[t] = WALL_SIZE
    S.hand[t, :, :] = 0
    S.set_aside[t, :] = -1
    S.void[t, :] = -1
    S.waits[t, :] = 0
    S.void_revealed[t, :] = False
    S.meld[t, :, :] = 0
    S.river[t, :, :] = -1
    S.river_len[t, :] = 0
    S.live_discards[t, :] = 0
    S.won_tiles[t, :] = 0
    S.hu[t, :] = False
    S.hu_tile[t, :] = -1
    S.hu_rank[t, :] = -1
    S.hu_from[t, :] = -1
    S.scores[t, :] = 0
    S.nonvoid_discard[t, :] = False
    S.kong_income[t, :, :] = 0
    S.turn_kong_paid[t, :] = 0
    S.passed_hu[t, :] = 0
    S.phase[t] = VOID
    S.current[t] = 0
    S.active[t] = dealer
    S.claim_tile[t] = -1
    S.claim_opts[t, :] = 0
    S.claim_value[t, :] = 0
    S.claim_answer[t, :] = 0
    S.drawn_tile[t] = -1
    S.drawn_replacement[t] = False
    S.after_pung[t] = False
    S.kong_this_turn[t] = False
    S.shoot_flag[t] = False
    S.dealer[t] = dealer
    S.next_dealer[t] = dealer
    S.done[t] = False


@njit
def _deal(S, t, dealer):
    """Deal (key, episode, deal_index) of table t with ``dealer``: the stable argsort of
    108 hashed sort keys is the tile order; seat ``dealer + i`` gets tiles ``13 i`` to
    ``13 i + 12``, the dealer also tile 52, tiles 53.. are the wall in draw order."""
    salt = _U(S.episode[t]) * _U(0x100000) + _U(S.deal_index[t])
    base = splitmix_word(_U(S.key[t]) ^ splitmix_word(salt))
    sort_keys = np.empty(108, np.uint64)
    for i in range(108):
        sort_keys[i] = splitmix_word(base + _U(i) * GOLDEN)
    order = stable_order(sort_keys)
    _reset_deal_fields(S, t, dealer)
    for i in range(4):
        seat = (dealer + i) % 4
        for j in range(13 * i, 13 * i + 13):
            S.hand[t, seat, order[j] // 4] += 1
    S.hand[t, dealer, order[52] // 4] += 1
    for j in range(53, 108):
        S.wall[t, j - 53] = order[j] // 4
    for s in range(4):
        _refresh_waits(S, t, s)


@njit
def _new_match(S, t):
    S.episode[t] += 1
    S.deal_index[t] = 0
    S.match_scores[t, :] = 0
    S.end_reason[t] = 0
    _deal(S, t, _i(0))


# ----------------------------------------------------------------------------- legal mask


@njit(inline="always")
def _held_bits(S, t, seat):
    """Bit k set: ``seat`` of table ``t`` holds a tile of kind k (standing concealed hand).
    A loop of loads only (no stores), so the compiler keeps the array in registers."""
    hand = S.hand
    bits = 0
    for k in range(27):
        bits |= (1 if hand[t, seat, k] > 0 else 0) << k
    return bits


@njit(inline="always")
def _kong_bits(S, t, seat, vd):
    """Bit k set: ``seat`` (void suit ``vd``) may declare a kong of kind k by its hand and
    melds (:data:`KONG_OK`; the wall and the turn are not asked)."""
    hand = S.hand
    meld = S.meld
    bits = 0
    for s in range(3):
        v = 30 if s == vd else 0
        for r in range(9):
            k = 9 * s + r
            ok = KONG_OK[v + 5 * meld[t, seat, k] + hand[t, seat, k]]
            bits |= (1 if ok else 0) << k
    return bits


@njit(inline="always")
def _suit_bits(bits, suit):
    """The 9 bits of ``bits`` of suit 0..2 (0 for suit -1), at their place."""
    if suit < 0:
        return 0
    return bits & (0x1FF << (9 * suit))


_HI0 = KONG  # the second word of _legal_words holds actions KONG .. N_ACTIONS - 1
_KONG_WORD = (1 << 27) - 1  # the kong actions' bits in that word


@njit(inline="always")
def _legal_words(S, t, cached, kongs, hu):
    """What seat ``current`` of table t may do: the one definition of a legal action, as
    two bit sets: bit a of the first word for actions a < KONG (discards, void tiles, void
    suits), bit a - KONG of the second for the others (kongs, pung, kong, Hu, pass).
    With ``cached`` a self-drawn Hu is read from ``waits``; without, computed from the
    hand. In a turn, the kongs are worked out only with ``kongs`` and the self-drawn Hu
    only with ``hu`` (their bits stay 0 otherwise: a check of one action asks only for
    what it needs). Finished tables (and any other phase) may do nothing."""
    ph = S.phase[t]
    seat = _i(S.current[t])
    lo = 0
    hi = 0
    if ph == VOID:
        held = _held_bits(S, t, seat)
        lo = held << VOID_TILE
        for s in range(3):
            if _suit_bits(held, s) == 0:
                lo |= 1 << (VOID_SUIT + s)
    elif ph == TURN:
        vd = _i(S.void[t, seat])
        held = _held_bits(S, t, seat)
        void_held = _suit_bits(held, vd)
        has_void = void_held != 0
        sa = _i(S.set_aside[t, seat])
        if sa >= 0:
            lo = 1 << sa
        elif has_void and S.rules[R_STRICT_VOID] != 0:
            lo = void_held
        else:
            lo = held
        after_pung = S.after_pung[t]
        if kongs and not after_pung and _wall_left(S, t) >= 1:
            hi = _kong_bits(S, t, seat, vd)
        if hu and not (after_pung or sa >= 0 or has_void) and _self_drawn_complete(
                S, t, seat, vd, cached):
            hi |= 1 << (HU - _HI0)
    elif ph in (CLAIM, ROB):
        opts = S.claim_opts[t, seat]
        if opts & OPT_HU:
            hi |= 1 << (HU - _HI0)
        if opts & OPT_PUNG:
            hi |= 1 << (PUNG - _HI0)
        if opts & OPT_KONG:
            hi |= 1 << (MELDED_KONG - _HI0)
        hi |= 1 << (PASS - _HI0)
    return lo, hi


@njit(inline="always")
def _fill_mask(S, t, row, cached):
    """The legal actions of seat ``current`` on table t (:func:`_legal_words`) into
    ``row`` (88,) bool. The state is read first (into bit sets), then the row written:
    reads and stores interleaved would make the compiler reload the arrays after every
    store."""
    lo, hi = _legal_words(S, t, cached, _YES, _YES)
    for a in range(_HI0):
        row[a] = (lo >> a) & 1 != 0
    for a in range(_HI0, N_ACTIONS):
        row[a] = (hi >> (a - _HI0)) & 1 != 0


@njit(inline="always")
def _can_kong(S, t):
    """The seat to act on a TURN table may declare some kong (:func:`_legal_words`)."""
    return _legal_words(S, t, _YES, _YES, _NO)[1] & _KONG_WORD != 0


# ----------------------------------------------------------------------------- transitions


@njit(inline="always")
def _begin_turn(S, t, seat):
    """A turn with no draw yet (dealer's initial turn, or after a claim)."""
    S.phase[t] = TURN
    S.current[t] = seat
    S.active[t] = seat
    S.drawn_tile[t] = -1
    S.drawn_replacement[t] = False
    S.after_pung[t] = False
    S.kong_this_turn[t] = False
    S.turn_kong_paid[t, :] = 0
    S.shoot_flag[t] = False


@njit
def _hu_fans(S, t, s, tile, self_drawn_tile, after_kong, shoot, robbing, sea, fans):
    """Fans and value of seat s's Hu; ``tile`` is added to the hand (-1: already in it)."""
    meld = np.empty(27, np.int8)
    for k in range(27):
        meld[k] = min(S.meld[t, s, k], 2)
    total = hk.fans(S.hand[t, s], tile, meld, after_kong, shoot, robbing, sea, fans)
    return hk.value_of(total, S.rules[R_FAN_CAP])


@njit(inline="always")
def _log_win(S, t, seat, tile, frm, value, fans):
    n = _log(S, t, _i(LOG_WIN), _i(seat), _i(tile), _i(frm), _i(value))
    if n < S.log.shape[1]:
        S.log[t, n, 5] = _event_of(S, t, n, _i(seat))
        for i in range(10):
            S.log[t, n, FAN0 + i] = fans[i]


@njit(inline="always")
def _open_window(S, t, d, tile, robbing):
    """Offer ``tile`` (discarded, or added to a kong by d) to the other seats."""
    wall_left = _wall_left(S, t)
    suit = tile // 9
    for s in range(4):
        opts = 0
        value = 0
        eligible = s != d and not S.hu[t, s] and S.void[t, s] != suit
        if eligible:
            if not robbing:
                opts = CLAIM_OPTS[1 if wall_left >= 1 else 0, S.hand[t, s, tile]]
            if S.set_aside[t, s] < 0 and _wins_on(S, t, s, tile):
                fans = np.empty(10, np.int32)
                shoot = S.shoot_flag[t] and not robbing
                value = _hu_fans(S, t, s, tile, _NO, _NO, shoot, robbing, wall_left == 0, fans)
                passed = S.passed_hu[t, s]
                if passed == 0 or value > passed:
                    opts |= OPT_HU
        S.claim_opts[t, s] = opts
        S.claim_value[t, s] = value
        S.claim_answer[t, s] = ANS_NONE
    S.claim_tile[t] = tile
    S.active[t] = d
    S.current[t] = d
    S.phase[t] = ROB if robbing else CLAIM


@njit(inline="always")
def _discard(S, t, seat, k):
    if S.set_aside[t, seat] >= 0:
        S.set_aside[t, seat] = -1
    else:
        S.hand[t, seat, k] -= 1
    S.void_revealed[t, seat] = True
    pos = S.river_len[t, seat]
    S.river[t, seat, pos] = k
    S.river_len[t, seat] = pos + 1
    S.live_discards[t, k] += 1
    if k // 9 != S.void[t, seat]:
        S.nonvoid_discard[t, seat] = True
    S.shoot_flag[t] = S.kong_this_turn[t]
    _refresh_waits(S, t, seat)
    _open_window(S, t, seat, k, _NO)


@njit(inline="always")
def _draw(S, t, seat):
    """Seat draws from the front to start its turn; an empty wall ends the deal."""
    if _wall_left(S, t) <= 0:
        _end_deal(S, t, _i(END_WALL))
        return
    _begin_turn(S, t, seat)
    front = S.wall_front[t]
    tile = S.wall[t, front]
    S.wall_front[t] = front + 1
    S.hand[t, seat, tile] += 1
    S.drawn_tile[t] = tile
    S.passed_hu[t, seat] = 0


@njit(inline="always")
def _replacement(S, t, seat):
    """Kong replacement from the back of the wall (a kong needs one, so it exists)."""
    S.wall_back[t] -= 1
    tile = S.wall[t, S.wall_back[t]]
    S.hand[t, seat, tile] += 1
    S.drawn_tile[t] = tile
    S.drawn_replacement[t] = True
    S.passed_hu[t, seat] = 0
    S.phase[t] = TURN
    S.current[t] = seat
    S.active[t] = seat


@njit(inline="always")
def _pay_from_others(S, t, seat, points, reason, kong):
    """Every non-Hu seat other than ``seat`` pays ``points``; with ``kong`` the payments
    count as kong income of ``seat`` (and the turn's kong flag is set)."""
    for s in range(4):
        if s != seat and not S.hu[t, s]:
            _pay(S, t, _i(s), _i(seat), _i(points), _i(reason), _i(seat))
            if kong:
                S.kong_income[t, s, seat] += points
                S.turn_kong_paid[t, s] += points
    if kong:
        S.kong_this_turn[t] = True


@njit
def _own_kong(S, t, seat, k):
    if S.hand[t, seat, k] == 4:
        S.hand[t, seat, k] = 0
        S.meld[t, seat, k] = CONCEALED_KONG
        _refresh_waits(S, t, seat)
        _pay_from_others(S, t, seat, _i(2), _i(PAY_CONCEALED), _YES)
        _replacement(S, t, seat)
    else:
        S.hand[t, seat, k] -= 1
        _refresh_waits(S, t, seat)
        _open_window(S, t, seat, k, _YES)


@njit
def _complete_added_kong(S, t):
    """Nobody robbed: the pung becomes a promoted or postponed kong."""
    seat = _i(S.active[t])
    k = _i(S.claim_tile[t])
    promoted = S.drawn_tile[t] == k
    S.meld[t, seat, k] = PROMOTED_KONG if promoted else POSTPONED_KONG
    _pay_from_others(S, t, seat, 1 if promoted else 0, _i(PAY_PROMOTED), _YES)
    S.claim_tile[t] = -1
    _replacement(S, t, seat)


@njit
def _self_drawn_hu(S, t, seat):
    drawn = _i(S.drawn_tile[t])
    had_draw = drawn >= 0
    if had_draw:
        win = drawn
    else:
        win = 0
        for k in range(27):
            if S.hand[t, seat, k] > S.hand[t, seat, win]:
                win = k
    fans = np.empty(10, np.int32)
    after_kong = S.drawn_replacement[t] and had_draw
    sea = _wall_left(S, t) == 0 and had_draw
    value = _hu_fans(S, t, seat, _i(-1), _YES, after_kong, _NO, _NO, sea, fans)
    _log_win(S, t, seat, win, -1, value, fans)
    _pay_from_others(S, t, seat, value + S.rules[R_BONUS], _i(PAY_SELF_DRAWN), _NO)
    S.hand[t, seat, win] -= 1
    S.won_tiles[t, win] += 1
    n = _n_hu(S, t)
    if n == 0:
        S.next_dealer[t] = seat
    S.hu_rank[t, seat] = n
    S.hu[t, seat] = True
    S.hu_tile[t, seat] = win
    S.hu_from[t, seat] = seat
    if n + 1 >= 3:
        _end_deal(S, t, _i(END_THREE_HU))
    else:
        _draw(S, t, _next_non_hu(S, t, seat))


@njit
def _discard_hu(S, t, robbing):
    """Hu on a discard (or on a robbed kong tile): the discarder pays each winner."""
    d = _i(S.active[t])
    tile = _i(S.claim_tile[t])
    wall_left = _wall_left(S, t)
    shoot = S.shoot_flag[t] and not robbing
    fans = np.empty(10, np.int32)
    n_win = 0
    single = -1
    last_offset = 0
    for s in range(4):
        if S.claim_answer[t, s] == ANS_HU:
            value = _hu_fans(S, t, s, tile, _NO, _NO, shoot, robbing, wall_left == 0, fans)
            _log_win(S, t, s, tile, d, value, fans)
            n_win += 1
            single = s
            last_offset = max(last_offset, (s - d) % 4)
    for s in range(4):
        if S.claim_answer[t, s] == ANS_HU:
            _pay(S, t, d, _i(s), _i(S.claim_value[t, s]), _i(PAY_HU), _i(s))
    if shoot:
        first = -1  # the first winner asked: its Hu is the event the refund belongs to
        for i in range(1, 4):
            if first < 0 and S.claim_answer[t, (d + i) % 4] == ANS_HU:
                first = (d + i) % 4
        for s in range(4):
            refund = _i(S.turn_kong_paid[t, s])
            _pay(S, t, _i(d), _i(s), _i(refund), _i(PAY_REFUND), _i(first))
            S.kong_income[t, s, d] -= refund
        S.turn_kong_paid[t, :] = 0
    if not robbing:
        S.live_discards[t, tile] -= 1
    S.won_tiles[t, tile] += 1
    rank = _n_hu(S, t)
    if rank == 0:
        S.next_dealer[t] = single if n_win == 1 else d
    for s in range(4):
        if S.claim_answer[t, s] == ANS_HU:
            S.hu[t, s] = True
            S.hu_tile[t, s] = tile
            S.hu_rank[t, s] = rank
            S.hu_from[t, s] = d
    S.claim_tile[t] = -1
    last = (d + last_offset) % 4
    if rank + n_win >= 3:
        _end_deal(S, t, _i(END_THREE_HU))
    elif wall_left <= 0:
        _end_deal(S, t, _i(END_WALL))
    else:
        _draw(S, t, _next_non_hu(S, t, last))


@njit
def _resolve_window(S, t):
    """Every asked seat has answered: apply Hu, else pung/kong, else pass."""
    robbing = S.phase[t] == ROB
    asked = False
    for s in range(4):
        if S.claim_answer[t, s] != ANS_NONE:
            asked = True
    if not asked:  # nobody was asked: nothing declined, nothing claimed
        if robbing:
            _complete_added_kong(S, t)
        else:
            S.claim_tile[t] = -1
            _draw(S, t, _next_non_hu(S, t, _i(S.active[t])))
        return
    any_hu = False
    pung = -1
    kong = -1
    for s in range(4):
        ans = S.claim_answer[t, s]
        if (S.claim_opts[t, s] & OPT_HU) != 0 and ans != ANS_HU:
            S.passed_hu[t, s] = max(S.passed_hu[t, s], S.claim_value[t, s])
        if ans == ANS_HU:
            any_hu = True
        elif ans == ANS_PUNG and pung < 0:
            pung = s
        elif ans == ANS_KONG and kong < 0:
            kong = s
    if any_hu:
        _discard_hu(S, t, robbing)
        return
    if robbing:
        _complete_added_kong(S, t)
        return
    d = _i(S.active[t])
    tile = _i(S.claim_tile[t])
    S.claim_tile[t] = -1
    if pung >= 0:
        S.hand[t, pung, tile] -= 2
        S.meld[t, pung, tile] = MELD_PUNG
        S.live_discards[t, tile] -= 1
        _begin_turn(S, t, pung)
        S.after_pung[t] = True
    elif kong >= 0:
        S.hand[t, kong, tile] -= 3
        S.meld[t, kong, tile] = MELD_MELDED_KONG
        _refresh_waits(S, t, kong)
        S.live_discards[t, tile] -= 1
        _begin_turn(S, t, kong)
        _pay(S, t, _i(d), _i(kong), _i(2), _i(PAY_MELDED), _i(kong))
        S.kong_income[t, d, kong] += 2
        S.turn_kong_paid[t, d] += 2
        S.kong_this_turn[t] = True
        _replacement(S, t, kong)
    else:
        _draw(S, t, _next_non_hu(S, t, d))


@njit(inline="always")
def _advance(S, t):
    """Run everything that needs no decision until table t waits for one: settle a claim
    window whose answers are all in (or ask the next seat), make the forced discard of a
    set-aside tile."""
    for _ in range(1000):
        ph = S.phase[t]
        if ph in (CLAIM, ROB):
            d = _i(S.active[t])
            nxt = -1
            for i in range(1, 4):
                s = (d + i) % 4
                if S.claim_opts[t, s] != 0 and S.claim_answer[t, s] == ANS_NONE:
                    nxt = s
                    break
            if nxt >= 0:
                S.current[t] = nxt
                return
            _resolve_window(S, t)
            ph = S.phase[t]
        if ph != TURN:
            return
        seat = _i(S.current[t])
        sa = _i(S.set_aside[t, seat])
        if sa < 0 or _can_kong(S, t):
            return
        _log(S, t, _i(LOG_EVENT), _i(seat), _i(DISCARD + sa), _i(1), _i(0))
        _discard(S, t, seat, sa)
    S.log_len[t] = UNSETTLED  # never reached: a deal ends after at most 4 forced discards


# ----------------------------------------------------------------------------- deal end


@njit
def _settle_wall(S, t):
    row = _log(S, t, _i(LOG_SETTLE), _i(0), _i(0), _i(0), _i(0))
    pig = np.zeros(4, np.bool_)
    ready = np.zeros(4, np.bool_)
    tmax = np.zeros(4, np.int64)
    meld = np.empty(27, np.int8)
    waits = np.empty(27, np.bool_)
    tables = (S.flags3, S.complete, S.packed, S.shift, S.mask, S.mask7)
    for s in range(4):
        if S.hu[t, s]:
            continue
        vd = S.void[t, s]
        p = S.set_aside[t, s] >= 0 or _holds_void_tile(S, t, s)
        pig[s] = p
        if p:
            continue
        for k in range(27):
            meld[k] = min(S.meld[t, s, k], 2)
        tmax[s] = hk.theoretical_max(tables, S.hand[t, s], meld, _i(vd),
                                     S.rules[R_FAN_CAP], waits)
        ready[s] = tmax[s] > 0
    if row < S.log.shape[1]:  # flower pigs and ready seats as bits
        for s in range(4):
            if pig[s]:
                S.log[t, row, 1] |= 1 << s
            if ready[s]:
                S.log[t, row, 2] |= 1 << s
    for f in range(4):
        if S.hu[t, f] or ready[f]:
            continue
        for r in range(4):
            if ready[r]:
                _pay(S, t, _i(f), _i(r), _i(tmax[r]), _i(PAY_READY), _i(-1))
    for s in range(4):
        if pig[s] and S.nonvoid_discard[t, s]:
            _pay(S, t, _i(s), _i(-1), _i(S.rules[R_PIG]), _i(PAY_PIG), _i(-1))
    # not-ready receivers return their kong income [payer, receiver]
    for r in range(4):
        if S.hu[t, r] or ready[r]:
            continue
        for f in range(4):
            back = _i(S.kong_income[t, f, r])
            if back:
                _pay(S, t, _i(r), _i(f), _i(back), _i(PAY_REFUND), _i(-1))
                S.kong_income[t, f, r] = 0


@njit
def _end_deal(S, t, reason):
    if reason == END_WALL:
        _settle_wall(S, t)
    S.end_reason[t] = reason
    _log(S, t, _i(LOG_END), _i(reason), _i(S.next_dealer[t]), _i(0), _i(0))
    for s in range(4):
        S.match_scores[t, s] += S.scores[t, s]
    if S.deal_index[t] + 1 < S.rules[R_DEALS]:
        S.deal_index[t] += 1
        _deal(S, t, _i(S.next_dealer[t]))
        _log(S, t, _i(LOG_DEAL), _i(0), _i(0), _i(0), _i(0))
    else:
        S.phase[t] = DONE
        S.done[t] = True


# ----------------------------------------------------------------------------- one step


@njit(inline="always")
def _apply(S, t, a):
    """Seat ``current`` of table t takes action a (legal), then everything automatic."""
    ph = S.phase[t]
    seat = _i(S.current[t])
    _log(S, t, _i(LOG_EVENT), _i(seat), _i(a), _i(0), _i(0))
    if ph == VOID:
        if a < VOID_SUIT:  # by setting a tile aside
            k = a - VOID_TILE
            S.hand[t, seat, k] -= 1
            S.set_aside[t, seat] = k
            S.void[t, seat] = k // 9
        else:
            S.void[t, seat] = a - VOID_SUIT
        _refresh_waits(S, t, seat)
        S.current[t] = seat + 1
        if seat == 3:
            _begin_turn(S, t, _i(S.dealer[t]))
    elif ph == TURN:
        if a < VOID_TILE:
            _discard(S, t, seat, a - DISCARD)
        elif KONG <= a < PUNG:
            _own_kong(S, t, seat, a - KONG)
        else:
            _self_drawn_hu(S, t, seat)
    else:
        S.claim_answer[t, seat] = ANSWER_OF_ACTION[a]
    _advance(S, t)


@njit(inline="always")
def _step_table(S, t, a, autoreset, done_out):
    S.log_len[t] = 0
    S.rewards[t, :] = 0
    if not S.done[t]:
        _apply(S, t, a)
    done_out[t] = S.done[t]
    if autoreset and S.done[t]:
        _new_match(S, t)
    _fill_mask(S, t, S.legal_action_mask[t], _YES)


@njit(inline="always")
def _action_legal(S, t, a):
    """Action ``a`` (0..87) is legal at table t: its bit in :func:`_legal_words` (the
    self-drawn Hu read from ``waits``)."""
    lo, hi = _legal_words(S, t, _YES, KONG <= a < KONG + 27, a == HU)
    if a < _HI0:
        return (lo >> a) & 1 != 0
    return (hi >> (a - _HI0)) & 1 != 0


@njit(inline="always")
def _first_illegal(S, actions):
    """Index of the first live table whose action is not legal, or -1. Legality is
    computed from the state (not read from the stored ``legal_action_mask``)."""
    return _first_illegal_range(S, actions, 0, actions.shape[0])


@njit
def _first_illegal_range(S, actions, lo, hi):
    """:func:`_first_illegal` over tables lo .. hi - 1."""
    for t in range(lo, hi):
        if S.done[t]:
            continue
        a = actions[t]
        if a < 0 or a >= N_ACTIONS or not _action_legal(S, t, a):
            return t
    return -1


@njit
def action_legal_rows(out, rules, flags3, complete, packed, shift, mask, mask7, *arrays):
    """``out`` (B, 88): :func:`_action_legal` of every table and action (for the tests,
    which compare it with :func:`masks`)."""
    S = _bag_without_log(rules, flags3, complete, packed, shift, mask, mask7, arrays)
    for t in range(out.shape[0]):
        for a in range(out.shape[1]):
            out[t, a] = _action_legal(S, t, a)


@njit
def _step_range(S, actions, lo, hi, autoreset, done_out):
    """Step tables lo .. hi - 1, one after another (the one copy of the whole step)."""
    for t in range(lo, hi):
        _step_table(S, _i(t), actions[t], autoreset, done_out)


@njit(inline="always")
def _log_overflow(S):
    for t in range(S.log_len.shape[0]):  # noqa: SIM110 - numba: no any() over a generator
        if S.log_len[t] > S.log.shape[1]:
            return True
    return False


@njit(inline="always")
def _step_all(S, actions, validate, autoreset, done_out):
    if validate:
        bad = _first_illegal(S, actions)
        if bad >= 0:
            return bad
    _step_range(S, actions, _i(0), _i(actions.shape[0]), autoreset, done_out)
    return -2 if _log_overflow(S) else -1


@njit
def step_serial(actions, validate, autoreset, done_out, rules, flags3, complete, packed, shift,
                mask, mask7, log, log_len, rewards, *arrays):
    """One step of every table, one after another. Returns the first illegal table (and
    changes nothing), -2 when a table's log overflowed, else -1."""
    S = StateBag(rules, flags3, complete, packed, shift, mask, mask7, log, log_len, rewards,
                 *arrays)
    return _step_all(S, actions, validate, autoreset, done_out)


@njit
def step_bag(actions, validate, autoreset, done_out, log, log_len, rewards, bag):
    """:func:`step_serial` with the state and rule arrays in a bag (:func:`state_bag`)."""
    _use_outputs(bag, log, log_len, rewards)
    return _step_all(bag, actions, validate, autoreset, done_out)


@njit(parallel=True)
def step_bags_parallel(actions, validate, autoreset, done_out, bags, bounds, logs, log_lens,
                       rewards):
    """:func:`step_bag` on ``len(bags)`` threads: thread ``w`` steps tables ``bounds[w] ..
    bounds[w + 1] - 1`` through ``bags[w]``. The bags (and ``logs``, ``log_lens``,
    ``rewards``) hold the same arrays, each through views of its own: a bag field read
    counts references on the array object it was built from, and threads counting on one
    object would take turns for its cache line (with one shared bag, 2 threads stepped
    slower than 1). A table's step reads and writes only its own rows (of the state, the
    log and the rewards) and allocates its own scratch, so the result is the serial one
    whatever the number of threads. Validation runs first (each thread checks its own
    tables), and nothing changes unless every action is legal."""
    k = len(bags)
    for w in range(k):
        _use_outputs(bags[w], logs[w], log_lens[w], rewards[w])
    if validate:
        first_bad = np.empty(k, np.int64)
        for w in prange(k):
            first_bad[w] = _first_illegal_range(bags[w], actions, bounds[w], bounds[w + 1])
        for w in range(k):
            if first_bad[w] >= 0:
                return first_bad[w]
    for w in prange(k):
        _step_range(bags[w], actions, _i(bounds[w]), _i(bounds[w + 1]), autoreset, done_out)
    return -2 if _log_overflow(bags[0]) else -1


@njit
def masks(out, rules, flags3, complete, packed, shift, mask, mask7, *arrays):
    """The legal actions of every table into ``out`` (B, 88)."""
    S = _bag_without_log(rules, flags3, complete, packed, shift, mask, mask7, arrays)
    for t in range(out.shape[0]):
        _fill_mask(S, t, out[t], _NO)


@njit
def deal_tables(rows, dealers, new_match, rules, flags3, complete, packed, shift, mask, mask7,
                *arrays):
    """Deal the tables ``rows`` (with ``new_match``: start the next match, seat 0 dealing;
    else deal with ``dealers``) and store their legal masks."""
    S = _bag_without_log(rules, flags3, complete, packed, shift, mask, mask7, arrays)
    for i in range(rows.shape[0]):
        t = rows[i]
        if new_match:
            _new_match(S, t)
        else:
            _deal(S, t, _i(dealers[i]))
        _fill_mask(S, t, S.legal_action_mask[t], _YES)


@njit
def refresh_waits(rules, flags3, complete, packed, shift, mask, mask7, *arrays):
    """Recompute ``waits`` of every seat of every table from its hand (for a state whose
    hands were written from outside, as :func:`sichuan_env.core.engine.reset_from_deal` does).
    In its own turn a seat's ``waits`` are of the hand without the tile drawn."""
    S = _bag_without_log(rules, flags3, complete, packed, shift, mask, mask7, arrays)
    for t in range(S.phase.shape[0]):
        for s in range(4):
            d = S.drawn_tile[t]
            own = S.phase[t] == TURN and S.current[t] == s and d >= 0
            if own:
                S.hand[t, s, d] -= 1
            _refresh_waits(S, t, _i(s))
            if own:
                S.hand[t, s, d] += 1


@njit
def reset_fields(t, dealer, *arrays):
    """The fields of a new deal on table t, with no tiles dealt."""
    S = StateBag(np.zeros(1, np.int64), np.zeros(1, np.uint16), np.zeros(1, np.bool_),
                 np.zeros(1, np.uint32), np.zeros((1, 3), np.uint32),
                 np.zeros((1, 3), np.uint32), np.zeros((1, 3), np.uint32),
                 np.zeros((1, 1, LOG_WIDTH), np.int32), np.zeros(1, np.int32),
                 np.zeros((1, 4), np.float32), *arrays)
    _reset_deal_fields(S, t, dealer)


# ----------------------------------------------------------------------------- step info

MAX_EVENTS = 5  # the decision and at most four forced discards (one per seat and deal)
MAX_PAYMENTS = 48


@njit
def fill_step_info(log, log_len, n_events, ev_seat, ev_action, ev_auto, win, win_from,
                   win_tile, win_fans, win_value, win_event, n_pay, pay_from, pay_to,
                   pay_points, pay_reason, pay_event, pay_cause, settled, flower_pig, ready,
                   end_reason, next_dealer, new_deal):
    """The step log as the fixed-shape arrays of ``engine.StepInfo`` (in its field order;
    zeroed by the
    caller, -1 where -1 means none). An event index -1 on a win or payment stands for
    the latest decision of its seat in an earlier step (a claim answered before the window
    was resolved). Returns False when a table's log overflowed."""
    ok = True
    for t in range(log_len.shape[0]):
        n = log_len[t]
        if n > log.shape[1]:
            ok = False
            n = log.shape[1]
        ne = 0
        npay = 0
        for j in range(n):
            row = log[t, j]
            typ = row[0]
            if typ == LOG_EVENT:
                if ne < ev_seat.shape[1]:
                    ev_seat[t, ne] = row[1]
                    ev_action[t, ne] = row[2]
                    ev_auto[t, ne] = row[3] != 0
                else:
                    ok = False
                ne += 1
            elif typ == LOG_PAY:
                if npay < pay_from.shape[1]:
                    cause = row[5]
                    pay_from[t, npay] = row[1]
                    pay_to[t, npay] = row[2]
                    pay_points[t, npay] = row[3]
                    pay_reason[t, npay] = row[4]
                    pay_cause[t, npay] = cause
                    pay_event[t, npay] = row[6]
                else:
                    ok = False
                npay += 1
            elif typ == LOG_WIN:
                s = row[1]
                win[t, s] = True
                win_tile[t, s] = row[2]
                win_from[t, s] = row[3]
                win_value[t, s] = row[4]
                for i in range(10):
                    win_fans[t, s, i] = row[FAN0 + i]
                win_event[t, s] = row[5]
            elif typ == LOG_SETTLE:
                settled[t] = True
                for s in range(4):
                    flower_pig[t, s] = (row[1] >> s) & 1
                    ready[t, s] = (row[2] >> s) & 1
            elif typ == LOG_END:
                end_reason[t] = row[1]
                next_dealer[t] = row[2]
            elif typ == LOG_DEAL:
                new_deal[t] = True
        n_events[t] = min(ne, ev_seat.shape[1])
        n_pay[t] = min(npay, pay_from.shape[1])
    return ok

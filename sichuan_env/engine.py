"""The batched game engine: pure functions over :class:`~sichuan_env.state.State`.

``reset(seeds, rules) -> state``; ``legal_mask(state) -> (B, 88) bool`` for the seat that
decides now (``state.current``); ``step(state, actions) -> (state, rewards, done)`` with
``rewards`` (B, 4) float32 points paid and received during the step and ``done`` (B,)
the match is over. The action layout is in :mod:`sichuan_env.actions`.

One step applies one decision per table. Everything that needs no decision happens inside
the step: draws, the forced discard of a set-aside tile (when the seat cannot kong instead),
claim windows nobody can claim in, payments, wall-end settlement and the next deal of a
match. After a discard (or a promoted/postponed kong) the seats with a legal claim are
asked one at a time counter-clockwise from the discarder; answers are hidden and resolved
together when the last one is in (Hu beats pung/kong; every Hu succeeds).

Work is vectorised over tables: each kernel below acts on an index array of the tables in
one situation. The only Python loops are over the few situations, never over tables,
seats' hands or tiles (except when a :class:`Ledger` is given, for game records).
A batch of one table (the AEC env, :class:`~sichuan_env.game.Game`) takes a scalar path for
the commonest decisions (a discard, a pass, the forbidden-suit choice) and for the legal
mask, which does the same work with scalar reads and writes (see "one table" below; tests
compare it with the batched kernels).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sichuan_env import hands as hx
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
    action_to_str,
)
from sichuan_env.deal import shuffled_tiles, split_deal, table_keys
from sichuan_env.rules import Rules, get_rules
from sichuan_env.state import (
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
    empty_state,
)
from sichuan_env.state import MELDED_KONG as MELD_MELDED_KONG
from sichuan_env.state import PUNG as MELD_PUNG
from sichuan_env.tiles import N_KINDS, as_counts, parse_kinds, tile_str

SUIT_OF = (np.arange(N_KINDS) // 9).astype(np.int8)
_OFFSETS = np.arange(1, 4)
# lookup tables that replace small index arithmetic in the hot path
_ASK_ORDER = (np.arange(4)[:, None] + _OFFSETS) % 4  # (4, 3): seats after s, in order
_IS_WINDOW = np.array([False, False, True, True, False])  # phase -> CLAIM or ROB
_VOID_KINDS = np.concatenate([SUIT_OF[None, :] == np.arange(3)[:, None],
                              np.zeros((1, N_KINDS), bool)])  # void (-1 last) -> its kinds
_VOID_CODE = (_VOID_KINDS * 30).astype(np.int8)  # void kinds -> 30 (see _KONG_OK)
# [30 * void kind + 5 * meld code + standing copies] -> a kong of that kind may be declared
_KONG_OK = np.array([(h == 4 and not v) or (m == MELD_PUNG and h >= 1)
                     for v in range(2) for m in range(6) for h in range(5)])
_ONE_TILE = np.eye(N_KINDS, dtype=np.int8)
# [wall has a tile, copies the claimer holds] -> the OPT_* bits of a discard claim
_CLAIM_OPTS = np.array([[0, 0, OPT_PUNG, OPT_PUNG, OPT_PUNG],
                        [0, 0, OPT_PUNG, OPT_PUNG | OPT_KONG, OPT_PUNG]], np.int8)
_OTHER_SEATS = np.arange(4)[:, None] != np.arange(4)  # [d] -> the seats other than d
_BITS4 = np.array([1, 2, 4, 8])
_ANSWER_OF_ACTION = np.zeros(N_ACTIONS, np.int8)
_ANSWER_OF_ACTION[[PASS, PUNG, MELDED_KONG, HU]] = [ANS_PASS, ANS_PUNG, ANS_KONG, ANS_HU]


class IllegalActionError(ValueError):
    """An action that the seat to decide may not take. The state is left unchanged."""


class Ledger:
    """Collects what happened, in order, for game records (slow path; off by default).

    Entries are tuples: ``("event", table, seat, action, auto)``,
    ``("pay", table, from, to, points, reason)`` (``to`` -1 for nobody),
    ``("win", table, seat, tile, from, fans, value)`` (``from`` -1 when self-drawn),
    ``("settle", table)`` before wall-end payments, ``("end", table, end_reason,
    next_dealer)`` and ``("deal", table)`` for a new deal.
    """

    def __init__(self) -> None:
        self.entries: list[tuple[Any, ...]] = []

    def event(self, tables, seats, actions, auto: bool = False) -> None:
        for t, s, a in zip(tables.tolist(), seats.tolist(), actions.tolist(), strict=True):
            self.entries.append(("event", t, s, a, auto))

    def pay(self, tables, frm, to, points, reason: str) -> None:
        for t, f, r, p in zip(tables.tolist(), frm.tolist(), to.tolist(), points.tolist(),
                              strict=True):
            if p:
                self.entries.append(("pay", t, f, r, p, reason))

    def win(self, tables, seats, tiles, frm, fans, values) -> None:
        for i, (t, s, k, f, v) in enumerate(
            zip(tables.tolist(), seats.tolist(), tiles.tolist(), frm.tolist(), values.tolist(),
                strict=True)
        ):
            self.entries.append(("win", t, s, k, f, fans[i].tolist(), v))

    def end(self, tables, reasons, next_dealers) -> None:
        for t, r, d in zip(tables.tolist(), reasons.tolist(), next_dealers.tolist(), strict=True):
            self.entries.append(("end", t, r, d))

    def settle(self, tables) -> None:
        for t in tables.tolist():
            self.entries.append(("settle", t))

    def deal(self, tables) -> None:
        for t in tables.tolist():
            self.entries.append(("deal", t))


class _Ctx:
    """What the kernels of one step share."""

    __slots__ = ("st", "rewards", "ledger", "rules")

    def __init__(self, st: State, rewards: np.ndarray, ledger: Ledger | None) -> None:
        self.st = st
        self.rewards = rewards
        self.ledger = ledger
        self.rules = st.rules


# ----------------------------------------------------------------------------- reset


def reset(
    seeds: int | Sequence[int] | np.ndarray,
    rules: Rules | str | None = None,
    *,
    dealer: int | Sequence[int] = 0,
) -> State:
    """Deal B tables, one per seed (an int means one table). Seat ``dealer`` deals first."""
    rules = get_rules(rules)
    seeds = np.atleast_1d(np.asarray(seeds))
    if seeds.ndim != 1 or seeds.size == 0 or seeds.dtype.kind not in "iu":
        raise ValueError("seeds must be a non-empty sequence of integers")
    B = int(seeds.size)
    st = empty_state(B, rules)
    st.key[:] = table_keys(seeds)
    dealers = np.broadcast_to(np.asarray(dealer, dtype=np.int8), (B,)).copy()
    if ((dealers < 0) | (dealers > 3)).any():
        raise ValueError(f"dealer must be a seat 0..3, got {dealer}")
    _deal(st, np.arange(B), dealers)
    return st


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
    _reset_deal_fields(st, np.array([0]), np.array([dealer], np.int8))
    st.hand[0] = counts
    st.wall[0, : len(wall_kinds)] = wall_kinds
    st.wall_back[0] = len(wall_kinds)
    return st


def _reset_deal_fields(st: State, ix: np.ndarray, dealer: np.ndarray) -> None:
    st.wall[ix] = -1
    st.wall_front[ix] = 0
    st.wall_back[ix] = WALL_SIZE
    st.hand[ix] = 0
    st.set_aside[ix] = -1
    st.void[ix] = -1
    st.void_revealed[ix] = False
    st.meld[ix] = 0
    st.river[ix] = -1
    st.river_len[ix] = 0
    st.live_discards[ix] = 0
    st.won_tiles[ix] = 0
    st.hu[ix] = False
    st.hu_tile[ix] = -1
    st.hu_rank[ix] = -1
    st.hu_from[ix] = -1
    st.scores[ix] = 0
    st.nonvoid_discard[ix] = False
    st.kong_income[ix] = 0
    st.turn_kong_paid[ix] = 0
    st.passed_hu[ix] = 0
    st.phase[ix] = VOID
    st.current[ix] = 0
    st.active[ix] = dealer
    st.claim_tile[ix] = -1
    st.claim_opts[ix] = 0
    st.claim_value[ix] = 0
    st.claim_answer[ix] = 0
    st.drawn_tile[ix] = -1
    st.drawn_replacement[ix] = False
    st.after_pung[ix] = False
    st.kong_this_turn[ix] = False
    st.shoot_flag[ix] = False
    st.dealer[ix] = dealer
    st.next_dealer[ix] = dealer
    st.done[ix] = False


def _deal(st: State, ix: np.ndarray, dealer: np.ndarray) -> None:
    tiles = shuffled_tiles(st.key[ix], st.episode[ix], st.deal_index[ix])
    hands, wall = split_deal(tiles, dealer)
    _reset_deal_fields(st, ix, dealer)
    st.hand[ix] = hands
    st.wall[ix] = wall


def reset_done(state: State) -> State:
    """Start a new match (next episode number, seat 0 dealing) on every finished table."""
    st = state.copy()
    ix = np.flatnonzero(st.done)
    if ix.size:
        st.episode[ix] += 1
        st.deal_index[ix] = 0
        st.match_scores[ix] = 0
        st.end_reason[ix] = 0
        _deal(st, ix, np.zeros(ix.size, np.int8))
    return st


# ----------------------------------------------------------------------------- helpers


def _meld_kind(meld: np.ndarray) -> np.ndarray:
    """Engine meld codes -> hands' meld kinds (0 none, 1 pung, 2 kong)."""
    return np.minimum(meld, 2).astype(np.int8)


def _wall_left(st: State, ix: np.ndarray) -> np.ndarray:
    return st.wall_back[ix] - st.wall_front[ix]  # int16


def _next_non_hu_table() -> np.ndarray:
    """[16 * seat + Hu bits] -> the first seat after ``seat`` (counter-clockwise, seat
    itself last) that has not won; seat + 1 when every seat has won."""
    out = np.zeros(64, np.intp)
    for seat in range(4):
        for bits in range(16):
            cand = [(seat + i) % 4 for i in range(1, 5)]
            ok = [not (bits >> c) & 1 for c in cand]
            out[16 * seat + bits] = cand[ok.index(True)] if any(ok) else cand[0]
    return out


_NEXT_NON_HU = _next_non_hu_table()
_NEXT_SEAT = _NEXT_NON_HU[16 * np.arange(4)]  # nobody has won


def _next_non_hu(hu: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """First seat after ``seat`` (counter-clockwise, seat itself last) that has not won."""
    if not np.count_nonzero(hu):  # nobody has won: the next seat
        return _NEXT_SEAT.take(seat)
    return _NEXT_NON_HU.take(hu @ _BITS4 + 16 * seat.astype(np.intp))


def _hu_fans(
    hand: np.ndarray, meld: np.ndarray, win: np.ndarray, void: np.ndarray, *,
    self_drawn: np.ndarray | bool = False, after_kong: np.ndarray | bool = False,
    shoot: np.ndarray | bool = False, robbing: np.ndarray | bool = False,
    sea: np.ndarray | bool = False, fan_cap: int,
) -> tuple[np.ndarray, np.ndarray]:
    n = hand.shape[0]

    def flag(x):
        return np.broadcast_to(np.asarray(x, dtype=bool), (n,))

    fans = hx.batch_fans(hand, _meld_kind(meld), win, void, flag(self_drawn), flag(after_kong),
                        flag(shoot), flag(robbing), flag(sea))
    return fans, hx.batch_value(fans, fan_cap)


def _pay_matrix(ctx: _Ctx, ix: np.ndarray, P: np.ndarray, reason: str) -> None:
    """Apply payments P (n, 4 payer, 4 receiver) on tables ix."""
    delta = P.sum(1) - P.sum(2)
    ctx.st.scores[ix] += delta
    ctx.rewards[ix] += delta
    if ctx.ledger is not None:
        t, f, r = np.nonzero(P)
        ctx.ledger.pay(ix[t], f, r, P[t, f, r], reason)


def _pay_from_others(ctx: _Ctx, ix: np.ndarray, seat: np.ndarray, points: np.ndarray | int,
                     reason: str) -> np.ndarray:
    """Every non-Hu seat other than ``seat`` pays ``points`` to ``seat``; returns (n,4) paid."""
    st = ctx.st
    n = ix.size
    payers = ~st.hu[ix]
    payers[np.arange(n), seat] = False
    paid = payers * np.asarray(points, np.int32).reshape(-1, 1)
    P = np.zeros((n, 4, 4), np.int32)
    P[np.arange(n), :, seat] = paid
    _pay_matrix(ctx, ix, P, reason)
    return paid


def _kong_income(ctx: _Ctx, ix: np.ndarray, seat: np.ndarray, paid: np.ndarray) -> None:
    st = ctx.st
    st.kong_income[ix, :, seat] += paid.astype(np.int16)
    st.turn_kong_paid[ix] += paid.astype(np.int16)
    st.kong_this_turn[ix] = True


# ----------------------------------------------------------------------------- legal mask


def legal_mask(state: State) -> np.ndarray:
    """(B, 88) bool: the actions the seat ``state.current`` may take on each table.

    Finished tables have no legal action (a step ignores them)."""
    st = state
    B = st.batch_size
    if B == 1:
        return _legal_mask_single(st)
    mask = np.zeros((B, N_ACTIONS), dtype=bool)
    ph = st.phase
    ix = (ph == VOID).nonzero()[0]
    if ix.size:
        h = st.hand[ix, st.current[ix].astype(np.intp)]
        mask[ix, VOID_TILE:VOID_SUIT] = h > 0
        mask[ix, VOID_SUIT:KONG] = h.reshape(-1, 3, 9).sum(2) == 0
    ix = (ph == TURN).nonzero()[0]
    if ix.size:
        _turn_mask(st, ix, mask)
    ix = _IS_WINDOW[ph].nonzero()[0]
    if ix.size:
        opts = st.claim_opts[ix, st.current[ix].astype(np.intp)]
        mask[ix, HU] = (opts & OPT_HU) != 0
        mask[ix, PUNG] = (opts & OPT_PUNG) != 0
        mask[ix, MELDED_KONG] = (opts & OPT_KONG) != 0
        mask[ix, PASS] = True
    return mask


def _turn_options(st: State, ix: np.ndarray):
    """Discard, kong and Hu options of the active seat on TURN tables ix."""
    seat = st.current[ix].astype(np.intp)
    h = st.hand[ix, seat]
    vd = st.void[ix, seat]
    void_kinds = _VOID_KINDS.take(vd, axis=0)  # void -1 (not chosen) -> no kinds
    disc = h > 0
    held_void = disc & void_kinds
    has_void = held_void.any(1)
    if st.rules.strict_void:
        disc = np.where(has_void[:, None], held_void, disc)
    sa = st.set_aside[ix, seat]
    pending = sa >= 0
    if np.count_nonzero(pending):
        p = pending.nonzero()[0]
        disc[p] = False
        disc[p, sa[p]] = True
    after_pung = st.after_pung[ix]
    can_kong = ~after_pung & (_wall_left(st, ix) >= 1)
    m = st.meld[ix, seat]
    kong = _KONG_OK.take(m * np.int8(5) + h + _VOID_CODE.take(vd, axis=0)) & can_kong[:, None]
    q = (~(after_pung | pending | has_void)).nonzero()[0]  # Hu is possible
    hu = np.zeros(ix.size, bool)
    if q.size:
        hu[q] = hx.batch_is_complete(h[q], (m[q] > 0).sum(1), vd[q])
    return disc, kong, hu


def _turn_mask(st: State, ix: np.ndarray, mask: np.ndarray) -> None:
    disc, kong, hu = _turn_options(st, ix)
    mask[ix, DISCARD:VOID_TILE] = disc
    mask[ix, KONG:PUNG] = kong
    mask[ix, HU] = hu


# ----------------------------------------------------------------------------- step


def step(
    state: State,
    actions: np.ndarray | Sequence[int] | int,
    *,
    inplace: bool = False,
    validate: bool = True,
    mask: np.ndarray | None = None,
    ledger: Ledger | None = None,
    autoreset: bool = False,
) -> tuple[State, np.ndarray, np.ndarray]:
    """Apply one decision per table: ``actions[i]`` for seat ``state.current[i]``.

    Returns ``(state, rewards (B, 4) float32, done (B,) bool)``. Finished tables ignore
    their action. With ``validate`` an illegal action raises :class:`IllegalActionError`
    (naming the table, seat, action and the legal options) before anything changes.
    With ``autoreset`` a table whose match ended starts a new one (``done`` is still True
    for that step). ``inplace`` reuses the given state's arrays (faster; no copy).
    """
    B = state.batch_size
    actions = np.asarray(actions, dtype=np.int64).reshape(-1)
    if actions.shape != (B,):
        raise ValueError(f"expected {B} actions (one per table), got shape {actions.shape}")
    live = ~state.done
    if validate:
        _validate(state, actions, live, mask)
    st = state if inplace else state.copy()
    rewards = np.zeros((B, 4), dtype=np.float32)
    ctx = _Ctx(st, rewards, ledger)
    if B == 1 and _step_single_table(ctx, int(actions[0])):
        done = st.done.copy()
        if autoreset and done[0]:
            st = reset_done(st)
        return st, rewards, done
    ph = st.phase
    ix_void = (live & (ph == VOID)).nonzero()[0]
    ix_turn = (live & (ph == TURN)).nonzero()[0]
    ix_claim = (live & _IS_WINDOW[ph]).nonzero()[0]
    if ix_void.size:
        _apply_void(ctx, ix_void, actions[ix_void])
    if ix_turn.size:
        _apply_turn(ctx, ix_turn, actions[ix_turn])
    if ix_claim.size:
        _apply_answer(ctx, ix_claim, actions[ix_claim])
    _advance(ctx)
    done = st.done.copy()
    if autoreset and np.count_nonzero(done):
        st = reset_done(st)
    return st, rewards, done


# ----------------------------------------------------------------------------- one table
# The common transitions of a single table (the AEC env, Game, terminal play) written with
# scalar reads and writes, which cost a tenth of a numpy call on a one-row index array.
# They change exactly the fields the batched kernels change (tests compare the two paths
# step by step); anything rarer falls through to the batched kernels. A rule change in
# these transitions must be made here and in the batched kernels alike.

_IX0 = np.zeros(1, np.intp)
_ASK_ORDER_LISTS = _ASK_ORDER.tolist()
_CLAIM_OPTS_LISTS = _CLAIM_OPTS.tolist()
_NEXT_NON_HU_LIST = _NEXT_NON_HU.tolist()
_BITS4_LIST = _BITS4.tolist()


def _step_single_table(ctx: _Ctx, a: int) -> bool:
    """Apply action ``a`` on table 0 of a one-table batch if it is a common case; returns
    False (having changed nothing) when the batched kernels must do it."""
    st = ctx.st
    if st.done[0]:
        return False
    phase = int(st.phase[0])
    seat = int(st.current[0])
    if phase == TURN and DISCARD <= a < VOID_TILE:
        kind = "discard"
    elif phase in (CLAIM, ROB) and a == PASS:
        kind = "pass"
    elif phase == VOID:
        kind = "void"
    else:
        return False
    if ctx.ledger is not None:
        ctx.ledger.event(_IX0, np.array([seat]), np.array([a]))
    if kind == "discard":
        _discard_single(ctx, seat, a - DISCARD)
    elif kind == "pass":
        st.claim_answer[0, seat] = ANS_PASS
        _ask_next_single(ctx)
    else:
        _void_single(ctx, seat, a)
    return True


def _void_single(ctx: _Ctx, seat: int, a: int) -> None:
    """Table 0: ``seat`` chooses its forbidden suit (as :func:`_apply_void`)."""
    st = ctx.st
    if a < VOID_SUIT:  # by setting a tile aside
        k = a - VOID_TILE
        st.hand[0, seat, k] -= 1
        st.set_aside[0, seat] = k
        st.void[0, seat] = k // 9
    else:
        st.void[0, seat] = a - VOID_SUIT
    st.current[0] = seat + 1
    if seat == 3:
        _begin_turn(st, _IX0, st.dealer[_IX0])
        if st.set_aside[0, st.dealer[0]] >= 0:  # the dealer's forced discard may follow
            _advance(ctx)


def _discard_single(ctx: _Ctx, seat: int, k: int) -> None:
    """Table 0: ``seat`` discards kind ``k`` (its set-aside tile, or from its hand)."""
    st = ctx.st
    if st.set_aside[0, seat] >= 0:
        st.set_aside[0, seat] = -1
    else:
        st.hand[0, seat, k] -= 1
    st.void_revealed[0, seat] = True
    pos = int(st.river_len[0, seat])
    st.river[0, seat, pos] = k
    st.river_len[0, seat] = pos + 1
    st.live_discards[0, k] += 1
    if k // 9 != st.void[0, seat]:
        st.nonvoid_discard[0, seat] = True
    st.shoot_flag[0] = st.kong_this_turn[0]
    _open_window_single(ctx, seat, k)


def _open_window_single(ctx: _Ctx, d: int, t: int) -> None:
    """Table 0: offer discard ``t`` of seat ``d`` to the others (as :func:`_open_window`),
    then ask the first seat with an option or settle the window at once."""
    st = ctx.st
    hu = st.hu[0].tolist()
    void = st.void[0].tolist()
    set_aside = st.set_aside[0].tolist()
    held = st.hand[0, :, t].tolist()
    suit = t // 9
    wall_left = int(st.wall_back[0]) - int(st.wall_front[0])
    claim_opts = _CLAIM_OPTS_LISTS[wall_left >= 1]
    opts = [0, 0, 0, 0]
    may_hu = []
    for s in _ASK_ORDER_LISTS[d]:
        if hu[s] or void[s] == suit:
            continue
        opts[s] = claim_opts[held[s]]
        if set_aside[s] < 0:
            may_hu.append(s)
    value = [0, 0, 0, 0]
    if may_hu:
        codes = hx.suit_codes(st.hand[0])
        n_melds = np.count_nonzero(st.meld[0], axis=1).tolist()
        rank_code = 5 ** (t % 9)
        complete = []
        for s in may_hu:
            code = codes[s]
            code[suit] += rank_code  # the seat's hand plus the offered tile
            if hx.codes_are_complete(code, n_melds[s], void[s]):
                complete.append(s)
        if complete:
            c = np.array(complete)
            hands = st.hand[0, c] + _ONE_TILE[t]
            melds = st.meld[0, c]
            vd = st.void[0, c]
            n = c.size
            _, val = _hu_fans(hands, melds, np.full(n, t, np.int8), vd,
                              shoot=bool(st.shoot_flag[0]), sea=wall_left == 0,
                              fan_cap=ctx.rules.fan_cap)
            passed = st.passed_hu[0, c]
            ok = ((passed == 0) | (val > passed)).tolist()
            for s, v, o in zip(c.tolist(), val.tolist(), ok, strict=True):
                value[s] = v
                if o:
                    opts[s] |= OPT_HU
    st.claim_opts[0] = opts
    st.claim_value[0] = value
    st.claim_answer[0] = ANS_NONE
    st.claim_tile[0] = t
    st.active[0] = d
    st.current[0] = d
    st.phase[0] = CLAIM
    _ask_next_single(ctx)


def _ask_next_single(ctx: _Ctx) -> None:
    """Table 0 in a claim window: ask the next seat that has an option and no answer yet
    (counter-clockwise from the discarder); when a claim window has nobody left to ask and
    no answer but passes, the next seat draws. Other outcomes go to :func:`_advance`."""
    st = ctx.st
    opts = st.claim_opts[0].tolist()
    answers = st.claim_answer[0].tolist()
    d = int(st.active[0])
    for s in _ASK_ORDER_LISTS[d]:
        if opts[s] and answers[s] == ANS_NONE:
            st.current[0] = s
            return
    # a rob window, a claim, or a declined Hu (which restricts later Hu): the batched kernels
    if (st.phase[0] != CLAIM or any(a not in (ANS_NONE, ANS_PASS) for a in answers)
            or any(o & OPT_HU for o in opts)):
        _advance(ctx)
        return
    st.claim_tile[0] = -1
    hu_bits = sum(_BITS4_LIST[s] for s, won in enumerate(st.hu[0].tolist()) if won)
    _draw_single(ctx, _NEXT_NON_HU_LIST[16 * d + hu_bits])


def _legal_mask_single(st: State) -> np.ndarray:
    """:func:`legal_mask` of a one-table batch, with scalar reads."""
    mask = np.zeros((1, N_ACTIONS), dtype=bool)
    row = mask[0]
    phase = int(st.phase[0])
    seat = int(st.current[0])
    if phase == TURN:
        h = st.hand[0, seat]
        vd = int(st.void[0, seat])
        disc = row[DISCARD:VOID_TILE]
        np.greater(h, 0, out=disc)
        has_void = vd >= 0 and bool(disc[9 * vd : 9 * vd + 9].any())
        if has_void and st.rules.strict_void:
            held = disc[9 * vd : 9 * vd + 9].copy()
            disc[:] = False
            disc[9 * vd : 9 * vd + 9] = held
        sa = int(st.set_aside[0, seat])
        if sa >= 0:
            disc[:] = False
            disc[sa] = True
        after_pung = bool(st.after_pung[0])
        m = st.meld[0, seat]
        if not after_pung and st.wall_back[0] - st.wall_front[0] >= 1:
            row[KONG:PUNG] = _KONG_OK.take(m * np.int8(5) + h + _VOID_CODE[vd])
        if not (after_pung or sa >= 0 or has_void):
            row[HU] = hx.hand_is_complete(h, np.count_nonzero(m), vd)
    elif phase == VOID:
        h = st.hand[0, seat]
        np.greater(h, 0, out=row[VOID_TILE:VOID_SUIT])
        row[VOID_SUIT:KONG] = h.reshape(3, 9).sum(1) == 0
    elif phase in (CLAIM, ROB):
        opts = int(st.claim_opts[0, seat])
        row[HU] = (opts & OPT_HU) != 0
        row[PUNG] = (opts & OPT_PUNG) != 0
        row[MELDED_KONG] = (opts & OPT_KONG) != 0
        row[PASS] = True
    return mask


def _draw_single(ctx: _Ctx, seat: int) -> None:
    """Table 0: ``seat`` draws from the front (as :func:`_draw`), then forced moves."""
    st = ctx.st
    if st.wall_back[0] - st.wall_front[0] <= 0:
        _end_deal(ctx, _IX0, END_WALL)
        return
    st.phase[0] = TURN
    st.current[0] = seat
    st.active[0] = seat
    st.drawn_replacement[0] = False
    st.after_pung[0] = False
    st.kong_this_turn[0] = False
    st.turn_kong_paid[0] = 0
    st.shoot_flag[0] = False
    front = int(st.wall_front[0])
    tile = int(st.wall[0, front])
    st.wall_front[0] = front + 1
    st.hand[0, seat, tile] += 1
    st.drawn_tile[0] = tile
    st.passed_hu[0, seat] = 0
    if st.set_aside[0, seat] >= 0:  # a forced discard may follow
        _advance(ctx)


def _validate(state: State, actions: np.ndarray, live: np.ndarray,
              mask: np.ndarray | None) -> None:
    if mask is None:
        mask = legal_mask(state)
    in_range = (actions >= 0) & (actions < N_ACTIONS)
    ok = np.zeros(actions.shape, bool)
    ok[in_range] = mask[np.flatnonzero(in_range), actions[in_range]]
    bad = np.flatnonzero(live & ~ok)
    if bad.size:
        i = int(bad[0])
        a = int(actions[i])
        name = action_to_str(a) if 0 <= a < N_ACTIONS else "out of range"
        legal = [action_to_str(x) for x in np.flatnonzero(mask[i])]
        raise IllegalActionError(
            f"table {i}, seat {int(state.current[i])}: illegal action {a} ({name}); "
            f"legal: {sorted(legal)}"
        )


def _apply_void(ctx: _Ctx, ix: np.ndarray, a: np.ndarray) -> None:
    st = ctx.st
    seat = st.current[ix].astype(np.intp)
    if ctx.ledger is not None:
        ctx.ledger.event(ix, seat, a)
    by_tile = a < VOID_SUIT
    if by_tile.any():
        j, s, k = ix[by_tile], seat[by_tile], (a[by_tile] - VOID_TILE).astype(np.int8)
        st.hand[j, s, k] -= 1
        st.set_aside[j, s] = k
        st.void[j, s] = k // 9
    if (~by_tile).any():
        st.void[ix[~by_tile], seat[~by_tile]] = (a[~by_tile] - VOID_SUIT).astype(np.int8)
    st.current[ix] = seat + 1
    fin = ix[seat == 3]
    if fin.size:
        _begin_turn(st, fin, st.dealer[fin])


def _begin_turn(st: State, ix: np.ndarray, seat: np.ndarray) -> None:
    """A turn with no draw yet (dealer's initial turn, or after a claim)."""
    st.phase[ix] = TURN
    st.current[ix] = seat
    st.active[ix] = seat
    st.drawn_tile[ix] = -1
    st.drawn_replacement[ix] = False
    st.after_pung[ix] = False
    st.kong_this_turn[ix] = False
    st.turn_kong_paid[ix] = 0
    st.shoot_flag[ix] = False


def _apply_turn(ctx: _Ctx, ix: np.ndarray, a: np.ndarray) -> None:
    st = ctx.st
    seat = st.current[ix].astype(np.intp)
    if ctx.ledger is not None:
        ctx.ledger.event(ix, seat, a)
    d = a < VOID_TILE
    nd = np.count_nonzero(d)
    if nd == ix.size:  # every table discards (the usual case)
        _discard(ctx, ix, seat, a - DISCARD)
        return
    if nd:
        _discard(ctx, ix[d], seat[d], a[d] - DISCARD)
    k = (a >= KONG) & (a < PUNG)
    if np.count_nonzero(k):
        _own_kong(ctx, ix[k], seat[k], (a[k] - KONG).astype(np.int8))
    h = a == HU
    if np.count_nonzero(h):
        _self_drawn_hu(ctx, ix[h], seat[h])


def _apply_answer(ctx: _Ctx, ix: np.ndarray, a: np.ndarray) -> None:
    st = ctx.st
    seat = st.current[ix].astype(np.intp)
    if ctx.ledger is not None:
        ctx.ledger.event(ix, seat, a)
    st.claim_answer[ix, seat] = _ANSWER_OF_ACTION[a]


# ----------------------------------------------------------------------------- kernels


def _discard(ctx: _Ctx, ix: np.ndarray, seat: np.ndarray, k: np.ndarray) -> None:
    st = ctx.st
    from_aside = st.set_aside[ix, seat] >= 0
    n_aside = np.count_nonzero(from_aside)
    if n_aside:
        st.set_aside[ix[from_aside], seat[from_aside]] = -1
    if n_aside == 0:
        st.hand[ix, seat, k] -= 1
    elif n_aside < ix.size:
        rest = ~from_aside
        st.hand[ix[rest], seat[rest], k[rest]] -= 1
    st.void_revealed[ix, seat] = True
    pos = st.river_len[ix, seat]
    st.river[ix, seat, pos] = k
    st.river_len[ix, seat] = pos + 1
    st.live_discards[ix, k] += 1
    st.nonvoid_discard[ix, seat] |= SUIT_OF[k] != st.void[ix, seat]
    st.shoot_flag[ix] = st.kong_this_turn[ix]
    _open_window(ctx, ix, seat, k, robbing=False)


def _open_window(ctx: _Ctx, ix: np.ndarray, d: np.ndarray, t: np.ndarray, *,
                 robbing: bool) -> None:
    """Offer tile t (discarded, or added to a kong by d) to the other seats."""
    st = ctx.st
    n = ix.size
    h = st.hand[ix]  # (n, 4, 27); the discarder's own row is never eligible
    vd = st.void[ix]
    eligible = _OTHER_SEATS.take(d, axis=0) & ~st.hu[ix] & (vd != SUIT_OF.take(t)[:, None])
    wall_left = _wall_left(st, ix)
    if robbing:
        opts = np.zeros((n, 4), np.int8)
    else:
        cnt = h[np.arange(n), :, t]  # (n, 4) copies of t each seat holds
        opts = np.where(eligible, _CLAIM_OPTS[(wall_left >= 1).astype(np.intp)[:, None], cnt],
                        np.int8(0))
    value = np.zeros((n, 4), np.int16)
    r, c = (eligible & (st.set_aside[ix] < 0)).nonzero()
    if r.size:
        hh = h[r, c] + _ONE_TILE[t[r]]
        melds = st.meld[ix[r], c]
        done_ = hx.batch_is_complete(hh, (melds > 0).sum(1), vd[r, c])
        if np.count_nonzero(done_):
            r, c, hh, melds = r[done_], c[done_], hh[done_], melds[done_]
            _, val = _hu_fans(
                hh, melds, t[r], vd[r, c], shoot=st.shoot_flag[ix[r]] & (not robbing),
                robbing=robbing, sea=wall_left[r] == 0, fan_cap=ctx.rules.fan_cap,
            )
            passed = st.passed_hu[ix[r], c]
            ok = (passed == 0) | (val > passed)
            value[r, c] = val
            opts[r[ok], c[ok]] |= np.int8(OPT_HU)
    st.claim_opts[ix] = opts
    st.claim_value[ix] = value
    st.claim_answer[ix] = ANS_NONE
    st.claim_tile[ix] = t
    st.active[ix] = d
    st.current[ix] = d
    st.phase[ix] = ROB if robbing else CLAIM


def _draw(ctx: _Ctx, ix: np.ndarray, seat: np.ndarray) -> None:
    """Seat draws from the front to start its turn; an empty wall ends the deal."""
    st = ctx.st
    empty = _wall_left(st, ix) <= 0
    if np.count_nonzero(empty):
        _end_deal(ctx, ix[empty], END_WALL)
        ix, seat = ix[~empty], seat[~empty]
        if not ix.size:
            return
    _begin_turn(st, ix, seat)
    front = st.wall_front[ix]
    tile = st.wall[ix, front].astype(np.intp)
    st.wall_front[ix] = front + 1
    st.hand[ix, seat, tile] += 1
    st.drawn_tile[ix] = tile
    st.passed_hu[ix, seat] = 0


def _replacement(ctx: _Ctx, ix: np.ndarray, seat: np.ndarray) -> None:
    """Kong replacement from the back of the wall (a kong needs one, so it exists)."""
    st = ctx.st
    st.wall_back[ix] -= 1
    tile = st.wall[ix, st.wall_back[ix]]
    st.hand[ix, seat, tile] += 1
    st.drawn_tile[ix] = tile
    st.drawn_replacement[ix] = True
    st.passed_hu[ix, seat] = 0
    st.phase[ix] = TURN
    st.current[ix] = seat
    st.active[ix] = seat


def _own_kong(ctx: _Ctx, ix: np.ndarray, seat: np.ndarray, k: np.ndarray) -> None:
    st = ctx.st
    concealed = st.hand[ix, seat, k] == 4
    if concealed.any():
        j, s, kk = ix[concealed], seat[concealed], k[concealed]
        st.hand[j, s, kk] = 0
        st.meld[j, s, kk] = CONCEALED_KONG
        paid = _pay_from_others(ctx, j, s, 2, "concealed_kong")
        _kong_income(ctx, j, s, paid)
        _replacement(ctx, j, s)
    added = ~concealed
    if added.any():
        j, s, kk = ix[added], seat[added], k[added]
        st.hand[j, s, kk] -= 1
        _open_window(ctx, j, s, kk, robbing=True)


def _complete_added_kong(ctx: _Ctx, ix: np.ndarray) -> None:
    """Nobody robbed: the pung becomes a promoted or postponed kong."""
    st = ctx.st
    seat = st.active[ix]
    k = st.claim_tile[ix]
    promoted = st.drawn_tile[ix] == k
    st.meld[ix, seat, k] = np.where(promoted, PROMOTED_KONG, POSTPONED_KONG)
    paid = _pay_from_others(ctx, ix, seat, promoted.astype(np.int32), "promoted_kong")
    _kong_income(ctx, ix, seat, paid)
    st.claim_tile[ix] = -1
    _replacement(ctx, ix, seat)


def _self_drawn_hu(ctx: _Ctx, ix: np.ndarray, seat: np.ndarray) -> None:
    st = ctx.st
    rules = ctx.rules
    h = st.hand[ix, seat]
    drawn = st.drawn_tile[ix]
    win = np.where(drawn >= 0, drawn, h.argmax(1)).astype(np.int8)
    had_draw = drawn >= 0
    fans, value = _hu_fans(
        h, st.meld[ix, seat], win, st.void[ix, seat], self_drawn=True,
        after_kong=st.drawn_replacement[ix] & had_draw,
        sea=(_wall_left(st, ix) == 0) & had_draw, fan_cap=rules.fan_cap,
    )
    if ctx.ledger is not None:
        ctx.ledger.win(ix, seat, win, np.full(ix.size, -1), fans, value)
    _pay_from_others(ctx, ix, seat, value + rules.self_draw_bonus, "self_drawn_hu")
    st.hand[ix, seat, win] -= 1
    st.won_tiles[ix, win] += 1
    first = ~st.hu[ix].any(1)
    st.next_dealer[ix[first]] = seat[first]
    st.hu_rank[ix, seat] = st.hu[ix].sum(1)
    st.hu[ix, seat] = True
    st.hu_tile[ix, seat] = win
    st.hu_from[ix, seat] = seat
    _after_hu(ctx, ix, seat)


def _after_hu(ctx: _Ctx, ix: np.ndarray, last: np.ndarray) -> None:
    """After a Hu: three winners end the deal; else the next non-Hu seat after ``last``
    draws (an empty wall ends the deal)."""
    st = ctx.st
    three = st.hu[ix].sum(1) >= 3
    if three.any():
        _end_deal(ctx, ix[three], END_THREE_HU)
    go = ~three
    if go.any():
        j = ix[go]
        _draw(ctx, j, _next_non_hu(st.hu[j], last[go]))


def _resolve_windows(ctx: _Ctx, ix: np.ndarray) -> None:
    """Every asked seat has answered: apply Hu, else pung/kong, else pass."""
    st = ctx.st
    ans = st.claim_answer[ix]
    if not np.count_nonzero(ans):  # nobody was asked: nothing declined, nothing claimed
        robbing = st.phase[ix] == ROB
        if np.count_nonzero(robbing):
            _complete_added_kong(ctx, ix[robbing])
            ix = ix[~robbing]
        if ix.size:
            st.claim_tile[ix] = -1
            _draw(ctx, ix, _next_non_hu(st.hu[ix], st.active[ix]))
        return
    offered = (st.claim_opts[ix] & OPT_HU) != 0
    declined = offered & (ans != ANS_HU)
    if np.count_nonzero(declined):
        passed = st.passed_hu[ix]
        st.passed_hu[ix] = np.where(declined, np.maximum(passed, st.claim_value[ix]), passed)
    winners = ans == ANS_HU
    robbing = st.phase[ix] == ROB
    if np.count_nonzero(winners):
        any_hu = winners.any(1)
        _discard_hu(ctx, ix[any_hu], winners[any_hu], robbing[any_hu])
        rest = ~any_hu
        rob_rest = rest & robbing
        claim_rest = rest & ~robbing
    else:
        rob_rest = robbing
        claim_rest = ~robbing
    if np.count_nonzero(rob_rest):
        _complete_added_kong(ctx, ix[rob_rest])
    j = ix[claim_rest]
    if not j.size:
        return
    d = st.active[j]
    a = ans[claim_rest]
    if not np.count_nonzero((a == ANS_PUNG) | (a == ANS_KONG)):  # nobody claimed
        st.claim_tile[j] = -1
        _draw(ctx, j, _next_non_hu(st.hu[j], d))
        return
    t = st.claim_tile[j]
    pung = (a == ANS_PUNG).any(1)
    kong = (a == ANS_KONG).any(1)
    if pung.any():
        jj, c, tt = j[pung], (a[pung] == ANS_PUNG).argmax(1), t[pung]
        st.hand[jj, c, tt] -= 2
        st.meld[jj, c, tt] = MELD_PUNG
        st.live_discards[jj, tt] -= 1
        _begin_turn(st, jj, c)
        st.after_pung[jj] = True
        st.claim_tile[jj] = -1
    if kong.any():
        jj, c, tt, dd = j[kong], (a[kong] == ANS_KONG).argmax(1), t[kong], d[kong]
        st.hand[jj, c, tt] -= 3
        st.meld[jj, c, tt] = MELD_MELDED_KONG
        st.live_discards[jj, tt] -= 1
        _begin_turn(st, jj, c)
        m = jj.size
        P = np.zeros((m, 4, 4), np.int32)
        P[np.arange(m), dd, c] = 2
        _pay_matrix(ctx, jj, P, "melded_kong")
        _kong_income(ctx, jj, c, P[np.arange(m), :, c])
        st.claim_tile[jj] = -1
        _replacement(ctx, jj, c)
    nobody = ~pung & ~kong
    if nobody.any():
        jj = j[nobody]
        st.claim_tile[jj] = -1
        _draw(ctx, jj, _next_non_hu(st.hu[jj], d[nobody]))


def _discard_hu(ctx: _Ctx, ix: np.ndarray, winners: np.ndarray, robbing: np.ndarray) -> None:
    """Hu on a discard (or on a robbed kong tile): the discarder pays each winner."""
    st = ctx.st
    n = ix.size
    d = st.active[ix]
    t = st.claim_tile[ix]
    value = np.where(winners, st.claim_value[ix], 0).astype(np.int32)
    if ctx.ledger is not None:
        r, s = np.nonzero(winners)
        j = ix[r]
        fans, val = _hu_fans(
            st.hand[j, s] + np.eye(N_KINDS, dtype=np.int8)[t[r]], st.meld[j, s], t[r],
            st.void[j, s], shoot=st.shoot_flag[j] & ~robbing[r], robbing=robbing[r],
            sea=_wall_left(st, j) == 0, fan_cap=ctx.rules.fan_cap,
        )
        ctx.ledger.win(j, s, t[r], d[r], fans, val)
    P = np.zeros((n, 4, 4), np.int32)
    P[np.arange(n), d, :] = value
    _pay_matrix(ctx, ix, P, "hu")
    shoot = st.shoot_flag[ix] & ~robbing
    if shoot.any():
        j, dd = ix[shoot], d[shoot]
        m = j.size
        refund = st.turn_kong_paid[j].astype(np.int32)
        R = np.zeros((m, 4, 4), np.int32)
        R[np.arange(m), dd, :] = refund
        _pay_matrix(ctx, j, R, "kong_refund")
        st.kong_income[j, :, dd] -= refund.astype(np.int16)
        st.turn_kong_paid[j] = 0
    from_river = ~robbing
    st.live_discards[ix[from_river], t[from_river]] -= 1
    st.won_tiles[ix, t] += 1
    first = ~st.hu[ix].any(1)
    if first.any():
        single = winners.sum(1) == 1
        st.next_dealer[ix[first]] = np.where(single, winners.argmax(1), d)[first]
    rank = st.hu[ix].sum(1)
    r, s = np.nonzero(winners)
    st.hu[ix[r], s] = True
    st.hu_tile[ix[r], s] = t[r]
    st.hu_rank[ix[r], s] = rank[r]
    st.hu_from[ix[r], s] = d[r]
    st.claim_tile[ix] = -1
    offset = np.where(winners, (np.arange(4)[None, :] - d[:, None]) % 4, 0)
    last = ((d + offset.max(1)) % 4).astype(np.int8)
    three = st.hu[ix].sum(1) >= 3
    empty = _wall_left(st, ix) <= 0
    end3 = three
    endw = ~three & empty
    if end3.any():
        _end_deal(ctx, ix[end3], END_THREE_HU)
    if endw.any():
        _end_deal(ctx, ix[endw], END_WALL)
    go = ~three & ~empty
    if go.any():
        j = ix[go]
        _draw(ctx, j, _next_non_hu(st.hu[j], last[go]))


def _advance(ctx: _Ctx) -> None:
    """Run everything that needs no decision until every table waits for one.

    Each pass settles the claim windows whose answers are all in, then makes the forced
    discards of set-aside tiles (looking again at the tables whose window it settled).
    The first pass looks at every table; a later pass only at the tables of the previous
    pass's forced discards: every other table was found waiting for a decision."""
    st = ctx.st
    cand = None  # the tables to look at (None: every table)
    for _ in range(1000):
        ph = st.phase if cand is None else st.phase[cand]
        pos = _IS_WINDOW[ph].nonzero()[0]
        if pos.size:
            win = pos if cand is None else cand[pos]
            opts = st.claim_opts[win]
            if not np.count_nonzero(opts):  # nobody may claim: settle every window now
                _resolve_windows(ctx, win)
                ph = st.phase if cand is None else st.phase[cand]
            else:
                pending = (opts != 0) & (st.claim_answer[win] == ANS_NONE)
                order = _ASK_ORDER[st.active[win]]
                pend_in_order = pending[np.arange(win.size)[:, None], order]
                has = pend_in_order.any(1)
                n_has = np.count_nonzero(has)
                if n_has:
                    st.current[win[has]] = order[has, pend_in_order[has].argmax(1)]
                if n_has < win.size:
                    _resolve_windows(ctx, win[~has])
                    ph = st.phase if cand is None else st.phase[cand]
        pos = (ph == TURN).nonzero()[0]
        if not pos.size:
            return
        turn = pos if cand is None else cand[pos]
        seat = st.current[turn].astype(np.intp)
        sa = st.set_aside[turn, seat]
        sel = (sa >= 0).nonzero()[0]
        if not sel.size:
            return
        t2, s2, k2 = turn[sel], seat[sel], sa[sel]
        _, kong, _ = _turn_options(st, t2)
        forced = ~kong.any(1)
        if not np.count_nonzero(forced):
            return
        t3, s3, k3 = t2[forced], s2[forced], k2[forced].astype(np.intp)
        if ctx.ledger is not None:
            ctx.ledger.event(t3, s3, k3.astype(np.int64) + DISCARD, auto=True)
        _discard(ctx, t3, s3, k3)
        cand = t3
    raise RuntimeError("engine did not settle")  # pragma: no cover


# ----------------------------------------------------------------------------- deal end


def _end_deal(ctx: _Ctx, ix: np.ndarray, reason: int) -> None:
    st = ctx.st
    if reason == END_WALL:
        _settle_wall(ctx, ix)
    st.end_reason[ix] = reason
    if ctx.ledger is not None:
        ctx.ledger.end(ix, np.full(ix.size, reason), st.next_dealer[ix])
    st.match_scores[ix] += st.scores[ix]
    more = st.deal_index[ix] + 1 < ctx.rules.deals_per_match
    if more.any():
        j = ix[more]
        st.deal_index[j] += 1
        _deal(st, j, st.next_dealer[j].copy())
        if ctx.ledger is not None:
            ctx.ledger.deal(j)
    fin = ix[~more]
    st.phase[fin] = DONE
    st.done[fin] = True


def settlement_states(st: State, ix: np.ndarray) -> tuple[np.ndarray, ...]:
    """For tables ix at the wall end: (flower_pig, ready, theoretical_max), each (n, 4)."""
    n = ix.size
    non_hu = ~st.hu[ix]
    vd = st.void[ix]
    h = st.hand[ix]
    void_kinds = SUIT_OF[None, None, :] == vd[:, :, None]
    pig = (((h > 0) & void_kinds).any(2) | (st.set_aside[ix] >= 0)) & non_hu
    mk = _meld_kind(st.meld[ix]).reshape(-1, N_KINDS)
    waits = hx.batch_wait_mask(h.reshape(-1, N_KINDS), mk, vd.reshape(-1)).reshape(n, 4, N_KINDS)
    ready = non_hu & ~pig & waits.any(2)
    tmax = np.zeros((n, 4), np.int32)
    if ready.any():
        r, s = np.nonzero(ready)
        tmax[r, s] = hx.batch_theoretical_max(h[r, s], _meld_kind(st.meld[ix[r], s]),
                                             vd[r, s], st.rules.fan_cap)
    return pig, ready, tmax


def _settle_wall(ctx: _Ctx, ix: np.ndarray) -> None:
    st = ctx.st
    rules = ctx.rules
    if ctx.ledger is not None:
        ctx.ledger.settle(ix)
    pig, ready, tmax = settlement_states(st, ix)
    not_ready = ~st.hu[ix] & ~ready
    P = (not_ready[:, :, None] & ready[:, None, :]) * tmax[:, None, :]
    _pay_matrix(ctx, ix, P.astype(np.int32), "ready")
    penalised = pig & st.nonvoid_discard[ix]
    if penalised.any():
        pen = penalised * np.int32(rules.flower_pig_penalty)
        st.scores[ix] -= pen
        ctx.rewards[ix] -= pen
        if ctx.ledger is not None:
            r, s = np.nonzero(penalised)
            ctx.ledger.pay(ix[r], s, np.full(r.size, -1), pen[r, s], "flower_pig")
    # not-ready receivers return their kong income [payer, receiver]
    R = st.kong_income[ix].astype(np.int32) * not_ready[:, None, :]
    if R.any():
        _pay_matrix(ctx, ix, R.transpose(0, 2, 1), "kong_refund")
        st.kong_income[ix] -= R.astype(np.int16)

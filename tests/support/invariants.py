"""Invariants of the batched state, checked slowly and independently of the engine.

``check_invariants(state, prev_state=None, rewards=None)`` raises ``AssertionError`` naming
the table (and seat, tile or action) of the first broken invariant:

* the 108 tiles are conserved on every table (hands, set-aside tiles, melds (pung 3,
  kong 4), the rest of the wall, live discards, tiles won, and the tile being added to a
  kong during a robbing window); never more than 4 of a kind anywhere; no negative count;
  hand sizes fit the phase;
* the legal mask is never empty on a live table and always empty on a finished one, and
  it equals a slow legal-move generator written from docs/rules.md (sections 3, 4, 12);
* with ``rewards``: they sum to zero on each table except ``-flower_pig_penalty`` per
  penalised flower pig on a wall-end step; a seat that had won before the step never has
  a negative reward; with ``prev_state`` too: scores are the previous scores plus the
  rewards (match scores across deal ends).

Slow (Python loops over tables and seats): for tests, not for training.
"""

from __future__ import annotations

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core import hands as hx
from sichuan_env.core.actions import (
    ACTION_STRINGS,
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
from sichuan_env.core.state import (
    ANS_NONE,
    CLAIM,
    DONE,
    END_WALL,
    MELD_NAMES,
    ROB,
    TURN,
    VOID,
    State,
)
from sichuan_env.core.state import PUNG as MELD_PUNG
from sichuan_env.core.tiles import N_KINDS, SUITS, tile_str

_MELD_TILES = np.array([0, 3, 4, 4, 4, 4], np.int64)


def _fail(t: int, msg: str) -> None:
    raise AssertionError(f"table {t}: {msg}")


def _melds(meld_row: np.ndarray) -> list[tuple[str, str]]:
    return [(MELD_NAMES[int(meld_row[k])], tile_str(k)) for k in np.flatnonzero(meld_row)]


def _complete(hand: np.ndarray, meld_row: np.ndarray, void: int) -> bool:
    """Complete hand (docs/rules.md section 5) through the single-hand API of hands.py."""
    if hand.sum() + 3 * np.count_nonzero(meld_row) != 14:
        return False
    return hx.is_complete(hand.astype(np.int8), _melds(meld_row), None if void < 0 else void)


# ----------------------------------------------------------------------------- tiles


def _tile_totals(st: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised: (B, 27) tiles in play per kind, (B, 4, 27) per seat (hand + melds +
    set-aside), (B, 4) tiles held per seat (kongs count 3)."""
    B = st.batch_size
    hand = st.hand.astype(np.int64)
    meld = st.meld.astype(np.int64).clip(0, 5)
    own = hand + _MELD_TILES[meld]
    sa = st.set_aside.astype(np.int64)
    b, s = np.nonzero(sa >= 0)
    own[b, s, sa[b, s]] += 1
    total = own.sum(1)
    pos = np.arange(st.wall.shape[1])[None, :]
    in_wall = (pos >= st.wall_front[:, None]) & (pos < st.wall_back[:, None]) & (st.wall >= 0)
    tb, tp = np.nonzero(in_wall)
    np.add.at(total, (tb, st.wall[tb, tp].astype(np.intp)), 1)
    total += st.live_discards.astype(np.int64) + st.won_tiles.astype(np.int64)
    rob = np.flatnonzero((st.phase == ROB) & (st.claim_tile >= 0))
    total[rob, st.claim_tile[rob].astype(np.intp)] += 1
    held = hand.sum(2) + 3 * np.count_nonzero(meld, axis=2) + (sa >= 0)
    del B
    return total, own, held


def _expected_held(st: State) -> np.ndarray:
    want = np.full((st.batch_size, 4), 13, np.int64)
    B = np.arange(st.batch_size)
    v = st.phase == VOID
    want[B[v], st.dealer[v]] = 14
    tr = st.phase == TURN
    want[B[tr], st.active[tr]] = 14
    return want


def _check_tiles(st: State, t: int, total: np.ndarray, own: np.ndarray,
                 held: np.ndarray, want: np.ndarray) -> None:
    hand = st.hand[t].astype(np.int64)
    meld = st.meld[t].astype(np.int64)
    if (hand < 0).any():
        s, k = np.argwhere(hand < 0)[0]
        _fail(t, f"seat {s} holds {hand[s, k]} of {tile_str(k)} (negative count)")
    if (meld < 0).any() or (meld > 5).any():
        _fail(t, "meld codes out of range 0..5")
    for name, arr in (("live_discards", st.live_discards[t]), ("won_tiles", st.won_tiles[t])):
        a = arr.astype(np.int64)
        if (a < 0).any() or (a > 4).any():
            k = int(np.flatnonzero((a < 0) | (a > 4))[0])
            _fail(t, f"{name} has {a[k]} of {tile_str(k)}")
    for s in range(4):
        if (own[t, s] > 4).any():
            k = int(np.argmax(own[t, s]))
            _fail(t, f"seat {s} holds {own[t, s, k]} of {tile_str(k)} (hand, melds, set-aside)")
    front, back = int(st.wall_front[t]), int(st.wall_back[t])
    if not 0 <= front <= back <= st.wall.shape[1]:
        _fail(t, f"wall pointers out of order: front {front}, back {back}")
    if (st.wall[t, front:back] < 0).any():
        _fail(t, "a missing tile (-1) inside the remaining wall")
    short = (st.wall[t] < 0).any()  # a custom short wall: fewer than 108 tiles in play
    bad = (total[t] > 4) if short else (total[t] != 4)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        _fail(t, f"{total[t, k]} tiles of {tile_str(k)} in play (expected 4); "
                 f"{int(total[t].sum())} tiles in all")
    for s in range(4):
        if held[t, s] != want[t, s]:
            _fail(t, f"seat {s} holds {held[t, s]} tiles in phase {int(st.phase[t])} "
                     f"(expected {want[t, s]}; kongs count 3)")


# ----------------------------------------------------------------------------- legality


def _slow_legal(st: State, t: int) -> np.ndarray:
    """The legal actions of table t from docs/rules.md, one seat and tile at a time."""
    legal = np.zeros(N_ACTIONS, bool)
    ph = int(st.phase[t])
    if ph == DONE or st.done[t]:
        return legal
    s = int(st.current[t])
    hand = st.hand[t, s]
    void = int(st.void[t, s])
    if st.hu[t, s]:
        _fail(t, f"seat {s} has declared Hu but is asked to act")
    if ph == VOID:
        if void >= 0:
            _fail(t, f"seat {s} asked to choose a void suit twice")
        for k in range(N_KINDS):
            legal[VOID_TILE + k] = hand[k] > 0
        for suit in range(3):
            legal[VOID_SUIT + suit] = not hand[9 * suit : 9 * suit + 9].any()
        return legal
    if void < 0:
        _fail(t, f"seat {s} acts in phase {ph} without a void suit")
    wall_left = int(st.wall_back[t]) - int(st.wall_front[t])
    if ph == TURN:
        if s != int(st.active[t]):
            _fail(t, f"current seat {s} is not the turn owner {int(st.active[t])}")
        sa = int(st.set_aside[t, s])
        held_void = [k for k in range(N_KINDS) if hand[k] > 0 and k // 9 == void]
        if sa >= 0:
            legal[DISCARD + sa] = True
        else:
            for k in range(N_KINDS):
                if hand[k] > 0 and (not st.rules.strict_void or not held_void
                                    or k // 9 == void):
                    legal[DISCARD + k] = True
        can_kong = not st.after_pung[t] and wall_left >= 1
        if can_kong:
            for k in range(N_KINDS):
                if k // 9 == void:
                    continue
                if hand[k] == 4 or (st.meld[t, s, k] == MELD_PUNG and hand[k] >= 1):
                    legal[KONG + k] = True
        if not st.after_pung[t] and sa < 0 and not held_void:
            legal[HU] = _complete(hand, st.meld[t, s], void)
        return legal
    if ph in (CLAIM, ROB):
        d = int(st.active[t])
        if s == d:
            _fail(t, f"the discarder {d} is asked to claim its own tile")
        if st.claim_answer[t, s] != ANS_NONE:
            _fail(t, f"seat {s} asked twice in one claim window")
        legal[PASS] = True
        opts = _slow_claims(st, t, s)
        legal[PUNG] = "pung" in opts
        legal[MELDED_KONG] = "kong" in opts
        legal[HU] = "hu" in opts
        return legal
    _fail(t, f"unknown phase {ph}")
    return legal


def _slow_claims(st: State, t: int, s: int) -> set[str]:
    """Claims seat s may make on the tile under claim (docs/rules.md section 4, 12.8)."""
    ph = int(st.phase[t])
    tile = int(st.claim_tile[t])
    d = int(st.active[t])
    out: set[str] = set()
    if s == d or st.hu[t, s] or tile < 0:
        return out
    hand = st.hand[t, s]
    void = int(st.void[t, s])
    if tile // 9 == void:
        return out
    wall_left = int(st.wall_back[t]) - int(st.wall_front[t])
    if ph == CLAIM:
        if hand[tile] >= 2:
            out.add("pung")
        if hand[tile] == 3 and wall_left >= 1:
            out.add("kong")
    if st.set_aside[t, s] < 0:
        h = hand.copy()
        h[tile] += 1
        if not any(h[9 * void : 9 * void + 9]) and _complete(h, st.meld[t, s], void):
            robbing = ph == ROB
            sc = hx.score(
                hand.astype(np.int8), _melds(st.meld[t, s]), tile, void,
                shoot_after_kong=bool(st.shoot_flag[t]) and not robbing,
                robbing_kong=robbing, under_the_sea=wall_left == 0 and not robbing,
                rules=st.rules,
            )
            passed = int(st.passed_hu[t, s])
            if passed == 0 or sc.value > passed:
                out.add("hu")
    return out


def _check_legal(st: State, mask: np.ndarray, t: int) -> None:
    live = not st.done[t] and st.phase[t] != DONE
    if live and not mask[t].any():
        _fail(t, f"no legal action for seat {int(st.current[t])} in phase {int(st.phase[t])}")
    if not live and mask[t].any():
        _fail(t, "a finished table has legal actions")
    slow = _slow_legal(st, t)
    diff = np.flatnonzero(slow != mask[t])
    if diff.size:
        a = int(diff[0])
        what = "offers" if mask[t, a] else "does not offer"
        _fail(t, f"seat {int(st.current[t])}: the mask {what} {ACTION_STRINGS[a]!r} "
                 f"(docs/rules.md says {'illegal' if mask[t, a] else 'legal'}); mask "
                 f"{sorted(ACTION_STRINGS[x] for x in np.flatnonzero(mask[t]))}")
    if st.phase[t] in (CLAIM, ROB):
        # every seat with a claim is asked: the offers equal the slow ones for all seats
        for s in range(4):
            bits = int(st.claim_opts[t, s])
            offered = {n for n, b in (("hu", 1), ("pung", 2), ("kong", 4)) if bits & b}
            want = _slow_claims(st, t, s)
            if offered != want:
                _fail(t, f"claim window on {tile_str(int(st.claim_tile[t]))}: seat {s} "
                         f"offered {sorted(offered)}, docs/rules.md gives {sorted(want)}")


# ----------------------------------------------------------------------------- rewards


def _penalised_pigs(st: State, t: int) -> int:
    n = 0
    for s in range(4):
        if st.hu[t, s]:
            continue
        v = int(st.void[t, s])
        pig = st.set_aside[t, s] >= 0 or (v >= 0 and st.hand[t, s, 9 * v : 9 * v + 9].any())
        n += bool(pig and st.nonvoid_discard[t, s])
    return n


def _check_rewards(st: State, prev: State | None, rewards: np.ndarray, t: int) -> None:
    r = np.asarray(rewards[t], np.float64)
    if (r != np.round(r)).any():
        _fail(t, f"non-integer rewards {r.tolist()}")
    total = int(round(r.sum()))
    pen = st.rules.flower_pig_penalty
    same_deal = prev is not None and (
        int(prev.episode[t]) == int(st.episode[t])
        and int(prev.deal_index[t]) == int(st.deal_index[t])
    )
    wall_end_now = (same_deal and st.phase[t] == DONE and st.end_reason[t] == END_WALL
                    and prev is not None and prev.phase[t] != DONE)
    if wall_end_now:
        want = -pen * _penalised_pigs(st, t)
        if total != want:
            _fail(t, f"rewards {r.tolist()} sum to {total}; the wall-end step allows "
                     f"{want} ({_penalised_pigs(st, t)} penalised flower pig(s))")
    elif same_deal or prev is None:
        if total != 0 and not (pen and total % pen == 0 and -4 * pen <= total < 0
                               and prev is None):
            _fail(t, f"rewards {r.tolist()} do not sum to zero")
    else:  # a deal ended and a new one began during the step
        if total != 0 and not (pen and total % pen == 0 and -4 * pen <= total < 0):
            _fail(t, f"rewards {r.tolist()} sum to {total} at a deal end")
    if prev is not None:
        for s in range(4):
            if prev.hu[t, s] and not prev.done[t] and r[s] < 0:
                _fail(t, f"seat {s} had won before the step but gets reward {r[s]}")
        if prev.done[t] and (r != 0).any() and same_deal:
            _fail(t, f"a finished table got rewards {r.tolist()}")


def _check_scores(st: State, prev: State, rewards: np.ndarray | None, t: int) -> None:
    r = np.zeros(4, np.int64) if rewards is None else np.round(rewards[t]).astype(np.int64)
    sc, psc = st.scores[t].astype(np.int64), prev.scores[t].astype(np.int64)
    ms, pms = st.match_scores[t].astype(np.int64), prev.match_scores[t].astype(np.int64)
    if int(st.episode[t]) != int(prev.episode[t]):  # auto-reset: a new match
        if sc.any() or ms.any():
            _fail(t, f"a new match starts with scores {sc.tolist()}, match {ms.tolist()}")
        return
    if prev.done[t]:
        if not (sc == psc).all() or not (ms == pms).all():
            _fail(t, "a finished table's scores changed")
        return
    if int(st.deal_index[t]) != int(prev.deal_index[t]):  # next deal of the match
        if sc.any():
            _fail(t, f"a new deal starts with scores {sc.tolist()}")
        if not (ms == pms + psc + r).all():
            _fail(t, f"match scores {ms.tolist()} != {pms.tolist()} + deal {psc.tolist()} "
                     f"+ rewards {r.tolist()}")
        return
    if rewards is not None and not (sc == psc + r).all():
        _fail(t, f"scores {sc.tolist()} != previous {psc.tolist()} + rewards {r.tolist()}")
    if st.done[t] and not (ms == pms + sc).all():
        _fail(t, f"final match scores {ms.tolist()} != {pms.tolist()} + deal {sc.tolist()}")
    if not st.done[t] and not (ms == pms).all():
        _fail(t, "match scores changed within a deal")


# ----------------------------------------------------------------------------- flow


def _check_flow(st: State, t: int) -> None:
    ph = int(st.phase[t])
    if bool(st.done[t]) != (ph == DONE):
        _fail(t, f"done={bool(st.done[t])} but phase {ph}")
    nhu = int(st.hu[t].sum())
    if ph != DONE and nhu >= 3:
        _fail(t, f"{nhu} seats have won but the deal goes on")
    ranks = sorted(int(x) for x in st.hu_rank[t] if x >= 0)
    if ranks and ranks[-1] >= nhu:
        _fail(t, f"Hu ranks {st.hu_rank[t].tolist()} with {nhu} winners")
    for s in range(4):
        if bool(st.hu[t, s]) != (st.hu_tile[t, s] >= 0) or bool(st.hu[t, s]) != (
            st.hu_rank[t, s] >= 0
        ):
            _fail(t, f"seat {s}: hu, hu_tile and hu_rank disagree")
        if ph != VOID and ph != DONE and st.void[t, s] < 0:
            _fail(t, f"seat {s} has no void suit after the choice")
        v = int(st.void[t, s])
        if v >= 0:
            for k in np.flatnonzero(st.meld[t, s]):
                if k // 9 == v:
                    _fail(t, f"seat {s} has a meld of its void suit {SUITS[v]}: {tile_str(k)}")
        n = int(st.river_len[t, s])
        if n < 0 or (st.river[t, s, :n] < 0).any() or (st.river[t, s, n:] >= 0).any():
            _fail(t, f"seat {s}: river and river_len disagree")
    if ph in (CLAIM, ROB) and st.claim_tile[t] < 0:
        _fail(t, "a claim window without a tile")


# ----------------------------------------------------------------------------- entry


def check_invariants(state: State, prev_state: State | None = None,
                     rewards: np.ndarray | None = None) -> None:
    """Check every table of ``state`` (see the module docstring); ``prev_state`` and
    ``rewards`` are the state before the step and the step's rewards (B, 4)."""
    st = state
    mask = engine.legal_mask(st)
    if mask.shape != (st.batch_size, N_ACTIONS):
        raise AssertionError(f"legal mask has shape {mask.shape}")
    stale = np.flatnonzero((st.legal_action_mask != mask).any(1))
    if stale.size:
        _fail(int(stale[0]), "state.legal_action_mask differs from the legal actions of the state")
    total, own, held = _tile_totals(st)
    want = _expected_held(st)
    short = (st.wall < 0).any(1)
    ok_tiles = (
        np.where(short[:, None], total <= 4, total == 4).all(1)
        & (own <= 4).all((1, 2)) & (st.hand >= 0).all((1, 2))
        & (st.live_discards >= 0).all(1) & (st.won_tiles >= 0).all(1)
        & (held == want).all(1)
    )
    for t in range(st.batch_size):
        _check_flow(st, t)
        if not ok_tiles[t]:
            _check_tiles(st, t, total, own, held, want)
        _check_legal(st, mask, t)
        if rewards is not None:
            _check_rewards(st, prev_state, rewards, t)
        if prev_state is not None:
            _check_scores(st, prev_state, rewards, t)

"""Deals consistent with what one seat sees: engine states sampled from a seat view.

:func:`sample_states` takes one row of a :class:`~sichuan_env.seats.view.SeatView` and builds K
engine tables (a :class:`~sichuan_env.core.state.State`) that agree with everything in that
view and fill in what the seat cannot see at random. It reads the view only -- never a
real state -- so two tables that differ only in hidden tiles give the same samples.

**Known** (copied from the view, relative seats turned back into absolute ones): the
seat's own hand, set-aside tile, drawn tile, void suit and declined-Hu value; every meld,
river, live discard, shown winning tile, revealed void suit, Hu, score; the dealer, the
phase, the turn owner, the tile under claim and the number of wall tiles left.

**Hidden** (sampled): the tiles not seen -- four copies of each kind less the own hand
and set-aside tile, all melds, the live discards, the shown winning tiles and, in a
kong-robbing window, the tile being added -- are shuffled and dealt to

1. the other seats' standing hands (with their set-aside tiles): ``13 - 3 x melds``
   tiles each, the dealer one more during the void choice; a seat whose void suit is
   revealed gets no tile of that suit (a seat keeps none once it discards other suits;
   when the unseen tiles cannot fill it otherwise, it takes what is left);
2. the face-down winning tiles of self-drawn Hu;
3. the wall, in the shuffled order.

With ``hands="discards"`` the other seats' hands are drawn with weights instead of evenly:
one after another, each takes its tiles from the shuffled pool with a chance in
proportion to a weight per kind, by what its own river shows (:data:`DISCARD_WEIGHTS`):
a kind it has discarded, a kind one rank from one it discarded, two ranks from one, any
other. The weights are the rates at which seats of four ``rules`` bots held such kinds
(copies in the hand over copies unseen by another seat, relative to the last category),
measured on 800 deals of either preset: a seat holds a kind it threw about 0.6 times as
often as an unrelated one. What no seat takes stays in the wall in the shuffled order.
With ``hands="model"`` the weights are a network's (:mod:`sichuan_agents.search.hand_model`: the
odds
that an unseen copy of a kind is in the seat's hand, from the view); ``hands="shaped"``
also makes a seat's sampled hand ready (:func:`make_ready`) with the network's chance
that it is; ``hands="safe"`` too, with ready hands that wait on none of the seat's
:func:`dead_kinds` (its own river's kinds and the tiles it let pass). ``hands="explained"``
draws :data:`EXPLAINED_DRAWS` times as many deals as ``"discards"`` and keeps ``n``, each
with a chance in proportion to :func:`explained_weights` (whether the ``rules`` policy
would have made each other seat's last discard from its sampled hand).

A seat that has chosen its void suit but not yet shown it gets the suit with the fewest
tiles in its sampled hand (ties: the lower suit); until it has discarded, one tile of
that suit (the kind with the fewest copies) is its set-aside tile, when it holds one.

**Approximations** (facts no view holds): seats asked before this one in a claim window
are taken to have passed; the shoot fan (a discard right after a kong) and the kong
replacement fan of the seat's own draw are off; the other seats' declined-Hu values are 0;
kong income (what refunds a kong whose owner ends not ready) is rebuilt from the melds:
2 from every other seat still playing for a concealed kong, 1 for a promoted kong, 2 from
the seat whose river holds the kind for a melded kong (the next seat when none does).

The rules of the sampled tables end a match after one deal (``deals_per_match=1``): a
play-out stops at the end of the deal being played.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sichuan_agents.search.rollout import reopen_kernel
from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.actions import DISCARD, HU, PUNG
from sichuan_env.core.actions import MELDED_KONG as ACT_MELDED_KONG
from sichuan_env.core.rules import Rules
from sichuan_env.core.state import (
    CLAIM,
    CONCEALED_KONG,
    MELDED_KONG,
    OPT_HU,
    OPT_KONG,
    OPT_PUNG,
    PROMOTED_KONG,
    ROB,
    TURN,
    VOID,
    State,
    empty_state,
)
from sichuan_env.core.vocab import MELD_TILES, N_KINDS, SUIT_OF
from sichuan_env.seats.view import SeatView


class Known:
    """The part of one view row the samples share, in absolute seats."""

    def __init__(self, view: SeatView, i: int) -> None:
        me = int(view.seat[i])
        self.me = me
        rel = (np.arange(4) - me) % 4  # absolute seat a is relative seat rel[a]
        self.rel = rel
        self.phase = int(view.phase[i])
        self.hand = np.asarray(view.hand[i], np.int8)
        self.set_aside = int(view.set_aside[i])
        self.drawn = int(view.drawn[i])
        self.passed_hu = int(view.passed_hu[i])
        self.void = np.asarray(view.void[i], np.int8)[rel]
        self.void_revealed = np.asarray(view.void_revealed[i], bool)[rel]
        self.meld = np.asarray(view.meld[i], np.int8)[rel]
        self.river = np.asarray(view.river[i], np.int8)[rel]
        self.river_len = np.asarray(view.river_len[i], np.int8)[rel]
        self.hu = np.asarray(view.hu[i], bool)[rel]
        self.hu_tile = np.asarray(view.hu_tile[i], np.int8)[rel]
        self.live_discards = np.asarray(view.live_discards[i], np.int8)
        self.won_tiles = np.asarray(view.won_tiles[i], np.int8)
        self.claim_tile = int(view.claim_tile[i])
        self.active = (int(view.active[i]) + me) % 4
        self.dealer = (int(view.dealer[i]) + me) % 4
        self.wall_left = int(view.wall_left[i])
        self.scores = np.asarray(view.scores[i], np.int32)[rel]
        self.match_scores = np.asarray(view.match_scores[i], np.int32)[rel]
        self.deal_index = int(view.deal_index[i])
        self.facedown = [a for a in range(4) if a != me and self.hu[a] and self.hu_tile[a] < 0]
        self.others = [a for a in range(4) if a != me]
        n_melds = (self.meld != 0).sum(1)
        self.sizes = {a: 13 - 3 * int(n_melds[a]) + int(self.phase == VOID and a == self.dealer)
                      for a in self.others}
        self.unseen = self.unseen_counts()
        need = sum(self.sizes.values()) + len(self.facedown) + self.wall_left
        if int(self.unseen.sum()) != need:
            raise ValueError(f"view row {i} is inconsistent: {int(self.unseen.sum())} unseen "
                             f"tiles for {need} hidden places")

    def unseen_counts(self) -> np.ndarray:
        """(27,) copies of each kind the seat cannot see."""
        seen = self.hand.astype(np.int16) + self.live_discards + self.won_tiles
        seen += MELD_TILES[self.meld].sum(0)
        if self.set_aside >= 0:
            seen[self.set_aside] += 1
        if self.phase == ROB and self.claim_tile >= 0:
            seen[self.claim_tile] += 1
        if (seen > 4).any() or (seen < 0).any():
            raise ValueError("view shows more than four copies of a tile kind")
        return (4 - seen).astype(np.int16)

    def void_chosen(self, a: int) -> bool:
        """Whether seat ``a`` has chosen its void suit (seats choose in order 0..3)."""
        return self.phase != VOID or a < self.me


def _kong_income(k: Known) -> np.ndarray:
    """(4, 4) kong points [payer, receiver] rebuilt from the melds (see the module)."""
    out = np.zeros((4, 4), np.int16)
    for r in range(4):
        for kind in np.flatnonzero(k.meld[r]):
            code = int(k.meld[r, kind])
            if code in (CONCEALED_KONG, PROMOTED_KONG):
                pts = 2 if code == CONCEALED_KONG else 1
                for f in range(4):
                    if f != r and not k.hu[f]:
                        out[f, r] += pts
            elif code == MELDED_KONG:
                payer = next((f for f in range(4) if f != r and
                              (k.river[f, :k.river_len[f]] == kind).any()), (r + 1) % 4)
                out[payer, r] += 2
    return out


def _base(k: Known, rules: Rules, n: int) -> State:
    """n tables holding the known part of the view (hidden parts empty)."""
    st = empty_state(n, rules)
    st.hand[:, k.me] = k.hand
    st.set_aside[:, k.me] = k.set_aside
    st.void[:, k.me] = k.void[k.me]
    for a in k.others:
        if k.void_revealed[a]:
            st.void[:, a] = k.void[a]
    st.void_revealed[:] = k.void_revealed
    st.meld[:] = k.meld
    st.river[:] = k.river
    st.river_len[:] = k.river_len
    st.live_discards[:] = k.live_discards
    st.won_tiles[:] = k.won_tiles
    st.hu[:] = k.hu
    st.hu_tile[:] = k.hu_tile
    order = np.cumsum(k.hu) - 1
    st.hu_rank[:] = np.where(k.hu, order, -1)
    for a in range(4):
        if k.hu[a]:
            st.hu_from[:, a] = a if a in k.facedown or a == k.me else (a + 1) % 4
    st.scores[:] = k.scores
    st.match_scores[:] = k.match_scores
    for a in range(4):
        river = k.river[a, :k.river_len[a]]
        st.nonvoid_discard[:, a] = k.void[a] >= 0 and bool((SUIT_OF[river] != k.void[a]).any())
    st.kong_income[:] = _kong_income(k)
    st.passed_hu[:, k.me] = k.passed_hu
    st.phase[:] = k.phase
    st.current[:] = k.me
    st.active[:] = k.active
    st.claim_tile[:] = k.claim_tile
    if k.phase == TURN:
        st.drawn_tile[:] = k.drawn
        st.after_pung[:] = k.drawn < 0 and int(k.river_len.sum()) > 0
    st.dealer[:] = k.dealer
    st.next_dealer[:] = k.dealer
    st.deal_index[:] = k.deal_index
    st.wall_front[:] = 0
    st.wall_back[:] = k.wall_left
    return st


HAND_SAMPLING = ("uniform", "discards", "model", "shaped", "safe", "explained")
# hands=explained: deals drawn per sample kept, and the weight of a deal for each other
# seat whose last discard the rules policy would not have made from the sampled hand
EXPLAINED_DRAWS = 4
EXPLAINED_MISS = 0.1
# weight of a kind in a seat's sampled hand: discarded by it, one rank from its discard,
# two ranks from one, other (see the module docstring)
DISCARD_WEIGHTS = (0.61, 0.83, 1.06, 1.0)


def discard_weights(river: np.ndarray, n: int) -> np.ndarray:
    """(27,) :data:`DISCARD_WEIGHTS` of each kind for a seat whose river holds the ``n``
    kinds ``river[:n]``."""
    thrown = np.zeros(N_KINDS, bool)
    thrown[np.asarray(river[:n], np.intp)] = True
    by_rank = thrown.reshape(3, 9)
    near1 = np.zeros((3, 9), bool)
    near1[:, 1:] |= by_rank[:, :-1]
    near1[:, :-1] |= by_rank[:, 1:]
    near2 = np.zeros((3, 9), bool)
    near2[:, 2:] |= by_rank[:, :-2]
    near2[:, :-2] |= by_rank[:, 2:]
    w = np.full(N_KINDS, DISCARD_WEIGHTS[3])
    w[near2.ravel()] = DISCARD_WEIGHTS[2]
    w[near1.ravel()] = DISCARD_WEIGHTS[1]
    w[thrown] = DISCARD_WEIGHTS[0]
    return w


def _take_weighted(pool: list[int], n: int, banned_suit: int, weight: np.ndarray,
                   rng: np.random.Generator) -> list[int]:
    """Like :func:`_take`, but ``n`` tiles drawn one after another with chances in
    proportion to ``weight`` of their kind (exponential keys, largest first)."""
    arr = np.asarray(pool, np.intp)
    keys = np.log1p(-rng.random(arr.size)) / weight[arr]
    keys[SUIT_OF[arr] == banned_suit] = -np.inf  # those only when nothing else is left
    pick = np.argsort(-keys, kind="stable")[:n]
    keep = np.ones(arr.size, bool)
    keep[pick] = False
    pool[:] = arr[keep].tolist()
    return arr[pick].tolist()


def _take(pool: list[int], n: int, banned_suit: int) -> list[int]:
    """Remove and return the first ``n`` tiles of ``pool`` not of ``banned_suit`` (then
    any tiles when too few are left)."""
    got: list[int] = []
    rest: list[int] = []
    for x in pool:
        if len(got) < n and SUIT_OF[x] != banned_suit:
            got.append(x)
        else:
            rest.append(x)
    while len(got) < n:
        got.append(rest.pop(0))
    pool[:] = rest
    return got


def sample_states(view: SeatView, i: int, mask: np.ndarray, rules: Rules, n: int,
                  rng: np.random.Generator, hands: str = "uniform",
                  hand_model: Any = None) -> State:
    """``n`` engine tables consistent with row ``i`` of ``view`` (hidden tiles sampled
    with ``rng``; see the module docstring); ``mask`` is the deciding seat's legal mask
    (in a claim window its options are set from it). Their rules are ``rules`` with one
    deal per match; ``legal_action_mask`` holds the deciding seat's legal actions.
    ``hands``: how the other seats' hands are drawn (:data:`HAND_SAMPLING`); with
    ``"model"`` or ``"shaped"``, ``hand_model`` is the
    :class:`sichuan_agents.search.hand_model.HandNet` to read (default: the shipped one)."""
    if hands not in HAND_SAMPLING:
        raise ValueError(f"unknown hand sampling {hands!r}; known: {', '.join(HAND_SAMPLING)}")
    if hands == "explained":
        pool = sample_states(view, i, mask, rules, EXPLAINED_DRAWS * n, rng, "discards")
        w = explained_weights(pool, Known(view, i))
        keys = np.log1p(-rng.random(w.size)) / w
        return pool.take(np.sort(np.argsort(-keys, kind="stable")[:n]))
    k = Known(view, i)
    weight = None
    ready: dict[int, float] = {}
    if hands == "discards":
        weight = {a: discard_weights(k.river[a], int(k.river_len[a])) for a in k.others}
    elif hands in ("model", "shaped", "safe"):
        weight, ready = model_weights(view, i, k, rules, hand_model)
    rules1 = rules.replace(deals_per_match=1)
    st = _base(k, rules1, n)
    tiles = np.repeat(np.arange(N_KINDS), k.unseen)
    constrained = [a for a in k.others if k.void_revealed[a]]
    free = [a for a in k.others if not k.void_revealed[a]]
    for t in range(n):
        pool = rng.permutation(tiles).tolist()
        for a in constrained + free:
            banned = int(k.void[a]) if a in constrained else -1
            got = (_take(pool, k.sizes[a], banned) if weight is None
                   else _take_weighted(pool, k.sizes[a], banned, weight[a], rng))
            counts = np.bincount(got, minlength=N_KINDS)
            if a in free and k.void_chosen(a):
                per_suit = counts.reshape(3, 9).sum(1)
                vd = int(np.argmin(per_suit))
                st.void[t, a] = vd
                if k.river_len[a] == 0 and not k.hu[a] and per_suit[vd] > 0:
                    suit = counts[9 * vd:9 * vd + 9]
                    held = np.flatnonzero(suit)
                    kind = 9 * vd + int(held[np.argmin(suit[held])])
                    counts[kind] -= 1
                    st.set_aside[t, a] = kind
            st.hand[t, a] = counts
        for a in k.facedown:
            tile = pool.pop(0)
            st.hu_tile[t, a] = tile
            st.won_tiles[t, tile] += 1
        st.wall[t, :len(pool)] = pool
        if hands in ("shaped", "safe"):
            for a in k.others:
                if not k.hu[a] and st.void[t, a] >= 0 and rng.random() < ready[a]:
                    make_ready(st, t, a, rng, dead=dead_kinds(k, a) if hands == "safe" else None)
    ek.refresh_waits(*engine.kernel_rule_args(rules1), *st.arrays())
    if k.phase in (CLAIM, ROB):
        reopen_kernel(np.int64(k.active), np.int64(k.claim_tile), k.phase == ROB,
                      np.int64(k.me), np.int64(own_options(mask)),
                      *engine.kernel_rule_args(rules1), *st.arrays())
    st.legal_action_mask[:] = engine.legal_mask(st)
    return st


def explained_weights(st: State, k: Known) -> np.ndarray:
    """(B,) weight of each sampled table: the product over the other seats still playing
    that have discarded of 1 where :func:`explains_last_discard` and
    :data:`EXPLAINED_MISS` where not."""
    w = np.ones(st.batch_size)
    for a in k.others:
        if not k.hu[a] and k.river_len[a] > 0:
            w *= np.where(explains_last_discard(st, k, a), 1.0, EXPLAINED_MISS)
    return w


def explains_last_discard(st: State, k: Known, a: int) -> np.ndarray:
    """(B,) bool: whether the ``rules`` policy, holding seat ``a``'s hand in each table plus
    the seat's last discard (the melds, rivers and void suits as they are now, the tile as
    if just drawn), discards that tile."""
    from sichuan_agents.search.rollout import choose_actions

    n = int(k.river_len[a])
    d = int(k.river[a, n - 1])
    before = st.copy()
    before.hand[:, a, d] += 1
    before.river_len[:, a] -= 1
    before.live_discards[:, d] = np.maximum(before.live_discards[:, d] - 1, 0)
    before.phase[:] = TURN
    before.current[:] = a
    before.active[:] = a
    before.drawn_tile[:] = d  # as if just drawn: a complete hand would have won
    before.after_pung[:] = False
    before.claim_tile[:] = -1
    ek.refresh_waits(*engine.kernel_rule_args(before.rules), *before.arrays())
    before.legal_action_mask[:] = engine.legal_mask(before)
    return choose_actions(before, np.arange(st.batch_size), "rules") == DISCARD + d


def dead_kinds(k: Known, a: int) -> np.ndarray:
    """(27,) bool: kinds other seat ``a`` is taken not to wait on, were it ready: every
    kind in its own river, and the last discard of each seat that played after it and
    before the viewing seat (tiles it let pass)."""
    dead = np.zeros(N_KINDS, bool)
    dead[np.asarray(k.river[a, :k.river_len[a]], np.intp)] = True
    b = (a + 1) % 4
    while b != k.me:
        if k.river_len[b] > 0 and not k.hu[b]:
            dead[int(k.river[b, k.river_len[b] - 1])] = True
        b = (b + 1) % 4
    return dead


def make_ready(st: State, t: int, a: int, rng: np.random.Generator,
               max_draws: int = 80, dead: np.ndarray | None = None) -> bool:
    """Table ``t`` of ``st``: seat ``a``'s hand improved by wall tiles swapped in, as a
    tile-efficient player would (a random wall tile joins the hand when some discard then
    lowers the shanten; that discard goes to the wall tile's place), until the hand is
    ready or ``max_draws`` tiles were tried. Tile counts are kept. With ``dead`` (27 bool),
    a hand counts as ready only when none of its waits is a dead kind. Whether it got
    ready."""
    from sichuan_agents.bots.greedy import discard_shanten, shanten
    from sichuan_env.core.hands import batch_wait_mask

    hand = st.hand[t, a].copy()
    meld = st.meld[t, a][None]
    void = st.void[t, a:a + 1]
    lo, hi = int(st.wall_front[t]), int(st.wall_back[t])
    now = int(shanten(hand[None], meld, void)[0])
    if dead is not None and now == 0 and (
            batch_wait_mask(hand[None], meld, void)[0] & dead).any():
        now = 1  # ready, but on a dead kind: a swap to a clean wait is still wanted
    allowed = np.ones((1, N_KINDS), bool)
    for _ in range(max_draws):
        if now <= 0 or hi <= lo:
            break
        p = int(rng.integers(lo, hi))
        x = int(st.wall[t, p])
        if SUIT_OF[x] == void[0]:
            continue
        hand[x] += 1
        after = discard_shanten(hand[None], meld, void, allowed)[0]
        d = int(np.argmin(after))
        if dead is not None and after[d] == 0 and after[d] < now:
            ready = np.flatnonzero(after == 0)
            rows = np.repeat(hand[None], ready.size, 0)
            rows[np.arange(ready.size), ready] -= 1
            clean = ~(batch_wait_mask(rows, np.repeat(meld, ready.size, 0),
                                      np.repeat(void, ready.size)) & dead).any(1)
            if not clean.any():
                hand[x] -= 1
                continue
            d = int(ready[int(np.flatnonzero(clean)[0])])
        if after[d] < now:
            hand[d] -= 1
            st.wall[t, p] = d
            now = int(after[d])
        else:
            hand[x] -= 1
    st.hand[t, a] = hand
    return now <= 0


def model_weights(view: SeatView, i: int, k: Known, rules: Rules, hand_model: Any = None
                  ) -> tuple[dict[int, np.ndarray], dict[int, float]]:
    """Per other (absolute) seat, the hand model's odds that an unseen copy of each kind
    is in its hand (:func:`sichuan_agents.search.hand_model.copy_weights`) and its chance of a ready
    hand."""
    from sichuan_agents.search.hand_model import (  # torch, on demand
        copy_weights,
        shipped_hand_model,
    )

    model = hand_model if hand_model is not None else shipped_hand_model()
    row = SeatView(*(f[i:i + 1] for f in view))
    sizes = np.zeros((1, 3))
    for a in k.others:
        sizes[0, int(k.rel[a]) - 1] = k.sizes[a]
    w, ready = copy_weights(model, row, rules, sizes)
    return ({a: w[0, int(k.rel[a]) - 1] for a in k.others},
            {a: float(ready[0, int(k.rel[a]) - 1]) for a in k.others})


def own_options(mask: np.ndarray) -> int:
    """The claim-option bits (``OPT_*``) of a claim window's legal mask."""
    return (OPT_HU * int(mask[HU]) | OPT_PUNG * int(mask[PUNG])
            | OPT_KONG * int(mask[ACT_MELDED_KONG]))

"""The greedy bot: tile efficiency (shanten and live effective tiles), batched.

Decisions, for every row of a batch at once (numpy over rows; the only loops are over
the three suits or fixed phases, never over tables):

* **Void suit** (forbidden-suit choice): the suit whose removal leaves the lowest shanten
  (``hands.batch_shanten`` with each suit as void), ties broken by the fewest tiles of
  that suit. One tile of it is set aside (a single before a pair, terminals first); an
  indicator card is used when the hand holds no tile of the suit.
* **Own turn**: Hu whenever legal. A kong (concealed, promoted or postponed) when the
  shanten after it is not higher than the best shanten after a discard. Otherwise a
  discard: a tile of the void suit first; else the discard leaving the lowest shanten
  (all 27 candidate discards in one ``batch_shanten`` call), among those the most *live
  effective tiles* -- tile kinds that lower the shanten, each counted by its copies not
  yet seen (4 minus own hand, all discards on the table, all melds and won tiles) --
  then the most isolated tile (fewest neighbours within two ranks).
* **Claims**: Hu whenever legal (also robbing a kong). A melded kong, else a pung, when
  the shanten after the claim is not higher than before; otherwise pass.

The bots read the seat view (``needs = "view"``): ``act_batch(views, masks)`` takes a
:class:`~sichuan_env.seats.view.SeatView` of N rows (:func:`sichuan_env.seats.view.seat_view`, the
same rows as the masks) and ``act(view, mask)`` one row of it (without the batch axis,
``sichuan_env.seats.agent.input_row``). :class:`Seen` derives from the view the arrays the
decisions use (meld kinds, discard counts, unseen copies). Observation planes are not
accepted: ``act_batch(planes, masks)`` raises a ``TypeError`` that says what to pass
(``sichuan_env.seats.agent.agent_input(bot, state, seats, rows)`` builds the input any agent
declares).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sichuan_env.core import hands as hx
from sichuan_env.core.actions import (
    DISCARD,
    HU,
    KONG,
    MELDED_KONG,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
)
from sichuan_env.core.state import CLAIM, ROB, TURN, VOID
from sichuan_env.core.vocab import MELD_KIND_OF_CODE, N_KINDS, RANK_OF, SUIT_OF
from sichuan_env.core.vocab import MELD_KIND_TILES as MELD_COPIES
from sichuan_env.seats.agent import BaseAgent
from sichuan_env.seats.view import SeatView

EYE = np.eye(N_KINDS, dtype=np.int8)
NO_SHANTEN = 99

# neighbour kinds within two ranks in the same suit (27, 27), the kind itself included
_DIST = np.abs(RANK_OF[:, None].astype(int) - RANK_OF[None, :])
NEAR2 = (SUIT_OF[:, None] == SUIT_OF[None, :]) & (_DIST <= 2)
NEAR1 = (SUIT_OF[:, None] == SUIT_OF[None, :]) & (_DIST <= 1)


# ----------------------------------------------------------------------------- the input


class Seen:
    """The arrays the bots decide from, derived from a :class:`SeatView` of N rows
    (relative seats: column 0 is the decider). Nothing here looks past the view.

    ``phase`` (N,); ``hand`` (N, 27); ``set_aside`` (N,) kind or -1; ``meld`` (N, 4, 27)
    meld kind per seat (0 none, 1 pung, 2 kong); ``void`` (N, 4) own void suit and the
    others' revealed ones (-1 unknown); ``hu`` (N, 4); ``discards`` (N, 4, 27) each
    seat's discards per kind (claimed ones included); ``n_discards`` (N, 4);
    ``last_discard`` (N, 4) kind of each seat's latest discard or -1; ``live_discards``
    and ``won_tiles`` (N, 27), the won tiles counted from the shown winning tiles;
    ``claim_tile`` (N,) or -1; ``wall_left`` (N,); derived: ``own_meld`` (N, 27),
    ``own_void`` (N,), ``visible`` (N, 27) copies the decider can see (capped at 4) and
    ``live`` = 4 - visible.
    """

    FIELDS = ("phase", "hand", "set_aside", "meld", "void", "hu", "discards", "n_discards",
              "last_discard", "live_discards", "won_tiles", "claim_tile", "wall_left",
              "own_meld", "own_void", "visible", "live")

    def __init__(self, view: SeatView) -> None:
        n = view.hand.shape[0]
        self.phase = np.asarray(view.phase, np.int8)
        self.hand = np.asarray(view.hand, np.int8)
        self.set_aside = np.asarray(view.set_aside, np.int8)
        self.meld = MELD_KIND_OF_CODE[view.meld]
        self.void = np.asarray(view.void, np.int8)
        self.hu = np.asarray(view.hu, bool)
        river = np.asarray(view.river).astype(np.intp)  # (N, 4, 60), -1 padding
        ok = river >= 0
        base = (np.arange(n)[:, None, None] * 4 + np.arange(4)[None, :, None]) * N_KINDS
        self.discards = np.bincount((base + river)[ok], minlength=n * 4 * N_KINDS).reshape(
            n, 4, N_KINDS).astype(np.int8)
        self.n_discards = ok.sum(2, dtype=np.int16)
        ln = np.asarray(view.river_len).astype(np.intp)
        last = np.take_along_axis(river, np.maximum(ln - 1, 0)[:, :, None], axis=2)[:, :, 0]
        self.last_discard = np.where(ln > 0, last, -1).astype(np.int8)
        self.live_discards = np.asarray(view.live_discards, np.int8)
        hu_tile = np.asarray(view.hu_tile).astype(np.intp)  # (N, 4) shown winning tiles
        won = np.zeros((n, N_KINDS), np.int16)
        r, s = np.nonzero(hu_tile >= 0)
        np.add.at(won, (r, hu_tile[r, s]), 1)
        self.won_tiles = won.astype(np.int8)
        self.claim_tile = np.asarray(view.claim_tile, np.int8)
        self.wall_left = np.asarray(view.wall_left, np.int16)
        self.own_meld = self.meld[:, 0]
        self.own_void = self.void[:, 0]
        vis = self.hand.astype(np.int16) + MELD_COPIES[self.meld].sum(1)
        vis += self.live_discards + self.won_tiles
        r = np.flatnonzero(self.set_aside >= 0)
        vis[r, self.set_aside[r]] += 1
        self.visible = np.minimum(vis, 4).astype(np.int8)
        self.live = (4 - self.visible).astype(np.int8)

    def __len__(self) -> int:
        return int(self.hand.shape[0])

    def take(self, rows: np.ndarray) -> Seen:
        """The rows ``rows`` of every array."""
        out = Seen.__new__(Seen)
        for name in self.FIELDS:
            setattr(out, name, getattr(self, name)[rows])
        return out


def _check_view(agent: Any, views: Any, masks: np.ndarray) -> SeatView:
    if not isinstance(views, SeatView):
        got = (f"an array of shape {np.shape(views)}" if isinstance(views, np.ndarray)
               else type(views).__name__)
        raise TypeError(
            f"{agent!r} reads the seat view (needs = 'view'), got {got}: pass "
            "sichuan_env.seats.view.seat_view(state, seats, rows) (the same rows as the masks), or "
            "build any agent's input with sichuan_env.seats.agent.agent_input(agent, state, seats, "
            "rows); observation planes are not accepted")
    if views.hand.ndim != 2 or views.hand.shape[0] != masks.shape[0]:
        raise ValueError(f"{agent!r}: the seat view has {views.hand.shape[:-1]} rows and "
                         f"the masks {masks.shape[:-1]}; pass one view row per mask row")
    return views


# ----------------------------------------------------------------------------- hand math


def shanten(hand: np.ndarray, meld: np.ndarray, void: np.ndarray) -> np.ndarray:
    """Batched shanten (int16) of hands (13 - 3n or 14 - 3n tiles); empty-safe.

    Speed: ``hands.batch_shanten`` is exact under the four-copies limit, which costs a
    per-row search for suits next to a meld. Bots only compare shanten values, so the
    melds are passed as sitting in the void suit (whose tiles are zeroed: they never
    count) -- the meld count is what the shanten formula needs; only the copies a meld
    takes from its own kind are ignored. Rows without a void suit keep their melds."""
    if hand.shape[0] == 0:
        return np.zeros(0, np.int16)
    hand = np.asarray(hand, np.int8)
    meld = np.asarray(meld, np.int8)
    void = np.asarray(void, np.int8)
    has_meld = meld.any(1)
    vok = (void >= 0) & has_meld
    if vok.any():
        r = np.flatnonzero(vok)
        hand = hand.copy()
        meld = meld.copy()
        v = void[r].astype(np.intp)
        void_cols = v[:, None] * 9 + np.arange(9)
        hand[r[:, None], void_cols] = 0
        n = np.count_nonzero(meld[r], axis=1)
        fake = np.zeros((r.size, N_KINDS), np.int8)
        slot = np.arange(9)[None, :] < n[:, None]
        fake[np.arange(r.size)[:, None], void_cols] = slot.astype(np.int8)
        meld[r] = fake
    return hx.batch_shanten(hand, meld, void).astype(np.int16)


def discard_shanten(hand: np.ndarray, meld: np.ndarray, void: np.ndarray,
                    allowed: np.ndarray) -> np.ndarray:
    """(N, 27) shanten after discarding each kind (``NO_SHANTEN`` where not allowed or
    not held): all candidate discards of all rows in one ``batch_shanten`` call."""
    ok = allowed & (hand > 0)
    r, k = np.nonzero(ok)
    out = np.full(hand.shape, NO_SHANTEN, np.int16)
    if r.size:
        out[r, k] = shanten(hand[r] - EYE[k], meld[r], void[r])
    return out


def effective_tiles(hand13: np.ndarray, meld: np.ndarray, void: np.ndarray,
                    sh: np.ndarray, live: np.ndarray) -> np.ndarray:
    """(M, 27) bool: kinds whose draw lowers the shanten ``sh`` of 13 - 3n-tile hands
    (for a ready hand: its waits). ``live`` (M, 27) limits to kinds with copies left."""
    m = hand13.shape[0]
    out = np.zeros((m, N_KINDS), bool)
    if m == 0:
        return out
    void_kind = SUIT_OF[None, :] == void[:, None]
    own = hand13 + MELD_COPIES[meld]
    room = (own < 4) & ~void_kind & (live > 0)
    ready = sh == 0
    if ready.any():
        r = np.flatnonzero(ready)
        out[r] = hx.batch_wait_mask(hand13[r], meld[r], void[r]) & room[r]
    far = np.flatnonzero(~ready)
    if far.size:
        held = (hand13[far] > 0) & ~void_kind[far]
        near = (held.astype(np.int8) @ NEAR2.astype(np.int8)) > 0
        near &= room[far]
        i, t = np.nonzero(near)
        rows = far[i]
        h14 = hand13[rows] + EYE[t]
        s14 = shanten(h14, meld[rows], void[rows])
        imp = s14 < sh[rows]
        out[rows[imp], t[imp]] = True
    return out


def isolation(hand: np.ndarray) -> np.ndarray:
    """(N, 27) float: higher for tiles with fewer neighbours (a tie-break for discards)."""
    nb = (hand > 0).astype(np.int8) @ NEAR2.astype(np.int8)  # neighbours incl. itself
    nb1 = (hand > 0).astype(np.int8) @ NEAR1.astype(np.int8)
    edge = np.minimum(RANK_OF, 8 - RANK_OF)  # 0 for terminals
    return -(nb + nb1 + hand).astype(np.float32) - 0.1 * edge[None, :]


def choose_void(hand: np.ndarray, masks: np.ndarray, suit_bias: np.ndarray | None = None,
                ) -> np.ndarray:
    """Void-suit actions for VOID-phase rows: the suit whose removal keeps the lowest
    shanten (ties: fewest tiles), plus ``suit_bias`` (N, 3) subtracted from the score."""
    n = hand.shape[0]
    per_suit = hand.reshape(n, 3, 9).sum(2).astype(np.float32)
    sh = np.stack([shanten(hand, np.zeros_like(hand), np.full(n, s, np.int8))
                   for s in range(3)], axis=1).astype(np.float32)
    score = sh * 10 + per_suit
    if suit_bias is not None:
        score = score - suit_bias
    suit = score.argmin(1)
    act = np.empty(n, np.int64)
    empty = per_suit[np.arange(n), suit] == 0
    act[empty] = VOID_SUIT + suit[empty]
    ne = np.flatnonzero(~empty)
    if ne.size:
        h = hand[ne]
        in_suit = SUIT_OF[None, :] == suit[ne, None]
        pref = np.where(in_suit & (h > 0), isolation(h) - 2.0 * h, -np.inf)
        act[ne] = VOID_TILE + pref.argmax(1)
    bad = ~masks[np.arange(n), act]
    if bad.any():  # cannot happen with engine masks; stay legal anyway
        act[bad] = masks[bad].argmax(1)
    return act


# ----------------------------------------------------------------------------- the bot


class GreedyAgent(BaseAgent):
    """Shanten / tile-efficiency bot. ``act_batch(views, masks)`` takes a
    :class:`~sichuan_env.seats.view.SeatView` of N rows and (N, 88) masks."""

    #: the compiled twin of this bot for paired-deal reference play-outs
    #: (:mod:`sichuan_env.envs.paired`)
    playout_module = "sichuan_agents.search.seat_playout"

    name = "greedy"
    needs = "view"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed

    # ---- the shared interface
    def act(self, view: SeatView, mask: np.ndarray) -> int:
        """One action for one row of a seat view (no batch axis) and its (88,) mask."""
        if isinstance(view, SeatView):
            view = SeatView(*(np.asarray(f)[None] for f in view))
        return int(self.act_batch(view, np.asarray(mask)[None])[0])

    def act_batch(self, views: SeatView, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks, bool)
        return self.decide(Seen(_check_view(self, views, masks)), masks)

    # ---- decisions
    def decide(self, view: Seen, masks: np.ndarray) -> np.ndarray:
        """(N,) legal actions for the rows of ``view`` and their (N, 88) bool masks."""
        n = masks.shape[0]
        out = np.full(n, -1, np.int64)
        phase = view.phase
        for ph, fn in ((VOID, self._void), (TURN, self._turn), (CLAIM, self._claim),
                       (ROB, self._claim)):
            r = np.flatnonzero(phase == ph)
            if r.size:
                out[r] = fn(view.take(r) if r.size < n else view, masks[r])
        bad = (out < 0) | ~masks[np.arange(n), np.maximum(out, 0)]
        if bad.any():
            out[bad] = masks[bad].argmax(1)
        return out

    def _void(self, v: Seen, masks: np.ndarray) -> np.ndarray:
        return choose_void(v.hand, masks)

    def _claim(self, v: Seen, masks: np.ndarray) -> np.ndarray:
        n = masks.shape[0]
        out = np.full(n, PASS, np.int64)
        out[masks[:, HU]] = HU
        kong = np.flatnonzero(masks[:, MELDED_KONG] & ~masks[:, HU])
        pung = np.flatnonzero(masks[:, PUNG] & ~masks[:, HU])
        if kong.size or pung.size:
            claim_rows = np.union1d(kong, pung)
            before = shanten(v.hand[claim_rows], v.own_meld[claim_rows], v.own_void[claim_rows])
            sh_before = np.full(n, NO_SHANTEN, np.int16)
            sh_before[claim_rows] = before
            if pung.size:
                after = self._claim_shanten(v, pung, 2, 1)
                out[pung[after <= sh_before[pung]]] = PUNG
            if kong.size:
                after = self._claim_shanten(v, kong, 3, 2)
                out[kong[after <= sh_before[kong]]] = MELDED_KONG
        return out

    @staticmethod
    def _claim_shanten(v: Seen, r: np.ndarray, used: int, kind: int) -> np.ndarray:
        t = v.claim_tile[r].astype(np.intp)
        h = v.hand[r] - used * EYE[t]
        m = v.own_meld[r].copy()
        m[np.arange(r.size), t] = kind
        return shanten(h, m, v.own_void[r])

    def _turn(self, v: Seen, masks: np.ndarray) -> np.ndarray:
        n = masks.shape[0]
        out = np.full(n, -1, np.int64)
        out[masks[:, HU]] = HU
        todo = np.flatnonzero(out < 0)
        if todo.size == 0:
            return out
        sub = v.take(todo) if todo.size < n else v
        out[todo] = self._turn_no_hu(sub, masks[todo])
        return out

    def _turn_no_hu(self, v: Seen, masks: np.ndarray) -> np.ndarray:
        n = masks.shape[0]
        disc = masks[:, DISCARD:VOID_TILE]
        out = np.full(n, -1, np.int64)
        # a single legal discard (a pending set-aside tile) with no kong: nothing to think
        kong_mask = masks[:, KONG:PUNG]
        single = (disc.sum(1) == 1) & ~kong_mask.any(1)
        out[single] = disc[single].argmax(1)
        # void-suit tiles first
        void_kind = SUIT_OF[None, :] == v.own_void[:, None]
        void_disc = disc & void_kind & (v.hand > 0)
        has_void = void_disc.any(1) & (out < 0) & ~kong_mask.any(1)
        if has_void.any():
            r = np.flatnonzero(has_void)
            out[r] = self.choose_void_discard(v.take(r), void_disc[r])
        rest = np.flatnonzero(out < 0)
        if rest.size:
            sub = v.take(rest) if rest.size < n else v
            out[rest] = self.choose_discard_or_kong(sub, masks[rest])
        return out

    def choose_void_discard(self, v: Seen, allowed: np.ndarray) -> np.ndarray:
        """Which void-suit tile to discard: the one with most copies held (keeps pairs
        of a suit that is thrown anyway from being claimed twice... any order works)."""
        return np.where(allowed, v.hand.astype(np.float32) + isolation(v.hand) * 0.01,
                        -np.inf).argmax(1)

    def discard_scores(self, v: Seen, disc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N, 27) score of each legal discard (higher is better) and (N, 27) shanten
        after it. Greedy: lowest shanten, then live effective tiles, then isolation."""
        h, m, vd = v.hand, v.own_meld, v.own_void
        sh = discard_shanten(h, m, vd, disc)
        best = sh.min(1)
        cand = sh == best[:, None]
        score = np.where(cand, isolation(h) * 0.01, -np.inf).astype(np.float32)
        score -= sh * 1000.0
        multi = np.flatnonzero(cand.sum(1) > 1)
        if multi.size:
            r, k = np.nonzero(cand[multi])
            rows = multi[r]
            h13 = h[rows] - EYE[k]
            eff = effective_tiles(h13, m[rows], vd[rows], sh[rows, k], v.live[rows])
            score[rows, k] += (eff * v.live[rows]).sum(1)
        return score, sh

    def choose_discard_or_kong(self, v: Seen, masks: np.ndarray) -> np.ndarray:
        n = masks.shape[0]
        disc = masks[:, DISCARD:VOID_TILE]
        score, sh = self.discard_scores(v, disc)
        out = score.argmax(1).astype(np.int64) + DISCARD
        best = sh.min(1)
        kong_mask = masks[:, KONG:PUNG]
        if kong_mask.any():
            r, k = np.nonzero(kong_mask)
            after = self.kong_shanten(v, r, k)
            ok = after <= best[r]
            # the first acceptable kong of each row
            r, k = r[ok], k[ok]
            out[r] = KONG + k
        none = ~disc.any(1) & (out < KONG)
        if none.any():
            out[none] = masks[none].argmax(1)
        del n
        return out

    @staticmethod
    def kong_shanten(v: Seen, r: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Shanten after an own-turn kong of kind k on rows r (before the replacement)."""
        h = v.hand[r].copy()
        held = h[np.arange(r.size), k]
        h[np.arange(r.size), k] = np.where(held == 4, 0, held - 1)
        m = v.own_meld[r].copy()
        m[np.arange(r.size), k] = 2
        return shanten(h, m, v.own_void[r])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"


def describe(agent: Any) -> str:
    return getattr(agent, "name", type(agent).__name__)

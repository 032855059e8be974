"""The rule-based bot: greedy tile efficiency plus look-ahead, pung and Hu judgement.

Starts from :class:`sichuan_agents.bots.greedy.GreedyAgent` (void suit by hand shape, void tiles
first, lowest shanten then most live effective tiles, Hu when offered, kongs when the
shanten does not rise) and changes what measured better against it. Everything is
batched over rows (numpy; the only loops are over a few fixed cases). Like greedy it reads
the seat view (``needs = "view"``).

**Look-ahead discards** (``lookahead``). Among the discards that leave the lowest
shanten, when that shanten is 0 or 1 and there is a choice, each candidate's 13-tile hand
gets a *worth* instead of greedy's count of live effective tiles:

* ready (shanten 0): the sum over its waits of live copies x *wait weight* x
  ``1 + wait_value (value - 1)`` (the hand value on that wait, ``hands.batch_fans`` /
  ``batch_value`` with :data:`FAN_CAP`, no situational fans). The wait weight is 1 plus
  ``void_bonus`` per live opponent whose revealed void suit holds the tile: that seat
  throws every copy it draws, so the wait is likelier to come.
* 1-shanten: two-step. For each effective draw t (live copies only), the best ready
  hand reachable by drawing t and discarding one tile (its wait sum as above, without
  the value factor, with one copy of t less live); the worth is the sum over t of
  live copies x (:data:`STEP_BASE` + that best wait sum).
* shanten 2 and more: greedy's live effective tiles. Ties: the most isolated tile.

**Pungs** (``pung_look``). A pung that greedy would make (shanten not higher) is made
only if the worth of the hand after the pung and its best discard exceeds the worth of
the hand as it stands by at least ``pung_margin`` (worth: ``-1000 x shanten`` plus the
look-ahead worth above, or the live effective tiles from shanten 2 on). It keeps
two-sided waits and useful pairs instead of trading them for a turn. Hands still holding
void tiles decide as greedy. Kongs (melded, concealed, promoted) stay greedy's: their
income and fan are worth a flat shape.

**Passing a cheap Hu on a discard** (``pass_hu``; self-drawn Hu and every Hu with fewer
than :data:`PASS_HU_WALL` wall tiles left are always taken). A discard Hu worth 1 point
is passed when the hand also waits on a tile worth at least 4 points
(``batch_theoretical_max``) with >= 2 live copies, and a discard Hu worth at most
:data:`FISH_VALUE` when the other waits have >= ``fish_live`` live copies: a self-draw
pays value + 1 from every opponent still in the deal, and the passed-Hu rule only blocks
discard Hu until the next own draw.

**Defence.** Void-suit tiles (thrown first) go out safest first: each live opponent gets
a *threat* in 0..1 (grows with its discards and melds, damped when its latest discard was
of its own void suit) and each tile a *danger* (threat x tile risk: 0 in that opponent's
void suit, lower for tiles it discarded itself, for terminals and for kinds with no
unseen copy). Ordinary discards ignore danger.

The options kept are those that measured better against greedy (each can be switched
off to reproduce the comparison); what was tried and dropped (value steering, danger on
ordinary discards, folding, strict pungs, other thresholds), with the figures, is the
experiment log in ``docs/history/ladder.md``.

**Flower pig.** Void tiles are always discarded first, so the bot only ends as a flower
pig if the wall ends before it drew enough turns to discard them all.
"""

from __future__ import annotations

import numpy as np

from sichuan_agents.bots.greedy import EYE, GreedyAgent, Seen, effective_tiles, isolation, shanten
from sichuan_env.core import hands as hx
from sichuan_env.core.actions import HU, PASS, PUNG
from sichuan_env.core.state import CLAIM
from sichuan_env.core.vocab import RANK_OF, SUIT_OF

PASS_HU_WALL = 30  # wall tiles left from which a cheap discard Hu may be passed
FISH_VALUE = 1  # a discard Hu worth at most this is passed to fish for a self-draw
FAN_CAP = 3  # fan cap of the hand values the look-ahead and Hu passing compare
STEP_BASE = 2.0  # worth of an effective draw of a 1-shanten hand, besides its waits


class RulesAgent(GreedyAgent):
    """Greedy + look-ahead discards, judged pungs, Hu passing (see the module docstring).

    Options (the defaults are the measured best): ``lookahead`` look-ahead discards;
    ``void_bonus`` and ``wait_value`` the wait weights of the look-ahead; ``pung_look``
    pungs judged by the look-ahead worth (needs ``lookahead``) and ``pung_margin`` the
    worth a pung must add; ``pass_hu`` passing cheap discard Hu and ``fish_live`` the live
    copies of the other waits that make a 1-point Hu worth passing."""

    #: the compiled twin of this bot for paired-deal reference play-outs
    #: (:mod:`sichuan_env.envs.paired`)
    playout_module = "sichuan_agents.search.seat_playout"

    name = "rules"

    def __init__(self, seed: int | None = None, *, lookahead: bool = True,
                 void_bonus: float = 0.5, wait_value: float = 0.5, pung_look: bool = True,
                 pung_margin: float = 4.0, pass_hu: bool = True, fish_live: int = 3) -> None:
        super().__init__(seed)
        self.lookahead = lookahead
        self.void_bonus = void_bonus
        self.wait_value = wait_value
        self.pung_look = pung_look
        self.pung_margin = pung_margin
        self.pass_hu = pass_hu
        self.fish_live = fish_live

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def threat(v: Seen) -> np.ndarray:
        """(N, 4) how likely each seat looks ready (column 0, me, is 0)."""
        nd = v.n_discards.astype(np.float32)
        melds = (v.meld > 0).sum(2).astype(np.float32)
        t = np.clip((nd - 4.0) / 10.0, 0.0, 0.7) + 0.15 * melds
        t = np.where(melds >= 3, np.maximum(t, 0.8), t)
        # someone has won: the deal is advanced
        t += 0.1 * v.hu.any(1, keepdims=True)
        last = v.last_discard.astype(np.intp)
        last_void = (last >= 0) & (SUIT_OF[np.maximum(last, 0)] == v.void) & (v.void >= 0)
        t = np.where(last_void, t * 0.3, t)
        t = np.where(v.hu | (v.void < 0), 0.0, t)
        t[:, 0] = 0.0
        return np.clip(t, 0.0, 1.0)

    @staticmethod
    def tile_danger(v: Seen, threat: np.ndarray) -> np.ndarray:
        """(N, 27) expected danger of discarding each kind now."""
        base = np.where((RANK_OF == 0) | (RANK_OF == 8), 0.7,
                        np.where((RANK_OF == 1) | (RANK_OF == 7), 0.85, 1.0)).astype(np.float32)
        unseen = v.live.astype(np.float32)  # copies the decider has not seen
        risk = base[None, :] * np.where(unseen <= 0, 0.5, 1.0)
        dng = np.zeros(v.hand.shape, np.float32)
        for o in range(1, 4):  # the three opponents
            safe_suit = SUIT_OF[None, :] == v.void[:, o, None]
            own_disc = v.discards[:, o] > 0
            r = risk * np.where(own_disc, 0.35, 1.0)
            dng += threat[:, o, None] * np.where(safe_suit, 0.0, r)
        return dng

    # ------------------------------------------------------------------ look-ahead
    def wait_weight(self, v: Seen) -> np.ndarray:
        """(N, 27) worth of one live copy of each kind as a wait: 1, plus ``void_bonus``
        for each live opponent whose revealed void suit it is (that seat throws it)."""
        opp = (~v.hu[:, 1:]) & (v.void[:, 1:] >= 0)
        n_void = np.zeros(v.hand.shape, np.float32)
        for o in range(3):
            n_void += opp[:, o, None] & (SUIT_OF[None, :] == v.void[:, o + 1, None])
        return 1.0 + self.void_bonus * n_void

    def ready_scores(self, h13: np.ndarray, m: np.ndarray, vd: np.ndarray,
                     live: np.ndarray, wgt: np.ndarray) -> np.ndarray:
        """(M,) worth of ready 13 - 3n-tile hands: the sum over their waits of live
        copies x wait weight x (1 + ``wait_value`` (value - 1))."""
        waits = hx.batch_wait_mask(h13, m, vd) & (live > 0)
        score = waits * live * wgt
        if self.wait_value:
            i, t = np.nonzero(waits)
            if i.size:
                z = np.zeros(i.size, bool)
                fans = hx.batch_fans(h13[i] + EYE[t], m[i], t, vd[i], z, z, z, z, z)
                val = hx.batch_value(fans, FAN_CAP).astype(np.float32)
                score[i, t] *= 1.0 + self.wait_value * (val - 1.0)
        return score.sum(1)

    def two_step_scores(self, h13: np.ndarray, m: np.ndarray, vd: np.ndarray,
                        live: np.ndarray, wgt: np.ndarray) -> np.ndarray:
        """(M,) worth of 1-shanten 13 - 3n-tile hands: the sum over effective draws t of
        live copies x (``step_base`` + worth of the best ready hand after drawing t and
        discarding one tile, with t's copy no longer live)."""
        n = h13.shape[0]
        out = np.zeros(n, np.float32)
        if not n:
            return out
        eff = effective_tiles(h13, m, vd, np.ones(n, np.int16), live)
        i, t = np.nonzero(eff)
        if not i.size:
            return out
        h14 = h13[i] + EYE[t]
        live2 = live[i] - EYE[t]
        okd = (h14 > 0) & (SUIT_OF[None, :] != vd[i, None])
        j, d = np.nonzero(okd)
        ii = i[j]
        waits = hx.batch_wait_mask(h14[j] - EYE[d], m[ii], vd[ii]) & (live2[j] > 0)
        ws = (waits * live2[j] * wgt[ii]).sum(1)
        best = np.zeros(i.size, np.float32)
        np.maximum.at(best, j, ws)
        np.add.at(out, i, live[i, t] * (STEP_BASE + best))
        return out

    def hand_worth(self, h13: np.ndarray, m: np.ndarray, vd: np.ndarray, live: np.ndarray,
                   wgt: np.ndarray) -> np.ndarray:
        """(M,) worth of 13 - 3n-tile hands on the discard scale: ``-1000 x shanten`` plus
        the look-ahead worth (ready / 1-shanten) or the live effective tiles (further)."""
        sh = shanten(h13, m, vd)
        out = -1000.0 * sh.astype(np.float32)
        for s, fn in ((0, self.ready_scores), (1, self.two_step_scores)):
            r = np.flatnonzero(sh == s)
            if r.size:
                out[r] += np.minimum(fn(h13[r], m[r], vd[r], live[r], wgt[r]), 998.0)
        r = np.flatnonzero(sh >= 2)
        if r.size:
            eff = effective_tiles(h13[r], m[r], vd[r], sh[r], live[r])
            out[r] += np.minimum((eff * live[r]).sum(1), 998.0)
        return out

    def pung_gain(self, v: Seen, p: np.ndarray) -> np.ndarray:
        """(len(p),) worth after punging the claimed tile and the best discard, minus the
        worth of the hand as it stands (rows ``p`` of a claim view)."""
        t = v.claim_tile[p].astype(np.intp)
        h = v.hand[p].astype(np.int8)
        m = v.own_meld[p]
        vd = v.own_void[p]
        live = v.live[p]
        wgt = self.wait_weight(v)[p]
        now = self.hand_worth(h, m, vd, live, wgt)
        h11 = h - 2 * EYE[t]
        m2 = m.copy()
        m2[np.arange(p.size), t] = 1
        i, d = np.nonzero((h11 > 0) & (SUIT_OF[None, :] != vd[:, None]))
        after = np.full(p.size, -np.inf, np.float32)
        if i.size:
            w = self.hand_worth((h11[i] - EYE[d]).astype(np.int8), m2[i], vd[i], live[i],
                                wgt[i])
            np.maximum.at(after, i, w)
        return after - now

    def shape_scores(self, v: Seen, cand: np.ndarray, sh: np.ndarray) -> np.ndarray:
        """(N, 27) look-ahead worth of the candidate discards ``cand`` that leave the hand
        ready (``ready_scores``) or 1-shanten (``two_step_scores``); NaN elsewhere."""
        out = np.full(sh.shape, np.nan, np.float32)
        wgt = self.wait_weight(v)
        for s, fn in ((0, self.ready_scores), (1, self.two_step_scores)):
            r, k = np.nonzero(cand & (sh == s))
            if r.size:
                h13 = (v.hand[r] - EYE[k]).astype(np.int8)
                out[r, k] = fn(h13, v.own_meld[r], v.own_void[r], v.live[r], wgt[r])
        return out

    # ------------------------------------------------------------------ decisions
    def discard_scores(self, v: Seen, disc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        score, sh = super().discard_scores(v, disc)
        if self.lookahead:
            legal = np.isfinite(score)
            best = sh.min(1)
            cand = legal & (sh == best[:, None]) & (best[:, None] <= 1)
            cand &= (cand.sum(1) > 1)[:, None]
            if cand.any():
                look = self.shape_scores(v, cand, sh)
                iso = isolation(v.hand) * 0.01
                score = np.where(cand, -sh * 1000.0 + np.minimum(look, 998.0) + iso, score)
        return score, sh

    def choose_void_discard(self, v: Seen, allowed: np.ndarray) -> np.ndarray:
        """The safest void-suit tile (least danger), then the most copies held."""
        dng = self.tile_danger(v, self.threat(v))
        pref = v.hand.astype(np.float32) * 0.01 - dng
        return np.where(allowed, pref, -np.inf).argmax(1)

    def _claim(self, v: Seen, masks: np.ndarray) -> np.ndarray:
        out = super()._claim(v, masks)
        if self.lookahead and self.pung_look:
            p = np.flatnonzero(out == PUNG)
            void_held = (v.hand * (SUIT_OF[None, :] == v.own_void[:, None])).sum(1) > 0
            p = p[~void_held[p]]
            if p.size:
                out[p[self.pung_gain(v, p) < self.pung_margin]] = PASS
        if self.pass_hu:
            h = np.flatnonzero((out == HU) & (v.phase == CLAIM) & (v.wall_left >= PASS_HU_WALL))
            if h.size:
                out[h[self._pass_cheap_hu(v.take(h))]] = PASS
        return out

    def _pass_cheap_hu(self, v: Seen) -> np.ndarray:
        """(M,) bool: pass this 1-point Hu on a discard for a bigger wait."""
        t = v.claim_tile.astype(np.intp)
        h14 = v.hand + EYE[t]
        mk = v.own_meld
        m = h14.shape[0]
        z = np.zeros(m, bool)
        fans = hx.batch_fans(h14, mk, t, v.own_void, z, z, z, z, z)
        val = hx.batch_value(fans, FAN_CAP)
        cheap = val <= 1
        tmax = hx.batch_theoretical_max(v.hand, mk, v.own_void, FAN_CAP)
        big = tmax >= 4
        # live copies of the better waits: count waits other than t with copies left
        waits = hx.batch_wait_mask(v.hand, mk, v.own_void)
        waits[np.arange(m), t] = False
        live_other = (waits * v.live).sum(1)
        # many live waits: play for a self-draw
        fish = (live_other >= self.fish_live) & (val <= FISH_VALUE)
        return (cheap & big & (live_other >= 2)) | fish

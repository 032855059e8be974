"""Features of each candidate action at an own-turn decision, for the boosted agent's trees.

A row of features describes one candidate (a discard or a kong of kind ``t``) at one
decision, read from the network input of the seat (:mod:`sichuan_agents.training.layout`: the
observation planes of :mod:`sichuan_env.seats.observation`, then the analysis planes of
:mod:`sichuan_agents.training.features`), so it holds nothing the seat cannot see:

* the candidate's own block (:data:`KIND_FEATURES`): kong or discard; copies of ``t``
  held; the shanten after discarding one; tiles held of its suit and that suit's rank
  among the three by size; distance of ``t``'s rank from the suit's edge; copies seen;
  copies in the other seats' rivers and in the own; live discards of ``t``; ``t`` in the
  own void suit; copies held two and one ranks below and above; the candidate's column
  (the rules bot's order: its choice 0, then the kongs, then its next-best discards); the
  unseen copies of the kinds whose draw would lower the shanten of the hand the candidate
  leaves, and how many such kinds; the other seats still playing whose revealed void
  suit is ``t``'s (a tile they cannot win on);
* the same block minus the rules bot's choice's (column 0 of the candidates), then the
  rules bot's choice's block itself;
* the decision (:data:`DECISION_FEATURES`): wall left, shanten now, pairs and triplets
  held, suits held, the largest suit, own melds, other seats that have won, the copies
  of useful draws, tiles of the own void suit still held.

:func:`candidate_features` builds them for many decisions at once (numpy).
"""

from __future__ import annotations

import numpy as np

from sichuan_env.core.actions import KONG, PUNG, VOID_TILE
from sichuan_env.core.hands import batch_shanten
from sichuan_env.seats.observation import N_CHANNELS, PLANES

#: The per-candidate block (also taken relative to the rules bot's choice, and for it).
KIND_FEATURES = ("is_kong", "held", "shanten_after", "suit_held", "suit_rank", "edge",
                 "seen", "others_discarded", "own_discarded", "live", "in_void",
                 "held_minus2", "held_minus1", "held_plus1", "held_plus2", "column",
                 "useful_after", "useful_kinds_after", "safe_from", "off_suit_after",
                 "pairs_after", "triplets_after")
#: The decision's features, the same for every candidate of a row.
DECISION_FEATURES = ("wall_left", "shanten_now", "pairs", "triplets", "suits_held",
                     "largest_suit", "own_melds", "others_won", "useful_draws", "void_left")
FEATURE_NAMES = (KIND_FEATURES + tuple(f"{f}_vs_rules" for f in KIND_FEATURES)
                 + tuple(f"rules_{f}" for f in KIND_FEATURES) + DECISION_FEATURES)
N_FEATURES = len(FEATURE_NAMES)
#: Channels of the network input the features read (observation + analysis planes).
CHANNELS_READ = N_CHANNELS + 4

_HAND = PLANES["hand"][0]
_DISCARDS = PLANES["discards"][0]
_MY_VOID = PLANES["my_void"][0]
_OWN_MELDS = (PLANES["pung"][0], PLANES["concealed_kong"][0], PLANES["exposed_kong"][0])
_VISIBLE = PLANES["visible"][0]
_LIVE = PLANES["live_discards"][0]
_WALL = PLANES["wall_left"][0]
_HU = PLANES["hu"][0]
_PUNG, _CKONG, _EKONG = _OWN_MELDS
_VOID_REVEALED = PLANES["void_revealed"][0]
_DISCARD_SHANTEN, _SHANTEN_NOW, _USEFUL = N_CHANNELS, N_CHANNELS + 1, N_CHANNELS + 3


def candidate_kinds(candidates: np.ndarray) -> np.ndarray:
    """The tile kind of each candidate action (a discard or an own-turn kong); -1 for
    padding (a negative action) and for any other action."""
    c = np.asarray(candidates, np.int64)
    kind = np.where(c < VOID_TILE, c, -1)
    kind = np.where((c >= KONG) & (c < PUNG), c - KONG, kind)
    return np.where(c < 0, -1, kind)


def candidate_features(inputs: np.ndarray, candidates: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(N, M, N_FEATURES) float32 features of the candidates (N, M) (column 0: the rules
    bot's choice; -1 pads) at the decisions whose network input is ``inputs`` (N, C, 27),
    C >= :data:`CHANNELS_READ`; and (N, M) bool: which entries are candidates (a discard or
    kong). Raises ValueError when the shapes do not fit or column 0 is not a candidate."""
    x = np.asarray(inputs)
    c = np.asarray(candidates, np.int64)
    if x.ndim != 3 or x.shape[1] < CHANNELS_READ or x.shape[2] != 27:
        raise ValueError(f"inputs must be (N, >= {CHANNELS_READ}, 27) network inputs, got "
                         f"shape {x.shape}")
    if c.ndim != 2 or c.shape[0] != x.shape[0] or c.shape[1] < 1:
        raise ValueError(f"candidates must be (N, M) with N = {x.shape[0]}, got {c.shape}")
    kinds = candidate_kinds(c)
    if (kinds[:, 0] < 0).any():
        raise ValueError("column 0 of the candidates (the rules bot's choice) must be a "
                         "discard or an own-turn kong in every row")
    n = x.shape[0]
    x = x[:, :CHANNELS_READ].astype(np.float32)
    held = x[:, _HAND:_HAND + 4].sum(1)
    shanten_after = x[:, _DISCARD_SHANTEN] * 8
    useful = x[:, _USEFUL]
    seen = x[:, _VISIBLE] * 4
    others = x[:, _DISCARDS + 1:_DISCARDS + 4].sum(1) * 4
    own = x[:, _DISCARDS] * 4
    live = x[:, _LIVE] * 4
    void = x[:, _MY_VOID]
    suits = held.reshape(n, 3, 9).sum(2)
    suit_rank = np.argsort(np.argsort(suits, 1, kind="stable"), 1, kind="stable")
    padded = np.pad(held.reshape(n, 3, 9), ((0, 0), (0, 0), (2, 2)))
    melds = sum(x[:, ch] for ch in _OWN_MELDS).sum(1)
    decision = np.stack([x[:, _WALL, 0], x[:, _SHANTEN_NOW, 0] * 8, (held >= 2).sum(1),
                         (held >= 3).sum(1), (suits > 0).sum(1), suits.max(1), melds,
                         x[:, _HU + 1:_HU + 4, 0].sum(1), useful.sum(1),
                         (held * void).sum(1)], 1).astype(np.float32)
    rows = np.arange(n)

    def own_block(action: np.ndarray, kind: np.ndarray) -> np.ndarray:
        t = np.clip(kind, 0, 26)
        s, r = t // 9, t % 9
        near = [padded[rows, s, r + 2 + o] for o in (-2, -1, 1, 2)]
        return np.stack([((action >= KONG) & (action < PUNG)).astype(np.float32),
                         held[rows, t], shanten_after[rows, t], suits[rows, s],
                         suit_rank[rows, s], np.minimum(r, 8 - r), seen[rows, t],
                         others[rows, t], own[rows, t], live[rows, t], void[rows, t], *near],
                        1).astype(np.float32)

    meld = np.where(x[:, _CKONG] + x[:, _EKONG] > 0.5, 2,
                    np.where(x[:, _PUNG] > 0.5, 1, 0)).astype(np.int8)
    void_suit = np.where(void.max(1) > 0.5, void.argmax(1) // 9, -1).astype(np.int8)
    unseen = np.clip(4 - seen, 0, 4)
    others_void = x[:, _VOID_REVEALED + 1:_VOID_REVEALED + 4] > 0.5  # (n, 3, 27)
    still_playing = x[:, _HU + 1:_HU + 4, 0] < 0.5

    def after(action: np.ndarray, kind: np.ndarray) -> np.ndarray:
        """(n, 3): unseen copies and kinds of the draws that would lower the shanten of the
        hand the candidate leaves; the other seats still playing void in its suit."""
        out = np.zeros((n, 6), np.float32)
        ok = np.flatnonzero(kind >= 0)
        t = kind[ok]
        kong = (action[ok] >= KONG) & (action[ok] < PUNG)
        hand = np.rint(held[ok]).astype(np.int8)
        melds = meld[ok].copy()
        suit = void_suit[ok]
        sub = np.arange(ok.size)
        # a kong takes the four copies held, or the one that promotes a melded pung
        hand[sub, t] -= np.where(kong, np.where(melds[sub, t] == 1, 1, 4), 1).astype(np.int8)
        melds[sub, t] = np.where(kong, 2, melds[sub, t])
        now = batch_shanten(hand, melds, suit)
        for k in range(27):
            can = (hand[:, k] < 4) & (suit != k // 9)
            hand[can, k] += 1
            lower = can & (batch_shanten(hand, melds, suit) < now)
            hand[can, k] -= 1
            out[ok, 0] += np.where(lower, unseen[ok, k], 0)
            out[ok, 1] += lower
        out[ok, 2] = (others_void[ok, :, t] & still_playing[ok]).sum(1)
        left = hand.reshape(-1, 3, 9).sum(2)
        out[ok, 3] = left.sum(1) - left.max(1)
        out[ok, 4] = (hand >= 2).sum(1)
        out[ok, 5] = (hand >= 3).sum(1)
        return out

    def block(action: np.ndarray, kind: np.ndarray, column: int) -> np.ndarray:
        base = own_block(action, kind)
        return np.concatenate([base, np.full((n, 1), column, np.float32),
                               after(action, kind)], 1)

    rules_block = block(c[:, 0], kinds[:, 0], 0)
    out = np.empty((n, c.shape[1], N_FEATURES), np.float32)
    for j in range(c.shape[1]):
        b = rules_block if j == 0 else block(c[:, j], kinds[:, j], j)
        out[:, j] = np.concatenate([b, b - rules_block, rules_block, decision], 1)
    return out, kinds >= 0

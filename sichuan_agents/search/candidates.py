"""The candidate actions the search agent (and the boosted agent) weigh at a decision.

The prior's choice comes first, then the rules bot's own choice; on an own turn the legal
kongs and the rules bot's next-best discards in its order (lowest shanten, then its
look-ahead worth or greedy's score; while a tile of the seat's void suit may be discarded,
only such tiles); on the void choice one action per other suit; in a claim window every
legal answer. :mod:`sichuan_agents.search.agent` plays the candidates out;
:mod:`sichuan_agents.models.boosted`
scores them with trees fitted to the search's values of the same candidates.
"""

from __future__ import annotations

import numpy as np

from sichuan_agents.bots.greedy import Seen, discard_shanten, isolation
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_env.core.actions import DISCARD, KONG, PUNG, VOID_SUIT, VOID_TILE
from sichuan_env.core.state import TURN, VOID
from sichuan_env.core.vocab import SUIT_OF
from sichuan_env.seats.view import SeatView


def suit_of_void_action(a: np.ndarray) -> np.ndarray:
    """The suit each void-choice action chooses (set-aside tile or indicator card)."""
    a = np.asarray(a)
    return np.where(a >= VOID_SUIT, a - VOID_SUIT, SUIT_OF[np.clip(a - VOID_TILE, 0, 26)])


def discard_preference(rules_bot: RulesAgent, seen: Seen, discards: np.ndarray) -> np.ndarray:
    """(N, 27) how much the rules bot prefers each legal discard (larger first; -inf where
    illegal): its score (lowest shanten, then its look-ahead worth or greedy's score), and
    for a discard it does not score, a worse shanten ranked by the tile's isolation."""
    score, _ = rules_bot.discard_scores(seen, discards)
    sh = discard_shanten(seen.hand, seen.own_meld, seen.own_void, discards).astype(np.float32)
    key = np.where(np.isfinite(score), score, -1000.0 * sh + isolation(seen.hand) * 0.01)
    return np.where(discards, key, -np.inf)


def search_candidates(rules_bot: RulesAgent, top: int, view: SeatView, masks: np.ndarray,
                      prior: np.ndarray, bot: np.ndarray | None = None) -> list[list[int]]:
    """Per row, the candidate actions: the prior's choice first, then the rules bot's
    choice ``bot`` when it differs (default: the prior's), then on an own turn the legal
    kongs and the bot's next-best discards (``rules_bot`` orders them), on the void choice
    one action per other suit, in a claim window every legal answer; at most ``top``."""
    bot = prior if bot is None else bot
    n = masks.shape[0]
    seen = Seen(view)
    out: list[list[int]] = []
    turn = np.flatnonzero(seen.phase == TURN)
    order: dict[int, np.ndarray] = {}
    if turn.size:
        sub = seen.take(turn)
        disc = masks[turn, DISCARD:VOID_TILE]
        key = discard_preference(rules_bot, sub, disc)
        # a tile of the own void suit goes first: while one may be discarded, the other
        # suits' discards are no candidates (under strict_void they are not legal)
        void_kind = SUIT_OF[None, :] == sub.own_void[:, None]
        first = (disc & void_kind).any(1)
        key = np.where(first[:, None] & ~void_kind, -np.inf, key)
        for j, i in enumerate(turn.tolist()):
            ks = np.argsort(-key[j], kind="stable")
            order[i] = ks[np.isfinite(key[j, ks])] + DISCARD
    for i in range(n):
        m = masks[i]
        got = [int(prior[i])]
        if seen.phase[i] == TURN:
            more = [int(bot[i])] + [a for a in range(KONG, PUNG) if m[a]] + order[i].tolist()
        elif seen.phase[i] == VOID:
            legal = np.flatnonzero(m)
            suits = suit_of_void_action(legal)
            own = int(suit_of_void_action(np.array([prior[i]]))[0])
            more = [int(legal[suits == s][0]) for s in range(3)
                    if s != own and (suits == s).any()]
        else:
            more = [int(bot[i])] + [int(a) for a in np.flatnonzero(m)]
        for a in more:
            if len(got) >= top:
                break
            if a not in got:
                got.append(int(a))
        out.append(got)
    return out

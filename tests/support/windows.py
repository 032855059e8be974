"""Twin deals that differ only in whether a claim or rob window opens.

The engine opens a window after a discard (or a kong added to a pung) only when some
seat has an option on the tile. :func:`window_twins` walks random deals and, at each move
that opened a window, builds the twin: the same table before the move, with tiles of
every seat offered an option exchanged with tiles in the middle of the wall (hidden from
everyone; never drawn by the next move), so that nobody has an option and the same move
opens no window. Every seat that had no option is then in the
same information set in both: the seats' views, their renderings and the web frames must
not tell them apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.actions import PASS
from sichuan_env.core.state import CLAIM, ROB, State

from support.policies import biased


class Twins(NamedTuple):
    before: State  # the table before the move (a window opens after it)
    twin_before: State  # the same with the claimants' tiles of the kind exchanged
    move: int  # the move (a discard or an added kong)
    window: State  # after the move: the window, open
    closed: State  # after every asked seat passed: the window's outcome
    twin_after: State  # the twin after the same move: no window, the same outcome
    asked: list[int]  # the seats that had an option


def _swap(x: State, seat: int, kind: int, p: int) -> None:
    """Exchange one tile ``kind`` of ``seat``'s hand with wall tile ``p``."""
    w = int(x.wall[0, p])
    x.hand[0, seat, kind] -= 1
    x.hand[0, seat, w] += 1
    x.wall[0, p] = kind


def _refreshed(x: State) -> State:
    args = engine.kernel_rule_args(x.rules)
    ek.refresh_waits(*args, *x.arrays())
    ek.masks(x.legal_action_mask, *args, *x.arrays())
    return x


def _hide_options(st: State, tile: int, asked: list[int], move: int,
                  rng: np.random.Generator) -> State | None:
    """``st`` with the asked seats' tiles exchanged with tiles from the middle of the wall
    (hidden from everyone, not drawn by the next move) until ``move`` opens no window:
    first their tiles of kind ``tile`` (a pung or kong option), then random ones (a Hu
    option); None when that does not succeed."""
    x = st.copy()
    front, back = int(x.wall_front[0]), int(x.wall_back[0])
    spots = [p for p in range(front + 2, back - 2) if int(x.wall[0, p]) != tile]
    if len(spots) < 8:
        return None
    for s in asked:
        for _ in range(int(x.hand[0, s, tile])):
            _swap(x, s, tile, spots.pop())
    for _ in range(12):
        _refreshed(x)
        after, _, _ = engine.step(x, [move])
        if after.phase[0] not in (CLAIM, ROB):
            return x
        for s in asked:
            held = np.flatnonzero(x.hand[0, s])
            p = int(rng.choice(spots))
            if held.size and int(x.wall[0, p]) != tile:
                _swap(x, s, int(rng.choice(held)), p)
    return None


def window_twins(seeds: Iterable[int], *, want: int = 12,
                 phases: tuple[int, ...] = (CLAIM, ROB)) -> Iterator[Twins]:
    """Up to ``want`` twin pairs from biased random deals of ``seeds``, of windows of
    ``phases`` (a rob window opens in about one deal of 300: seeds 477, 789, 831 have
    one)."""
    found = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        st = engine.reset([seed], "mil")
        while not st.done[0]:
            a = int(biased(st, st.legal_action_mask, rng)[0])
            nxt, _, _ = engine.step(st, [a])
            if nxt.phase[0] in phases:
                asked = [s for s in range(4) if nxt.claim_opts[0, s]]
                twin = _hide_options(st, int(nxt.claim_tile[0]), asked, a,
                                     np.random.default_rng(seed))
                if twin is not None:
                    twin_after, _, _ = engine.step(twin, [a])
                    if twin_after.phase[0] not in (CLAIM, ROB):
                        closed = nxt
                        while closed.phase[0] in (CLAIM, ROB):
                            closed, _, _ = engine.step(closed, [PASS])
                        yield Twins(st, twin, a, nxt, closed, twin_after, asked)
                        found += 1
                        if found >= want:
                            return
            # play on: the window's seats decide as the policy says
            st = nxt

"""Twin deals that differ only in whether a claim or rob window opens.

The engine opens a window after a discard (or a kong added to a pung) only when some
seat has an option on the tile. :func:`window_twins` walks random deals and, at each move
that opened a window, builds the twin: the same table before the move, with the tiles
of the tile's kind of every seat offered an option exchanged with tiles in the middle of
the wall (hidden from everyone; never drawn by the next move), so that nobody has an
option and the same move opens no window. Every seat that had no option is then in the
same information set in both: the seats' views, their renderings and the web frames must
not tell them apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from sichuan_env import engine
from sichuan_env import engine_kernels as ek
from sichuan_env.actions import PASS
from sichuan_env.state import CLAIM, ROB, State

from support.policies import biased


class Twins(NamedTuple):
    before: State  # the table before the move (a window opens after it)
    twin_before: State  # the same with the claimants' tiles of the kind exchanged
    move: int  # the move (a discard or an added kong)
    window: State  # after the move: the window, open
    closed: State  # after every asked seat passed: the window's outcome
    twin_after: State  # the twin after the same move: no window, the same outcome
    asked: list[int]  # the seats that had an option


def _hide_options(st: State, tile: int, asked: list[int]) -> State | None:
    """``st`` with the asked seats' tiles of kind ``tile`` exchanged with wall tiles of
    other kinds from the middle of the wall (None when the wall is too short)."""
    x = st.copy()
    front, back = int(x.wall_front[0]), int(x.wall_back[0])
    spots = [p for p in range(front + 2, back - 2) if int(x.wall[0, p]) != tile]
    for s in asked:
        for _ in range(int(x.hand[0, s, tile])):
            if not spots:
                return None
            p = spots.pop()
            w = int(x.wall[0, p])
            x.hand[0, s, tile] -= 1
            x.hand[0, s, w] += 1
            x.wall[0, p] = tile
    args = engine.kernel_rule_args(x.rules)
    ek.refresh_waits(*args, *x.arrays())
    ek.masks(x.legal_action_mask, *args, *x.arrays())
    return x


def window_twins(seeds: range, *, want: int = 12) -> Iterator[Twins]:
    """Up to ``want`` twin pairs from biased random deals of ``seeds``."""
    found = 0
    for seed in seeds:
        rng = np.random.default_rng(seed)
        st = engine.reset([seed], "mil")
        while not st.done[0]:
            a = int(biased(st, st.legal_action_mask, rng)[0])
            nxt, _, _ = engine.step(st, [a])
            if nxt.phase[0] in (CLAIM, ROB):
                asked = [s for s in range(4) if nxt.claim_opts[0, s]]
                twin = _hide_options(st, int(nxt.claim_tile[0]), asked)
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

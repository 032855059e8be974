"""Random legal policies over the batched engine, shared by the engine tests."""

from __future__ import annotations

import numpy as np

from sichuan_env.core.actions import (
    HU,
    KONG,
    MELDED_KONG,
    N_ACTIONS,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
)
from sichuan_env.core.state import State


def uniform(st: State, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per table (0 for finished tables)."""
    n = mask.sum(1)
    r = np.floor(rng.random(len(mask)) * np.maximum(n, 1)).astype(np.int64)
    pick = (np.cumsum(mask, 1) > r[:, None]).argmax(1)
    return np.where(n > 0, pick, 0)


_W = np.ones(N_ACTIONS)
_W[HU] = 1000.0
_W[KONG:PUNG] = 50.0
_W[MELDED_KONG] = 50.0
_W[PUNG] = 20.0
_SUIT = np.arange(27) // 9


def biased(st: State, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal play that likes Hu, kongs and pungs, voids its shortest suit and
    mostly discards its least connected tile, so that hands get ready and win."""
    B = len(mask)
    w = mask * _W
    rows = np.arange(B)
    h = st.hand[rows, st.current].astype(np.int16)
    c = h.reshape(B, 3, 9)
    shortest = c.sum(2).argmin(1)
    w[:, VOID_TILE:VOID_SUIT] *= np.where(_SUIT[None, :] == shortest[:, None], 100.0, 1.0)
    w[:, VOID_SUIT:KONG] *= 100.0
    p = np.pad(c, ((0, 0), (0, 0), (2, 2)))
    near = (p[:, :, 1:-3] > 0).astype(np.int16) + (p[:, :, 3:-1] > 0)
    far = (p[:, :, :-4] > 0).astype(np.int16) + (p[:, :, 4:] > 0)
    keep = (8 * (c >= 2) + 3 * near + far).reshape(B, 27).astype(float)
    keep[_SUIT[None, :] == st.void[rows, st.current][:, None]] = -10.0
    disc = mask[:, :27]
    keep[~disc] = 1e9
    worst = disc & (keep == keep.min(1, keepdims=True))
    choice = (disc.sum(1) > 1)[:, None] & worst
    w[:, :27] = np.where(choice, 40.0, w[:, :27])
    u = rng.random(B) * w.sum(1)
    return np.where(mask.any(1), (np.cumsum(w, 1) > u[:, None]).argmax(1), 0)




def hu_shy(st: State, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """:func:`biased`, but a Hu on a discard is declined half the time (so that passed-Hu
    restrictions arise often)."""
    a = biased(st, mask, rng)
    decline = (a == HU) & mask[:, PASS] & (rng.random(len(a)) < 0.5)
    return np.where(decline, PASS, a)

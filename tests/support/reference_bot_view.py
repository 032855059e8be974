"""The rule bots' former input, kept as a reference for ``tests/test_bot_golden.py``:
what the bots knew when they decoded the observation planes (``view_from_observation``,
formerly in ``sichuan_agents/bots/greedy.py``, undoing the wall scaling). The bots now derive the
same
arrays from the seat view (``sichuan_agents.bots.greedy.Seen``); the test checks they agree field by
field."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from sichuan_env.seats import observation as ob

MELD_COPIES = np.array([0, 3, 4], dtype=np.int8)


def view_from_observation(observations: np.ndarray) -> SimpleNamespace:
    """Decode observation planes (N, C, 27) of :func:`sichuan_env.seats.observation.encode`."""
    obs = np.asarray(observations, np.float32)
    P = ob.PLANES

    def plane(name: str, k: int | None = None) -> np.ndarray:
        c, m = P[name]
        return obs[:, c : c + m] if k is None else obs[:, c + k]

    def one_hot(x: np.ndarray) -> np.ndarray:
        return np.where(x.any(-1), x.argmax(-1), -1).astype(np.int8)

    def suit_of_plane(x: np.ndarray) -> np.ndarray:  # (..., 27) suit rows -> suit or -1
        cols = x[..., [0, 9, 18]]
        return np.where(cols.any(-1), cols.argmax(-1), -1).astype(np.int8)

    d = {}
    d["phase"] = plane("phase")[:, :, 0].argmax(1).astype(np.int8)
    d["hand"] = np.rint(plane("hand").sum(1)).astype(np.int8)
    d["set_aside"] = one_hot(plane("set_aside", 0))
    d["meld"] = (plane("pung") + 2 * (plane("concealed_kong") + plane("exposed_kong"))).astype(
        np.int8)
    void = suit_of_plane(plane("void_revealed"))
    void[:, 0] = suit_of_plane(plane("my_void", 0))
    d["void"] = void
    d["hu"] = plane("hu")[:, :, 0] > 0.5
    d["discards"] = np.rint(plane("discards") * 4).astype(np.int8)
    d["n_discards"] = d["discards"].sum(2, dtype=np.int16)
    c, _ = P["recent_discard"]
    d["last_discard"] = one_hot(obs[:, c : c + 16 : 4])
    d["live_discards"] = np.rint(plane("live_discards", 0) * 4).astype(np.int8)
    d["won_tiles"] = np.rint(plane("hu_tile").sum(1)).astype(np.int8)
    d["claim_tile"] = one_hot(plane("claim_tile", 0))
    d["wall_left"] = np.rint(plane("wall_left")[:, 0, 0] * ob.WALL_SIZE).astype(np.int16)
    d["own_meld"] = d["meld"][:, 0]
    d["own_void"] = d["void"][:, 0].astype(np.int8)
    vis = d["hand"].astype(np.int16) + MELD_COPIES[d["meld"]].sum(1)
    vis += d["live_discards"] + d["won_tiles"]
    sa = d["set_aside"]
    r = np.flatnonzero(sa >= 0)
    vis[r, sa[r]] += 1
    d["visible"] = np.minimum(vis, 4).astype(np.int8)
    d["live"] = (4 - d["visible"]).astype(np.int8)
    return SimpleNamespace(**d)

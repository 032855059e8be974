"""Helpers of the web play tests: a live server in a thread, and what a seat may know.

:func:`expected_table` rebuilds, straight from the engine's full :class:`State` (not from
the seat view the server uses), the table that the human's seat may see; the tests
compare every table the server sends with it, so anything more (another hand, a hidden
void, a face-down winning tile) or anything wrong fails.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import CLAIM, DONE, PHASE_NAMES, ROB, TURN
from sichuan_env.core.tiles import N_KINDS, SUITS, tile_str
from sichuan_env.core.vocab import MELD_NAMES, SEAT_WINDS

uvicorn = pytest.importorskip("uvicorn", reason="the web extra is not installed")
pytest.importorskip("starlette", reason="the web extra is not installed")
__all__ = ["LiveServer", "create_app", "expected_table", "make_config"]

httpx = pytest.importorskip("httpx", reason="the web extra is not installed")

from sichuan_env.play.web.app import WebConfig, create_app  # noqa: E402
from sichuan_env.play.web.bots import BotSpec  # noqa: E402
from sichuan_env.play.web.server import listen_socket, uvicorn_config  # noqa: E402
from sichuan_env.play.web.table import warm_up  # noqa: E402


def make_config(seats: list[str], seed: int | None = 11, rules: str = "mil",
                **kwargs) -> WebConfig:
    """A server configuration: ``seats`` as on the command line (one ``you``)."""
    r = get_rules(rules)
    specs = [None if s == "you" else BotSpec(s, r.preset) for s in seats]
    warm_up(specs, r)  # compile before any request, whose client would time out
    return WebConfig(specs, r, seed, **kwargs)


class LiveServer:
    """uvicorn serving ``app`` on a free port of 127.0.0.1, in a daemon thread, as the
    command line serves it (:mod:`sichuan_env.play.web.server`; ``trusted_proxies`` as its
    ``--trusted-proxy``)."""

    def __init__(self, app, trusted_proxies: tuple[str, ...] = ()) -> None:
        self.app = app
        sock = listen_socket("127.0.0.1", 0)
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn_config(app, trusted_proxies))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=300)

    def games(self) -> list:
        return list(self.app.state.store.games.values())

    def game(self, client: httpx.Client):
        """The game of ``client``'s session."""
        return self.app.state.store.games[client.cookies["sichuan_game"]]

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _tiles(counts: np.ndarray) -> list[str]:
    return [tile_str(int(k)) for k in np.repeat(np.arange(N_KINDS), counts)]


def expected_table(state, human: int, names: list[str], legal: list[str]) -> dict:
    """The table seat ``human`` may see, from the full state of table 0."""
    t = 0
    ph = int(state.phase[t])
    dealer = int(state.dealer[t])
    seats = []
    for s in range(4):
        void = int(state.void[t, s])
        shown_void = void >= 0 and (s == human or bool(state.void_revealed[t, s]))
        hu = bool(state.hu[t, s])
        hu_tile = None
        if hu and (s == human or int(state.hu_from[t, s]) != s):
            hu_tile = tile_str(int(state.hu_tile[t, s]))
        seats.append({
            "seat": s, "name": names[s], "you": s == human,
            "wind": SEAT_WINDS[(s - dealer) % 4],
            "standing": int(state.hand[t, s].sum()),
            "void": SUITS[void] if shown_void else None,
            "melds": [{"meld": MELD_NAMES[int(state.meld[t, s, k])], "tile": tile_str(int(k))}
                      for k in np.flatnonzero(state.meld[t, s])],
            "river": [tile_str(int(k)) for k in state.river[t, s, :int(state.river_len[t, s])]],
            "hu": hu, "hu_tile": hu_tile, "score": int(state.scores[t, s]),
        })
    aside = int(state.set_aside[t, human])
    drawn = int(state.drawn_tile[t])
    own_turn = ph == TURN and int(state.active[t]) == human
    if ph in (CLAIM, ROB) and int(state.current[t]) != human:
        # a window that does not ask the human: it cannot know that one is open (the
        # engine opens one only when some seat has an option): the turn of the seat
        # that made the move, nothing under claim
        ph = TURN
    return {
        "you": human, "phase": PHASE_NAMES[ph],
        "wall": int(state.wall_back[t] - state.wall_front[t]),
        "dealer": dealer, "active": None if ph == DONE else int(state.active[t]),
        "claim_tile": (tile_str(int(state.claim_tile[t])) if ph in (CLAIM, ROB) and
                       int(state.claim_tile[t]) >= 0 else None),
        "hand": _tiles(state.hand[t, human]),
        "drawn": tile_str(drawn) if own_turn and drawn >= 0 else None,
        "aside": tile_str(aside) if aside >= 0 else None,
        "seats": seats, "legal": sorted(legal),
    }

"""The games of a server, with fair limits: nothing is dropped to make room.

:class:`GameStore` keeps each game as a :class:`GameEntry` (the game, the address of the
client that started it, when it was last used, its own ``asyncio.Lock``, the latest
published table). A game unused for ``idle_seconds`` expires; a client address holds at
most ``per_client`` games; when ``max_games`` games are live, a new one is refused with a
message that says so (HTTP 503, ``Retry-After``) instead of dropping another player's
game.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sichuan_env.play.web.table import GameError, WebGame

__all__ = ["GameEntry", "GameStore"]


@dataclass
class GameEntry:
    """One live game. ``lock`` is held around each of its moves (and any job on it), so
    moves of one game are applied one at a time while other games go on (``work_lock``
    by the thread that runs it); ``published`` is
    the JSON of its table as of its latest move (what ``GET /api/state`` sends, read
    without waiting for a move in progress)."""

    game_id: str
    game: WebGame
    client: str
    last_used: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    work_lock: threading.Lock = field(default_factory=threading.Lock)  # held by the thread
    published: bytes = b""
    busy: int = 0  # requests in progress on it (an entry in use never expires)


class GameStore:
    """The live games by id (see the module docstring)."""

    def __init__(self, max_games: int = 200, per_client: int = 8,
                 idle_seconds: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_games = max_games
        self.per_client = per_client
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.entries: dict[str, GameEntry] = {}
        self._lock = threading.Lock()

    @property
    def games(self) -> dict[str, WebGame]:
        """The live games by id (a copy)."""
        with self._lock:
            return {k: e.game for k, e in self.entries.items()}

    def expire(self) -> int:
        """Drop the games unused for ``idle_seconds``; returns how many."""
        now = self.clock()
        with self._lock:
            old = [k for k, e in self.entries.items()
                   if not e.busy and now - e.last_used > self.idle_seconds]
            gone = [self.entries.pop(k) for k in old]
        for entry in gone:
            entry.game.close()
        return len(gone)

    def get(self, game_id: str | None) -> GameEntry:
        """The entry of ``game_id`` (marked used); :class:`GameError` 404 when none."""
        self.expire()
        with self._lock:
            entry = self.entries.get(game_id or "")
            if entry is None:
                if not game_id:
                    raise GameError("no game in this browser session: start one with "
                                    "POST /api/new", 404)
                raise GameError("unknown game (the server was restarted or the game expired "
                                "after being left idle): start a new deal", 404)
            entry.last_used = self.clock()
            return entry

    def check_room(self, client: str) -> None:
        """Raise :class:`GameError` (429 for this client, 503 for the server) unless a new
        game of ``client`` fits."""
        self.expire()
        with self._lock:
            self._check_room_locked(client)

    def _check_room_locked(self, client: str) -> None:
        mine = sum(e.client == client for e in self.entries.values())
        if mine >= self.per_client:
            raise GameError(f"this address already has {mine} games on this server (at most "
                            f"{self.per_client}); finish or leave one (games expire after "
                            f"{self.idle_seconds / 60:g} minutes unused)", 429)
        if len(self.entries) >= self.max_games:
            raise GameError(f"the server is full ({self.max_games} games in play); try again "
                            "in a few minutes", 503)

    def add(self, game: WebGame, client: str, published: bytes = b"") -> GameEntry:
        """Keep ``game`` under a new secret id (the limits checked again, with the check
        and the insertion under one lock: another request may have taken the room)."""
        self.expire()
        entry = GameEntry(secrets.token_urlsafe(18), game, client, self.clock(),
                          published=published)
        with self._lock:
            self._check_room_locked(client)
            self.entries[entry.game_id] = entry
        return entry

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {"games": len(self.entries), "max_games": self.max_games,
                    "per_client": self.per_client, "idle_seconds": self.idle_seconds}

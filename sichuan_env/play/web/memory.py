"""What a game of the play server costs in memory, and how many games fit.

A game holds its table and its bots: agent objects (small for ``random``, ``greedy``,
``rules``, ``search``), and, for an ``exec:`` bot, one program per seat (a Python
``bot_server`` is a process of about 40 MiB). :func:`game_cost` measures it once at
server start by building two games' bots in this process: the growth of this process's
memory and the proportional set size (PSS: shared pages counted in part) of the
programs they started. :func:`fitting_games` lowers the game limit to what the memory
available holds, so that a full server never needs more memory than the machine has.
Linux only (``/proc``); elsewhere nothing is measured and the limit stays as given.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MEMORY_SHARE", "available_memory", "fitting_games", "game_cost"]

#: The share of the memory available at start that the games may take (the rest: the
#: server itself, its workers and reviews, and whatever else runs on the machine).
MEMORY_SHARE = 0.75
MIB = 2**20


def available_memory() -> int | None:
    """Bytes of memory available now (``MemAvailable`` of ``/proc/meminfo``), or None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _own_rss() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (and theirs, recursively)."""
    found: set[int] = set()
    parents = {pid}
    try:
        entries = [int(e.name) for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return found
    stats: dict[int, int] = {}
    for p in entries:
        try:
            text = Path(f"/proc/{p}/stat").read_text()
            stats[p] = int(text[text.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    while True:
        more = {p for p, ppid in stats.items() if ppid in parents and p not in found}
        if not more:
            return found
        found |= more
        parents = more


def _pss(pid: int) -> int:
    """Proportional set size of ``pid`` in bytes (its RSS where PSS is not given)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def game_cost(build: Callable[[], Any], close: Callable[[Any], None],
              games: int = 2) -> int | None:
    """Bytes one game costs: ``build()`` makes one game's bots (``close(bots)`` ends
    them), ``games`` of them are built at once and measured (this process's growth and
    the programs they started); None where ``/proc`` cannot tell."""
    me = os.getpid()
    before_rss = _own_rss()
    before_kids = _children(me)
    if before_rss is None:
        return None
    built = []
    try:
        for _ in range(games):
            built.append(build())
        grown = max(0, (_own_rss() or before_rss) - before_rss)
        kids = _children(me) - before_kids
        total = grown + sum(_pss(p) for p in kids)
    finally:
        for b in built:
            close(b)
    return total // games


def fitting_games(requested: int, per_game: int | None, available: int | None,
                  share: float = MEMORY_SHARE) -> int:
    """The game limit: ``requested``, lowered to the games whose memory (``per_game``
    bytes each) fits ``share`` of ``available`` bytes (at least 1); unchanged when either
    is unknown."""
    if not per_game or available is None:
        return requested
    return max(1, min(requested, int(available * share // per_game)))

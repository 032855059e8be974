"""How a browser game names and builds one bot seat: :class:`BotSpec` (an agent spec for
:func:`sichuan_env.seats.agent.make_agent`, its rule preset, the name the page shows) and
:func:`display_name` (never a server file path); :func:`choose_one` asks one agent for its
move at a one-table state. Used by the game's bots (:mod:`sichuan_env.play.web.bots`) and by
the worker processes (:mod:`sichuan_env.play.web.workers`) alike."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from sichuan_env.seats.driver import choose

__all__ = ["BotSpec", "choose_one", "display_name"]

_ROW = np.zeros(1, np.intp)

_FRESH: dict[tuple[str, str, int | None], Any] = {}  # never used agents, copied for games
_UNCOPIED: set[tuple[str, str, int | None]] = set()  # specs whose agents are not copied


def display_name(spec: str) -> str:
    """How the page names the bot of agent spec ``spec``: the agent's name without its
    arguments or any file path (``ppo:/srv/x.pt`` -> ``ppo``, ``/srv/bot.py:Mine`` ->
    ``Mine``, ``search?budget=9`` -> ``search``)."""
    text = spec.split("?", 1)[0].strip()
    if ":" in text:
        head, tail = text.rsplit(":", 1)
        # path/to/bot.py:Class -> Class; name:argument -> name
        text = tail if "/" in head or "\\" in head or head.endswith(".py") else head
    text = re.split(r"[/\\]", text)[-1]
    if text.endswith(".py"):
        text = text[:-3]
    return re.sub(r"[^A-Za-z0-9_.+-]", "", text)[:40] or "bot"


@dataclass(frozen=True)
class BotSpec:
    """One bot seat: the agent ``spec`` (as for :func:`sichuan_env.seats.agent.make_agent`), the
    rule preset it plays, the ``name`` the page shows (default :func:`display_name`), and
    whether it thinks in a worker process (``isolated``; for slow bots, see
    :mod:`sichuan_env.play.web.workers`)."""

    spec: str
    preset: str = "mil"
    name: str = ""
    isolated: bool = False  # decide in a worker process (sichuan_env.play.web.workers)

    @property
    def shown(self) -> str:
        return self.name or display_name(self.spec)

    def build(self, seed: int | None = None) -> Any:
        """A new agent object of this spec (validated once by the server at start): a
        copy of a fresh, never used one kept per spec and seed (looking an agent up by
        its spec costs tens of milliseconds), or a new one for an agent that cannot be
        copied (of which none is kept: an ``exec:`` agent runs a program)."""
        from sichuan_env.seats.agent import make_agent

        key = (self.spec, self.preset, seed)
        if key in _UNCOPIED:
            return make_agent(self.spec, seed=seed, preset=self.preset, validate=False)
        proto = _FRESH.get(key)
        if proto is None:
            proto = _FRESH[key] = make_agent(self.spec, seed=seed, preset=self.preset,
                                             validate=False)
        try:
            return copy.deepcopy(proto)
        except Exception:
            # not copied (an exec: bot runs a program): the unused one is this seat's
            # agent, and none is kept (it would hold a program of its own for nothing)
            _UNCOPIED.add(key)
            return _FRESH.pop(key)


def choose_one(state: Any, agent: Any, name: str) -> int:
    """``agent``'s action at the one table of ``state`` (``name`` for its errors)."""
    return int(choose(state, _ROW, [agent], names=[name])[0])

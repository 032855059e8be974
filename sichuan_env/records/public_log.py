"""What a seat is told of each step of a deal, as sentences (terminal and browser play).

:func:`public_moves` turns the events of one engine step into what seat ``viewer`` may
know: its own moves in full, the others' public moves (a discard, a declared kong or Hu,
the fact that a forbidden suit was chosen), and the others' claims that took effect (a
meld that appeared); never another seat's pass, set-aside tile or claim that did not
take effect, nor a face-down winning tile. :func:`payment_text` words a payment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sichuan_env.core.tiles import tile_str
from sichuan_env.core.vocab import MELDED_KONG, PUNG
from sichuan_env.seats.view import SeatView

__all__ = ["REASONS", "payment_text", "public_moves", "who"]

REASONS = {
    "hu": "Hu", "self_drawn_hu": "self-drawn Hu", "concealed_kong": "concealed kong",
    "melded_kong": "melded kong", "promoted_kong": "promoted kong",
    "kong_refund": "kong refund", "ready": "ready hand at the wall end",
    "flower_pig": "flower pig",
}


def who(seat: int, viewer: int) -> str:
    """``you`` for the viewer's own seat, else ``seat N``."""
    return "you" if seat == viewer else f"seat {seat}"


def public_moves(events: Sequence[dict[str, Any]], human: int, before: SeatView,
                 after: SeatView) -> list[str]:
    """What the viewer ``human`` learns of the ``events`` of one step, as sentences:
    its own moves in full, the others' public moves, and the others' claims that took
    effect (a meld that appeared between the views ``before`` and ``after``)."""
    lines = []
    for e in events:
        seat, act = e["seat"], e["act"]
        r = (seat - human) % 4
        name = who(seat, human)
        mine = seat == human
        if act == "void":
            if mine:
                what = (f"show an indicator for suit {e['suit']}" if "suit" in e
                        else f"set {e['tile']} aside")
                lines.append(f"you {what} (forbidden suit)")
            else:
                lines.append(f"{name} chooses a forbidden suit")
        elif act == "discard":
            verb = "discard" if mine else "discards"
            forced = " (the set-aside tile)" if e.get("auto") else ""
            lines.append(f"{name} {verb} {e['tile']}{forced}")
        elif act == "kong" and "tile" in e:
            lines.append(f"{name} {'declare' if mine else 'declares'} a kong of {e['tile']}")
        elif act == "hu":
            tile = int(after.hu_tile[0, r])
            on = f" on {tile_str(tile)}" if tile >= 0 else " (self-drawn, tile face down)"
            lines.append(f"{name} {'declare' if mine else 'declares'} Hu{on}")
        elif mine:  # pung, kong claims and passes: only the viewer's own
            lines.append({"pung": "you claim a pung", "kong": "you claim a kong",
                          "pass": "you pass"}[act])
    for r in range(1, 4):
        grew = np.flatnonzero((after.meld[0, r] != before.meld[0, r])
                              & np.isin(after.meld[0, r], (PUNG, MELDED_KONG)))
        for k in grew:
            what = "pung" if after.meld[0, r, k] == PUNG else "kong"
            lines.append(f"seat {(human + r) % 4} claims a {what} of {tile_str(int(k))}")
    return lines


def payment_text(p: dict[str, Any], human: int) -> str:
    """A payment of the record (``from``, ``to``, ``points``, ``reason``) as seat
    ``human`` reads it."""
    to = "nobody" if p["to"] is None else who(p["to"], human)
    payer = who(p["from"], human)
    return (f"{payer} {'pay' if p['from'] == human else 'pays'} {to} {p['points']} "
            f"({REASONS.get(p['reason'], p['reason'])})")

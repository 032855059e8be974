"""The table as an SVG picture, as one seat sees it or as a spectator sees everything.

``render_svg(state, table=0, viewer=None) -> str``: a standalone ``<svg>`` element. One
band per seat (name, wind, forbidden suit, score, Hu) with the hand, the set-aside tile,
the melds and the discards below; a header line with the deal, the phase, the tiles left
in the wall, whose turn it is and the tile under claim. ``viewer=s`` shows what seat
``s`` knows (the same rules as :mod:`sichuan_env.records.render`: other hands as tile backs,
forbidden suits once revealed, a self-drawn winning tile face down), as
:func:`sichuan_env.seats.view.table_view` decides; ``render_view_svg(tv)`` draws a
:class:`~sichuan_env.seats.view.TableView` (``render_svg`` builds one and calls it).

Tiles are drawn, not taken from a font: a rounded rectangle with the rank as a large
digit in the suit's colour (characters red, dots blue, bamboo green) and a suit mark under
it (a red seal for characters, a ring for dots, sticks for bamboo), so they stay readable
a few pixels wide. The 27 faces and the back are ``<symbol>`` definitions that each tile
``<use>``s; ``defs=False`` leaves them out for pages that hold them once
(:func:`tile_defs`).

Machine-readable attributes, for tests and tools: the root has ``data-wall``,
``data-phase``, ``data-current`` (-1 when the deal is over); each seat's ``<g>`` has
``data-seat``, ``data-score`` and, when its hand is shown, ``data-hand`` (the tiles as
``5m`` strings, sorted) and ``data-aside``; every tile has ``data-tile`` (``"back"``
when hidden).
"""

from __future__ import annotations

import html

import numpy as np

from sichuan_env.core.state import CLAIM, DONE, END_NAMES, PHASE_NAMES, ROB, TURN, State
from sichuan_env.core.tiles import N_KINDS, SUITS, tile_str
from sichuan_env.core.vocab import (
    CONCEALED_KONG,
    MELDED_KONG,
    POSTPONED_KONG,
    PROMOTED_KONG,
    PUNG,
    SEAT_WINDS,
)
from sichuan_env.seats.view import HIDDEN, TableView, table_view

__all__ = ["render_svg", "render_view_svg", "tile_defs", "tile_svg"]

TILE_W, TILE_H = 28, 38  # a hand tile; discards are drawn at SMALL of this size
SMALL = 0.72
GAP = 2
SUIT_COLOURS = {"m": "#c0262d", "p": "#1d57a8", "s": "#1b7f3a"}
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
_MELD_LABEL = {PUNG: "pung", CONCEALED_KONG: "kong (concealed)", MELDED_KONG: "kong",
               PROMOTED_KONG: "kong (promoted)", POSTPONED_KONG: "kong (postponed)"}
LABEL_W = 150
ROW_TILES = 20  # discards per row
WIDTH = LABEL_W + ROW_TILES * round((TILE_W + GAP) * SMALL) + 24 + 16 * (TILE_W + GAP) // 2
SEAT_H = TILE_H + 8 + 2 * round((TILE_H + GAP) * SMALL) + 14
HEAD_H = 50


def _suit_mark(suit: str) -> str:
    c = SUIT_COLOURS[suit]
    if suit == "p":
        return (f'<circle cx="14" cy="29.5" r="4.6" fill="none" stroke="{c}" '
                f'stroke-width="2"/><circle cx="14" cy="29.5" r="1.5" fill="{c}"/>')
    if suit == "s":
        return "".join(f'<rect x="{x}" y="24" width="3" height="11" rx="1.4" fill="{c}"/>'
                       for x in (8.5, 12.5, 16.5))
    return (f'<rect x="9" y="25" width="10" height="9" rx="1.5" fill="{c}"/>'
            '<path d="M11 29.5h6M14 26.8v5.4" stroke="#fff" stroke-width="1.4"/>')


def _symbols() -> str:
    body = [
        '<symbol id="sich-back" viewBox="0 0 28 38"><rect x="0.5" y="0.5" width="27" '
        'height="37" rx="4" fill="#2f7d5b" stroke="#1d4d38"/><rect x="4" y="4" width="20" '
        'height="30" rx="2.5" fill="none" stroke="#8fd1b0" stroke-width="1.2"/></symbol>'
    ]
    for k in range(N_KINDS):
        name = tile_str(k)
        rank, suit = name[0], name[1]
        body.append(
            f'<symbol id="sich-{name}" viewBox="0 0 28 38"><rect x="0.5" y="0.5" '
            f'width="27" height="37" rx="4" fill="#fbf7ea" stroke="#7d7462"/>'
            f'<text x="14" y="19.5" text-anchor="middle" font-family="{FONT}" '
            f'font-size="19" font-weight="bold" fill="{SUIT_COLOURS[suit]}">{rank}</text>'
            f"{_suit_mark(suit)}</symbol>"
        )
    return "".join(body)


def tile_defs() -> str:
    """``<symbol>`` definitions of the 27 tile faces and the back (ids ``sich-5m``,
    ``sich-back``), in a hidden ``<svg>`` for a page that shows many tables."""
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0" '
            f'style="position:absolute" aria-hidden="true"><defs>{_symbols()}</defs></svg>')


def tile_svg(name: str, x: float, y: float, scale: float = 1.0, extra: str = "") -> str:
    """One tile (``"5m"`` or ``"back"``) at ``(x, y)``."""
    w, h = TILE_W * scale, TILE_H * scale
    title = "" if name == "back" else f"<title>{name}</title>"
    return (f'<use href="#sich-{name}" x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" '
            f'data-tile="{name}"{extra}>{title}</use>')


def _text(x: float, y: float, s: str, size: int = 12, weight: str = "normal",
          fill: str = "#222", extra: str = "") -> str:
    return (f'<text x="{x:g}" y="{y:g}" font-family="{FONT}" font-size="{size}" '
            f'font-weight="{weight}" fill="{fill}"{extra}>{html.escape(s)}</text>')


def _check(state: State, table: int, viewer: int | None) -> None:
    if not 0 <= table < state.batch_size:
        raise ValueError(f"table {table} out of range 0..{state.batch_size - 1}")
    if viewer is not None and (isinstance(viewer, bool) or viewer not in (0, 1, 2, 3)):
        raise ValueError(f"viewer must be None or a seat 0..3, got {viewer!r}")


def _seat_svg(tv: TableView, seat: int, y0: float) -> str:
    shown = tv.hand[seat] is not None
    live = tv.phase != DONE
    to_act = live and tv.current == seat
    if shown:
        names = [tile_str(int(k)) for k in np.repeat(np.arange(N_KINDS), tv.hand[seat])]
    else:
        names = ["back"] * int(tv.hand_size[seat])
    aside = int(tv.set_aside[seat])
    score = int(tv.scores[seat])
    attrs = f' data-seat="{seat}" data-score="{score}"'
    if shown:
        attrs += f' data-hand="{" ".join(names)}"'
        attrs += f' data-aside="{tile_str(aside) if aside >= 0 else ""}"'
    out = [f'<g class="seat{" to-act" if to_act else ""}"{attrs}>']
    fill = "#fff3c4" if to_act else ("#f1f4f1" if seat % 2 else "#f7f8f6")
    out.append(f'<rect x="2" y="{y0 + 2:g}" width="{WIDTH - 4}" height="{SEAT_H - 4}" '
               f'rx="6" fill="{fill}" stroke="{"#d4a017" if to_act else "#d8ddd6"}"/>')
    who = f"seat {seat} ({SEAT_WINDS[(seat - tv.dealer) % 4]})"
    if seat == tv.viewer:
        who += " · you"
    out.append(_text(10, y0 + 20, who, 14, "bold"))
    vd = int(tv.void[seat])
    void = f"void {SUITS[vd]}" if vd >= 0 else "void ?" if vd == HIDDEN else "void -"
    out.append(_text(10, y0 + 37, void, 12, fill=SUIT_COLOURS[SUITS[vd]] if void[-1] in SUITS
                     else "#555"))
    out.append(_text(10, y0 + 54, f"score {score:+d}", 13, "bold",
                     fill="#1b7f3a" if score > 0 else "#c0262d" if score < 0 else "#333",
                     extra=f' class="score" data-score="{score}"'))
    if tv.hu[seat]:
        frm = int(tv.hu_from[seat])
        how = "self-drawn" if frm == seat else f"from seat {frm}"
        out.append(_text(10, y0 + 71, f"HU #{int(tv.hu_rank[seat]) + 1} {how}", 12,
                         "bold", fill="#8a5a00"))
        if tv.hu_tile[seat] >= 0:  # (a self-drawn one lies face down for the others)
            out.append(tile_svg(tile_str(int(tv.hu_tile[seat])), 10, y0 + 77, 0.6,
                                ' class="hu-tile"'))
    x = LABEL_W
    y = y0 + 6
    drawn = tv.drawn
    just_drawn = (shown and to_act and tv.phase == TURN and drawn >= 0
                  and tile_str(drawn) in names)
    standing = list(names)
    if just_drawn:  # the tile just drawn stands apart, at the right
        standing.remove(tile_str(drawn))
    out.append(f'<g class="hand" data-count="{len(names)}">')
    for name in standing:
        out.append(tile_svg(name, x, y))
        x += TILE_W + GAP
    if just_drawn:
        x += 8
        out.append(tile_svg(tile_str(drawn), x, y, extra=' class="drawn"'))
        out.append(_text(x, y + TILE_H + 9, "drawn", 8, fill="#555"))
        x += TILE_W + GAP
    out.append("</g>")
    if aside != -1:
        x += 6
        out.append(tile_svg(tile_str(aside) if aside >= 0 else "back", x, y,
                            extra=' class="aside"'))
        out.append(_text(x, y + TILE_H + 9, "set aside", 8, fill="#555"))
        x += TILE_W + GAP
    for k in np.flatnonzero(tv.meld[seat]):
        code = int(tv.meld[seat, k])
        x += 10
        n = 3 if code == PUNG else 4
        out.append(f'<g class="meld" data-meld="{_MELD_LABEL[code]}" data-kind="{tile_str(k)}">')
        for _ in range(n):
            out.append(tile_svg(tile_str(int(k)), x, y, 0.85))
            x += TILE_W * 0.85 + 1
        out.append("</g>")
        out.append(_text(x - n * (TILE_W * 0.85 + 1), y + TILE_H * 0.85 + 9, _MELD_LABEL[code],
                         8, fill="#555"))
    river = [tile_str(int(k)) for k in tv.river[seat]]
    out.append(f'<g class="river" data-river="{" ".join(river)}">')
    w, h = (TILE_W + GAP) * SMALL, (TILE_H + GAP) * SMALL
    for j, name in enumerate(river):
        out.append(tile_svg(name, LABEL_W + (j % ROW_TILES) * w,
                            y0 + TILE_H + 18 + (j // ROW_TILES) * h, SMALL))
    out.append("</g></g>")
    return "".join(out)


def render_svg(state: State, table: int = 0, viewer: int | None = None, *,
               defs: bool = True) -> str:
    """An SVG picture of ``table`` as seen by ``viewer`` (None = everything). ``defs``:
    include the tile definitions (leave them out only when the page holds
    :func:`tile_defs` once)."""
    _check(state, table, viewer)
    return render_view_svg(table_view(state, table, viewer), defs=defs)


def render_view_svg(tv: TableView, *, defs: bool = True) -> str:
    """:func:`render_svg` of a :class:`~sichuan_env.seats.view.TableView`."""
    ph = tv.phase
    live = ph != DONE
    wall = tv.wall_left
    height = HEAD_H + 4 * SEAT_H + 4
    cur = tv.current if live else -1
    viewer = tv.viewer
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sichuan-table" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" data-wall="{wall}" '
        f'data-phase="{PHASE_NAMES[ph]}" data-current="{cur}" '
        f'data-viewer="{"" if viewer is None else viewer}">'
    ]
    if defs:
        out.append(f"<defs>{_symbols()}</defs>")
    out.append(f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>')
    deal = f"deal {tv.deal_index + 1}/{tv.deals_per_match}"
    out.append(_text(10, 22, f"{deal} · {PHASE_NAMES[ph]}", 14))
    out.append(_text(LABEL_W, 22, f"wall {wall}", 14, "bold",
                     extra=f' class="wall" data-wall="{wall}"'))
    if live:
        status = f"to act: seat {cur}"
    else:
        status = f"ended: {END_NAMES[tv.end_reason].replace('_', ' ')}"
    out.append(_text(10, 42, status, 13, fill="#555"))
    if ph in (CLAIM, ROB) and tv.claim_tile >= 0:
        what = "kong tile (may be robbed)" if ph == ROB else "discard"
        label = f"under claim: {what} of seat {tv.active}"
        out.append(_text(WIDTH - 330, 30, label, 12, fill="#555"))
        out.append(tile_svg(tile_str(tv.claim_tile), WIDTH - 44, 6, 1.0,
                            ' class="claim-tile"'))
    for seat in range(4):
        out.append(_seat_svg(tv, seat, HEAD_H + seat * SEAT_H))
    out.append("</svg>")
    return "".join(out)

"""Readable views of a table: text with Unicode tiles (or ASCII) and HTML for notebooks.

``render_text(state, table=0, viewer=None, ascii=False) -> str``: one block per seat
(hand, set-aside tile, melds, discards, forbidden suit, Hu with its winning tile, score)
and a header (deal, phase, whose turn, tiles left in the wall, the tile under claim).

``viewer=None`` shows everything (a spectator with perfect information); ``viewer=s``
shows what seat ``s`` knows: other hands as backs, their set-aside tiles as a back and
their forbidden suits only once revealed. What is shown is decided in one place,
:func:`sichuan_env.seats.view.table_view`; ``render_view_text(tv)`` and ``render_view_html(tv)``
draw a :class:`~sichuan_env.seats.view.TableView` (``render_text`` and ``render_html`` build one
and call them).

=================  ========================  =====================================
shown              Unicode (default)          ASCII (``ascii=True``)
=================  ========================  =====================================
a tile             glyph (U+1F007..U+1F021)   ``5m``
a hidden tile      U+1F02B (tile back)        ``##``
set-aside tile     ``[5m]`` after the hand    same
pung / kong        ``pung 🀋🀋🀋``, ``kong* …``  ``pung 5m``, ``kong* 5m``: ``*`` concealed,
                                              ``+`` promoted, ``~`` postponed kong
winner             ``HU#1 on 5m``             same (``#`` = order of the win)
=================  ========================  =====================================

``render_html(state, table=0, viewer=None) -> str`` gives the same content as an HTML
table (tiles as glyphs with their text as a tooltip). ``html_repr(obj)`` wraps it for
``_repr_html_`` hooks. An SVG picture of the same content: :mod:`sichuan_env.records.svg`.
"""

from __future__ import annotations

import html

import numpy as np

from sichuan_env.core.state import CLAIM, DONE, END_NAMES, PHASE_NAMES, ROB, State
from sichuan_env.core.tiles import SUITS, glyph, tile_str
from sichuan_env.core.vocab import (
    CONCEALED_KONG,
    MELDED_KONG,
    POSTPONED_KONG,
    PROMOTED_KONG,
    PUNG,
    SEAT_WINDS,
)
from sichuan_env.seats.view import HIDDEN, TableView, table_view

BACK = "\U0001f02b"
_MELD_LABEL = {
    PUNG: "pung",
    CONCEALED_KONG: "kong*",
    MELDED_KONG: "kong",
    PROMOTED_KONG: "kong+",
    POSTPONED_KONG: "kong~",
}


def _tile(k: int, ascii: bool) -> str:
    return tile_str(k) if ascii else glyph(k)


def _tiles(kinds, ascii: bool) -> str:
    sep = " " if ascii else ""
    return sep.join(_tile(int(k), ascii) for k in kinds)


def _check(state: State, table: int, viewer: int | None) -> None:
    if not 0 <= table < state.batch_size:
        raise ValueError(f"table {table} out of range 0..{state.batch_size - 1}")
    if viewer is not None and not 0 <= viewer <= 3:
        raise ValueError(f"viewer must be None or a seat 0..3, got {viewer}")


def _seat_facts(tv: TableView, seat: int, ascii: bool) -> dict:
    """The facts shown for one seat, as strings."""
    hand = tv.hand[seat]
    sa = int(tv.set_aside[seat])
    if hand is not None:
        hand_s = _tiles(np.repeat(np.arange(27), hand), ascii)
        aside = f"[{_tile(sa, ascii)}]" if sa >= 0 else ""
    else:
        back = "##" if ascii else BACK
        hand_s = (" " if ascii else "").join([back] * int(tv.hand_size[seat]))
        aside = f"[{back}]" if sa == HIDDEN else ""
    melds = []
    for k in np.flatnonzero(tv.meld[seat]):
        code = int(tv.meld[seat, k])
        n = 3 if code == PUNG else 4
        label = _MELD_LABEL[code]
        melds.append(f"{label} {_tiles([k] * n, ascii) if not ascii else tile_str(k)}")
    discards = _tiles(tv.river[seat], ascii)
    vd = int(tv.void[seat])
    void = SUITS[vd] if vd >= 0 else "?" if vd == HIDDEN else "-"
    hu = ""
    if tv.hu[seat]:
        self_drawn = int(tv.hu_from[seat]) == seat
        if tv.hu_tile[seat] < 0:  # a self-drawn winning tile lies face down
            hu = f"HU#{int(tv.hu_rank[seat]) + 1} self-drawn"
        else:
            tile = _tile(int(tv.hu_tile[seat]), ascii)
            how = "self-drawn" if self_drawn else f"from seat {int(tv.hu_from[seat])}"
            hu = f"HU#{int(tv.hu_rank[seat]) + 1} on {tile} ({how})"
    return {
        "hand": hand_s,
        "aside": aside,
        "melds": ", ".join(melds),
        "discards": discards,
        "void": void,
        "hu": hu,
        "score": int(tv.scores[seat]),
        "match": int(tv.match_scores[seat]),
    }


def _header(tv: TableView, ascii: bool) -> tuple[str, str]:
    ph = tv.phase
    deal = f"deal {tv.deal_index + 1}/{tv.deals_per_match}"
    head = f"{deal} | phase {PHASE_NAMES[ph]} | wall {tv.wall_left}"
    if ph == DONE:
        head += f" | ended: {END_NAMES[tv.end_reason]}"
    else:
        head += f" | to act: seat {tv.current}"
    claim = ""
    if ph in (CLAIM, ROB) and tv.claim_tile >= 0:
        what = "kong tile (may be robbed)" if ph == ROB else "discard"
        claim = f"under claim: {_tile(tv.claim_tile, ascii)} ({what} of seat {tv.active})"
    return head, claim


def render_text(
    state: State, table: int = 0, viewer: int | None = None, ascii: bool = False
) -> str:
    """A multi-line text view of ``table`` as seen by ``viewer`` (None = everything)."""
    _check(state, table, viewer)
    return render_view_text(table_view(state, table, viewer), ascii)


def render_view_text(tv: TableView, ascii: bool = False) -> str:
    """:func:`render_text` of a :class:`~sichuan_env.seats.view.TableView`."""
    head, claim = _header(tv, ascii)
    lines = [head]
    if claim:
        lines.append(claim)
    live = tv.phase != DONE
    for seat in range(4):
        v = _seat_facts(tv, seat, ascii)
        wind = SEAT_WINDS[(seat - tv.dealer) % 4]
        mark = ">" if live and seat == tv.current else " "
        tags = [f"void {v['void']}"]
        if seat == tv.viewer:
            tags.append("you")
        if v["hu"]:
            tags.append(v["hu"])
        score = f"score {v['score']:+d}"
        if tv.deals_per_match > 1:
            score += f" (match {v['match']:+d})"
        lines.append(f"{mark}seat {seat} ({wind}) {' | '.join(tags)} | {score}")
        hand = (v["hand"] + " " + v["aside"]).strip()
        lines.append(f"    hand:  {hand}")
        if v["melds"]:
            lines.append(f"    melds: {v['melds']}")
        lines.append(f"    river: {v['discards']}")
    return "\n".join(lines)


_CSS = (
    "<style>.sich td,.sich th{padding:2px 8px;text-align:left;vertical-align:top}"
    ".sich .t{font-size:1.6em;line-height:1.1}.sich .cur{background:#fff3c4}</style>"
)


def _html_tiles(kinds) -> str:
    return "".join(
        f'<span title="{tile_str(int(k))}">{glyph(int(k))}</span>' for k in kinds
    )


def render_html(state: State, table: int = 0, viewer: int | None = None) -> str:
    """An HTML table of ``table`` (for notebooks); same content as :func:`render_text`."""
    _check(state, table, viewer)
    return render_view_html(table_view(state, table, viewer))


def render_view_html(tv: TableView) -> str:
    """:func:`render_html` of a :class:`~sichuan_env.seats.view.TableView`."""
    head, claim = _header(tv, ascii=True)
    live = tv.phase != DONE
    rows = []
    for seat in range(4):
        v = _seat_facts(tv, seat, ascii=True)
        if tv.hand[seat] is not None:
            hand = _html_tiles(np.repeat(np.arange(27), tv.hand[seat]))
            sa = int(tv.set_aside[seat])
            if sa >= 0:
                hand += f" [{_html_tiles([sa])}]"
        else:
            hand = BACK * int(tv.hand_size[seat])
            if tv.set_aside[seat] == HIDDEN:
                hand += f" [{BACK}]"
        melds = " ".join(
            f"{_MELD_LABEL[int(tv.meld[seat, k])]} {_html_tiles([k])}"
            for k in np.flatnonzero(tv.meld[seat])
        )
        river = _html_tiles(tv.river[seat])
        cls = ' class="cur"' if live and seat == tv.current else ""
        wind = SEAT_WINDS[(seat - tv.dealer) % 4]
        rows.append(
            f"<tr{cls}><th>seat {seat} ({wind}){' (you)' if seat == tv.viewer else ''}</th>"
            f"<td>{html.escape(v['void'])}</td><td class='t'>{hand}</td>"
            f"<td class='t'>{melds}</td><td class='t'>{river}</td>"
            f"<td>{html.escape(v['hu'])}</td><td>{v['score']:+d}</td></tr>"
        )
    caption = html.escape(head) + (f"<br>{html.escape(claim)}" if claim else "")
    return (
        f"{_CSS}<table class='sich'><caption>{caption}</caption>"
        "<tr><th>seat</th><th>void</th><th>hand</th><th>melds</th><th>discards</th>"
        "<th>Hu</th><th>score</th></tr>" + "".join(rows) + "</table>"
    )

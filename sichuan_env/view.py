"""What one seat may know, as small integer arrays: the seat view.

``seat_view(state, seats, rows=None) -> SeatView`` projects the batched
:class:`~sichuan_env.state.State` onto the public information plus the private
information of seat ``seats[i]`` at table ``rows[i]``. It is the one place that decides
what a seat can see: the observation planes of :mod:`sichuan_env.observation` are a pure
function of it (``observation.planes_from_view``), and bots may read it directly instead of
decoding planes.

Seats are *relative* to the viewer: relative seat 0 is the viewer, 1 the next seat to play
(counter-clockwise), 2 the seat opposite, 3 the previous seat; ``seat`` gives the viewer's
absolute seat. Tiles are kinds 0..26 (``kind = suit * 9 + rank - 1``), -1 for none.

The view holds nothing a seat may not know: no other seat's standing tiles, set-aside tile,
unrevealed forbidden suit, face-down (self-drawn) winning tile, Hu option, claim offer or
answer, passed-Hu value, and nothing of the wall but its length.
``tests/test_view.py`` checks this by changing those fields.

The view of a row is computed by one compiled kernel (:func:`view_row`); the observation
encoder calls it row by row inside its own compiled loop, so one row and many go through
the same code.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sichuan_env.jit import njit
from sichuan_env.state import CLAIM, RIVER_SIZE, ROB, TURN, State
from sichuan_env.vocab import N_KINDS


class SeatView(NamedTuple):
    """One seat's view of n tables (batch axis first; seat axes in relative order)."""

    seat: np.ndarray  # (n,) int8: the viewer's absolute seat 0..3
    phase: np.ndarray  # (n,) int8: VOID, TURN, CLAIM, ROB, DONE (sichuan_env.state)
    hand: np.ndarray  # (n, 27) int8: the viewer's standing tiles per kind
    set_aside: np.ndarray  # (n,) int8: the viewer's set-aside (void-choice) tile, -1 none
    drawn: np.ndarray  # (n,) int8: the tile the viewer just drew (its own turn), -1 none
    passed_hu: np.ndarray  # (n,) int16: the viewer's highest declined Hu value (0 = none)
    void: np.ndarray  # (n, 4) int8: forbidden suit 0..2 per seat, -1 unknown: the viewer's
    #                   own once chosen, the others' once revealed
    void_revealed: np.ndarray  # (n, 4) bool: seat's forbidden suit is shown (after its first
    #                            discard)
    meld: np.ndarray  # (n, 4, 27) int8: meld code per seat and kind (state.PUNG .. POSTPONED_KONG)
    river: np.ndarray  # (n, 4, 60) int8: each seat's discards in order (claimed ones
    #                    included), -1 padding
    river_len: np.ndarray  # (n, 4) int8: number of discards per seat
    hu: np.ndarray  # (n, 4) bool: seat has won (declared Hu)
    hu_tile: np.ndarray  # (n, 4) int8: seat's winning tile as shown, -1 when not won or
    #                      when another seat's self-drawn winning tile lies face down
    live_discards: np.ndarray  # (n, 27) int8: discards still lying on the table
    won_tiles: np.ndarray  # (n, 27) int8: winning tiles shown (face-down ones left out)
    claim_tile: np.ndarray  # (n,) int8: the tile under claim in a claim/rob window, else -1
    active: np.ndarray  # (n,) int8: relative seat of the turn owner (in a claim/rob window:
    #                     the seat that offered the tile under claim)
    dealer: np.ndarray  # (n,) int8: relative seat of the dealer
    wall_left: np.ndarray  # (n,) int16: tiles left in the wall
    scores: np.ndarray  # (n, 4) int32: points of this deal per seat
    match_scores: np.ndarray  # (n, 4) int32: points of the finished deals of this match
    deal_index: np.ndarray  # (n,) int16: deal number within the match


@njit
def empty_view(n: int) -> SeatView:
    """A SeatView of n rows, uninitialised (every field is overwritten by view_row)."""
    i8 = np.int8
    return SeatView(
        np.empty(n, i8), np.empty(n, i8), np.empty((n, N_KINDS), i8), np.empty(n, i8),
        np.empty(n, i8), np.empty(n, np.int16), np.empty((n, 4), i8), np.empty((n, 4), np.bool_),
        np.empty((n, 4, N_KINDS), i8), np.empty((n, 4, RIVER_SIZE), i8),
        np.empty((n, 4), i8), np.empty((n, 4), np.bool_), np.empty((n, 4), i8),
        np.empty((n, N_KINDS), i8), np.empty((n, N_KINDS), i8), np.empty(n, i8),
        np.empty(n, i8), np.empty(n, i8), np.empty(n, np.int16), np.empty((n, 4), np.int32),
        np.empty((n, 4), np.int32), np.empty(n, np.int16),
    )


STATE_FIELDS = ("hand", "set_aside", "void", "void_revealed", "meld", "river", "river_len",
                "live_discards", "won_tiles", "hu", "hu_tile", "hu_from", "scores",
                "match_scores", "passed_hu", "phase", "active", "claim_tile", "drawn_tile",
                "dealer", "deal_index", "wall_front", "wall_back")


def state_arrays(state: State) -> tuple[np.ndarray, ...]:
    """The state fields :func:`view_row` reads, in the order of :data:`STATE_FIELDS` (one
    tuple for the kernels)."""
    return (state.hand, state.set_aside, state.void, state.void_revealed, state.meld,
            state.river, state.river_len, state.live_discards, state.won_tiles, state.hu,
            state.hu_tile, state.hu_from, state.scores, state.match_scores,
            state.passed_hu, state.phase, state.active, state.claim_tile, state.drawn_tile,
            state.dealer, state.deal_index, state.wall_front, state.wall_back)


@njit(inline="always")
def view_row(sa, t, s, v, i):
    """Write seat ``s``'s view of table ``t`` (``sa = state_arrays(state)``) into row ``i``
    of the SeatView ``v``."""
    (hand, set_aside, void, void_revealed, meld, river, river_len, live_discards, won_tiles,
     hu, hu_tile, hu_from, scores, match_scores, passed_hu, phase, active, claim_tile,
     drawn_tile, dealer, deal_index, wall_front, wall_back) = sa
    ph = phase[t]
    v.seat[i] = s
    v.phase[i] = ph
    for k in range(N_KINDS):
        v.hand[i, k] = hand[t, s, k]
        v.live_discards[i, k] = live_discards[t, k]
        v.won_tiles[i, k] = won_tiles[t, k]
    v.set_aside[i] = set_aside[t, s]
    act = active[t]
    v.drawn[i] = drawn_tile[t] if ph == TURN and act == s else -1
    v.passed_hu[i] = passed_hu[t, s]
    in_window = ph in (CLAIM, ROB)
    v.claim_tile[i] = claim_tile[t] if in_window else -1
    v.active[i] = (act - s) % 4
    v.dealer[i] = (dealer[t] - s) % 4
    v.wall_left[i] = wall_back[t] - wall_front[t]
    v.deal_index[i] = deal_index[t]
    for r in range(4):
        a = (s + r) % 4
        v.void[i, r] = void[t, a] if r == 0 or void_revealed[t, a] else -1
        v.void_revealed[i, r] = void_revealed[t, a]
        for k in range(N_KINDS):
            v.meld[i, r, k] = meld[t, a, k]
        for j in range(RIVER_SIZE):
            v.river[i, r, j] = river[t, a, j]
        v.river_len[i, r] = river_len[t, a]
        v.hu[i, r] = hu[t, a]
        k = hu_tile[t, a]
        if r > 0 and k >= 0 and hu_from[t, a] == a:  # self-drawn: the tile lies face down
            v.won_tiles[i, k] -= 1
            k = -1
        v.hu_tile[i, r] = k
        v.scores[i, r] = scores[t, a]
        v.match_scores[i, r] = match_scores[t, a]


@njit
def _view_rows(sa, rows, seats, v):
    for i in range(rows.shape[0]):
        view_row(sa, rows[i], seats[i], v, i)


@njit
def _first_bad(rows, seats, B):
    """-1 when every row is in [-B, B) and every seat in 0..3, else the first bad index."""
    for i in range(rows.shape[0]):
        if not (-B <= rows[i] < B and 0 <= seats[i] <= 3):
            return i
    return -1


def rows_and_seats(state: State, seats: np.ndarray | int,
                   rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Checked (n,) intp rows (default: every table; negative ones count from the end) and
    (n,) intp seats (``seats`` is one int for all rows or one per row)."""
    B = state.phase.shape[0]
    if rows is None:
        rows = np.arange(B)
    else:
        rows = np.asarray(rows)
        if rows.ndim != 1:
            rows = rows.reshape(-1)
        if rows.dtype.kind not in "iu":
            if rows.size:
                raise ValueError(f"rows must be integers, got dtype {rows.dtype}")
        elif rows.dtype.kind == "u" and rows.size and rows.max() >= B:  # before the cast
            raise IndexError(f"rows must be table indices in [0, {B}), got {int(rows.max())}")
    if isinstance(seats, (int, np.integer)):
        if rows.size and not 0 <= seats <= 3:
            raise ValueError(f"seats must be 0..3, got {seats}")
        seats = np.full(rows.shape[0], seats, np.intp)
    else:
        seats = np.asarray(seats)
        if seats.dtype.kind not in "iu" and seats.size:
            raise ValueError(f"seats must be integers, got dtype {seats.dtype}")
        if seats.shape != rows.shape:
            try:
                seats = np.broadcast_to(seats, rows.shape)
            except ValueError:
                raise ValueError(f"seats must be one int or one per row ({rows.size}), got "
                                 f"shape {seats.shape}") from None
    # one integer type for the kernels (each type would be compiled on its own)
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    seats = np.ascontiguousarray(seats, dtype=np.intp)
    bad = _first_bad(rows, seats, B)
    if bad >= 0:
        if not -B <= rows[bad] < B:
            raise IndexError(f"rows must be table indices in [0, {B}), got {int(rows[bad])}")
        raise ValueError(f"seats must be 0..3, got {int(seats[bad])}")
    return rows, seats


def seat_view(state: State, seats: np.ndarray | int, rows: np.ndarray | None = None
              ) -> SeatView:
    """The view of seat ``seats[i]`` at table ``rows[i]`` (``rows`` defaults to every
    table; ``seats`` is (n,) or one int for all); see :class:`SeatView`."""
    rows, seats = rows_and_seats(state, seats, rows)
    v = empty_view(rows.size)
    _view_rows(state_arrays(state), rows, seats, v)
    return v

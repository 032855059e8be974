"""What one seat may know, as small integer arrays: the seat view.

``seat_view(state, seats, rows=None) -> SeatView`` projects the batched
:class:`~sichuan_env.core.state.State` onto the public information plus the private
information of seat ``seats[i]`` at table ``rows[i]``. It is the one place that decides
what a seat can see: the observation planes of :mod:`sichuan_env.seats.observation` are a pure
function of it (``observation.planes_from_view``), and bots may read it directly instead of
decoding planes.

Seats are *relative* to the viewer: relative seat 0 is the viewer, 1 the next seat to play
(counter-clockwise), 2 the seat opposite, 3 the previous seat; ``seat`` gives the viewer's
absolute seat. Tiles are kinds 0..26 (``kind = suit * 9 + rank - 1``), -1 for none.

The view holds nothing a seat may not know: no other seat's standing tiles, set-aside tile,
unrevealed forbidden suit, face-down (self-drawn) winning tile, Hu option, claim offer or
answer, passed-Hu value, and nothing of the wall but its length. Nor whether a claim or
rob window is open, unless it asks the seat: the engine opens one only when some seat has
an option, so a seat it does not ask sees the table as of the move that opened it
(:func:`unobserved`); the seat that is asked sees the window.
``tests/test_observation.py`` checks this by changing those fields,
``tests/test_view_windows.py`` with twin deals that differ only in whether a window opened.

The view of a row is computed by one compiled kernel (:func:`view_row`); the observation
encoder calls it row by row inside its own compiled loop, so one row and many go through
the same code.

**What is drawn.** ``table_view(state, table, viewer=None) -> TableView`` is what the
text, HTML and SVG renderings (:mod:`sichuan_env.records.render`, :mod:`sichuan_env.records.svg`,
the
replay viewer) show of one table, seats absolute: ``viewer=s`` is seat ``s``'s view (its
own private facts from its :class:`SeatView`, the other seats' public facts: how many
tiles they hold, whether a tile is set aside, whether a forbidden suit is chosen, melds,
discards, wins), ``viewer=None`` the spectator's (the four seats' own views together).
Hidden facts are :data:`HIDDEN` (or None for a hand), so a renderer cannot show them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sichuan_env.core.jit import njit
from sichuan_env.core.state import CLAIM, RIVER_SIZE, ROB, TURN, State
from sichuan_env.core.vocab import N_KINDS


class SeatView(NamedTuple):
    """One seat's view of n tables (batch axis first; seat axes in relative order)."""

    seat: np.ndarray  # (n,) int8: the viewer's absolute seat 0..3
    phase: np.ndarray  # (n,) int8: VOID, TURN, CLAIM, ROB, DONE (sichuan_env.core.state)
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
                "dealer", "deal_index", "wall_front", "wall_back", "current")


def state_arrays(state: State) -> tuple[np.ndarray, ...]:
    """The state fields :func:`view_row` reads, in the order of :data:`STATE_FIELDS` (one
    tuple for the kernels)."""
    return (state.hand, state.set_aside, state.void, state.void_revealed, state.meld,
            state.river, state.river_len, state.live_discards, state.won_tiles, state.hu,
            state.hu_tile, state.hu_from, state.scores, state.match_scores,
            state.passed_hu, state.phase, state.active, state.claim_tile, state.drawn_tile,
            state.dealer, state.deal_index, state.wall_front, state.wall_back, state.current)


@njit(inline="always")
def view_row(sa, t, s, v, i):
    """Write seat ``s``'s view of table ``t`` (``sa = state_arrays(state)``) into row ``i``
    of the SeatView ``v``."""
    (hand, set_aside, void, void_revealed, meld, river, river_len, live_discards, won_tiles,
     hu, hu_tile, hu_from, scores, match_scores, passed_hu, phase, active, claim_tile,
     drawn_tile, dealer, deal_index, wall_front, wall_back, current) = sa
    ph = phase[t]
    in_window = ph in (CLAIM, ROB)
    if in_window and current[t] != s:  # a window that does not ask s: as of the last
        ph = TURN  # public move, the discard or kong declaration (see :func:`unobserved`)
        in_window = False
    v.seat[i] = s
    v.phase[i] = ph
    for k in range(N_KINDS):
        v.hand[i, k] = hand[t, s, k]
        v.live_discards[i, k] = live_discards[t, k]
        v.won_tiles[i, k] = won_tiles[t, k]
    v.set_aside[i] = set_aside[t, s]
    act = active[t]
    v.drawn[i] = drawn_tile[t] if phase[t] == TURN and act == s else -1
    v.passed_hu[i] = passed_hu[t, s]
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


def unobserved(state: State, seat: int, table: int = 0) -> bool:
    """Whether ``table`` is in a claim or rob window that does not ask ``seat`` now.

    The engine opens such a window only when some seat has an option on the tile, so the
    window itself is hidden from the seats it does not ask: their view of it is the table
    as of the move that opened it (the discard or the kong declaration, phase ``TURN`` of
    the seat that made it, no tile under claim), and an interface that shows a seat the
    table after each step shows it nothing at such a state: the next state the seat sees
    is the window's outcome, which is the same whether or not a window was open."""
    return bool(state.phase[table] in (CLAIM, ROB) and state.current[table] != seat)


# ----------------------------------------------------------------------------- what is drawn

#: A fact the viewer cannot see (a set-aside tile lying face down, a forbidden suit chosen
#: but not yet revealed).
HIDDEN = -2


class TableView(NamedTuple):
    """What a viewer sees of one table (see the module docstring); seats absolute."""

    viewer: int | None  # the seat whose view this is; None: a spectator (every seat shown)
    phase: int  # VOID, TURN, CLAIM, ROB, DONE
    current: int  # the seat that decides now (meaningless once the deal is over)
    end_reason: int  # END_* of the finished deal
    deal_index: int  # deal number within the match (0 first)
    deals_per_match: int
    wall_left: int
    claim_tile: int  # the tile under claim in a claim/rob window, else -1
    active: int  # the seat that offered the tile under claim (the turn owner)
    dealer: int
    hand: tuple  # per seat: (27,) int8 standing tiles per kind, or None when hidden
    hand_size: np.ndarray  # (4,) standing tiles per seat
    set_aside: np.ndarray  # (4,) the set-aside tile, -1 none, HIDDEN face down
    void: np.ndarray  # (4,) forbidden suit 0..2, -1 not chosen, HIDDEN chosen unrevealed
    drawn: int  # the tile the seat to act just drew, when its hand is shown; else -1
    meld: np.ndarray  # (4, 27) meld code per seat and kind
    river: tuple  # per seat: (n,) int8 its discards in order
    hu: np.ndarray  # (4,) bool
    hu_rank: np.ndarray  # (4,) order of the win (0 first), -1 not won
    hu_from: np.ndarray  # (4,) the seat that paid the win (the winner: self-drawn), -1
    hu_tile: np.ndarray  # (4,) the winning tile, -1 not won or face down (self-drawn)
    scores: np.ndarray  # (4,) points of this deal
    match_scores: np.ndarray  # (4,) points of the finished deals of the match

    def shown(self, seat: int) -> bool:
        """Whether ``seat``'s private facts (hand, set-aside tile, suit) are shown."""
        return self.viewer is None or self.viewer == seat


def table_view(state: State, table: int = 0, viewer: int | None = None) -> TableView:
    """What ``viewer`` (a seat 0..3, or None: a spectator) sees of ``table``: each shown
    seat's private facts come from its own :func:`seat_view`, the others' from the
    viewer's view and the public counts. ``ValueError`` for a table or viewer out of
    range."""
    B = state.batch_size
    if isinstance(table, bool) or not isinstance(table, int | np.integer) or not 0 <= table < B:
        raise ValueError(f"table {table} out of range 0..{B - 1}")
    if viewer is not None and (isinstance(viewer, bool) or viewer not in (0, 1, 2, 3)):
        raise ValueError(f"viewer must be None or a seat 0..3, got {viewer!r}")
    t = int(table)
    seats = list(range(4)) if viewer is None else [int(viewer)]
    views = seat_view(state, np.array(seats), np.full(len(seats), t))
    eye = 0 if viewer is None else int(viewer)  # public facts: any seat's view has them
    i_eye = seats.index(eye)

    def rel(seat: int) -> int:  # the relative seat of ``seat`` in the eye's view
        return (seat - eye) % 4

    hand: list = [None] * 4
    set_aside = np.where(state.set_aside[t] >= 0, HIDDEN, -1).astype(np.int8)
    void = np.where(views.void_revealed[i_eye][[rel(s) for s in range(4)]]
                    | (state.void[t] < 0), -1, HIDDEN).astype(np.int8)
    hu_tile = views.hu_tile[i_eye][[rel(s) for s in range(4)]].copy()
    drawn = -1
    for i, s in enumerate(seats):  # the shown seats' own facts, from their own views
        hand[s] = views.hand[i].copy()
        set_aside[s] = views.set_aside[i]
        void[s] = views.void[i, 0]
        hu_tile[s] = views.hu_tile[i, 0]
        if views.drawn[i] >= 0:
            drawn = int(views.drawn[i])
    for s in range(4):  # revealed suits are public
        if viewer is not None and s != viewer and views.void[i_eye, rel(s)] >= 0:
            void[s] = views.void[i_eye, rel(s)]
    order = [rel(s) for s in range(4)]
    if viewer is None:  # a spectator sees the window and who is asked in it
        ph, claim, current = (int(state.phase[t]), int(state.claim_tile[t]),
                              int(state.current[t]))
    else:  # the seat's own view: a window that does not ask it is not shown
        ph, claim = int(views.phase[i_eye]), int(views.claim_tile[i_eye])
        current = int(state.active[t]) if unobserved(state, eye, t) else int(state.current[t])
    return TableView(
        viewer=None if viewer is None else int(viewer), phase=ph,
        current=current, end_reason=int(state.end_reason[t]),
        deal_index=int(views.deal_index[i_eye]),
        deals_per_match=int(state.rules.deals_per_match),
        wall_left=int(views.wall_left[i_eye]),
        claim_tile=claim if ph in (CLAIM, ROB) else -1,
        active=(int(views.active[i_eye]) + eye) % 4,
        dealer=(int(views.dealer[i_eye]) + eye) % 4,
        hand=tuple(hand), hand_size=state.hand[t].sum(1).astype(np.int64),
        set_aside=set_aside, void=void, drawn=drawn,
        meld=views.meld[i_eye][order].copy(),
        river=tuple(views.river[i_eye, r, : int(views.river_len[i_eye, r])].copy()
                    for r in order),
        hu=views.hu[i_eye][order].copy(), hu_rank=state.hu_rank[t].copy(),
        hu_from=np.where(state.hu[t], state.hu_from[t], -1).astype(np.int8),
        hu_tile=hu_tile, scores=views.scores[i_eye][order].copy(),
        match_scores=views.match_scores[i_eye][order].copy(),
    )

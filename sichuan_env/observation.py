"""What one seat may know, as named feature planes over the 27 tile kinds.

``encode(state, seats) -> (B, C, 27) float32`` projects the batched
:class:`~sichuan_env.state.State` onto the public information plus the private
information of seat ``seats[b]`` on table ``b``. Seats are *rotated*: relative seat 0 is
the observer, 1 the next seat to play (counter-clockwise), 2 the seat opposite, 3 the
previous seat. Layout version: ``OBS_VERSION = "sichuan-obs/1"``; :data:`PLANES` lists
(name, first channel, number of channels). Tile planes are indexed by tile kind
(``kind = suit * 9 + rank - 1``; m = 0..8, p = 9..17, s = 18..26). Scalar features are
broadcast over the 27 columns, so the whole observation is one (C, 27) array that an MLP
(flattened) or a 1-D convolution over the tile axis can read.

=====================  ====  ==================================================================
plane                  ch    meaning (``r`` = relative seat 0..3, 0 = me)
=====================  ====  ==================================================================
hand_ge1..hand_ge4     4     my standing tiles: count >= 1, >= 2, >= 3, == 4
set_aside              1     my set-aside (void-choice) tile, one-hot; 0 when none
drawn                  1     the tile I just drew this turn (my turn only), one-hot
my_void                1     1 on the 9 kinds of my forbidden suit once chosen
pung[r]                4     seat r has a melded pung of this kind
concealed_kong[r]      4     seat r has a concealed kong of this kind (public here)
exposed_kong[r]        4     seat r has a melded, promoted or postponed kong of this kind
discards[r]            4     seat r's discards of this kind / 4 (claimed ones included)
recent_discard[r][j]   16    seat r's (j+1)-th most recent discard, one-hot; j = 0..3
void_revealed[r]       4     1 on the 9 kinds of seat r's forbidden suit once revealed
hu_tile[r]             4     seat r has won (Hu) with this tile, one-hot (another seat's
                             self-drawn winning tile is face down: its plane stays 0)
claim_tile             1     the tile under claim (a discard or a tile added to a kong)
live_discards          1     discards still lying on the table (not claimed or won) / 4
visible                1     copies I can see: my hand + set-aside + every meld + live
                             discards + winning tiles shown, / 4 (1 - visible = unseen)
--- scalar features, broadcast over the 27 columns ---
phase                  5     one-hot: void, turn, claim, rob, done
wall_left              1     tiles left in the wall / 55
scores[r]              4     points of this deal / 64 (clipped to [-16, 16])
match_scores[r]        4     points of the finished deals of this match / 64 (clipped)
dealer[r]              4     one-hot: the dealer relative to me
hu[r]                  4     seat r has won
claim_from[r]          4     one-hot: who offered the tile under claim (claim/rob phase)
passed_hu              1     my passed-Hu restriction: highest Hu value declined, divided
                             by the rules' largest hand value (0 = no restriction)
deal_progress          1     deal index within the match / deals per match
=====================  ====  ==================================================================

``C = N_CHANNELS = 78``. :func:`encode_oracle` appends perfect information for centralised
critics (``ORACLE_PLANES``, ``N_ORACLE_CHANNELS = 88``): the other three seats' standing
tiles / 4 (r = 1..3), their set-aside tiles, their forbidden suits (even unrevealed) and the
tiles left in the wall (counts / 4, order not shown).

The non-oracle observation never reads other seats' hands, set-aside tiles, unrevealed
forbidden suits, Hu options or passed-Hu values, nor the wall (only its length);
``tests/test_observation.py`` checks this by changing those fields.

Both encoders are vectorised over tables (the Python loops run over 4 seats or 4 recent
discards, never over tables). ``rows`` restricts the work to some tables. A single
observation (the AEC env's ``observe``) is written by a scalar path that produces the same
planes (tests compare the two).
"""

from __future__ import annotations

import numpy as np

from sichuan_env.state import CLAIM as PHASE_CLAIM
from sichuan_env.state import (
    CONCEALED_KONG,
    MELDED_KONG,
    POSTPONED_KONG,
    PROMOTED_KONG,
    PUNG,
    ROB,
    TURN,
    WALL_SIZE,
    State,
)

OBS_VERSION = "sichuan-obs/1"
N_KINDS = 27
SCORE_SCALE = 64.0
SCORE_CLIP = 16.0

_SPEC: tuple[tuple[str, int], ...] = (
    ("hand", 4),
    ("set_aside", 1),
    ("drawn", 1),
    ("my_void", 1),
    ("pung", 4),
    ("concealed_kong", 4),
    ("exposed_kong", 4),
    ("discards", 4),
    ("recent_discard", 16),
    ("void_revealed", 4),
    ("hu_tile", 4),
    ("claim_tile", 1),
    ("live_discards", 1),
    ("visible", 1),
    ("phase", 5),
    ("wall_left", 1),
    ("scores", 4),
    ("match_scores", 4),
    ("dealer", 4),
    ("hu", 4),
    ("claim_from", 4),
    ("passed_hu", 1),
    ("deal_progress", 1),
)
_ORACLE_SPEC: tuple[tuple[str, int], ...] = (
    ("other_hands", 3),
    ("other_set_aside", 3),
    ("other_void", 3),
    ("wall", 1),
)


def _layout(spec: tuple[tuple[str, int], ...], start: int = 0) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    c = start
    for name, n in spec:
        out[name] = (c, n)
        c += n
    return out


PLANES: dict[str, tuple[int, int]] = _layout(_SPEC)
"""name -> (first channel, number of channels) of :func:`encode`."""
N_CHANNELS: int = sum(n for _, n in _SPEC)
ORACLE_PLANES: dict[str, tuple[int, int]] = {**PLANES, **_layout(_ORACLE_SPEC, N_CHANNELS)}
"""name -> (first channel, number of channels) of :func:`encode_oracle`."""
N_ORACLE_CHANNELS: int = N_CHANNELS + sum(n for _, n in _ORACLE_SPEC)
OBS_SHAPE: tuple[int, int] = (N_CHANNELS, N_KINDS)
ORACLE_OBS_SHAPE: tuple[int, int] = (N_ORACLE_CHANNELS, N_KINDS)

_C = {name: first for name, (first, _) in PLANES.items()}
_OTHERS = np.array([False, True, True, True])  # relative seats 1..3
_SUIT_ROWS = np.repeat(np.eye(3, dtype=np.float32), 9, axis=1)  # (3, 27): suit -> its kinds
_SUIT_ROWS_PAD = np.concatenate([_SUIT_ROWS, np.zeros((1, N_KINDS), np.float32)])  # -1 -> 0
_MELD_TILES = np.array([0, 3, 4, 4, 4, 4], np.int8)  # meld code -> tiles in it
assert MELDED_KONG == 3 and PROMOTED_KONG == 4 and POSTPONED_KONG == 5  # exposed kongs >= 3


def plane_names(oracle: bool = False) -> list[str]:
    """One readable name per channel, e.g. ``"pung[r=2]"`` or ``"recent_discard[r=1][j=0]"``."""
    names: list[str] = []
    for name, n in _SPEC + (_ORACLE_SPEC if oracle else ()):
        if name == "hand":
            names += ["hand_ge1", "hand_ge2", "hand_ge3", "hand_ge4"]
        elif name == "recent_discard":
            names += [f"recent_discard[r={r}][j={j}]" for r in range(4) for j in range(4)]
        elif name == "phase":
            names += ["phase=void", "phase=turn", "phase=claim", "phase=rob", "phase=done"]
        elif name.startswith("other_"):
            names += [f"{name}[r={r}]" for r in range(1, 4)]
        elif n == 4:
            names += [f"{name}[r={r}]" for r in range(4)]
        else:
            names.append(name)
    return names


def _rows_seats(state: State, seats: np.ndarray | int, rows: np.ndarray | None):
    B = state.batch_size
    rows = np.arange(B) if rows is None else np.asarray(rows, dtype=np.intp).reshape(-1)
    if isinstance(seats, (int, np.integer)):  # one seat for all (checked without numpy)
        if rows.size and not 0 <= seats <= 3:
            raise ValueError("seats must be 0..3")
        return rows, np.full(rows.shape, seats, np.intp)
    seats = np.broadcast_to(np.asarray(seats, dtype=np.intp), rows.shape)
    if seats.size and ((seats < 0) | (seats > 3)).any():
        raise ValueError("seats must be 0..3")
    return rows, seats


def encode(
    state: State, seats: np.ndarray | int, rows: np.ndarray | None = None
) -> np.ndarray:
    """(n, N_CHANNELS, 27) float32 observations of seat ``seats[i]`` at table ``rows[i]``.

    ``rows`` defaults to every table (n = B); ``seats`` is (n,) or one int for all.
    """
    if rows is None and type(seats) is int and state.batch_size == 1 and 0 <= seats <= 3:
        out = np.zeros((1, N_CHANNELS, N_KINDS), np.float32)
        _fill_one(state, 0, seats, out[0])  # one observation of a one-table batch
        return out
    rows, seats = _rows_seats(state, seats, rows)
    out = np.zeros((rows.size, N_CHANNELS, N_KINDS), np.float32)
    _fill_chunked(state, rows, seats, out)
    return out


_CHUNK = 512  # rows per pass: keeps the working set in cache for large batches


def fill_observations(state: State, seats: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """Write :func:`encode`'s planes into ``out`` (len(rows), N_CHANNELS, 27), which must be
    zeros (for callers that assemble one array from several engine batches)."""
    _fill_chunked(state, rows, seats, out)


def _fill_chunked(state: State, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
    if rows.size == 1:
        _fill_one(state, int(rows[0]), int(seats[0]), out[0])
        return
    for s in range(0, rows.size, _CHUNK):  # a few chunks of tables, not a loop over tables
        _fill(state, rows[s : s + _CHUNK], seats[s : s + _CHUNK], out[s : s + _CHUNK])


def encode_oracle(
    state: State, seats: np.ndarray | int, rows: np.ndarray | None = None
) -> np.ndarray:
    """(n, N_ORACLE_CHANNELS, 27) float32: :func:`encode` plus the hidden information
    (other hands, their set-aside tiles and forbidden suits, the wall's remaining tiles)."""
    rows, seats = _rows_seats(state, seats, rows)
    n = rows.size
    out = np.zeros((n, N_ORACLE_CHANNELS, N_KINDS), np.float32)
    if not n:
        return out
    _fill_chunked(state, rows, seats, out)
    others = (seats[:, None] + np.arange(1, 4)) % 4  # (n, 3)
    r2 = rows[:, None]
    c, _ = ORACLE_PLANES["other_hands"]
    out[:, c : c + 3] = state.hand[r2, others] * np.float32(0.25)
    c, _ = ORACLE_PLANES["other_set_aside"]
    sa = state.set_aside[r2, others]
    i, j = np.nonzero(sa >= 0)
    out[i, c + j, sa[i, j]] = 1.0
    c, _ = ORACLE_PLANES["other_void"]
    out[:, c : c + 3] = _SUIT_ROWS_PAD[state.void[r2, others]]
    c, _ = ORACLE_PLANES["wall"]
    front = state.wall_front[rows].astype(np.intp)
    back = state.wall_back[rows].astype(np.intp)
    pos = np.arange(WALL_SIZE)
    left = (pos >= front[:, None]) & (pos < back[:, None])
    i, p = np.nonzero(left)
    counts = np.bincount(i * N_KINDS + state.wall[rows[i], p], minlength=n * N_KINDS)
    out[:, c] = counts.reshape(n, N_KINDS) * np.float32(0.25)
    return out


_T4 = np.arange(4)[None, :, None]
_SCALAR0 = PLANES["phase"][0]  # scalar features occupy channels _SCALAR0.. (last in the layout)
_N_SCALARS = N_CHANNELS - _SCALAR0
_REL = (np.arange(4)[:, None] + np.arange(4)) % 4  # [seat, r] -> absolute seat of relative r
# the j-th most recent discard is at river_len - 1 - j; with 4 columns of -1 put in front
# of the river that is column river_len + 3 - j, never negative
_RECENT_AT = 3 - np.arange(4)
# one-hot rows of the 27 kinds; index -1 (none) -> the zero row at the end
_ONE_HOT_PAD = np.concatenate([np.eye(N_KINDS, dtype=np.float32),
                               np.zeros((1, N_KINDS), np.float32)])
# the one-hot tile planes are filled from one (n, 23) array of kinds, in three blocks of
# adjacent channels: set_aside + drawn, recent_discard, hu_tile + claim_tile
assert _C["drawn"] == _C["set_aside"] + 1 and _C["claim_tile"] == _C["hu_tile"] + 4
# [seat, absolute seat or 4 (none)] -> one-hot of the relative seat (zeros for 4)
_REL_ONE_HOT = np.zeros((4, 5, 4), np.float32)
for _s in range(4):
    for _x in range(4):
        _REL_ONE_HOT[_s, _x, (_x - _s) % 4] = 1.0
del _s, _x
_PHASE_ONE_HOT = np.eye(5, dtype=np.float32)
_IN_WINDOW = np.array([False, False, True, True, False])  # phase -> claim or rob
assert PHASE_CLAIM == 2 and ROB == 3
# per (table, seat) bin offsets for the discard counts; bin 0 collects the -1 padding
_BIN_OFFSET = np.arange(4 * _CHUNK)[:, None] * (N_KINDS + 1) + 1
_NO_TILES = np.full((4 * _CHUNK, 4), -1, np.int8)


def _scalar_scale(rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scale, low, high) per scalar feature: the raw values are multiplied by scale, then
    clipped to [low, high]."""
    key = (rules.max_value, rules.deals_per_match)
    got = _SCALES.get(key)
    if got is None:
        f32 = np.float32
        scale = np.ones(_N_SCALARS, f32)
        low = np.full(_N_SCALARS, -np.inf, f32)
        high = np.full(_N_SCALARS, np.inf, f32)
        base = -_SCALAR0
        scale[base + _C["wall_left"]] = f32(1.0 / WALL_SIZE)
        c = base + _C["scores"]
        scale[c : c + 8] = f32(1.0 / SCORE_SCALE)
        low[c : c + 8] = -SCORE_CLIP
        high[c : c + 8] = SCORE_CLIP
        c = base + _C["passed_hu"]
        scale[c] = f32(1.0 / rules.max_value)
        high[c] = 1.0
        scale[base + _C["deal_progress"]] = f32(1.0 / rules.deals_per_match)
        got = _SCALES[key] = (scale, low, high)
    return got


_SCALES: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _per_seat(a: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """A (B, 4, ...) field at the flat (table, seat) indices ts (n, 4) -> (n, 4, ...)."""
    return a.reshape(-1, *a.shape[2:]).take(ts, axis=0)


def _fill(state: State, rows: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
    n = rows.size
    # flat (table, seat) index of relative seat r (column 0 = me), for cheap gathers
    ts = (rows * 4)[:, None] + _REL.take(seats, axis=0)  # (n, 4)
    me = ts[:, 0]
    f32 = np.float32

    # --- my private tiles
    hand = state.hand.reshape(-1, N_KINDS).take(me, axis=0)  # (n, 27) int8
    c = _C["hand"]
    out[:, c : c + 4] = hand[:, None, :] > _T4
    sa = state.set_aside.reshape(-1).take(me)
    phase = state.phase[rows]
    active = state.active[rows]
    in_window = _IN_WINDOW.take(phase)
    drawn = np.where((phase == TURN) & (active == seats), state.drawn_tile[rows], -1)
    claim = np.where(in_window, state.claim_tile[rows], -1)

    # --- melds, by relative seat
    meld = _per_seat(state.meld, ts)  # (n, 4, 27)
    c = _C["pung"]
    out[:, c : c + 4] = meld == PUNG
    out[:, c + 4 : c + 8] = meld == CONCEALED_KONG
    out[:, c + 8 : c + 12] = meld >= MELDED_KONG  # melded, promoted, postponed

    # --- discards: counts and the four most recent, by relative seat
    river = state.river.reshape(-1, state.river.shape[2]).take(ts.reshape(-1), axis=0)
    flat = (river + _BIN_OFFSET[: n * 4]).ravel()  # (n * 4, 60) -> bins
    counts = np.bincount(flat, minlength=n * 4 * (N_KINDS + 1)).reshape(n, 4, N_KINDS + 1)
    c = _C["discards"]
    out[:, c : c + 4] = counts[:, :, 1:] * f32(0.25)
    at = _per_seat(state.river_len, ts).reshape(n * 4, 1) + _RECENT_AT  # (n * 4, 4)
    recent = np.concatenate((_NO_TILES[: n * 4], river), axis=1)[np.arange(n * 4)[:, None], at]

    # --- one-hot tile planes: set-aside, drawn, recent discards, Hu tiles, tile under claim
    # (another seat's self-drawn winning tile is turned face down: not shown)
    hu_tile = _per_seat(state.hu_tile, ts)
    hidden_win = (_per_seat(state.hu_from, ts) == ts % 4) & _OTHERS
    shown_hu = np.where(hidden_win, -1, hu_tile)
    tiles = np.concatenate((sa[:, None], drawn[:, None], recent.reshape(n, 16),
                            shown_hu, claim[:, None]), axis=1)
    one_hot = _ONE_HOT_PAD.take(tiles, axis=0)  # (n, 23, 27); kind -1 -> zeros
    c = _C["set_aside"]
    out[:, c : c + 2] = one_hot[:, :2]
    c = _C["recent_discard"]
    out[:, c : c + 16] = one_hot[:, 2:18]
    c = _C["hu_tile"]
    out[:, c : c + 5] = one_hot[:, 18:]

    # --- forbidden suits: mine, and each seat's once revealed
    void = _per_seat(state.void, ts)
    out[:, _C["my_void"]] = _SUIT_ROWS_PAD.take(void[:, 0], axis=0)
    c = _C["void_revealed"]
    revealed = np.where(_per_seat(state.void_revealed, ts), void, -1)
    out[:, c : c + 4] = _SUIT_ROWS_PAD.take(revealed, axis=0)

    # --- table-wide counts
    live = state.live_discards[rows]
    out[:, _C["live_discards"]] = live * f32(0.25)
    visible = (hand + live + state.won_tiles[rows] + _MELD_TILES.take(meld).sum(1, np.int8)
               + one_hot[:, 0])
    if hidden_win.any():
        visible = visible - _ONE_HOT_PAD.take(np.where(hidden_win, hu_tile, -1), axis=0).sum(
            1, dtype=np.int8)
    out[:, _C["visible"]] = visible * f32(0.25)

    # --- scalars, gathered in one (n, k) array, scaled, clipped and broadcast over the tiles
    scale, low, high = _scalar_scale(state.rules)
    sc = np.concatenate((
        _PHASE_ONE_HOT.take(phase, axis=0),
        (state.wall_back[rows] - state.wall_front[rows])[:, None],
        _per_seat(state.scores, ts),
        _per_seat(state.match_scores, ts),
        _REL_ONE_HOT[seats, state.dealer[rows]],
        _per_seat(state.hu, ts),
        _REL_ONE_HOT[seats, np.where(in_window, active, 4)],
        state.passed_hu.reshape(-1).take(me)[:, None],
        state.deal_index[rows][:, None],
    ), axis=1, dtype=f32)
    sc *= scale
    np.minimum(sc, high, out=sc)
    np.maximum(sc, low, out=sc)
    out[:, _SCALAR0:N_CHANNELS] = sc[:, :, None]


# ----------------------------------------------------------------------------- one table
# One observation (the AEC env, Game, terminal play): the planes of _fill written with
# scalar reads and one scatter of the one-hot entries, several times cheaper than _fill on
# one row; tests compare the two on many states.

_REL_LISTS = _REL.tolist()
_T4_COLUMN = np.arange(4)[:, None]
_BIN_OFFSET_4 = np.arange(4)[:, None] * (N_KINDS + 1) + 1
_MELD_CHANNEL = [0, _C["pung"], _C["concealed_kong"], _C["exposed_kong"], _C["exposed_kong"],
                 _C["exposed_kong"]]  # meld code -> first channel of its plane (0: none)
assert _C["concealed_kong"] == _C["pung"] + 4 and _C["exposed_kong"] == _C["pung"] + 8
assert PUNG == 1 and CONCEALED_KONG == 2 and TURN == 1
_PHASE_LISTS = np.eye(5, dtype=int).tolist()


def _fill_one(state: State, t: int, s: int, out: np.ndarray) -> None:
    """:func:`_fill` for seat ``s`` at table ``t``; ``out`` (N_CHANNELS, 27) zeros."""
    rel = _REL_LISTS[s]  # absolute seat of relative seat r
    ones: list[int] = []  # flat (channel * 27 + kind) positions of the one-hot entries
    hand = state.hand[t, s]
    np.greater(hand, _T4_COLUMN, out=out[_C["hand"] : _C["hand"] + 4])
    sa = int(state.set_aside[t, s])
    if sa >= 0:
        ones.append(_C["set_aside"] * N_KINDS + sa)
    phase = int(state.phase[t])
    active = int(state.active[t])
    if phase == TURN and active == s:
        drawn = int(state.drawn_tile[t])
        if drawn >= 0:
            ones.append(_C["drawn"] * N_KINDS + drawn)
    in_window = phase in (PHASE_CLAIM, ROB)
    if in_window:
        claim = int(state.claim_tile[t])
        if claim >= 0:
            ones.append(_C["claim_tile"] * N_KINDS + claim)

    void = state.void[t].tolist()
    if void[s] >= 0:
        first = _C["my_void"] * N_KINDS + 9 * void[s]
        ones.extend(range(first, first + 9))
    revealed = state.void_revealed[t].tolist()
    hu_tile = state.hu_tile[t].tolist()
    hu_from = state.hu_from[t].tolist()
    river_len = state.river_len[t].tolist()
    river = state.river[t]
    hidden_wins: list[int] = []  # kinds of other seats' face-down (self-drawn) winning tiles
    for r, a in enumerate(rel):
        if revealed[a] and void[a] >= 0:
            first = (_C["void_revealed"] + r) * N_KINDS + 9 * void[a]
            ones.extend(range(first, first + 9))
        k = hu_tile[a]
        if k >= 0:
            if r and hu_from[a] == a:
                hidden_wins.append(k)
            else:
                ones.append((_C["hu_tile"] + r) * N_KINDS + k)
        n = river_len[a]
        if n:
            first = (_C["recent_discard"] + 4 * r) * N_KINDS
            for j, k in enumerate(river[a, max(n - 4, 0) : n].tolist()[::-1]):
                ones.append(first + j * N_KINDS + k)

    meld = state.meld[t]
    seat_of, kind_of = np.nonzero(meld)
    if seat_of.size:
        codes = meld[seat_of, kind_of].tolist()
        for a, k, code in zip(seat_of.tolist(), kind_of.tolist(), codes, strict=True):
            ones.append((_MELD_CHANNEL[code] + (a - s) % 4) * N_KINDS + k)
    out.reshape(-1)[ones] = 1.0

    counts = np.bincount((state.river[t, rel] + _BIN_OFFSET_4).ravel(), minlength=4 * 28)
    np.multiply(counts.reshape(4, N_KINDS + 1)[:, 1:], 0.25,
                out=out[_C["discards"] : _C["discards"] + 4])
    live = state.live_discards[t]
    np.multiply(live, np.float32(0.25), out=out[_C["live_discards"]])
    visible = hand + live + state.won_tiles[t]
    if seat_of.size:
        visible += _MELD_TILES.take(meld).sum(0, np.int8)
    if sa >= 0:
        visible[sa] += 1
    for k in hidden_wins:
        visible[k] -= 1
    np.multiply(visible, np.float32(0.25), out=out[_C["visible"]])

    scores = state.scores[t].tolist()
    match_scores = state.match_scores[t].tolist()
    hu = state.hu[t].tolist()
    dealer = [0, 0, 0, 0]
    dealer[(int(state.dealer[t]) - s) % 4] = 1
    claim_from = [0, 0, 0, 0]
    if in_window:
        claim_from[(active - s) % 4] = 1
    values = (
        _PHASE_LISTS[phase]
        + [int(state.wall_back[t]) - int(state.wall_front[t])]
        + [scores[a] for a in rel]
        + [match_scores[a] for a in rel]
        + dealer
        + [hu[a] for a in rel]
        + claim_from
        + [int(state.passed_hu[t, s]), int(state.deal_index[t])]
    )
    scale, low, high = _scalar_scale(state.rules)
    sc = np.array(values, np.float32)
    sc *= scale
    np.minimum(sc, high, out=sc)
    np.maximum(sc, low, out=sc)
    out[_SCALAR0:N_CHANNELS] = sc[:, None]


def observation_bounds(oracle: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) arrays of shape (C, 27) for a ``gymnasium.spaces.Box``."""
    n = N_ORACLE_CHANNELS if oracle else N_CHANNELS
    low = np.zeros((n, N_KINDS), np.float32)
    high = np.ones((n, N_KINDS), np.float32)
    for name in ("scores", "match_scores"):
        c, k = PLANES[name]
        low[c : c + k] = -SCORE_CLIP
        high[c : c + k] = SCORE_CLIP
    return low, high


def describe(obs: np.ndarray, oracle: bool = False) -> dict[str, np.ndarray]:
    """Split one (C, 27) observation into its named planes (for debugging and tests)."""
    planes = ORACLE_PLANES if oracle else PLANES
    return {name: obs[c : c + k] for name, (c, k) in planes.items()}

"""The numpy observation encoder of sichuan-obs/1 as it was before the compiled kernels
(commit 91128dd, the batched ``_fill`` path), kept as an independent reference for the
differential tests of :mod:`sichuan_env.seats.observation`. Vectorised over tables; not used by
the package.
"""

from __future__ import annotations

import numpy as np

from sichuan_env.core.state import CLAIM as PHASE_CLAIM
from sichuan_env.core.state import (
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
    drawn = np.where((phase == TURN) & (active == seats), state.drawn_tile[rows], -1)
    # a claim or rob window that does not ask the seat is hidden from it: the turn of the
    # seat that opened it, nothing under claim
    in_window = _IN_WINDOW.take(phase) & (state.current[rows] == seats)
    phase = np.where(_IN_WINDOW.take(phase) & ~in_window, TURN, phase)
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

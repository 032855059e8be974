"""What one seat may know, as named feature planes over the 27 tile kinds.

``encode(state, seats) -> (B, C, 27) float32`` projects the batched
:class:`~sichuan_env.core.state.State` onto the public information plus the private
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
forbidden suits, Hu options or passed-Hu values, nor the wall (only its length): it only
reads the seat view; ``tests/test_observation.py`` and ``tests/test_observation_compiled.py``
check this by changing those fields.

The planes are a pure function of the seat view (:mod:`sichuan_env.seats.view`):
:func:`planes_from_view` writes them from a :class:`~sichuan_env.seats.view.SeatView`, and
:func:`encode` runs the view kernel and the plane kernel row by row inside one compiled loop
(numba; over tables in parallel for large batches when numba has more than two threads),
so one table and many go through the same code. ``rows`` restricts the work to some
tables. ``tests/support/reference_observation.py`` keeps the former numpy encoder as an
independent reference; a differential test checks that both give the same bits.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import types
from numba.experimental import structref

from sichuan_env.core.jit import many_threads, njit, prange
from sichuan_env.core.rules import Rules
from sichuan_env.core.state import (
    CLAIM,
    CONCEALED_KONG,
    MELDED_KONG,
    POSTPONED_KONG,
    PROMOTED_KONG,
    PUNG,
    ROB,
    WALL_SIZE,
    State,
)
from sichuan_env.core.vocab import N_KINDS
from sichuan_env.seats.view import (
    STATE_FIELDS,
    SeatView,
    empty_view,
    rows_and_seats,
    state_arrays,
    view_row,
)

OBS_VERSION = "sichuan-obs/1"
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


_C = {name: first for name, (first, _) in PLANES.items()}
_SUIT_ROWS = np.repeat(np.eye(3, dtype=np.float32), 9, axis=1)  # (3, 27): suit -> its kinds
_SUIT_ROWS_PAD = np.concatenate([_SUIT_ROWS, np.zeros((1, N_KINDS), np.float32)])  # -1 -> 0
assert MELDED_KONG == 3 and PROMOTED_KONG == 4 and POSTPONED_KONG == 5  # exposed kongs >= 3
assert PUNG == 1 and CONCEALED_KONG == 2

# channel numbers as plain ints for the compiled kernels (frozen in at compile time)
_HAND, _SET_ASIDE, _DRAWN, _MY_VOID = _C["hand"], _C["set_aside"], _C["drawn"], _C["my_void"]
_PUNG, _CKONG, _EKONG = _C["pung"], _C["concealed_kong"], _C["exposed_kong"]
_DISCARDS, _RECENT, _VOID_REV = _C["discards"], _C["recent_discard"], _C["void_revealed"]
_HU_TILE, _CLAIM_TILE, _LIVE, _VISIBLE = (_C["hu_tile"], _C["claim_tile"], _C["live_discards"],
                                          _C["visible"])
_PHASE, _WALL_LEFT, _SCORES, _MATCH_SCORES = (_C["phase"], _C["wall_left"], _C["scores"],
                                              _C["match_scores"])
_DEALER, _HU, _CLAIM_FROM, _PASSED_HU, _DEAL_PROGRESS = (
    _C["dealer"], _C["hu"], _C["claim_from"], _C["passed_hu"], _C["deal_progress"])
_OTHER_HANDS, _OTHER_SET_ASIDE, _OTHER_VOID, _WALL = (
    ORACLE_PLANES["other_hands"][0], ORACLE_PLANES["other_set_aside"][0],
    ORACLE_PLANES["other_void"][0], ORACLE_PLANES["wall"][0])
_SCALAR0 = _PHASE  # scalar features occupy channels _SCALAR0.. (last in the layout)
assert _SCALAR0 == _VISIBLE + 1 and _DEAL_PROGRESS == N_CHANNELS - 1
_QUARTER = np.float32(0.25)
_THREE_QUARTERS = np.float32(0.75)
_ONE = np.float32(1.0)
_WALL_SCALE = np.float32(1.0 / WALL_SIZE)
_SCORE_SCALE = np.float32(1.0 / SCORE_SCALE)
_SCORE_HIGH = np.float32(SCORE_CLIP)
_SCORE_LOW = np.float32(-SCORE_CLIP)


def _rule_scales(rules: Rules) -> tuple[float, float]:
    """The factors of the passed_hu and deal_progress features: float32 values, given as
    Python floats (cheaper to pass to a kernel, converted back exactly inside)."""
    key = (rules.fan_cap, rules.deals_per_match)
    got = _SCALES.get(key)
    if got is None:
        got = _SCALES[key] = (float(np.float32(1.0 / rules.max_value)),
                              float(np.float32(1.0 / rules.deals_per_match)))
    return got


_SCALES: dict[tuple[int, int], tuple[float, float]] = {}


@njit
def _score(x, scale):
    """float32(x) * scale clipped to [-SCORE_CLIP, SCORE_CLIP] (in float32, like numpy)."""
    y = np.float32(x) * scale
    if y > _SCORE_HIGH:
        y = _SCORE_HIGH
    if y < _SCORE_LOW:
        y = _SCORE_LOW
    return y


@njit
def _fill_channel(o, c, x):
    for k in range(N_KINDS):
        o[c, k] = x


@njit(inline="always")
def planes_row(v, i, inv_max_value, inv_deals, o):
    """Write the (N_CHANNELS, 27) planes of row ``i`` of the SeatView ``v`` into ``o``
    (every channel is written). ``inv_max_value`` and ``inv_deals`` are the float32
    factors of the passed_hu and deal_progress features (:func:`_rule_scales`)."""
    inv_max_value = np.float32(inv_max_value)
    inv_deals = np.float32(inv_deals)
    o[:N_CHANNELS] = 0.0
    # the visible copies are summed in their channel (in quarters: exact in float32)
    for k in range(N_KINDS):
        h = v.hand[i, k]
        for j in range(4):
            if h > j:
                o[_HAND + j, k] = _ONE
        live = v.live_discards[i, k]
        o[_LIVE, k] = np.float32(live) * _QUARTER
        o[_VISIBLE, k] = np.float32(h + live + v.won_tiles[i, k]) * _QUARTER
    k = v.set_aside[i]
    if k >= 0:
        o[_SET_ASIDE, k] = _ONE
        o[_VISIBLE, k] += _QUARTER
    k = v.drawn[i]
    if k >= 0:
        o[_DRAWN, k] = _ONE
    k = v.claim_tile[i]
    if k >= 0:
        o[_CLAIM_TILE, k] = _ONE
    suit = v.void[i, 0]
    if suit >= 0:
        for k in range(9 * suit, 9 * suit + 9):
            o[_MY_VOID, k] = _ONE
    for r in range(4):
        for k in range(N_KINDS):
            m = v.meld[i, r, k]
            if m == PUNG:
                o[_PUNG + r, k] = _ONE
                o[_VISIBLE, k] += _THREE_QUARTERS
            elif m == CONCEALED_KONG:
                o[_CKONG + r, k] = _ONE
                o[_VISIBLE, k] += _ONE
            elif m >= MELDED_KONG:
                o[_EKONG + r, k] = _ONE
                o[_VISIBLE, k] += _ONE
        n = v.river_len[i, r]
        for j in range(v.river.shape[2]):  # every discard lying in the river row counts
            k = v.river[i, r, j]
            if k >= 0:
                o[_DISCARDS + r, k] += _QUARTER
        for j in range(4):  # the (j+1)-th most recent discard
            if n - 1 - j >= 0:
                k = v.river[i, r, n - 1 - j]
                if k >= 0:
                    o[_RECENT + 4 * r + j, k] = _ONE
        if v.void_revealed[i, r]:
            suit = v.void[i, r]
            if suit >= 0:
                for k in range(9 * suit, 9 * suit + 9):
                    o[_VOID_REV + r, k] = _ONE
        k = v.hu_tile[i, r]
        if k >= 0:
            o[_HU_TILE + r, k] = _ONE

    # --- scalars, broadcast over the 27 columns
    ph = v.phase[i]
    _fill_channel(o, _PHASE + ph, _ONE)
    _fill_channel(o, _WALL_LEFT, np.float32(v.wall_left[i]) * _WALL_SCALE)
    for r in range(4):
        _fill_channel(o, _SCORES + r, _score(v.scores[i, r], _SCORE_SCALE))
        _fill_channel(o, _MATCH_SCORES + r, _score(v.match_scores[i, r], _SCORE_SCALE))
        if v.hu[i, r]:
            _fill_channel(o, _HU + r, _ONE)
    _fill_channel(o, _DEALER + v.dealer[i], _ONE)
    if ph in (CLAIM, ROB):
        _fill_channel(o, _CLAIM_FROM + v.active[i], _ONE)
    x = np.float32(v.passed_hu[i]) * inv_max_value
    if x > _ONE:
        x = _ONE
    _fill_channel(o, _PASSED_HU, x)
    _fill_channel(o, _DEAL_PROGRESS, np.float32(v.deal_index[i]) * inv_deals)


@njit
def _oracle_row(hand, set_aside, void, wall, wall_front, wall_back, t, s, o):
    """The oracle channels (N_CHANNELS..) of seat ``s`` at table ``t`` into ``o``."""
    o[N_CHANNELS:] = 0.0
    for r in range(1, 4):
        a = (s + r) % 4
        for k in range(N_KINDS):
            o[_OTHER_HANDS + r - 1, k] = np.float32(hand[t, a, k]) * _QUARTER
        k = set_aside[t, a]
        if k >= 0:
            o[_OTHER_SET_ASIDE + r - 1, k] = _ONE
        suit = void[t, a]
        if suit >= 0:
            for k in range(9 * suit, 9 * suit + 9):
                o[_OTHER_VOID + r - 1, k] = _ONE
    for p in range(wall_front[t], wall_back[t]):
        k = wall[t, p]
        if k >= 0:
            o[_WALL, k] += _QUARTER


# positions in state_arrays() of the fields the oracle planes read
_AT_HAND, _AT_SET_ASIDE, _AT_VOID, _AT_WALL_FRONT, _AT_WALL_BACK = (
    STATE_FIELDS.index(name) for name in ("hand", "set_aside", "void", "wall_front", "wall_back"))


@njit(inline="always")
def _encode_row(sa, wall, oracle, t, s, inv_max_value, inv_deals, v, o):
    """Seat s at table t into o: the view (into row 0 of the scratch view v), then its
    planes; then the oracle planes when ``oracle`` (which also read the ``wall``)."""
    view_row(sa, t, s, v, 0)
    planes_row(v, 0, inv_max_value, inv_deals, o)
    if oracle:
        _oracle_row(sa[_AT_HAND], sa[_AT_SET_ASIDE], sa[_AT_VOID], wall, sa[_AT_WALL_FRONT],
                    sa[_AT_WALL_BACK], t, s, o)


@njit
def _encode_range(sa, wall, oracle, rows, seats, inv_max_value, inv_deals, out, lo, hi):
    """Rows lo..hi of :func:`encode` (or of :func:`encode_oracle` when ``oracle``)."""
    v = empty_view(1)
    for i in range(lo, hi):
        _encode_row(sa, wall, oracle, rows[i], seats[i], inv_max_value, inv_deals, v, out[i])


@njit
def _encode_every_table(sa, wall, oracle, seat, inv_max_value, inv_deals, out):
    """Seat ``seat`` of every table (the commonest call: one table, one seat)."""
    v = empty_view(1)
    for t in range(out.shape[0]):
        _encode_row(sa, wall, oracle, t, seat, inv_max_value, inv_deals, v, out[t])


# ----------------------------------------------------------------------------- one seat, often
# Encoding one seat of a small State costs more in crossing into compiled code (the 23
# arrays of the view, each unboxed) and in the scratch view's allocation than in the
# planes themselves. A SeatEncoder keeps them in one bag (a numba StructRef holding
# references to the state's arrays, not copies), which crosses as one object.


@structref.register
class _EncoderBagType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class _EncoderBag(structref.StructRefProxy):
    """What :func:`_encode_row` reads from one State, a scratch view and the rule factors."""


structref.define_proxy(_EncoderBag, _EncoderBagType,
                       ["sa", "wall", "scratch", "inv_max_value", "inv_deals"])


@njit
def _encoder_bag(sa, wall, inv_max_value, inv_deals):
    return _EncoderBag(sa, wall, empty_view(1), inv_max_value, inv_deals)


@njit
def _encode_with_bag(b, t, s, out):
    _encode_row(b.sa, b.wall, False, t, s, b.inv_max_value, b.inv_deals, b.scratch, out)


class SeatEncoder:
    """:func:`encode` of one seat of one table, again and again (what the AEC env does
    each decision), cheaper per call: the state's arrays (not copies) are bundled once.

    ``SeatEncoder(state).encode(seat, table)`` equals ``encode(state, seat)[table]`` as
    long as ``state``'s arrays are the ones it was made from (in-place engine steps keep
    them; a new State from ``engine.reset`` needs a new encoder)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self._tables = state.batch_size
        self._bag = _encoder_bag(state_arrays(state), state.wall, *_rule_scales(state.rules))
        # the compiled entry point for exactly these types, called without numba's type
        # dispatch (which costs about as much as the planes of one seat)
        self._run = _encode_with_bag.compile((numba.typeof(self._bag), types.intp, types.intp,
                                              numba.typeof(np.empty(OBS_SHAPE, np.float32))))

    def __getstate__(self) -> dict[str, State]:  # the bag is rebuilt, not pickled
        return {"state": self.state}

    def __setstate__(self, saved: dict[str, State]) -> None:
        self.__init__(saved["state"])

    def encode(self, seat: int, table: int = 0) -> np.ndarray:
        """(N_CHANNELS, 27) float32 observation of ``seat`` (0..3) at ``table``."""
        if not (0 <= seat <= 3 and 0 <= table < self._tables):
            raise ValueError(f"seat must be 0..3 and table 0..{self._tables - 1}, got seat "
                             f"{seat!r}, table {table!r}")
        out = np.empty(OBS_SHAPE, np.float32)
        if type(seat) is int and type(table) is int:
            self._run(self._bag, table, seat, out)
        else:
            _encode_with_bag(self._bag, table, seat, out)
        return out


# ----------------------------------------------------------------------------- batches
_ROWS_PER_TASK = 64  # rows per parallel task
# Batches of at least this many rows are encoded on several threads, when numba has more
# than two: on a loaded two-core machine the parallel kernel measured several times slower
# than the serial one (a thread descheduled for a time slice holds up the whole batch).
_PARALLEL_FROM = 512


@njit
def _encode_serial(sa, wall, oracle, rows, seats, inv_max_value, inv_deals, out):
    _encode_range(sa, wall, oracle, rows, seats, inv_max_value, inv_deals, out, 0, rows.shape[0])


@njit(parallel=True)
def _encode_parallel(sa, wall, oracle, rows, seats, inv_max_value, inv_deals, out):
    n = rows.shape[0]
    for task in prange((n + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        lo = task * _ROWS_PER_TASK
        _encode_range(sa, wall, oracle, rows, seats, inv_max_value, inv_deals, out, lo,
                      min(lo + _ROWS_PER_TASK, n))


def _encode_into(state: State, rows: np.ndarray, seats: np.ndarray, out: np.ndarray,
                 oracle: bool = False, parallel: bool | None = None) -> None:
    """Write the planes of (rows[i], seats[i]) into out[i] (checked rows and seats);
    ``parallel`` None: on several threads for large batches when numba has them."""
    if parallel is None:
        parallel = many_threads() and rows.shape[0] >= _PARALLEL_FROM
    kernel = _encode_parallel if parallel else _encode_serial
    kernel(state_arrays(state), state.wall, oracle, rows, seats, *_rule_scales(state.rules), out)


def encode(
    state: State, seats: np.ndarray | int, rows: np.ndarray | None = None
) -> np.ndarray:
    """(n, N_CHANNELS, 27) float32 observations of seat ``seats[i]`` at table ``rows[i]``.

    ``rows`` defaults to every table (n = B); ``seats`` is (n,) or one int for all.
    """
    B = state.phase.shape[0]
    if rows is None and type(seats) is int and 0 <= seats <= 3 and B < _PARALLEL_FROM:
        out = np.empty((B, N_CHANNELS, N_KINDS), np.float32)
        _encode_every_table(state_arrays(state), state.wall, False, seats,
                            *_rule_scales(state.rules), out)
        return out
    rows, seats = rows_and_seats(state, seats, rows)
    out = np.empty((rows.size, N_CHANNELS, N_KINDS), np.float32)
    _encode_into(state, rows, seats, out)
    return out


def fill_observations(state: State, seats: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """Write :func:`encode`'s planes into ``out`` (len(rows), N_CHANNELS, 27) float32 (for
    callers that assemble one array from several engine batches)."""
    rows, seats = rows_and_seats(state, seats, rows)
    if out.shape != (rows.size, N_CHANNELS, N_KINDS) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 of shape {(rows.size, N_CHANNELS, N_KINDS)}, "
                         f"got {out.dtype} {out.shape}")
    _encode_into(state, rows, seats, out)


def encode_oracle(
    state: State, seats: np.ndarray | int, rows: np.ndarray | None = None
) -> np.ndarray:
    """(n, N_ORACLE_CHANNELS, 27) float32: :func:`encode` plus the hidden information
    (other hands, their set-aside tiles and forbidden suits, the wall's remaining tiles)."""
    rows, seats = rows_and_seats(state, seats, rows)
    out = np.empty((rows.size, N_ORACLE_CHANNELS, N_KINDS), np.float32)
    _encode_into(state, rows, seats, out, oracle=True)
    return out


@njit
def _planes_rows(v, inv_max_value, inv_deals, out):
    for i in range(out.shape[0]):
        planes_row(v, i, inv_max_value, inv_deals, out[i])


def planes_from_view(view: SeatView, rules: Rules) -> np.ndarray:
    """(n, N_CHANNELS, 27) float32 planes of a :class:`~sichuan_env.seats.view.SeatView` (rows
    of tables following ``rules``): the same as :func:`encode` of the state it came from."""
    out = np.empty((view.seat.shape[0], N_CHANNELS, N_KINDS), np.float32)
    _planes_rows(view, *_rule_scales(rules), out)
    return out


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

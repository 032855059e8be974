"""Hand facts: complete?, waits, shanten, fans and value, theoretical maximum.

Two layers:

* **Batched** functions (``batch_*``) take arrays with a leading batch axis and work by
  table lookups and array operations only (no Python loop over hands or tiles). The game
  engine calls them every step. Inputs: ``concealed`` (B, 27) int8 tile counts;
  ``meld_kind`` (B, 27) int8 per tile kind, 0 = no meld, 1 = pung, 2 = kong (any kind of
  kong); ``void`` (B,) int8 forbidden suit 0/1/2 (m/p/s) or -1 for none. They assume
  valid input (the right tile counts, at most four copies) and do not check it.
* The **single-hand** API (:func:`is_complete`, :func:`waits`, :func:`shanten`,
  :func:`score`, :func:`theoretical_max`) takes tile strings or count vectors, checks
  everything and raises ``ValueError`` saying what is wrong, then calls the batched core.

Conventions (docs/rules.md sections 5, 6 and 8):

* A complete hand is ``4 - n_melds`` sets and one pair in the concealed tiles (each
  declared meld is one set), or seven pairs with no melds (four identical tiles are two
  pairs); it holds no tile of the void suit.
* Waits leave out a kind whose four copies are all in the player's own concealed tiles
  and melds (the "exhaustive wait"): three melds and ``8888p`` standing is not ready.
* Shanten: -1 complete, 0 ready, 1 one tile from ready, ...; the minimum of the regular
  and the seven-pairs form; tiles of the void suit never count toward a block. It is 0
  exactly when :func:`waits` is non-empty (a hand whose only waits are exhausted gets 1).
  The count is exact under the four-copies limit, counting the copies held in melds
  and in hand (a pung leaves one copy of its kind to use, a kong none).
* Fans: the columns of :data:`FAN_NAMES`; each entry is the number of fans it adds
  (Full Flush and Seven Pairs add 2, Kong and Root 1 per group). The split with the most
  fans is used (seven pairs beats a regular split; All Pungs is counted whenever the
  concealed part splits into pungs and a pair). Value ``2 ** min(fans, fan_cap)``.

Command line: ``python -m sichuan_env.hands "11123m456p789p5s" --void s
--melds "pung 5m"`` prints shanten, waits, fans and values under both presets.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np

from sichuan_env import tiles
from sichuan_env.rules import DEFAULT_RULES, Rules, get_rules
from sichuan_env.vocab import MELD_KIND_OF_CODE, MELD_NAMES, SUIT_OF
from sichuan_env.vocab import MELD_KIND_TILES as _MELD_COPIES

FAN_NAMES = (
    "Kong",
    "Root",
    "All Pungs",
    "Golden Wait",
    "Full Flush",
    "Seven Pairs",
    "Win after Kong",
    "Shoot after Kong",
    "Robbing the Kong",
    "Under the Sea",
)
SITUATIONAL_FANS = FAN_NAMES[6:]

MELD_KINDS = MELD_NAMES[1:]
# meld name -> the tables' meld kind (1 pung, 2 kong); _MELD_COPIES: tiles of a meld kind
_MELD_CODE = {name: int(MELD_KIND_OF_CODE[code]) for code, name in enumerate(MELD_NAMES)
              if code}

N_CODES = 5**9
_NONE = -1

# --------------------------------------------------------------------------- tables


class _Tables:
    """The cached per-suit tables plus small derived lookup arrays."""

    def __init__(self, raw: dict[str, np.ndarray]) -> None:
        flags = raw["flags"]
        # flag bits of suit s shifted by 4*s, so that OR-ing three lookups gives a 12-bit
        # index describing the whole hand
        self.flags3 = np.concatenate(
            [flags.astype(np.uint16) << (4 * s) for s in range(3)]
        )
        self.packed = raw["packed"]
        self.best = raw["best"]
        self.seg64 = raw["seg_best"].view(np.uint64).reshape(-1)
        for name in ("pat_start", "pat_count", "pat_nseg", "pat_div", "pat_mod",
                     "cfg_base", "cfg_ext", "cfg_cover"):
            setattr(self, name, raw[name])


_T: _Tables | None = None


def _load() -> _Tables:
    global _T
    if _T is None:
        from sichuan_env.tables import load_tables

        _T = _Tables(load_tables())
    return _T


def _build_luts() -> dict[str, np.ndarray]:
    """Lookups indexed by the 14-bit hand index: 4 flag bits per suit (is_sets,
    is_sets_pair, all even, one odd), bit 12 = no melds, bit 13 = void tiles held."""
    size = 1 << 14
    complete = np.zeros(size, dtype=bool)
    shift = np.zeros((size, 3), dtype=np.uint32)
    mask = np.zeros((size, 3), dtype=np.uint32)
    mask7 = np.zeros((size, 3), dtype=np.uint32)
    for idx in range(size):
        f = [(idx >> (4 * s)) & 15 for s in range(3)]
        no_melds = bool(idx >> 12 & 1)
        void_held = bool(idx >> 13 & 1)
        if void_held:
            continue
        a = [x & 1 for x in f]
        p = [x >> 1 & 1 for x in f]
        even = [x >> 2 & 1 for x in f]
        one_odd = [x >> 3 & 1 for x in f]
        complete[idx] = (sum(p) == 1 and sum(a) == 2) or (no_melds and all(even))
        for s in range(3):
            t, u = [x for x in range(3) if x != s]
            if a[t] and a[u]:
                shift[idx, s], mask[idx, s] = 9, 511  # this suit must take the pair
            elif (p[t] and a[u]) or (a[t] and p[u]):
                shift[idx, s], mask[idx, s] = 0, 511  # the pair is elsewhere
            if no_melds and one_odd[s] and even[t] and even[u]:
                mask7[idx, s] = 511  # seven pairs: the odd rank of this suit
    return {"complete": complete, "shift": shift, "mask": mask, "mask7": mask7}


_LUT = _build_luts()
_LUT_COMPLETE = _LUT["complete"]
_LUT_SHIFT = _LUT["shift"]
_LUT_MASK = _LUT["mask"]
_LUT_MASK7 = _LUT["mask7"]

# expand a 9-bit mask into 9 booleans
_EXPAND9 = ((np.arange(512)[:, None] >> np.arange(9)) & 1).astype(bool)
# room for one more own copy: index count + 5 * meld code
_ROOM = np.array([c + int(_MELD_COPIES[m]) < 4 for m in range(3) for c in range(5)], dtype=bool)
_SUIT_OFFSET = np.array([0, N_CODES, 2 * N_CODES], dtype=np.intp)

# code weights: column s holds 5**rank for the kinds of suit s; column 3 stays zero so that
# indexing a row's codes with void = -1 gives 0 ("no void tiles")
_W = np.zeros((27, 4), dtype=np.float32)
for _k in range(27):
    _W[_k, _k // 9] = 5 ** (_k % 9)
del _k


def _combos(n_set_blocks: int) -> np.ndarray:
    """Column indices into the (B, 36) per-suit best values, for all ways of spreading
    ``n_set_blocks`` set blocks and one pair block over the three suits; shape (3, K)."""
    cols = []
    for m in product(range(n_set_blocks + 1), repeat=3):
        if sum(m) != n_set_blocks:
            continue
        for pair_suit in range(3):
            cols.append([12 * s + 2 * m[s] + (s == pair_suit) for s in range(3)])
    return np.ascontiguousarray(np.array(cols, dtype=np.intp).T.ravel())


_COMBOS = [_combos(m) for m in range(5)]

# ------------------------------------------------------------------ batched core


def _codes(c: np.ndarray) -> np.ndarray:
    """(B, 27) counts -> (B, 4) suit codes (intp); column 3 is 0."""
    # float32 products are exact: every code is below 2**24
    return (c.astype(np.float32) @ _W).astype(np.intp)


def _void_code(codes: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Code of each row's void suit (0 when the row has no void suit)."""
    b = codes.shape[0]
    return codes.ravel()[np.arange(0, 4 * b, 4) + (v & 3)]


def _hand_index(t: _Tables, codes: np.ndarray, no_melds: np.ndarray, void_held: np.ndarray):
    g = t.flags3[codes[:, :3] + _SUIT_OFFSET]
    return g[:, 0] | g[:, 1] | g[:, 2] | (no_melds << 12) | (void_held << 13)


def batch_is_complete(concealed: np.ndarray, n_melds: np.ndarray, void: np.ndarray) -> np.ndarray:
    """(B, 27) concealed counts incl. the last tile, (B,) meld counts, (B,) void
    (-1 none) -> (B,) bool: the hand is a winning hand (regular or seven pairs)."""
    t = _T or _load()
    c = np.asarray(concealed, dtype=np.int8)
    v = np.asarray(void, dtype=np.int8)
    codes = _codes(c)
    no_melds = (np.asarray(n_melds) == 0).astype(np.uint16)
    void_held = (_void_code(codes, v) != 0).astype(np.uint16)
    return _LUT_COMPLETE[_hand_index(t, codes, no_melds, void_held)]


_W_INT = _W.astype(np.int32)


def suit_codes(concealed: np.ndarray) -> list:
    """The base-5 code of each suit of (27,) counts as a list of 4 ints (the last is 0), or
    one such list per row of (n, 27) counts. A code plus ``5 ** rank`` adds a tile."""
    return (concealed @ _W_INT).tolist()


def hand_is_complete(concealed: np.ndarray, n_melds: int, void: int) -> bool:
    """:func:`batch_is_complete` for one hand ((27,) int8 counts) with scalar lookups: a few
    times cheaper than a batch of one (the engine's one-table path)."""
    return codes_are_complete(suit_codes(concealed), n_melds, void)


def codes_are_complete(codes: Sequence[int], n_melds: int, void: int) -> bool:
    """:func:`hand_is_complete` of a hand given by its :func:`suit_codes`."""
    t = _T or _load()
    flags = t.flags3
    idx = int(flags[codes[0]]) | int(flags[codes[1] + N_CODES]) | int(
        flags[codes[2] + 2 * N_CODES])
    if n_melds == 0:
        idx |= 1 << 12
    if void >= 0 and codes[void]:
        idx |= 1 << 13
    return bool(_LUT_COMPLETE[idx])


def _wait_mask(t: _Tables, c: np.ndarray, mk: np.ndarray, v: np.ndarray) -> np.ndarray:
    codes = _codes(c)
    no_melds = (~mk.any(axis=1)).astype(np.uint16)
    void_held = (_void_code(codes, v) != 0).astype(np.uint16)
    idx = _hand_index(t, codes, no_melds, void_held)
    pk = t.packed[codes[:, :3]]
    bits = ((pk >> _LUT_SHIFT[idx]) & _LUT_MASK[idx]) | ((pk >> 20) & _LUT_MASK7[idx])
    waits = _EXPAND9[bits].reshape(c.shape[0], 27)
    waits &= _ROOM[c + 5 * mk]
    return waits


def batch_wait_mask(concealed: np.ndarray, meld_kind: np.ndarray, void: np.ndarray) -> np.ndarray:
    """(B, 27) standing tiles (13 - 3 * melds), (B, 27) meld kind, (B,) void ->
    (B, 27) bool: the kinds that complete the hand, exhausted kinds left out."""
    t = _T or _load()
    return _wait_mask(
        t,
        np.asarray(concealed, dtype=np.int8),
        np.asarray(meld_kind, dtype=np.int8),
        np.asarray(void, dtype=np.int8),
    )


_ROOM_W: tuple[np.ndarray, np.ndarray] | None = None
_X125 = ((np.arange(125)[:, None] // np.array([1, 5, 25])) % 5).astype(np.int8)  # 3 digits


def _room_lists() -> tuple[np.ndarray, np.ndarray]:
    """Every suit W of m <= 3 sets and p <= 1 pairs, as three 3-rank sub-codes offset
    into a (3 * 125) row: (3, N) intp, sorted by column 2*m + p; and the start of each
    of the 8 groups."""
    global _ROOM_W
    if _ROOM_W is None:
        from sichuan_env.tables import complete_codes

        groups = complete_codes()
        codes = [groups[(m, p)] for m in range(4) for p in range(2)]
        allc = np.concatenate(codes)
        sub = np.stack([(allc // 125**g) % 125 + 125 * g for g in range(3)]).astype(np.intp)
        starts = np.cumsum([0] + [len(x) for x in codes[:-1]])
        _ROOM_W = (sub, starts)
    return _ROOM_W


def _best_with_room(h: np.ndarray, room: np.ndarray) -> np.ndarray:
    """Exact per-suit cover for suits holding melds by direct search (slow: the tests'
    check of :func:`_best_melded`): (R, 9) counts, (R, 9) room (copies not in melds)
    -> (R, 8) uint8: max over complete W <= room of sum(min(W, h)), m <= 3.
    Each W is split into three 3-rank parts; a part's cover (or -64 when it exceeds the
    room) is looked up in a per-row table of 3 * 125 entries."""
    sub, starts = _room_lists()
    r = h.shape[0]
    out = np.empty((r, 8), dtype=np.uint8)
    step = 512
    for i in range(0, r, step):  # chunks bound the (R, N) temporaries
        hh = h[i : i + step].reshape(-1, 3, 1, 3)
        rr = room[i : i + step].reshape(-1, 3, 1, 3)
        part = np.minimum(_X125, hh).sum(axis=3, dtype=np.int16)  # (R, 3, 125)
        part[(rr < _X125).any(axis=3)] = -64
        part = part.reshape(-1, 375)
        cover = part[:, sub[0]] + part[:, sub[1]]
        cover += part[:, sub[2]]
        np.maximum(cover, 0, out=cover)
        out[i : i + step] = np.maximum.reduceat(cover, starts, axis=1)
    return out


def _conv_pairs() -> list[tuple[int, list[tuple[int, int]]]]:
    """For the (max, +) convolution of two per-suit columns ``2*m + p`` (m <= 3, p <= 1):
    per output column, the pairs of input columns whose blocks add up to it."""
    out = []
    for m in range(4):
        for p in range(2):
            pairs = [(2 * m1 + p1, 2 * (m - m1) + (p - p1))
                     for m1 in range(m + 1) for p1 in range(p + 1)]
            out.append((2 * m + p, pairs))
    return out


_CONV = _conv_pairs()
_POPCOUNT9 = np.array([bin(x).count("1") for x in range(512)], dtype=np.int16)
# [meld_kind, held] (B, 54) @ _W_PAT_HELD -> per suit the meld pattern id
# sum(meld_kind * 3**rank) (columns 0-2) and the 9-bit mask of the ranks held (3-5)
_W_PAT_HELD = np.zeros((54, 6), dtype=np.float32)
for _k in range(27):
    _W_PAT_HELD[_k, _k // 9] = 3 ** (_k % 9)
    _W_PAT_HELD[27 + _k, 3 + _k // 9] = 2 ** (_k % 9)
del _k
# pattern id -> 9-bit mask of the ranks within two of a meld kind
_PAT_DIGITS = (np.arange(3**9)[:, None] // 3 ** np.arange(9)) % 3
_NEAR9 = np.zeros(3**9, dtype=np.int32)
for _d in range(-2, 3):
    _r = np.arange(9) + _d
    _ok = (_r >= 0) & (_r < 9)
    _NEAR9 |= ((_PAT_DIGITS[:, _ok] > 0) << _r[_ok]).sum(axis=1, dtype=np.int32)
del _d, _r, _ok, _PAT_DIGITS


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(max, +) convolution of two (8, P) int16 arrays of per-column covers."""
    out = np.empty_like(a)
    tmp = np.empty(a.shape[1], dtype=a.dtype)
    for col, pairs in _CONV:
        (i, j), rest = pairs[0], pairs[1:]
        np.add(a[i], b[j], out=out[col])
        for i, j in rest:
            np.add(a[i], b[j], out=tmp)
            np.maximum(out[col], tmp, out=out[col])
    return out


def _seg_lookup(t: _Tables, idx: np.ndarray) -> np.ndarray:
    """Rows of ``seg_best`` -> (8, P) int16 (one uint64 gather per row)."""
    got = t.seg64[idx].view(np.int8).reshape(-1, 8)
    return np.array(got.T, dtype=np.int16, order="C")


def _best_melded(t: _Tables, code: np.ndarray, pat: np.ndarray, held: np.ndarray):
    """Exact per-suit cover for suits holding melds, from the segment tables (see
    :func:`sichuan_env.tables.build_meld_tables`): (R,) suit codes, (R,) meld pattern ids,
    (R,) 9-bit masks of the ranks held -> (R, 8) uint8, the same as
    :func:`_best_with_room` with room ``4 - copies in melds`` in every column a hand can
    use (m set blocks in a suit holding j melds only when m <= 4 - j; the tables skip
    configurations needing more)."""
    r = code.shape[0]
    cnt = t.pat_count[pat]
    ends = np.cumsum(cnt)
    n_pairs = int(ends[-1])
    first = ends - cnt
    row = np.repeat(np.arange(r, dtype=np.int32), cnt)
    cfg = np.repeat(t.pat_start[pat] - first, cnt) + np.arange(n_pairs, dtype=np.int32)
    nseg = t.pat_nseg[pat]
    seg = code[:, None] // t.pat_div[pat] % t.pat_mod[pat]  # (R, 5) segment codes
    base = t.cfg_base[cfg]  # (P, 5)
    val = _seg_lookup(t, base[:, 0] + seg[row, 0])
    for i in range(1, int(nseg.max())):
        more = nseg[row] > i
        if more.all():
            val = _conv(val, _seg_lookup(t, base[:, i] + seg[row, i]))
        else:
            sub = np.flatnonzero(more)
            part = _seg_lookup(t, base[sub, i] + seg[row[sub], i])
            val[:, sub] = _conv(val[:, sub], part)
    # outside chows: ext set blocks, covering the concealed copy of their pung kinds
    ext = t.cfg_ext[cfg]
    out = np.where(ext == 0, val, np.int16(-256))
    for e in range(1, int(ext.max()) + 1):
        out[2 * e :] = np.where(ext == e, val[: 8 - 2 * e], out[2 * e :])
    out += _POPCOUNT9[held[row] & t.cfg_cover[cfg]]
    best = np.maximum.reduceat(out, first, axis=1)
    np.maximum(best, 0, out=best)
    return best.T.astype(np.uint8)


def _raw_shanten(t: _Tables, c: np.ndarray, mk: np.ndarray, n: np.ndarray, v: np.ndarray):
    """Shanten = fewest tiles to bring in - 1 (the four-copies limit of docs/rules.md
    included). int16."""
    b = c.shape[0]
    if b == 0:
        return np.zeros(0, dtype=np.int16)
    codes = _codes(c)
    melded = None
    if mk.any():
        # A meld leaves 1 (pung) or 0 (kong) copies of its kind, which the main tables do
        # not know: redo exactly the suits holding a tile within two ranks of a meld kind
        # (elsewhere a block over the meld kind matches nothing and can be moved).
        f = np.empty((b, 54), dtype=np.float32)
        f[:, :27] = mk
        np.greater(c, 0, out=f[:, 27:], casting="unsafe")
        ph = (f @ _W_PAT_HELD).astype(np.int32)  # (B, 6): pattern ids, masks of ranks held
        rows, suits = np.nonzero(_NEAR9[ph[:, :3]] & ph[:, 3:])
        if rows.size:
            pat = ph[rows, suits]
            held = ph[rows, suits + 3]
            melded = (rows, suits, _best_melded(t, codes[rows, suits], pat, held))
    codes.ravel()[np.arange(0, 4 * b, 4) + (v & 3)] = 0  # void tiles never count
    best = t.best[codes[:, :3]]  # (B, 3, 12), a fresh copy
    if melded is not None:
        rows, suits, mb = melded
        best[rows, suits, :8] = mb
    best = best.reshape(b, 36)
    need = 4 - n
    cover = np.empty(b, dtype=np.int16)
    lo, hi = int(need.min()), int(need.max())
    for m in range(lo, hi + 1):
        cols = _COMBOS[m]
        k = cols.shape[0] // 3
        if lo == hi:
            g = best[:, cols]
        else:
            rows = np.flatnonzero(need == m)
            if rows.size == 0:
                continue
            g = best[rows[:, None], cols]
        s = g[:, :k] + g[:, k : 2 * k]
        s += g[:, 2 * k :]
        if lo == hi:
            cover[:] = s.max(axis=1)
        else:
            cover[rows] = s.max(axis=1)
    shanten = 13 - 3 * n.astype(np.int16) - cover
    # seven pairs: pairs held (four identical = two pairs) and odd leftovers, void excluded
    pairs = best[:, 10] + best[:, 22] + best[:, 34]
    singles = best[:, 11] + best[:, 23] + best[:, 35]
    np.minimum(pairs, 7, out=pairs)
    cover7 = 2 * pairs.astype(np.int16) + np.minimum(7 - pairs, singles)
    sh7 = np.where(n == 0, 13 - cover7, 99)
    return np.minimum(shanten, sh7)


def batch_shanten(concealed: np.ndarray, meld_kind: np.ndarray, void: np.ndarray) -> np.ndarray:
    """(B, 27) concealed counts (13 - 3n or 14 - 3n tiles), (B, 27) meld kind, (B,) void
    -> (B,) int8 shanten: -1 complete, 0 ready (a real wait exists), 1, 2, ...

    Exact (the four-copies limit included). Suits holding melds are looked up in the
    segment tables of :func:`sichuan_env.tables.build_meld_tables`; hands with 1-4
    melds run at about a million hands/s, hands without melds several million."""
    t = _T or _load()
    c = np.asarray(concealed, dtype=np.int8)
    mk = np.asarray(meld_kind, dtype=np.int8)
    v = np.asarray(void, dtype=np.int8)
    n = np.count_nonzero(mk, axis=1)
    return _raw_shanten(t, c, mk, n, v).astype(np.int8)


def batch_fans(
    concealed_with_win: np.ndarray,
    meld_kind: np.ndarray,
    win_tile: np.ndarray,
    void: np.ndarray,
    self_drawn: np.ndarray,
    after_kong: np.ndarray,
    shoot_after_kong: np.ndarray,
    robbing_kong: np.ndarray,
    under_the_sea: np.ndarray,
) -> np.ndarray:
    """Fans of complete hands: (B, 10) int8 in :data:`FAN_NAMES` order, each entry the
    fans it adds. ``concealed_with_win`` (B, 27) includes the winning tile; the hand must
    be complete (not checked). ``win_tile`` and ``self_drawn`` do not change any fan
    (Golden Wait needs only four melds; Win after Kong is its own flag) and are accepted
    for the engine's convenience."""
    c = np.asarray(concealed_with_win, dtype=np.int8)
    mk = np.asarray(meld_kind, dtype=np.int8)
    b = c.shape[0]
    out = np.zeros((b, 10), dtype=np.int8)
    is_kong = mk == 2
    full = c + _MELD_COPIES[mk]
    kongs = np.count_nonzero(is_kong, axis=1)
    n = np.count_nonzero(mk, axis=1)
    seven = (n == 0) & ~(c & 1).any(axis=1)
    out[:, 0] = kongs
    out[:, 1] = np.count_nonzero(full == 4, axis=1) - kongs
    # All Pungs: the concealed part is pungs and one pair: counts in {0, 2, 3}, one 2
    odd_or_four = _ODD_OR_FOUR[c].any(axis=1)
    out[:, 2] = ~odd_or_four & (np.count_nonzero(c == 2, axis=1) == 1) & ~seven
    golden = n == 4
    out[:, 2] |= golden
    out[:, 3] = golden
    present = full.reshape(b, 3, 9).any(axis=2)
    out[:, 4] = 2 * (np.count_nonzero(present, axis=1) == 1)
    out[:, 5] = 2 * seven
    out[:, 6] = np.asarray(after_kong, dtype=bool)
    out[:, 7] = np.asarray(shoot_after_kong, dtype=bool)
    out[:, 8] = np.asarray(robbing_kong, dtype=bool)
    out[:, 9] = np.asarray(under_the_sea, dtype=bool)
    return out


_ODD_OR_FOUR = np.array([False, True, False, False, True, True])  # count not in {0, 2, 3}


def batch_value(fans: np.ndarray, fan_cap: int) -> np.ndarray:
    """(B, 10) fans -> (B,) int32 points ``2 ** min(total, fan_cap)``."""
    total = np.asarray(fans).sum(axis=1, dtype=np.int32)
    return np.left_shift(1, np.minimum(total, int(fan_cap)), dtype=np.int32)


# per standing count c of the kind added: change of the "count not in {0,2,3}" total,
# change of the number of pairs (count 2), change of the number of odd counts
_D_BAD = np.array([1, -1, 0, 1, 0], dtype=np.int16)
_D_TWO = np.array([0, 1, -1, 0, 0], dtype=np.int16)
_D_ODD = np.array([1, -1, 1, -1, 0], dtype=np.int16)


def batch_theoretical_max(
    concealed: np.ndarray, meld_kind: np.ndarray, void: np.ndarray, fan_cap: int
) -> np.ndarray:
    """(B, 27) standing tiles, (B, 27) meld kind, (B,) void -> (B,) int32: the highest
    value over the waits, without the situational fans; 0 when not ready."""
    t = _T or _load()
    c = np.asarray(concealed, dtype=np.int8)
    mk = np.asarray(meld_kind, dtype=np.int8)
    v = np.asarray(void, dtype=np.int8)
    b = c.shape[0]
    waits = _wait_mask(t, c, mk, v)
    full = c + _MELD_COPIES[mk]
    kongs = np.count_nonzero(mk == 2, axis=1)
    n = np.count_nonzero(mk, axis=1)
    roots = np.count_nonzero(full == 4, axis=1) - kongs
    bad = np.count_nonzero(_ODD_OR_FOUR[c], axis=1)
    twos = np.count_nonzero(c == 2, axis=1)
    odd = np.count_nonzero(c & 1, axis=1)
    ci = c.astype(np.intp)
    # per candidate winning kind (B, 27)
    seven = ((odd[:, None] + _D_ODD[ci]) == 0) & (n == 0)[:, None]
    pungs = ((bad[:, None] + _D_BAD[ci]) == 0) & ((twos[:, None] + _D_TWO[ci]) == 1)
    present = full.reshape(b, 3, 9).any(axis=2)
    others = np.count_nonzero(present, axis=1)[:, None] - present  # suits other than s
    flush = (others == 0)[:, SUIT_OF]
    base = (kongs + roots + (n == 4)).astype(np.int16)  # Golden Wait adds one on top
    total = base[:, None] + (full == 3) + 2 * flush + np.where(seven, 2, pungs)
    value = np.left_shift(1, np.minimum(total, int(fan_cap)), dtype=np.int32)
    value *= waits
    return value.max(axis=1)


# ------------------------------------------------------------- single-hand API


@dataclass(frozen=True)
class Score:
    """A scored win: ``fans`` (name -> fans added, nonzero only), ``fan_total`` (sum
    before the cap) and ``value`` (points, ``2 ** min(fan_total, fan_cap)``, without
    the self-draw bonus)."""

    fans: dict[str, int] = field(hash=False)
    fan_total: int
    value: int


def _void_index(void: Any) -> int:
    if void is None:
        return _NONE
    if isinstance(void, str) and void in tiles.SUITS:
        return tiles.SUITS.index(void)
    if isinstance(void, (int, np.integer)) and not isinstance(void, bool) and -1 <= void <= 2:
        return int(void)
    raise ValueError(f"unknown void suit {void!r}: expected 'm', 'p', 's' or None")


def _tile_kind(tile: Any, what: str) -> int:
    if isinstance(tile, str):
        return tiles.parse_tile(tile)
    is_int = isinstance(tile, (int, np.integer)) and not isinstance(tile, bool)
    if is_int and 0 <= int(tile) < 27:
        return int(tile)
    raise ValueError(f"{what} must be a tile string like '5m' or a kind 0..26, got {tile!r}")


def _meld_vector(melds: Any, void: int) -> np.ndarray:
    if isinstance(melds, str):
        raise ValueError("melds must be a sequence of (kind, tile) pairs, not a string")
    melds = list(melds)
    if len(melds) > 4:
        raise ValueError(f"more than 4 melds: got {len(melds)}")
    mk = np.zeros(27, dtype=np.int8)
    for meld in melds:
        if isinstance(meld, str) or not isinstance(meld, Sequence) or len(meld) != 2:
            raise ValueError(f"a meld must be a (kind, tile) pair, got {meld!r}")
        name, tile = meld
        if name not in _MELD_CODE:
            raise ValueError(f"unknown meld kind {name!r}: expected one of {', '.join(MELD_KINDS)}")
        k = _tile_kind(tile, "a meld tile")
        if mk[k]:
            raise ValueError(f"two melds of one kind: {tiles.tile_str(k)}")
        if void >= 0 and k // 9 == void:
            raise ValueError(
                f"a {name} of {tiles.tile_str(k)} is of the void suit "
                f"{tiles.SUITS[void]!r}; it cannot be declared"
            )
        mk[k] = _MELD_CODE[name]
    return mk


def _prepare(
    concealed: Any, melds: Any, void: Any, expected: tuple[int, ...], what: str,
    extra: int | None = None,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Validate and convert; ``expected`` = allowed concealed counts for 0 melds."""
    v = _void_index(void)
    c = tiles.as_counts(concealed)
    mk = _meld_vector(melds, v)
    n = int(np.count_nonzero(mk))
    total = int(c.sum())
    allowed = [e - 3 * n for e in expected]
    if total not in allowed:
        want = " or ".join(str(a) for a in allowed)
        raise ValueError(
            f"wrong tile count for {what}: {total} concealed tiles with {n} meld(s); "
            f"expected {want}"
        )
    own = c.astype(np.int16) + _MELD_COPIES[mk]
    if extra is not None:
        own[extra] += 1
    if (own > 4).any():
        k = int(np.argmax(own))
        parts = [f"{int(c[k])} concealed"]
        if mk[k]:
            parts.append("3 in a pung" if mk[k] == 1 else "4 in a kong")
        if extra == k:
            parts.append("the win tile")
        raise ValueError(
            f"more than four copies of {tiles.tile_str(k)}: {' + '.join(parts)}"
        )
    return c, mk, n, v


def is_complete(concealed: Any, melds: Sequence = (), void: Any = None) -> bool:
    """True when the concealed tiles (incl. the last one, ``14 - 3 * len(melds)`` tiles)
    and the melds form a winning hand with no tile of the void suit."""
    c, _, n, v = _prepare(concealed, melds, void, (14,), "a complete hand")
    return hand_is_complete(c, n, v)


def waits(concealed: Any, melds: Sequence = (), void: Any = None) -> list[str]:
    """The tiles that complete the hand (``13 - 3 * len(melds)`` standing tiles), in
    kind order (``1m..9m, 1p..9p, 1s..9s``); exhausted kinds are left out."""
    c, mk, _, v = _prepare(concealed, melds, void, (13,), "waits")
    mask = batch_wait_mask(c[None], mk[None], np.array([v], np.int8))[0]
    return [tiles.tile_str(k) for k in np.flatnonzero(mask)]


def shanten(concealed: Any, melds: Sequence = (), void: Any = None) -> int:
    """-1 complete, 0 ready, 1 one tile from ready, ... (13 - 3k or 14 - 3k tiles)."""
    c, mk, _, v = _prepare(concealed, melds, void, (13, 14), "shanten")
    return int(batch_shanten(c[None], mk[None], np.array([v], np.int8))[0])


def _check_flags(
    mk: np.ndarray, own: np.ndarray, win: int, *, self_drawn: bool, after_kong: bool,
    shoot_after_kong: bool, robbing_kong: bool, under_the_sea: bool,
) -> None:
    if after_kong and not self_drawn:
        raise ValueError("after_kong (Win after Kong) is a self-drawn win: pass self_drawn=True")
    if after_kong and not (mk == 2).any():
        raise ValueError("after_kong (Win after Kong) needs a declared kong in the hand")
    if shoot_after_kong and self_drawn:
        raise ValueError("shoot_after_kong is a win on a discard: it cannot be self-drawn")
    if robbing_kong and self_drawn:
        raise ValueError("robbing_kong is a win on another player's kong: not self-drawn")
    if robbing_kong and (after_kong or shoot_after_kong or under_the_sea):
        raise ValueError(
            "robbing_kong cannot go with after_kong, shoot_after_kong or under_the_sea"
        )
    if robbing_kong and own[win] > 0:
        raise ValueError(
            f"robbing_kong on {tiles.tile_str(win)}: the hand already holds that kind, but "
            "the other three copies are in the declarer's pung"
        )


def score(
    concealed: Any,
    melds: Sequence,
    win_tile: Any,
    void: Any,
    *,
    self_drawn: bool = False,
    after_kong: bool = False,
    shoot_after_kong: bool = False,
    robbing_kong: bool = False,
    under_the_sea: bool = False,
    rules: Rules | str | None = None,
) -> Score:
    """Score a win: ``concealed`` are the standing tiles without ``win_tile``.

    Raises ``ValueError`` when the hand is not a win (not complete, or holding a tile of
    the void suit) or the flags cannot go together."""
    r = DEFAULT_RULES if rules is None else get_rules(rules)
    win = _tile_kind(win_tile, "win_tile")
    v = _void_index(void)
    c, mk, n, v = _prepare(concealed, melds, v, (13,), "score (without the win tile)", win)
    own = c + _MELD_COPIES[mk]
    _check_flags(
        mk, own, win, self_drawn=self_drawn, after_kong=after_kong,
        shoot_after_kong=shoot_after_kong, robbing_kong=robbing_kong,
        under_the_sea=under_the_sea,
    )
    hand = c.copy()
    hand[win] += 1
    if v >= 0 and hand[9 * v : 9 * v + 9].any():
        raise ValueError(
            f"not a win: the hand holds tiles of the void suit {tiles.SUITS[v]!r}"
        )
    if not batch_is_complete(hand[None], np.array([n]), np.array([v], np.int8))[0]:
        raise ValueError(
            f"not a win: {tiles.format_hand(hand)} with {n} meld(s) is not a complete hand"
        )
    one = np.ones(1, dtype=bool)
    fans = batch_fans(
        hand[None], mk[None], np.array([win]), np.array([v], np.int8),
        one & self_drawn, one & after_kong, one & shoot_after_kong, one & robbing_kong,
        one & under_the_sea,
    )[0]
    total = int(fans.sum())
    named = {name: int(f) for name, f in zip(FAN_NAMES, fans, strict=True) if f}
    return Score(fans=named, fan_total=total, value=2 ** min(total, r.fan_cap))


def theoretical_max(
    concealed: Any, melds: Sequence = (), void: Any = None, rules: Rules | str | None = None
) -> int:
    """Highest value over the tiles the hand waits on, without the situational fans
    (docs/rules.md section 8); 0 when the hand is not ready."""
    r = DEFAULT_RULES if rules is None else get_rules(rules)
    c, mk, _, v = _prepare(concealed, melds, void, (13,), "theoretical_max")
    return int(batch_theoretical_max(c[None], mk[None], np.array([v], np.int8), r.fan_cap)[0])


# ------------------------------------------------------------------------- CLI


def _parse_melds_arg(text: str | None) -> list[tuple[str, str]]:
    if not text:
        return []
    melds = []
    for part in text.split(","):
        words = part.split()
        if len(words) != 2:
            raise ValueError(f"a meld is 'kind tile', e.g. 'pung 5m'; got {part.strip()!r}")
        melds.append((words[0], words[1]))
    return melds


def _fans_text(s: Score) -> str:
    return ", ".join(f"{k} {v}" for k, v in s.fans.items()) or "no fans"


def _describe(hand: str, melds: list, void: str | None) -> list[str]:
    presets = [get_rules("mil"), get_rules("mahjongsoft")]
    c = tiles.as_counts(hand)
    lines = []
    n = len(melds)
    meld_text = ", ".join(f"{k} {t}" for k, t in melds) or "none"
    lines.append(f"hand: {tiles.format_hand(c)}   melds: {meld_text}   void: {void or 'none'}")
    sh = shanten(c, melds, void)
    lines.append(f"shanten: {sh}")
    if int(c.sum()) == 14 - 3 * n:
        if sh == -1:
            lines.append("complete hand; scored as a win on a discard:")
            last = int(np.flatnonzero(c)[-1])
            rest = c.copy()
            rest[last] -= 1
            for r in presets:
                s = score(rest, melds, last, void, rules=r)
                lines.append(
                    f"  {r.preset} (cap {r.fan_cap}): {_fans_text(s)}; "
                    f"{s.fan_total} fans -> {s.value} points"
                )
        else:
            for k in np.flatnonzero(c):
                rest = c.copy()
                rest[k] -= 1
                w = waits(rest, melds, void)
                if w:
                    lines.append(f"discard {tiles.tile_str(k)}: waits {' '.join(w)}")
        return lines
    w = waits(c, melds, void)
    lines.append(f"waits: {' '.join(w) if w else 'none'}")
    for tile in w:
        scores = [score(c, melds, tile, void, rules=r) for r in presets]
        values = ", ".join(f"{r.preset} {s.value}" for r, s in zip(presets, scores, strict=True))
        lines.append(
            f"  {tile}: {_fans_text(scores[0])}; {scores[0].fan_total} fans -> {values} points"
        )
    tm = ", ".join(f"{r.preset} {theoretical_max(c, melds, void, r)}" for r in presets)
    lines.append(f"theoretical maximum: {tm}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sichuan_env.hands",
        description="Shanten, waits, fans and values of a Sichuan mahjong hand.",
    )
    parser.add_argument("hand", help="concealed tiles, e.g. 11123m456p789p5s")
    parser.add_argument("--void", default=None, choices=("m", "p", "s"),
                        help="forbidden suit: m, p or s")
    parser.add_argument("--melds", default=None,
                        help="comma-separated melds, e.g. 'pung 5m,concealed_kong 9p'")
    args = parser.parse_args(argv)
    try:
        lines = _describe(args.hand, _parse_melds_arg(args.melds), args.void)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

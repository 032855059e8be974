"""The numpy implementation of the batched hand functions, kept as the tests' differential
reference for the compiled kernels of ``sichuan_env.core.hand_kernels`` (which
``sichuan_env.core.hands`` calls).

Same tables, other code: table lookups and array operations over the whole batch (no
loop over hands), the shanten of suits holding melds by (max, +) convolutions of the
segment tables, with :func:`_best_with_room` (a direct search over every complete suit
within the copies left) as the check of those. ``tests/reference.py`` is the plain
search both are compared with. Signatures follow ``sichuan_env.core.hands``.
"""

from __future__ import annotations

from itertools import product

import numpy as np

from sichuan_env.core import hand_kernels as hk
from sichuan_env.core.tables import N_CODES, complete_codes, load_tables
from sichuan_env.core.vocab import MELD_KIND_TILES as _MELD_COPIES
from sichuan_env.core.vocab import SUIT_OF


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
        _T = _Tables(load_tables())
    return _T


_LUTS = hk.hand_tables()  # the hand-index lookups are table data, shared with the kernels
_LUT_COMPLETE = _LUTS.complete
_LUT_SHIFT = _LUTS.shift
_LUT_MASK = _LUTS.mask
_LUT_MASK7 = _LUTS.mask7

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
    :func:`sichuan_env.core.tables.build_meld_tables`): (R,) suit codes, (R,) meld pattern ids,
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
    segment tables of :func:`sichuan_env.core.tables.build_meld_tables`; hands with 1-4
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



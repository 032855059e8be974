"""Hand facts, compiled: the one implementation of the hand rules of docs/rules.md
(sections 5, 6 and 8).

Per hand: :func:`is_complete`, :func:`wait_bits` / :func:`wait_mask` (the kinds that
complete a standing hand), :func:`shanten`, :func:`fans` and :func:`value_of`,
:func:`theoretical_max`. The ``*_rows`` kernels run them over the rows of a batch; the
engine (:mod:`sichuan_env.core.engine_kernels`), the analysis planes of
``sichuan_agents.training.features`` and the batched and single-hand API of
:mod:`sichuan_env.core.hands` all call these functions. ``tests/support/reference_hands.py`` keeps a
numpy implementation over the same tables and ``tests/support/reference.py`` a plain search; the
tests compare the kernels with both.

They answer from the per-suit tables of :mod:`sichuan_env.core.tables` and lookups indexed
by a 14-bit **hand index** (4 flag bits per suit: is sets, is sets and a pair, all
counts even, exactly one count odd; bit 12 no melds; bit 13 void tiles held), built
here: ``complete`` / ``shift`` / ``mask`` / ``mask7``. The engine's arrays travel as a
:class:`HandTables` tuple; shanten reads the segment tables through one
:class:`ShantenTables` object (one reference per call instead of one per array).

Inputs: ``counts`` (27,) concealed tile counts; ``meld`` (27,) meld codes per kind (0
none, 1 pung, 2 or more any kong: the engine's codes and the hand tables' kinds 0/1/2
both work); ``void`` -1..2.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.core import types
from numba.experimental import structref

from sichuan_env.core.jit import njit
from sichuan_env.core.tables import N_CODES, load_tables

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
N_FANS = len(FAN_NAMES)


def _build_luts() -> dict[str, np.ndarray]:
    """Lookups indexed by the 14-bit hand index: complete hand; per suit the shift and
    mask that select its wait bits from its ``packed`` word (regular hands) and the
    seven-pairs mask."""
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


def _near9() -> np.ndarray:
    """Meld pattern id ``sum(meld_kind * 3**rank)`` of a suit -> 9-bit mask of the ranks
    within two of a meld kind (where a held tile makes the suit's cover depend on the
    melds)."""
    digits = (np.arange(3**9)[:, None] // 3 ** np.arange(9)) % 3
    near = np.zeros(3**9, dtype=np.int32)
    for d in range(-2, 3):
        r = np.arange(9) + d
        ok = (r >= 0) & (r < 9)
        near |= ((digits[:, ok] > 0) << r[ok]).sum(axis=1, dtype=np.int32)
    return near


class HandTables(NamedTuple):
    """The lookup arrays of :func:`is_complete`, :func:`wait_mask` and
    :func:`theoretical_max`."""

    flags3: np.ndarray  # (3 * 5**9,) uint16: a suit code's flag bits shifted by 4 * suit
    complete: np.ndarray  # (2**14,) bool: hand index -> complete hand
    packed: np.ndarray  # (5**9,) uint32: per suit code, the wait bits (see tables.py)
    shift: np.ndarray  # (2**14, 3) uint32: hand index -> shift of the wait bits per suit
    mask: np.ndarray  # (2**14, 3) uint32: hand index -> mask of the wait bits per suit
    mask7: np.ndarray  # (2**14, 3) uint32: hand index -> seven-pairs wait mask per suit


SHANTEN_FIELDS = ("best", "seg8", "pat_start", "pat_count", "pat_nseg", "pat_div",
                  "pat_mod", "cfg_base", "cfg_ext", "cfg_cover", "near9", "popcount")


@structref.register
class _ShantenTablesType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class ShantenTables(structref.StructRefProxy):
    """The arrays :func:`shanten` reads (:data:`SHANTEN_FIELDS`), as one object."""


structref.define_proxy(ShantenTables, _ShantenTablesType, list(SHANTEN_FIELDS))


@njit
def _shanten_bag(*arrays):
    return ShantenTables(*arrays)


_TABLES: HandTables | None = None
_SHANTEN: ShantenTables | None = None


def hand_tables() -> HandTables:
    """The arrays of :class:`HandTables` (built on first use)."""
    global _TABLES
    if _TABLES is None:
        raw = load_tables()
        luts = _build_luts()
        flags = raw["flags"].astype(np.uint16)
        _TABLES = HandTables(
            flags3=np.concatenate([flags << (4 * s) for s in range(3)]),
            complete=luts["complete"],
            packed=np.ascontiguousarray(raw["packed"], dtype=np.uint32),
            shift=luts["shift"],
            mask=luts["mask"],
            mask7=luts["mask7"],
        )
    return _TABLES


def shanten_tables() -> ShantenTables:
    """The :class:`ShantenTables` object (built on first use)."""
    global _SHANTEN
    if _SHANTEN is None:
        raw = load_tables()
        popcount = np.array([bin(x).count("1") for x in range(512)], dtype=np.int16)
        _SHANTEN = _shanten_bag(
            raw["best"], raw["seg_best"].view(np.int8).reshape(-1, 8), raw["pat_start"],
            raw["pat_count"], raw["pat_nseg"], raw["pat_div"], raw["pat_mod"],
            raw["cfg_base"], raw["cfg_ext"], raw["cfg_cover"], _near9(), popcount)
    return _SHANTEN


@njit
def suit_codes(counts, extra):
    """Base-5 codes of the three suits of ``counts`` (27,), with one more tile of kind
    ``extra`` (-1 none)."""
    c0 = 0
    c1 = 0
    c2 = 0
    p = 1
    for r in range(9):
        c0 += (np.int64(counts[r]) + (r == extra)) * p
        c1 += (np.int64(counts[9 + r]) + (9 + r == extra)) * p
        c2 += (np.int64(counts[18 + r]) + (18 + r == extra)) * p
        p *= 5
    return c0, c1, c2


@njit
def hand_index(flags3, c0, c1, c2, n_melds, void):
    """The 14-bit hand index: the three suits' flag bits, bit 12 no melds, bit 13 void
    tiles held."""
    idx = np.int64(flags3[c0]) | np.int64(flags3[c1 + N_CODES]) | np.int64(
        flags3[c2 + 2 * N_CODES])
    if n_melds == 0:
        idx |= 1 << 12
    if void == 0:
        held = c0
    elif void == 1:
        held = c1
    elif void == 2:
        held = c2
    else:
        held = 0
    if held != 0:
        idx |= 1 << 13
    return idx


@njit
def is_complete(flags3, complete, counts, extra, n_melds, void):
    """``counts`` plus one tile of kind ``extra`` (-1 none) with ``n_melds`` melds is a
    winning hand with no tile of the void suit."""
    c0, c1, c2 = suit_codes(counts, extra)
    return complete[hand_index(flags3, c0, c1, c2, n_melds, void)]


@njit
def _room(count, meld):
    """One more own copy of a kind fits: count + copies in its meld < 4."""
    held = count
    if meld == 1:
        held += 3
    elif meld >= 2:
        held += 4
    return held < 4


@njit(inline="always")
def flags_of_packed(pk):
    """A suit code's flag bits (those of ``flags3`` for suit 0) from its ``packed`` word:
    bits 0-1 are stored there (bits 18-19); bit 2 (every count even) and bit 3 (exactly
    one count odd) follow from the odd ranks (bits 20-28)."""
    odd = (pk >> np.uint32(20)) & np.uint32(0x1FF)
    f = np.int64((pk >> np.uint32(18)) & np.uint32(3))
    if odd == 0:
        f |= 4
    elif odd & (odd - np.uint32(1)) == 0:
        f |= 8
    return f


@njit
def wait_bits(packed, shift, mask, mask7, counts, n_melds, void):
    """The kinds k (bit k of an int64) for which ``counts`` plus one tile of kind k, with
    ``n_melds`` melds, is a winning hand with no tile of the void suit: bit k equals
    :func:`is_complete` ``(counts, k, n_melds, void)`` for every kind held fewer than four
    times (whether a fifth copy exists is not asked). One lookup per suit (``packed``
    holds the flag bits too)."""
    c0, c1, c2 = suit_codes(counts, np.int64(-1))
    return wait_bits_of_codes(packed, shift, mask, mask7, c0, c1, c2, n_melds, void)


@njit(inline="always")
def wait_bits_of_codes(packed, shift, mask, mask7, c0, c1, c2, n_melds, void):
    """:func:`wait_bits` of the hand whose suits have the base-5 codes c0, c1, c2
    (:func:`suit_codes`)."""
    p0 = np.uint32(packed[c0])
    p1 = np.uint32(packed[c1])
    p2 = np.uint32(packed[c2])
    idx = flags_of_packed(p0) | (flags_of_packed(p1) << 4) | (flags_of_packed(p2) << 8)
    if n_melds == 0:
        idx |= 1 << 12
    held = c0 if void == 0 else (c1 if void == 1 else (c2 if void == 2 else 0))
    if held != 0:
        idx |= 1 << 13
    bits = np.int64(0)
    for s in range(3):
        pk = p0 if s == 0 else (p1 if s == 1 else p2)
        b = ((pk >> shift[idx, s]) & mask[idx, s]) | ((pk >> np.uint32(20)) & mask7[idx, s])
        bits |= np.int64(b & np.uint32(0x1FF)) << (9 * s)
    return bits


@njit
def wait_mask(tables, counts, meld, void, out):
    """Writes into ``out`` (27,) bool the kinds that complete the standing hand
    (exhausted kinds left out); returns True when there is at least one."""
    flags3, _, packed, shift, mask, mask7 = tables
    n_melds = 0
    for k in range(27):
        if meld[k] != 0:
            n_melds += 1
    c0, c1, c2 = suit_codes(counts, np.int64(-1))
    idx = hand_index(flags3, c0, c1, c2, n_melds, void)
    any_wait = False
    for s in range(3):
        code = c0 if s == 0 else (c1 if s == 1 else c2)
        pk = np.uint32(packed[code])
        bits = ((pk >> shift[idx, s]) & mask[idx, s]) | ((pk >> np.uint32(20)) & mask7[idx, s])
        for r in range(9):
            k = 9 * s + r
            w = ((bits >> np.uint32(r)) & np.uint32(1)) != 0 and _room(counts[k], meld[k])
            out[k] = w
            any_wait = any_wait or w
    return any_wait


@njit(inline="always")
def _shape_counts(counts, extra, meld):
    """One scan over the 27 kinds of a hand (``counts`` plus one tile of kind ``extra``,
    -1 none) and its melds: (kongs, melds, kinds held four times counting melds, kinds
    held an odd number of times, kinds held 1, 4 or 5 times, kinds held twice, bit set of
    the suits present). Serves :func:`fans` and :func:`theoretical_max`."""
    kongs = 0
    n = 0
    fours = 0
    odd = 0
    bad = 0
    twos = 0
    suits = 0
    for k in range(27):
        c = counts[k]
        if k == extra:
            c += 1
        m = meld[k]
        full = c
        if m == 1:
            full += 3
        elif m >= 2:
            full += 4
            kongs += 1
        if m != 0:
            n += 1
        if full == 4:
            fours += 1
        if c & 1:
            odd += 1
        if c == 1 or c == 4 or c == 5:
            bad += 1
        if c == 2:
            twos += 1
        if full > 0:
            suits |= 1 << (k // 9)
    return kongs, n, fours, odd, bad, twos, suits


@njit(inline="always")
def _suit_count(suits):
    return (suits & 1) + ((suits >> 1) & 1) + ((suits >> 2) & 1)


@njit
def fans(counts, extra, meld, after_kong, shoot, robbing, sea, out):
    """Fans of a complete hand (``counts`` plus one tile of kind ``extra``, -1 none) into
    ``out`` (10,) in :data:`FAN_NAMES` order; returns the total."""
    kongs, n, fours, odd, bad, twos, suits = _shape_counts(counts, extra, meld)
    seven = n == 0 and odd == 0
    golden = n == 4
    out[0] = kongs
    out[1] = fours - kongs
    out[2] = 1 if ((bad == 0 and twos == 1 and not seven) or golden) else 0
    out[3] = 1 if golden else 0
    out[4] = 2 if _suit_count(suits) == 1 else 0
    out[5] = 2 if seven else 0
    out[6] = 1 if after_kong else 0
    out[7] = 1 if shoot else 0
    out[8] = 1 if robbing else 0
    out[9] = 1 if sea else 0
    total = 0
    for i in range(10):
        total += out[i]
    return total


@njit
def value_of(total, fan_cap):
    """Points of ``total`` fans: ``2 ** min(total, fan_cap)``."""
    return np.int32(1) << min(total, fan_cap)


@njit
def theoretical_max(tables, counts, meld, void, fan_cap, waits):
    """Highest value over the waits without situational fans (docs/rules.md section 8);
    0 when not ready. ``waits`` (27,)
    bool is scratch space."""
    if not wait_mask(tables, counts, meld, void, waits):
        return 0
    kongs, n, fours, odd, bad, twos, suits = _shape_counts(counts, -1, meld)
    roots = fours - kongs
    n_present = _suit_count(suits)
    base = kongs + roots + (1 if n == 4 else 0)
    best = 0
    for k in range(27):
        if not waits[k]:
            continue
        c = counts[k]
        m = meld[k]
        full = c
        if m == 1:
            full += 3
        elif m >= 2:
            full += 4
        # the fans change by adding one tile of kind k (count c -> c + 1)
        d_bad = 1 if c == 0 else (-1 if c == 1 else (1 if c == 3 else 0))
        d_two = 1 if c == 1 else (-1 if c == 2 else 0)
        d_odd = 1 if (c == 0 or c == 2) else (-1 if (c == 1 or c == 3) else 0)
        seven = (odd + d_odd) == 0 and n == 0
        pungs = (bad + d_bad) == 0 and (twos + d_two) == 1
        others = n_present - ((suits >> (k // 9)) & 1)
        flush = others == 0
        total = base + (1 if full == 3 else 0) + (2 if flush else 0)
        if seven:
            total += 2
        elif pungs:
            total += 1
        v = value_of(total, fan_cap)
        if v > best:
            best = v
    return best


# ----------------------------------------------------------------------------- shanten


@njit(inline="always")
def suit_code(c, s):
    """Base-5 code of suit s of the (27,) counts c."""
    code = 0
    p = 1
    for r in range(9):
        code += c[9 * s + r] * p
        p *= 5
    return code


@njit(inline="always")
def melded_cover(tab, code, pat, held, res, scratch):
    """The best cover per column 2*m + p (m <= 3: m set blocks, p pair blocks; the most
    tiles of the suit such blocks can hold) of a suit holding melds, from the segment
    tables of :func:`sichuan_env.core.tables.build_meld_tables` (suit code ``code``, meld
    pattern id ``pat``, 9-bit mask ``held`` of the ranks held); written into res[:8].
    ``scratch``: (4, 8) int64 work space."""
    seg8, pat_start, pat_count, pat_nseg = tab.seg8, tab.pat_start, tab.pat_count, tab.pat_nseg
    pat_div, pat_mod, cfg_base, cfg_ext, cfg_cover, popcount = (
        tab.pat_div, tab.pat_mod, tab.cfg_base, tab.cfg_ext, tab.cfg_cover, tab.popcount)
    seg, best, val, nxt = scratch[0], scratch[1], scratch[2], scratch[3]
    nseg = pat_nseg[pat]
    for i in range(nseg):
        seg[i] = code // pat_div[pat, i] % pat_mod[pat, i]
    best[:] = -(2**30)
    first = pat_start[pat]
    for cfg in range(first, first + pat_count[pat]):
        row = cfg_base[cfg, 0] + seg[0]
        for col in range(8):
            val[col] = seg8[row, col]
        for i in range(1, nseg):
            row = cfg_base[cfg, i] + seg[i]
            for m in range(4):  # (max, +) convolution over the set and pair blocks
                for p in range(2):
                    top = -(2**30)
                    for m1 in range(m + 1):
                        for p1 in range(p + 1):
                            x = val[2 * m1 + p1] + seg8[row, 2 * (m - m1) + (p - p1)]
                            if x > top:
                                top = x
                    nxt[2 * m + p] = top
            val[:] = nxt
        ext = cfg_ext[cfg]  # outside chows: ext set blocks taken by the neighbours
        extra = popcount[held & cfg_cover[cfg]]
        for col in range(8):
            x = (val[col - 2 * ext] if col >= 2 * ext else -256) + extra
            if x > best[col]:
                best[col] = x
    for col in range(8):
        res[col] = max(best[col], 0)


@njit(inline="always")
def suit_cover(tab, c, mk, n_melds, v, s, res, scratch):
    """The 12 best-cover columns of suit s (``best`` of :mod:`sichuan_env.core.tables`: set and
    pair blocks 2*m + p, then pairs and singles for seven pairs) into res; suits with a
    held tile within two ranks of a meld through :func:`melded_cover`; the void suit
    counts nothing. ``scratch``: (4, 8) int64 work space."""
    code = suit_code(c, s)
    melded = False
    if n_melds:
        pat = 0
        held = 0
        p = 1
        for r in range(9):
            pat += mk[9 * s + r] * p
            p *= 3
            if c[9 * s + r] > 0:
                held |= 1 << r
        if tab.near9[pat] & held:  # a held rank within two of a meld kind
            melded = True
            melded_cover(tab, code, pat, held, res, scratch)
    if s == v:
        code = 0  # void tiles never count
    best_tab = tab.best
    for col in range(8 if melded else 0, 12):
        res[col] = best_tab[code, col]


@njit
def combine_covers(cover, n_melds):
    """Shanten from the three suits' covers (3, 12): the best spread of ``4 - n_melds``
    set blocks and one pair over the suits, or seven pairs (no melds)."""
    need = 4 - n_melds
    top = -(2**30)
    for m0 in range(need + 1):
        for m1 in range(need - m0 + 1):
            m2 = need - m0 - m1
            for pair in range(3):
                x = (cover[0, 2 * m0 + (pair == 0)] + cover[1, 2 * m1 + (pair == 1)]
                     + cover[2, 2 * m2 + (pair == 2)])
                if x > top:
                    top = x
    sh = 13 - 3 * n_melds - top
    if n_melds == 0:  # seven pairs
        pairs = min(cover[0, 10] + cover[1, 10] + cover[2, 10], 7)
        singles = cover[0, 11] + cover[1, 11] + cover[2, 11]
        sh = min(sh, 13 - (2 * pairs + min(7 - pairs, singles)))
    return sh


@njit
def shanten(tab, c, mk, v):
    """Shanten of one hand (13 - 3n or 14 - 3n tiles): -1 complete, 0 ready (a real wait
    exists), 1, 2, ...; exact under the four-copies limit (the copies in melds counted).
    ``tab``: :func:`shanten_tables`; ``mk`` meld kinds 0/1/2 only (a base-3 pattern)."""
    n = 0
    for k in range(27):
        if mk[k] > 0:
            n += 1
    cover = np.empty((3, 12), np.int64)
    scratch = np.empty((4, 8), np.int64)
    for s in range(3):
        suit_cover(tab, c, mk, n, v, s, cover[s], scratch)
    return combine_covers(cover, n)


# ----------------------------------------------------------------------------- over rows


@njit
def is_complete_rows(flags3, complete, counts, n_melds, void, out):
    """``out[i]`` = :func:`is_complete` of row i of ``counts`` (B, 27) (no extra tile)."""
    for i in range(counts.shape[0]):
        out[i] = is_complete(flags3, complete, counts[i], -1, n_melds[i], void[i])


@njit
def wait_mask_rows(tables, counts, meld, void, out):
    """Row i of ``out`` (B, 27) bool = :func:`wait_mask` of row i."""
    for i in range(counts.shape[0]):
        wait_mask(tables, counts[i], meld[i], void[i], out[i])


@njit
def shanten_rows(tab, counts, meld, void, out):
    """``out[i]`` = :func:`shanten` of row i."""
    for i in range(counts.shape[0]):
        out[i] = shanten(tab, counts[i], meld[i], void[i])


@njit
def fans_rows(counts, meld, after_kong, shoot, robbing, sea, out):
    """Row i of ``out`` (B, 10) = :func:`fans` of the complete hand ``counts[i]`` (the
    winning tile included) with the situational flags of row i."""
    for i in range(counts.shape[0]):
        fans(counts[i], -1, meld[i], after_kong[i], shoot[i], robbing[i], sea[i], out[i])


@njit
def value_rows(fan_rows, fan_cap, out):
    """``out[i]`` = :func:`value_of` the total of ``fan_rows[i]``."""
    for i in range(fan_rows.shape[0]):
        total = 0
        for j in range(fan_rows.shape[1]):
            total += fan_rows[i, j]
        out[i] = value_of(total, fan_cap)


@njit
def theoretical_max_rows(tables, counts, meld, void, fan_cap, out):
    """``out[i]`` = :func:`theoretical_max` of row i."""
    waits = np.empty(27, np.bool_)
    for i in range(counts.shape[0]):
        out[i] = theoretical_max(tables, counts[i], meld[i], void[i], fan_cap, waits)


@njit
def melded_cover_rows(tab, code, pat, held, out):
    """Row i of ``out`` (R, 8) = :func:`melded_cover` of suit code ``code[i]``, meld
    pattern ``pat[i]`` and held ranks ``held[i]``."""
    scratch = np.empty((4, 8), np.int64)
    res = np.empty(12, np.int64)
    for i in range(code.shape[0]):
        melded_cover(tab, code[i], pat[i], held[i], res, scratch)
        for j in range(8):
            out[i, j] = res[j]

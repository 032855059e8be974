"""Hand facts for one hand inside compiled code, through the lookup tables of
:mod:`sichuan_env.hands`.

The engine's kernels (:mod:`sichuan_env.engine_kernels`) ask, for one seat at a time,
whether a hand is complete, which tiles it waits on, its fans and its theoretical maximum.
These functions answer from the same per-suit tables and 14-bit hand-index lookups that
the batched numpy functions of :mod:`sichuan_env.hands` use (``flags3``, ``packed`` and
the ``complete`` / ``shift`` / ``mask`` / ``mask7`` lookups), passed in as a
:class:`HandTables` tuple of arrays; the tests compare them with the batched functions.

Inputs follow :mod:`sichuan_env.hands`: ``counts`` (27,) int8 concealed tile counts,
``meld`` (27,) int8 engine meld codes (any kong counts as a kong), ``void`` -1..2.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sichuan_env import hands as hx
from sichuan_env.jit import njit

N_CODES = hx.N_CODES
N_FANS = len(hx.FAN_NAMES)


class HandTables(NamedTuple):
    """The lookup arrays the compiled hand functions read."""

    flags3: np.ndarray  # (3 * 5**9,) uint16: a suit code's flag bits shifted by 4 * suit
    complete: np.ndarray  # (2**14,) bool: hand index -> complete hand
    packed: np.ndarray  # (5**9,) uint32: per suit code, the wait bits (see tables.py)
    shift: np.ndarray  # (2**14, 3) uint32: hand index -> shift of the wait bits per suit
    mask: np.ndarray  # (2**14, 3) uint32: hand index -> mask of the wait bits per suit
    mask7: np.ndarray  # (2**14, 3) uint32: hand index -> seven-pairs wait mask per suit


_TABLES: HandTables | None = None


def hand_tables() -> HandTables:
    """The arrays of :class:`HandTables` (loaded once; built on first use)."""
    global _TABLES
    if _TABLES is None:
        t = hx._load()
        _TABLES = HandTables(
            flags3=np.ascontiguousarray(t.flags3, dtype=np.uint16),
            complete=np.ascontiguousarray(hx._LUT_COMPLETE),
            packed=np.ascontiguousarray(t.packed, dtype=np.uint32),
            shift=np.ascontiguousarray(hx._LUT_SHIFT, dtype=np.uint32),
            mask=np.ascontiguousarray(hx._LUT_MASK, dtype=np.uint32),
            mask7=np.ascontiguousarray(hx._LUT_MASK7, dtype=np.uint32),
        )
    return _TABLES


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
    """The 14-bit hand index of :mod:`sichuan_env.hands`: the three suits' flag bits,
    bit 12 no melds, bit 13 void tiles held."""
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
    ``out`` (10,) in :data:`~sichuan_env.hands.FAN_NAMES` order (as
    :func:`~sichuan_env.hands.batch_fans`); returns the total."""
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
    """Highest value over the waits without situational fans (as
    :func:`~sichuan_env.hands.batch_theoretical_max`); 0 when not ready. ``waits`` (27,)
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

"""A slow, obvious reference for the hand rules of docs/rules.md sections 5, 6 and 8.

Written independently of ``sichuan_env.core.hands`` so that the tests can compare the two.
Everything here favours being plainly correct over being fast:

* completeness: a recursive split of the standing tiles into one pair and sets (the lowest
  remaining tile must start a pung or a chow), or seven pairs by counting;
* waits: try every one of the 27 kinds;
* shanten: the exact definition. ``dist`` is the smallest number of tiles that must be
  brought in (tiles of a complete hand ``W`` that the standing tiles ``H`` lack), taken
  over *every* legal complete hand ``W`` (at most four copies of a kind counting the
  melds, nothing of the void suit); shanten = dist - 1. The complete hands are enumerated
  suit by suit from precomputed tables of every union of sets (and at most one pair) that
  fits in one suit, so nothing is approximated (no "block counting" heuristics);
* fans: every split of the complete hand is scored and the best one is kept.

Hands are tuples of 27 counts; melds are ``(meld_kind, tile_kind_int)``; void is a suit
index 0..2 or None.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from sichuan_env.core import tiles

KONG_KINDS = ("concealed_kong", "melded_kong", "promoted_kong", "postponed_kong")
MELD_KINDS = ("pung",) + KONG_KINDS
SITUATIONAL = ("Win after Kong", "Shoot after Kong", "Robbing the Kong", "Under the Sea")
ALL_FANS = (
    "Kong", "Root", "All Pungs", "Golden Wait", "Full Flush", "Seven Pairs",
    "Win after Kong", "Shoot after Kong", "Robbing the Kong", "Under the Sea",
)


# ---------------------------------------------------------------- input normalisation


def counts(spec) -> tuple[int, ...]:
    if isinstance(spec, str):
        return tuple(int(c) for c in tiles.parse_hand(spec))
    return tuple(int(c) for c in np.asarray(spec).reshape(27))


def norm_melds(melds) -> tuple[tuple[str, int], ...]:
    out = []
    for mk, t in melds:
        out.append((mk, tiles.parse_tile(t) if isinstance(t, str) else int(t)))
    return tuple(out)


def norm_void(void) -> int | None:
    if void is None or (isinstance(void, (int, np.integer)) and int(void) < 0):
        return None
    if isinstance(void, str):
        return "mps".index(void)
    return int(void)


def meld_tile_counts(melds) -> tuple[int, ...]:
    c = [0] * 27
    for mk, t in norm_melds(melds):
        c[t] += 4 if mk in KONG_KINDS else 3
    return tuple(c)


# ---------------------------------------------------------------- completeness


@cache
def _sets_only(c: tuple[int, ...]) -> bool:
    """Can the counts be split exactly into pungs and chows (chows inside one suit)?"""
    for k in range(27):
        if c[k]:
            break
    else:
        return True
    lst = list(c)
    if lst[k] >= 3:
        lst[k] -= 3
        if _sets_only(tuple(lst)):
            return True
        lst[k] += 3
    if k % 9 <= 6 and lst[k + 1] and lst[k + 2]:
        lst[k] -= 1
        lst[k + 1] -= 1
        lst[k + 2] -= 1
        if _sets_only(tuple(lst)):
            return True
    return False


def regular_splits(c: tuple[int, ...]):
    """Yield every split of ``c`` into (pair kind, list of sets); a set is ("pung", k) or
    ("chow", k) with k its lowest kind. Only for small hands (used for scoring)."""
    for p in range(27):
        if c[p] >= 2:
            rest = list(c)
            rest[p] -= 2
            for sets in _all_set_splits(tuple(rest)):
                yield p, sets


def _all_set_splits(c: tuple[int, ...]):
    for k in range(27):
        if c[k]:
            break
    else:
        yield []
        return
    lst = list(c)
    if lst[k] >= 3:
        lst[k] -= 3
        for tail in _all_set_splits(tuple(lst)):
            yield [("pung", k)] + tail
        lst[k] += 3
    if k % 9 <= 6 and lst[k + 1] and lst[k + 2]:
        lst[k] -= 1
        lst[k + 1] -= 1
        lst[k + 2] -= 1
        for tail in _all_set_splits(tuple(lst)):
            yield [("chow", k)] + tail


def has_void_tile(c, void) -> bool:
    return void is not None and any(c[void * 9 + r] for r in range(9))


def is_seven_pairs(c: tuple[int, ...]) -> bool:
    return sum(c) == 14 and all(x in (0, 2, 4) for x in c)


@cache
def _complete_counts(c: tuple[int, ...], n_melds: int) -> bool:
    if n_melds == 0 and is_seven_pairs(c):
        return True
    for p in range(27):
        if c[p] >= 2:
            rest = list(c)
            rest[p] -= 2
            if _sets_only(tuple(rest)):
                return True
    return False


def is_complete(concealed, melds=(), void=None) -> bool:
    c = counts(concealed)
    melds = norm_melds(melds)
    void = norm_void(void)
    assert sum(c) == 14 - 3 * len(melds)
    if has_void_tile(c, void):
        return False
    return _complete_counts(c, len(melds))


def waits(concealed, melds=(), void=None) -> list[str]:
    c = counts(concealed)
    melds = norm_melds(melds)
    void = norm_void(void)
    assert sum(c) == 13 - 3 * len(melds)
    mt = meld_tile_counts(melds)
    out = []
    for t in range(27):
        if c[t] + mt[t] >= 4:  # no copy left for us: not a wait (exhaustive wait)
            continue
        w = list(c)
        w[t] += 1
        if is_complete(tuple(w), melds, void):
            out.append(tiles.tile_str(t))
    return out


# ---------------------------------------------------------------- shanten (exact)


def _suit_sets():
    out = []
    for r in range(9):
        v = [0] * 9
        v[r] = 3
        out.append(tuple(v))
    for r in range(7):
        v = [0] * 9
        v[r] = v[r + 1] = v[r + 2] = 1
        out.append(tuple(v))
    return out


@cache
def _suit_tables():
    """tables[(j, p)] = array of every 9-count vector (counts <= 4) that is a union of
    exactly j sets and p pairs (p in 0, 1) of one suit; sp[u] = every vector made of u
    pairs (a kind twice at most: four identical tiles are two pairs)."""
    sets = _suit_sets()
    by_j = {0: {(0,) * 9}}
    for j in range(1, 5):
        nxt = set()
        for v in by_j[j - 1]:
            for s in sets:
                w = tuple(a + b for a, b in zip(v, s, strict=True))
                if max(w) <= 4:
                    nxt.add(w)
        by_j[j] = nxt
    tables = {}
    for j in range(5):
        tables[(j, 0)] = np.array(sorted(by_j[j]), dtype=np.int16).reshape(-1, 9)
        with_pair = set()
        for v in by_j[j]:
            for r in range(9):
                w = list(v)
                w[r] += 2
                if w[r] <= 4:
                    with_pair.add(tuple(w))
        tables[(j, 1)] = np.array(sorted(with_pair), dtype=np.int16).reshape(-1, 9)
    sp = {}
    for v in itertools.product((0, 2, 4), repeat=9):
        sp.setdefault(sum(v) // 2, []).append(v)
    sp_arr = {u: np.array(vs, dtype=np.int16) for u, vs in sp.items() if u <= 7}
    return tables, sp_arr


@cache
def _all_shapes():
    """Every table above stacked into one array, with the key and first row of each."""
    tables, sp = _suit_tables()
    keyed = list(tables.items()) + [(("sp", u), tab) for u, tab in sp.items()]
    keys = [k for k, _ in keyed]
    starts = np.cumsum([0] + [tab.shape[0] for _, tab in keyed[:-1]])
    return keys, starts, np.concatenate([tab for _, tab in keyed])


@cache
def _suit_costs(h: tuple[int, ...], room: tuple[int, ...]) -> dict:
    """For one suit: key -> min over the legal vectors W of that table (W <= room) of the
    tiles W lacks, sum(max(W - h, 0)); None when no vector of the table is legal."""
    keys, starts, allw = _all_shapes()
    cost = np.maximum(allw - np.array(h, np.int16), 0).sum(axis=1)
    cost[(allw > np.array(room, np.int16)).any(axis=1)] = 999
    best = np.minimum.reduceat(cost, starts)
    return {k: (None if b >= 999 else int(b)) for k, b in zip(keys, best, strict=True)}


def dist(concealed, melds=(), void=None) -> int:
    """Fewest tiles to bring in so that the standing tiles become a complete hand."""
    c = counts(concealed)
    melds = norm_melds(melds)
    void = norm_void(void)
    mt = meld_tile_counts(melds)
    suits = [s for s in range(3) if s != void]
    per_suit = []
    for s in suits:
        sl = slice(9 * s, 9 * s + 9)
        per_suit.append(_suit_costs(c[sl], tuple(4 - x for x in mt[sl])))
    return _combine(per_suit, 4 - len(melds), not melds)


def _combine(per_suit, need, seven_pairs_allowed) -> int:
    """Cheapest way to spread `need` sets and one pair (or seven pairs) over the suits."""
    best = None
    n = len(per_suit)
    shapes = []
    for js in itertools.product(range(need + 1), repeat=n):
        if sum(js) == need:
            for pair_suit in range(n):
                shapes.append([(js[i], int(i == pair_suit)) for i in range(n)])
    if seven_pairs_allowed:
        for us in itertools.product(range(8), repeat=n):
            if sum(us) == 7:
                shapes.append([("sp", u) for u in us])
    for shape in shapes:
        parts = [per_suit[i][key] for i, key in enumerate(shape)]
        if None not in parts and (best is None or sum(parts) < best):
            best = sum(parts)
    assert best is not None
    return best


def shanten(concealed, melds=(), void=None) -> int:
    """Exact shanten: fewest tile exchanges to become ready (13 - 3m tiles) or complete
    minus one (14 - 3m tiles). Counts the four-copies limit everywhere."""
    return dist(concealed, melds, void) - 1


# ---------------------------------------------------------------- scoring


def fans(concealed_with_win, melds, win_tile, void=None, *, self_drawn=False,
         after_kong=False, shoot_after_kong=False, robbing_kong=False,
         under_the_sea=False) -> dict[str, int]:
    """Fans of a complete hand (standing tiles *including* the winning tile)."""
    c = counts(concealed_with_win)
    melds = norm_melds(melds)
    void = norm_void(void)
    assert is_complete(c, melds, void)
    whole = [a + b for a, b in zip(c, meld_tile_counts(melds), strict=True)]
    n_kongs = sum(1 for mk, _ in melds if mk in KONG_KINDS)
    kong_kinds = {t for mk, t in melds if mk in KONG_KINDS}
    roots = sum(1 for k in range(27) if whole[k] == 4 and k not in kong_kinds)
    base = {}
    if n_kongs:
        base["Kong"] = n_kongs
    if roots:
        base["Root"] = roots
    if len({k // 9 for k in range(27) if whole[k]}) == 1:
        base["Full Flush"] = 2
    candidates = []
    if not melds and is_seven_pairs(c):
        candidates.append({"Seven Pairs": 2})
    for _pair, sets in regular_splits(c):
        f = {}
        if all(kind == "pung" for kind, _ in sets):  # declared melds are all pungs/kongs
            f["All Pungs"] = 1
            if len(melds) == 4:
                f["Golden Wait"] = 1
        candidates.append(f)
    best = max(candidates, key=lambda f: sum(f.values()))
    out = dict(base)
    out.update(best)
    for flag, name in ((after_kong, "Win after Kong"), (shoot_after_kong, "Shoot after Kong"),
                       (robbing_kong, "Robbing the Kong"), (under_the_sea, "Under the Sea")):
        if flag:
            out[name] = 1
    return out


def value(fan_dict: dict[str, int], cap: int = 3) -> int:
    return 2 ** min(sum(fan_dict.values()), cap)


def theoretical_max(concealed, melds=(), void=None, cap: int = 3) -> int:
    c = counts(concealed)
    best = 0
    for w in waits(c, melds, void):
        t = tiles.parse_tile(w)
        cw = list(c)
        cw[t] += 1
        best = max(best, value(fans(tuple(cw), melds, t, void), cap))
    return best


# ---------------------------------------------------------------- random hands for tests


def random_complete_hand(rnd, *, max_melds: int = 4):
    """A random legal complete hand: (concealed_with_win counts, melds, void).

    Biased towards few kinds so that roots, pungs, kongs and flushes turn up often."""
    while True:
        void = rnd.choice([None, 0, 1, 2])
        suits = [s for s in range(3) if s != void]
        if rnd.random() < 0.3:
            suits = [rnd.choice(suits)]
        lo = rnd.choice([0, 0, 2, 4])
        ranks = list(range(lo, min(9, lo + rnd.choice([3, 5, 9]))))
        kinds = [s * 9 + r for s in suits for r in ranks]
        whole = [0] * 27
        conc = [0] * 27
        n_melds = rnd.randint(0, max_melds)
        melds = []
        if n_melds == 0 and rnd.random() < 0.25:
            for _ in range(7):
                k = rnd.choice(kinds)
                conc[k] += 2
            if max(conc) <= 4:
                return tuple(conc), (), void
            continue
        for _ in range(n_melds):
            mk = rnd.choice(MELD_KINDS)
            melds.append((mk, rnd.choice(kinds)))
            whole[melds[-1][1]] += 4 if mk in KONG_KINDS else 3
        for _ in range(4 - n_melds):
            if rnd.random() < 0.4:
                k = rnd.choice(kinds)
                conc[k] += 3
            else:
                starts = [k for k in kinds if k % 9 <= 6]
                if not starts:
                    k = rnd.choice(kinds)
                    conc[k] += 3
                else:
                    k = rnd.choice(starts)
                    for d in range(3):
                        conc[k + d] += 1
        conc[rnd.choice(kinds)] += 2
        if all(a + b <= 4 for a, b in zip(conc, whole, strict=True)):
            return tuple(conc), tuple(melds), void


def random_flags(rnd, concealed_with_win, melds, win_tile) -> dict[str, bool]:
    """Random situational flags that are consistent with each other and with the hand."""
    has_kong = any(mk in KONG_KINDS for mk, _ in melds)
    held = concealed_with_win[win_tile] + meld_tile_counts(melds)[win_tile]
    f = dict(self_drawn=False, after_kong=False, shoot_after_kong=False,
             robbing_kong=False, under_the_sea=False)
    if rnd.random() < 0.5:
        f["self_drawn"] = True
        f["after_kong"] = has_kong and rnd.random() < 0.5
        f["under_the_sea"] = rnd.random() < 0.3
    else:
        how = rnd.choice(["plain", "shoot", "rob"])
        if how == "rob" and held == 1:
            f["robbing_kong"] = True
        else:
            f["shoot_after_kong"] = how == "shoot"
            f["under_the_sea"] = rnd.random() < 0.3
    return f


def random_standing_hand(rnd, *, n_tiles_extra: int = 0):
    """A random legal set of standing tiles with melds: 13 - 3m tiles (+ n_tiles_extra),
    often one or two tiles away from a complete hand."""
    conc, melds, void = random_complete_hand(rnd)
    conc = list(conc)
    whole_melds = meld_tile_counts(melds)
    for _ in range(rnd.choice([0, 0, 1, 1, 2, 3, 6])):
        # exchange a tile for a random other legal one (void tiles included)
        held = [k for k in range(27) if conc[k]]
        conc[rnd.choice(held)] -= 1
        free = [k for k in range(27) if conc[k] + whole_melds[k] < 4]
        conc[rnd.choice(free)] += 1
    held = [k for k in range(27) if conc[k]]
    if n_tiles_extra == 0:
        conc[rnd.choice(held)] -= 1
    return tuple(conc), melds, void

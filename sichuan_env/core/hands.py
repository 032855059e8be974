"""Hand facts: complete?, waits, shanten, fans and value, theoretical maximum.

The friendly API over the compiled hand functions of :mod:`sichuan_env.core.hand_kernels`,
which hold the one implementation of the hand rules. Two layers:

* **Batched** functions (``batch_*``) take arrays with a leading batch axis and run the
  kernels over the rows (one compiled call per batch). Inputs: ``concealed`` (B, 27)
  tile counts; ``meld_kind`` (B, 27) per tile kind, 0 = no meld, 1 = pung, 2 = kong (any
  kind of kong); ``void`` (B,) forbidden suit 0/1/2 (m/p/s) or -1 for none (all taken
  as int8). They check the shapes, and assume valid contents (the right tile counts, at
  most four copies) without checking them.
* The **single-hand** API (:func:`is_complete`, :func:`waits`, :func:`shanten`,
  :func:`score`, :func:`theoretical_max`) takes tile strings or count vectors, checks
  everything and raises ``ValueError`` saying what is wrong, then calls the batched
  functions.

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

Command line: ``python -m sichuan_env.core.hands "11123m456p789p5s" --void s
--melds "pung 5m"`` prints shanten, waits, fans and values under both presets.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sichuan_env.core import hand_kernels as hk
from sichuan_env.core import tiles
from sichuan_env.core.hand_kernels import FAN_NAMES, hand_tables, shanten_tables
from sichuan_env.core.rules import DEFAULT_RULES, Rules, get_rules
from sichuan_env.core.vocab import MELD_KIND_OF_CODE, MELD_NAMES
from sichuan_env.core.vocab import MELD_KIND_TILES as _MELD_COPIES

SITUATIONAL_FANS = FAN_NAMES[6:]

MELD_KINDS = MELD_NAMES[1:]
# meld name -> the tables' meld kind (1 pung, 2 kong); _MELD_COPIES: tiles of a meld kind
_MELD_CODE = {name: int(MELD_KIND_OF_CODE[code]) for code, name in enumerate(MELD_NAMES)
              if code}

_NONE = -1

# ------------------------------------------------------------------ batched


def _counts_rows(x: Any, what: str) -> np.ndarray:
    """``x`` as (B, 27) C-contiguous int8, or a ValueError naming ``what``."""
    a = np.ascontiguousarray(x, dtype=np.int8)
    if a.ndim != 2 or a.shape[1] != 27:
        raise ValueError(f"{what} must have shape (B, 27), got {a.shape}")
    return a


def _per_row(x: Any, b: int, dtype: type, what: str) -> np.ndarray:
    """``x`` (a scalar or (B,)) as (B,) C-contiguous ``dtype``, or a ValueError."""
    a = np.asarray(x, dtype=dtype)
    if a.ndim > 1 or (a.ndim == 1 and a.shape[0] != b):
        raise ValueError(f"{what} must be a scalar or have shape ({b},), got {a.shape}")
    return np.ascontiguousarray(np.broadcast_to(a, (b,)))


def batch_is_complete(concealed: np.ndarray, n_melds: np.ndarray, void: np.ndarray) -> np.ndarray:
    """(B, 27) concealed counts incl. the last tile, (B,) meld counts, (B,) void
    (-1 none) -> (B,) bool: the hand is a winning hand (regular or seven pairs)."""
    c = _counts_rows(concealed, "concealed")
    b = c.shape[0]
    t = hand_tables()
    out = np.empty(b, dtype=bool)
    hk.is_complete_rows(t.flags3, t.complete, c, _per_row(n_melds, b, np.int64, "n_melds"),
                        _per_row(void, b, np.int8, "void"), out)
    return out


def batch_wait_mask(concealed: np.ndarray, meld_kind: np.ndarray, void: np.ndarray) -> np.ndarray:
    """(B, 27) standing tiles (13 - 3 * melds), (B, 27) meld kind, (B,) void ->
    (B, 27) bool: the kinds that complete the hand, exhausted kinds left out."""
    c = _counts_rows(concealed, "concealed")
    out = np.empty(c.shape, dtype=bool)
    hk.wait_mask_rows(hand_tables(), c, _counts_rows(meld_kind, "meld_kind"),
                      _per_row(void, c.shape[0], np.int8, "void"), out)
    return out


def batch_shanten(concealed: np.ndarray, meld_kind: np.ndarray, void: np.ndarray) -> np.ndarray:
    """(B, 27) concealed counts (13 - 3n or 14 - 3n tiles), (B, 27) meld kind, (B,) void
    -> (B,) int8 shanten: -1 complete, 0 ready (a real wait exists), 1, 2, ...

    Exact (the four-copies limit included). Suits holding melds are looked up in the
    segment tables of :func:`sichuan_env.core.tables.build_meld_tables`."""
    c = _counts_rows(concealed, "concealed")
    out = np.empty(c.shape[0], dtype=np.int8)
    hk.shanten_rows(shanten_tables(), c, _counts_rows(meld_kind, "meld_kind"),
                    _per_row(void, c.shape[0], np.int8, "void"), out)
    return out


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
    be complete (not checked). ``win_tile``, ``void`` and ``self_drawn`` do not change
    any fan (Golden Wait needs only four melds; Win after Kong is its own flag) and are
    accepted for the callers' convenience. The flags are (B,) bool or scalars."""
    c = _counts_rows(concealed_with_win, "concealed_with_win")
    b = c.shape[0]
    out = np.empty((b, len(FAN_NAMES)), dtype=np.int8)
    hk.fans_rows(c, _counts_rows(meld_kind, "meld_kind"),
                 _per_row(after_kong, b, np.bool_, "after_kong"),
                 _per_row(shoot_after_kong, b, np.bool_, "shoot_after_kong"),
                 _per_row(robbing_kong, b, np.bool_, "robbing_kong"),
                 _per_row(under_the_sea, b, np.bool_, "under_the_sea"), out)
    return out


def batch_value(fans: np.ndarray, fan_cap: int) -> np.ndarray:
    """(B, 10) fans -> (B,) int32 points ``2 ** min(total, fan_cap)``."""
    f = np.ascontiguousarray(fans, dtype=np.int8)
    if f.ndim != 2:
        raise ValueError(f"fans must have shape (B, {len(FAN_NAMES)}), got {f.shape}")
    out = np.empty(f.shape[0], dtype=np.int32)
    hk.value_rows(f, int(fan_cap), out)
    return out


def batch_theoretical_max(
    concealed: np.ndarray, meld_kind: np.ndarray, void: np.ndarray, fan_cap: int
) -> np.ndarray:
    """(B, 27) standing tiles, (B, 27) meld kind, (B,) void -> (B,) int32: the highest
    value over the waits, without the situational fans; 0 when not ready."""
    c = _counts_rows(concealed, "concealed")
    out = np.empty(c.shape[0], dtype=np.int32)
    hk.theoretical_max_rows(hand_tables(), c, _counts_rows(meld_kind, "meld_kind"),
                            _per_row(void, c.shape[0], np.int8, "void"), int(fan_cap), out)
    return out


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
    return bool(batch_is_complete(c[None], n, v)[0])


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
        prog="python -m sichuan_env.core.hands",
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

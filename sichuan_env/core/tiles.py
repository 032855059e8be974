"""Tile kinds, text notation and glyphs.

A tile is an integer kind ``0..26``: ``kind = suit * 9 + (rank - 1)`` with suits
``m`` (characters, wan) = 0, ``p`` (dots, tong) = 1, ``s`` (bamboo, tiao) = 2.
A hand is a vector of 27 counts, each 0..4.

Accepted text forms (all parse to the same count vector):

* compact: ``"123m456p77s"`` -- digits followed by their suit letter;
* spaced: ``"1m 2m 3m"`` (commas also separate);
* the textbook's letter-first form: ``"C5 D5 B5"`` (C = characters, D = dots, B = bamboo).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np

# defined in sichuan_env.core.vocab, kept importable from here
from sichuan_env.core.vocab import COPIES, N_KINDS, N_RANKS, N_SUITS, N_TILES, SUITS  # noqa: F401

SUIT_NAMES = ("characters", "dots", "bamboo")
_SEED_SUIT_LETTERS = {"C": "m", "D": "p", "B": "s"}

_GLYPH_BASE = {"m": 0x1F007, "s": 0x1F010, "p": 0x1F019}  # Unicode mahjong block

TileSpec = str | Sequence[int] | np.ndarray


_SUIT_LETTERS = tuple(SUITS)  # whole letters: "" or "mp" are not suits


def _is_int(x: object) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _check_kind(k: object) -> int:
    if not _is_int(k):
        raise ValueError(f"a tile kind must be an integer 0..26, got {k!r}")
    k = int(k)  # type: ignore[arg-type]
    if not 0 <= k < N_KINDS:
        raise ValueError(f"tile kind {k} out of range 0..26")
    return k


def kind(rank: int, suit: str) -> int:
    """Kind index of a rank (1..9) and suit letter (``m``, ``p``, ``s``)."""
    if not isinstance(suit, str) or suit not in _SUIT_LETTERS:
        raise ValueError(f"unknown suit {suit!r}: expected one of 'm', 'p', 's'")
    if not _is_int(rank) or not 1 <= rank <= 9:
        raise ValueError(f"rank {rank!r} out of range 1..9")
    return SUITS.index(suit) * 9 + int(rank) - 1


def suit_of(k: int) -> int:
    """Suit index 0..2 (m, p, s) of a tile kind 0..26."""
    return _check_kind(k) // 9


def rank_of(k: int) -> int:
    """Rank 1..9 of a tile kind 0..26."""
    return _check_kind(k) % 9 + 1


def tile_str(k: int) -> str:
    """``5`` -> ``"6m"``."""
    k = _check_kind(k)
    return f"{k % 9 + 1}{SUITS[k // 9]}"


def suit_index(suit: str) -> int:
    """``"m"`` -> 0; also accepts the textbook's letters ``C``, ``D``, ``B``."""
    s = _SEED_SUIT_LETTERS.get(suit, suit) if isinstance(suit, str) else suit
    if s not in _SUIT_LETTERS:
        raise ValueError(f"unknown suit {suit!r}: expected one of 'm', 'p', 's'")
    return SUITS.index(s)


_TOKEN = re.compile(r"\s*(?:([1-9]+)([a-zA-Z])|([A-Za-z])([1-9]))\s*,?")


def parse_kinds(text: str) -> list[int]:
    """Parse a tile string into a list of kinds, in the order written.

    Raises ``ValueError`` naming the position of a malformed part or an unknown suit.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected a tile string, got {type(text).__name__}")
    kinds: list[int] = []
    pos = 0
    text_stripped = text.rstrip()
    while pos < len(text_stripped):
        m = _TOKEN.match(text_stripped, pos)
        if m is None or m.end() == pos:
            raise ValueError(
                f"malformed tile string {text!r} at position {pos}: "
                f"unexpected {text_stripped[pos:pos + 8]!r}"
            )
        digits, suit_letter, seed_letter, seed_digit = m.groups()
        if digits is not None:
            if suit_letter not in SUITS:
                raise ValueError(
                    f"unknown suit {suit_letter!r} in tile string {text!r} at position "
                    f"{m.start(2)}: expected 'm', 'p' or 's'"
                )
            kinds.extend(kind(int(d), suit_letter) for d in digits)
        else:
            if seed_letter not in _SEED_SUIT_LETTERS:
                raise ValueError(
                    f"unknown suit {seed_letter!r} in tile string {text!r} at position "
                    f"{m.start(3)}: expected C, D or B before the rank"
                )
            kinds.append(kind(int(seed_digit), _SEED_SUIT_LETTERS[seed_letter]))
        pos = m.end()
    return kinds


def parse_tile(text: str) -> int:
    """Parse exactly one tile (``"5m"``, ``"C5"``) into its kind."""
    kinds = parse_kinds(text)
    if len(kinds) != 1:
        raise ValueError(f"expected exactly one tile, got {len(kinds)} in {text!r}")
    return kinds[0]


def counts_from_kinds(kinds: Iterable[int], *, source: str | None = None) -> np.ndarray:
    counts = np.zeros(N_KINDS, dtype=np.int8)
    for k in kinds:
        k = _check_kind(k)
        counts[k] += 1
        if counts[k] > COPIES:
            where = f" in {source!r}" if source is not None else ""
            raise ValueError(f"more than four copies of {tile_str(k)}{where}")
    return counts


def parse_hand(text: str) -> np.ndarray:
    """Tile string -> 27-count vector (int8). Raises ``ValueError`` on a fifth copy."""
    return counts_from_kinds(parse_kinds(text), source=text)


def as_counts(spec: TileSpec) -> np.ndarray:
    """Accept a tile string or a 27-count vector; return a validated int8 copy."""
    if isinstance(spec, str):
        return parse_hand(spec)
    arr = np.asarray(spec)
    if arr.shape != (N_KINDS,):
        raise ValueError(f"a hand must be a tile string or 27 counts, got shape {arr.shape}")
    if arr.dtype.kind not in "iub":
        raise ValueError(f"tile counts must be integers, got dtype {arr.dtype}")
    if (arr < 0).any():
        raise ValueError(f"negative tile count for {tile_str(int(np.argmin(arr)))}")
    if (arr > COPIES).any():
        raise ValueError(f"more than four copies of {tile_str(int(np.argmax(arr)))}")
    return arr.astype(np.int8)


def format_hand(counts: Sequence[int] | np.ndarray) -> str:
    """27 counts -> compact string ``"123m456p77s"`` (empty string for no tiles)."""
    counts = as_counts(np.asarray(counts))
    parts = []
    for s, letter in enumerate(SUITS):
        digits = "".join(str(r + 1) * int(counts[s * 9 + r]) for r in range(9))
        if digits:
            parts.append(digits + letter)
    return "".join(parts)


def glyph(k: int) -> str:
    """Unicode mahjong glyph of a tile kind (U+1F007..U+1F021)."""
    k = _check_kind(k)
    return chr(_GLYPH_BASE[SUITS[k // 9]] + k % 9)


def glyphs(counts: Sequence[int] | np.ndarray) -> str:
    counts = as_counts(np.asarray(counts))
    return "".join(glyph(k) * int(counts[k]) for k in range(N_KINDS))


def full_set() -> np.ndarray:
    """All 108 tiles as kinds, sorted."""
    return np.repeat(np.arange(N_KINDS, dtype=np.int8), COPIES)

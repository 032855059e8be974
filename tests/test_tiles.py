"""Tile notation, kinds, count vectors and glyphs (docs/rules.md section 1)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sichuan_env.core import tiles

count_vectors = arrays(np.int8, (27,), elements=st.integers(0, 4))


# ---------------------------------------------------------------- kinds


def test_kind_index_formula_for_all_27():
    seen = set()
    for s, letter in enumerate("mps"):
        for r in range(1, 10):
            k = tiles.kind(r, letter)
            assert k == s * 9 + r - 1
            assert tiles.tile_str(k) == f"{r}{letter}"
            assert tiles.parse_tile(f"{r}{letter}") == k
            assert tiles.suit_of(k) == s and tiles.rank_of(k) == r
            seen.add(k)
    assert seen == set(range(27))
    assert tiles.N_KINDS == 27 and tiles.N_TILES == 108


@pytest.mark.parametrize("text, k", [("1m", 0), ("9m", 8), ("1p", 9), ("5p", 13), ("9s", 26),
                                     ("C1", 0), ("D5", 13), ("B9", 26), ("B1", 18)])
def test_parse_tile_both_notations(text, k):
    assert tiles.parse_tile(text) == k


def test_suit_index_accepts_both_letters():
    assert [tiles.suit_index(x) for x in "mps"] == [0, 1, 2]
    assert [tiles.suit_index(x) for x in "CDB"] == [0, 1, 2]
    with pytest.raises(ValueError, match="unknown suit 'z'"):
        tiles.suit_index("z")


@pytest.mark.parametrize("rank, suit, words", [(0, "m", "rank 0 out of range"),
                                               (10, "p", "rank 10 out of range"),
                                               (3, "x", "unknown suit 'x'"),
                                               (3, "C", "unknown suit 'C'")])
def test_kind_rejects_bad_rank_or_suit(rank, suit, words):
    with pytest.raises(ValueError, match=words):
        tiles.kind(rank, suit)


@pytest.mark.parametrize("k", [-1, 27, 100])
def test_tile_str_rejects_out_of_range(k):
    with pytest.raises(ValueError, match=f"tile kind {k} out of range"):
        tiles.tile_str(k)


@pytest.mark.parametrize("suit", ["", "mp", "ps", "mps", "M", None, 0])
def test_suit_must_be_one_whole_letter(suit):
    # "" and "mp" are substrings of "mps" but not suits: they used to read as m and p
    with pytest.raises(ValueError, match="unknown suit"):
        tiles.suit_index(suit)
    with pytest.raises(ValueError, match="unknown suit"):
        tiles.kind(1, suit)


@pytest.mark.parametrize("rank", [1.5, 2.0, True, "3", None])
def test_kind_rejects_a_rank_that_is_not_an_integer(rank):
    with pytest.raises(ValueError, match="out of range 1..9"):
        tiles.kind(rank, "m")


@pytest.mark.parametrize("k", [2.7, 5.0, True, "5", None])
@pytest.mark.parametrize("fn", [tiles.tile_str, tiles.suit_of, tiles.rank_of, tiles.glyph])
def test_kind_functions_reject_what_is_not_an_integer(fn, k):
    # 2.7 used to become 3m, True 2m, "5" 6m
    with pytest.raises(ValueError, match="must be an integer 0..26"):
        fn(k)


@pytest.mark.parametrize("k", [-1, 27])
@pytest.mark.parametrize("fn", [tiles.suit_of, tiles.rank_of, tiles.glyph])
def test_kind_functions_reject_out_of_range(fn, k):
    # glyph(-1) used to draw 9s
    with pytest.raises(ValueError, match=f"tile kind {k} out of range"):
        fn(k)


def test_kind_functions_accept_numpy_integers():
    for k in range(27):
        for x in (np.int8(k), np.int64(k), np.uint8(k)):
            assert tiles.tile_str(x) == tiles.tile_str(k)
            assert (tiles.suit_of(x), tiles.rank_of(x)) == (k // 9, k % 9 + 1)
            assert tiles.glyph(x) == tiles.glyph(k)


def test_counts_from_kinds_rejects_non_integers():
    with pytest.raises(ValueError, match="must be an integer"):
        tiles.counts_from_kinds([0, 1.5])


# ---------------------------------------------------------------- hand notations


def test_every_notation_parses_to_the_same_counts():
    expected = np.zeros(27, np.int8)
    for k in (0, 1, 2, 13, 13, 26):
        expected[k] += 1
    forms = ["123m55p9s", "1m 2m 3m 5p 5p 9s", "1m,2m,3m,5p,5p,9s", "1m, 2m, 3m, 5p, 5p, 9s",
             "C1 C2 C3 D5 D5 B9", "C1,C2,C3,D5,D5,B9", "9s55p321m", "12m3m5p5p9s",
             "  123m 55p 9s  ", "C1 2m 3m D5 5p B9"]
    for text in forms:
        got = tiles.parse_hand(text)
        assert got.dtype == np.int8 and got.shape == (27,), text
        np.testing.assert_array_equal(got, expected, err_msg=text)


def test_parse_kinds_keeps_written_order():
    assert tiles.parse_kinds("3m1p C2 B9") == [2, 9, 1, 26]
    assert tiles.parse_kinds("") == []
    assert tiles.parse_hand("").sum() == 0


def test_format_hand_is_canonical_and_sorted():
    assert tiles.format_hand(tiles.parse_hand("B9 C1 D5 5p 3m 2m")) == "123m55p9s"
    assert tiles.format_hand(np.zeros(27, np.int8)) == ""
    assert tiles.format_hand(tiles.parse_hand("1111m9999s")) == "1111m9999s"


@settings(max_examples=200, deadline=None)
@given(count_vectors)
def test_round_trip_format_then_parse(c):
    text = tiles.format_hand(c)
    np.testing.assert_array_equal(tiles.parse_hand(text), c)
    # every other notation of the same tiles parses back too
    kinds = [k for k in range(27) for _ in range(int(c[k]))]
    spaced = " ".join(tiles.tile_str(k) for k in kinds)
    seed = " ".join("CDB"[k // 9] + str(k % 9 + 1) for k in kinds)
    np.testing.assert_array_equal(tiles.parse_hand(spaced), c)
    np.testing.assert_array_equal(tiles.parse_hand(seed), c)
    assert tiles.format_hand(tiles.parse_hand(spaced)) == text
    assert sorted(tiles.parse_kinds(text)) == kinds


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 26), max_size=40), st.randoms(use_true_random=False))
def test_shuffled_tiles_parse_to_their_counts(kinds, rnd):
    c = np.bincount(np.array(kinds, dtype=np.int64), minlength=27)
    rnd.shuffle(kinds)
    text = " ".join(tiles.tile_str(k) for k in kinds)
    if c.max(initial=0) > 4:
        with pytest.raises(ValueError, match="more than four copies"):
            tiles.parse_hand(text)
    else:
        np.testing.assert_array_equal(tiles.parse_hand(text), c)
        assert tiles.parse_kinds(text) == kinds


def test_as_counts_accepts_strings_and_vectors():
    v = tiles.as_counts("19m")
    assert v.dtype == np.int8 and v[0] == 1 and v[8] == 1 and v.sum() == 2
    w = tiles.as_counts(list(v.astype(int)))
    np.testing.assert_array_equal(v, w)
    assert w.dtype == np.int8
    w[0] = 3
    assert v[0] == 1  # a copy, not a view


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "bad, pattern",
    [
        ("11111m", r"more than four copies of 1m"),
        ("1m 1m 1m 1m 1m", r"more than four copies of 1m"),
        ("D9 D9 D9 D9 9p", r"more than four copies of 9p"),
        ("123x", r"unknown suit 'x'.*position 3"),
        ("55p 7z", r"unknown suit 'z'.*position 5"),
        ("E5", r"unknown suit 'E'.*position 0"),
        ("12", r"position 0"),
        ("1m ?", r"position 3"),
        ("C0", r"position 0"),
        ("0m", r"position 0"),
        ("1m2p#", r"position 4"),
        ("5m 5", r"position 3"),
    ],
)
def test_malformed_strings_name_what_and_where(bad, pattern):
    with pytest.raises(ValueError, match=pattern):
        tiles.parse_hand(bad)


@pytest.mark.parametrize("bad", ["", "1m2m", "5m 5p", "C1 C2"])
def test_parse_tile_needs_exactly_one(bad):
    with pytest.raises(ValueError, match="expected exactly one tile"):
        tiles.parse_tile(bad)


def test_parse_kinds_rejects_non_strings():
    with pytest.raises(TypeError):
        tiles.parse_kinds(123)


@pytest.mark.parametrize(
    "vec, pattern",
    [
        (np.zeros(26, np.int8), r"shape \(26,\)"),
        (np.zeros((3, 9), np.int8), r"shape \(3, 9\)"),
        (np.full(27, 0.5), r"integers"),
        (np.array([0] * 5 + [-1] + [0] * 21), r"negative tile count for 6m"),
        (np.array([0] * 20 + [5] + [0] * 6), r"more than four copies of 3s"),
    ],
)
def test_as_counts_errors(vec, pattern):
    with pytest.raises(ValueError, match=pattern):
        tiles.as_counts(vec)


# ---------------------------------------------------------------- glyphs


def test_glyphs_distinct_and_in_mahjong_block():
    gl = [tiles.glyph(k) for k in range(27)]
    assert len(set(gl)) == 27
    for g in gl:
        assert len(g) == 1 and 0x1F000 <= ord(g) <= 0x1F02B
    # characters 1F007..1F00F, bamboo 1F010..1F018, dots 1F019..1F021
    assert [ord(g) for g in gl[:9]] == list(range(0x1F007, 0x1F010))
    assert [ord(g) for g in gl[9:18]] == list(range(0x1F019, 0x1F022))
    assert [ord(g) for g in gl[18:]] == list(range(0x1F010, 0x1F019))


@settings(max_examples=50, deadline=None)
@given(count_vectors)
def test_glyphs_of_a_hand_one_per_tile(c):
    g = tiles.glyphs(c)
    assert len(g) == int(c.sum())
    for k in range(27):
        assert g.count(tiles.glyph(k)) == c[k]


def test_full_set():
    fs = tiles.full_set()
    assert fs.shape == (108,)
    np.testing.assert_array_equal(np.bincount(fs, minlength=27), np.full(27, 4))

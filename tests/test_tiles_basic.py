import numpy as np
import pytest

from sichuan_env.core import tiles


def test_three_notations_agree():
    a = tiles.parse_hand("123m456p77s")
    b = tiles.parse_hand("1m 2m 3m 4p 5p 6p 7s 7s")
    c = tiles.parse_hand("C1 C2 C3 D4 D5 D6 B7 B7")
    assert (a == b).all() and (b == c).all()
    assert a.sum() == 8 and a[tiles.kind(7, "s")] == 2


def test_round_trip_compact():
    assert tiles.format_hand(tiles.parse_hand("77s123m654p")) == "123m456p77s"


@pytest.mark.parametrize(
    "bad, words",
    [("11111m", "more than four copies of 1m"), ("123x", "unknown suit 'x'"), ("12", "position 0"),
     ("1m ?", "position 3"), ("C0", "position 0"), ("E5", "unknown suit 'E'")],
)
def test_malformed_strings_say_what_and_where(bad, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        tiles.parse_hand(bad)


def test_glyphs():
    assert tiles.glyph(tiles.kind(1, "m")) == "\U0001f007"
    assert tiles.glyph(tiles.kind(9, "s")) == "\U0001f018"
    assert tiles.glyph(tiles.kind(1, "p")) == "\U0001f019"
    assert tiles.full_set().shape == (108,) and np.bincount(tiles.full_set()).max() == 4

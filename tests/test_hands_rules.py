"""Hand rules against the rule book: docs/rules.md sections 5, 6, 8 and 11, and the textbook
(lesson 6 "Scoring examples", Table 9 "Compatibility of valuable combinations").

The textbook's tile pictures are missing from its text, so the example hands below are built
from the descriptions; each comment says what the hand is meant to show.
"""

import itertools
import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sichuan_env.core import hands, tiles
from sichuan_env.core.rules import get_rules

from support import reference as ref

MIL = get_rules("mil")
MS = get_rules("mahjongsoft")
NO_FLAGS = dict(self_drawn=False, after_kong=False, shoot_after_kong=False,
                robbing_kong=False, under_the_sea=False)


def score(concealed, melds, win, void, **kw):
    return hands.score(concealed, melds, win, void, **kw)


def assert_score(s, fans, rules=MIL):
    assert dict(s.fans) == fans
    assert s.fan_total == sum(fans.values())
    assert s.value == 2 ** min(sum(fans.values()), rules.fan_cap)


# ====================================================================== section 11 waits
# (fragment, waits). The fragment is completed with sets (and a pair when the fragment has
# two tiles) of another suit. A fragment in one suit with 3k+1 or 3k+2 (not a pair) tiles
# cannot be complete on its own, so the winning tile must fall in the fragment's suit and
# the waits are the fragment's own, whatever complete sets the other suit holds.
WAIT_ROWS = [
    ("4m", ["4m"]),
    ("2m4m", ["3m"]),
    ("1m2m", ["3m"]),
    ("2m3m", ["1m", "4m"]),
    ("1m2m3m4m", ["1m", "4m"]),
    ("3m3m4m5m", ["3m", "6m"]),
    ("2p2p2p3p", ["1p", "3p", "4p"]),
    ("2p3p4p5p6p", ["1p", "4p", "7p"]),
    ("1p2p3p4p5p6p7p", ["1p", "4p", "7p"]),
    ("2p2p2p3p4p4p4p", ["1p", "2p", "3p", "4p", "5p"]),
]

# complements: (sets of 3 tiles, pair) by rank, written without their suit letter
CHOW_FILL = (["123", "456", "789", "789"], "55")
PUNG_FILL = (["111", "555", "999", "777"], "33")


def _complete_fragment(fragment, suit, fill):
    n = len(tiles.parse_kinds(fragment))
    sets, pair = fill
    parts = [fragment]
    if n % 3 == 2:
        parts.append(pair + suit)
    parts += [s + suit for s in sets[: (13 - n) // 3]]
    hand = "".join(parts)
    assert tiles.parse_hand(hand).sum() == 13
    return hand


WAIT_CASES = []
for frag, w in WAIT_ROWS:
    fsuit = frag[-1]
    others = [s for s in "mps" if s != fsuit]
    for other, fill in itertools.product(others, (CHOW_FILL, PUNG_FILL)):
        void = next(s for s in "mps" if s not in (fsuit, other))
        WAIT_CASES.append((_complete_fragment(frag, other, fill), void, w))
# the two-suit rows: the void must be dots, so the extra sets are far-away characters or
# bamboo that no winning tile can join (7-9 never meet a 2 in a chow)
WAIT_CASES += [
    ("2m2m2s2s" + "789m789s789s", "p", ["2m", "2s"]),
    ("2m2m2s2s" + "777m888m999m", "p", ["2m", "2s"]),
    ("2s2s2s3s4s2m2m" + "789m789m", "p", ["2m", "2s", "5s"]),
    ("2s2s2s3s4s2m2m" + "999m777m", "p", ["2m", "2s", "5s"]),
]


@pytest.mark.parametrize("hand, void, expected", WAIT_CASES)
def test_section_11_waits(hand, void, expected):
    assert hands.waits(hand, (), void) == sorted(expected, key=tiles.parse_tile)
    assert hands.shanten(hand, (), void) == 0
    for t in range(27):
        h14 = tiles.parse_hand(hand)
        if h14[t] == 4:
            continue
        h14[t] += 1
        assert hands.is_complete(h14, (), void) == (tiles.tile_str(t) in expected)


def test_waits_are_sorted_tile_strings():
    w = hands.waits("2223444p123456s", (), "m")
    assert w == ["1p", "2p", "3p", "4p", "5p"]
    assert all(isinstance(x, str) for x in w)
    w = hands.waits("12m55p123789p789s", (), None)
    assert w == ["3m"]
    # sorted by kind, characters before dots before bamboo
    assert hands.waits("2m2m2s2s789m789s789s", (), "p") == ["2m", "2s"]


THREE_PUNGS = [("pung", "1s"), ("pung", "5s"), ("pung", "9s")]


def test_exhaustive_wait_four_identical_standing():
    # the textbook, lesson 5, example 1: three sets declared, four identical standing
    # tiles: NOT ready
    assert hands.waits("8p8p8p8p", THREE_PUNGS, "m") == []
    assert hands.shanten("8p8p8p8p", THREE_PUNGS, "m") == 1
    assert hands.theoretical_max("8p8p8p8p", THREE_PUNGS, "m") == 0
    assert hands.theoretical_max("8p8p8p8p", THREE_PUNGS, "m", rules=MS) == 0


def test_exhaustive_wait_two_kinds_all_held():
    # the textbook, lesson 5, example 2: one set declared; the hand "waits" on 1p and 4p
    # but holds all their copies, so it is not ready
    melds = [("pung", "9s")]
    assert hands.waits("1111p23p4444p", melds, "m") == []
    assert hands.shanten("1111p23p4444p", melds, "m") == 1
    assert hands.theoretical_max("1111p23p4444p", melds, "m") == 0
    # with copies of 1p and 4p left, the same shape waits on them
    assert hands.waits("111p23p444p55s", melds, "m") == ["1p", "4p", "5s"]


def test_exhaustive_wait_counts_the_melds():
    # the fourth 5p is in our own pung: 5p is no wait
    assert hands.waits("123p789p234s5p", [("pung", "5p")], "m") == []
    assert hands.waits("123p789p234s5p", [("pung", "6p")], "m") == ["5p"]
    # a kong of 3s: a wait on 3s is impossible, the 6s wait stays
    assert hands.waits("45s123p77p", [("concealed_kong", "3s"), ("pung", "5p")], "m") == ["6s"]


# ====================================================================== single fans
# Forbidden suit is characters (as in the textbook, lesson 6).


def test_no_fan_hand():
    assert_score(score("123p456p789p234s5s", (), "5s", "m"), {})


@pytest.mark.parametrize("kong", ["concealed_kong", "melded_kong", "promoted_kong",
                                  "postponed_kong"])
def test_kong_alone_every_kind_of_kong(kong):
    assert_score(score("123p456p789p5s", [(kong, "9s")], "5s", "m"), {"Kong": 1})


def test_pung_is_not_a_kong():
    assert_score(score("123p456p789p5s", [("pung", "9s")], "5s", "m"), {})


def test_root_alone():
    # four 1p spread over a pung and a chow
    assert_score(score("111p123p456p789s5s", (), "5s", "m"), {"Root": 1})


def test_root_made_by_the_winning_tile():
    assert_score(score("11p123p456p789s55s", (), "1p", "m"), {"Root": 1})


def test_root_across_a_declared_pung_and_a_chow():
    # docs/rules.md 6: four identical tiles spread over two or more sets; a declared pung of 5p
    # and a 456p chow in hand is such a group
    assert_score(score("456p123p789s1s", [("pung", "5p")], "1s", "m"), {"Root": 1})


def test_root_over_pair_and_chow():
    assert_score(score("22p123p234p789s55s", (), "5s", "m"), {"Root": 1})


def test_all_pungs_alone():
    assert_score(score("111p555p999p222s3s", (), "3s", "m"), {"All Pungs": 1})
    assert_score(score("999p222s3s", [("pung", "1p"), ("pung", "5p")], "3s", "m"),
                 {"All Pungs": 1})


def test_golden_wait_with_all_pungs():
    melds = [("pung", "1p"), ("pung", "5p"), ("pung", "9p"), ("pung", "2s")]
    assert_score(score("3s", melds, "3s", "m"), {"All Pungs": 1, "Golden Wait": 1})
    assert_score(score("3s", melds, "3s", "m", self_drawn=True),
                 {"All Pungs": 1, "Golden Wait": 1})


def test_full_flush_alone():
    assert_score(score("123p456p789p234p5p", (), "5p", "m"), {"Full Flush": 2})


def test_full_flush_counts_the_melds():
    # the melded bamboo pung breaks the flush
    assert_score(score("123p456p777p5p", [("pung", "9s")], "5p", "m"), {})
    assert_score(score("123p456p777p5p", [("pung", "9p")], "5p", "m"), {"Full Flush": 2})


def test_seven_pairs_alone():
    assert_score(score("11p33p55p77p22s44s6s", (), "6s", "m"), {"Seven Pairs": 2})


def test_win_after_kong():
    # the textbook, lesson 6: after a kong on B8 the replacement D7 completes the hand
    s = score("123p456p68p55s", [("concealed_kong", "8s")], "7p", "m", self_drawn=True,
              after_kong=True)
    assert_score(s, {"Kong": 1, "Win after Kong": 1})


def test_robbing_the_kong():
    # the textbook, lesson 6: another player promotes a pung of D8; that tile completes the hand
    s = score("123p456p79p55s234s", (), "8p", "m", robbing_kong=True)
    assert_score(s, {"Robbing the Kong": 1})


def test_shoot_after_kong():
    s = score("123p456p789p234s5s", (), "5s", "m", shoot_after_kong=True)
    assert_score(s, {"Shoot after Kong": 1})


@pytest.mark.parametrize("self_drawn", [True, False])
def test_under_the_sea(self_drawn):
    s = score("123p456p789p23s99s", (), "4s", "m", self_drawn=self_drawn,
              under_the_sea=True)
    assert_score(s, {"Under the Sea": 1})


def test_self_drawn_adds_no_fan():
    assert_score(score("123p456p789p234s5s", (), "5s", "m", self_drawn=True), {})


def test_win_after_kong_on_the_last_tile_scores_both():
    s = score("123p456p68p55s", [("melded_kong", "8s")], "7p", "m", self_drawn=True,
              after_kong=True, under_the_sea=True)
    assert_score(s, {"Kong": 1, "Win after Kong": 1, "Under the Sea": 1})


# ====================================================================== 3-fan hands (the textbook)

THREE_FAN_HANDS = [
    # Kong + Kong + All Pungs
    ("555p222s3s", [("concealed_kong", "1p"), ("melded_kong", "9p")], "3s",
     {"Kong": 2, "All Pungs": 1}),
    # Kong + All Pungs + Golden Wait
    ("3s", [("promoted_kong", "1p"), ("pung", "5p"), ("pung", "9p"), ("pung", "2s")], "3s",
     {"Kong": 1, "All Pungs": 1, "Golden Wait": 1}),
    # Full Flush + Kong
    ("123p456p55p78p", [("melded_kong", "9p")], "6p", {"Full Flush": 2, "Kong": 1}),
    # Full Flush + Root
    ("111p123p456p789p5p", (), "5p", {"Full Flush": 2, "Root": 1}),
    # Full Flush + All Pungs
    ("111p555p777p999p3p", (), "3p", {"Full Flush": 2, "All Pungs": 1}),
    # Seven Pairs + Root
    ("1111p33p55p77s99s2s", (), "2s", {"Seven Pairs": 2, "Root": 1}),
]


@pytest.mark.parametrize("concealed, melds, win, fans", THREE_FAN_HANDS)
def test_three_fan_hands_of_lesson_6(concealed, melds, win, fans):
    for self_drawn in (False, True):
        s = score(concealed, melds, win, "m", self_drawn=self_drawn)
        assert_score(s, fans)
        assert s.fan_total == 3 and s.value == 8
        assert score(concealed, melds, win, "m", rules=MS).value == 8


# ====================================================================== cap 3 vs cap 4


def test_four_fans_capped_under_mil():
    # Full Flush + Seven Pairs = 4 fans
    s = score("11p33p55p77p22p44p6p", (), "6p", "s")
    assert_score(s, {"Full Flush": 2, "Seven Pairs": 2})
    assert s.fan_total == 4 and s.value == 8
    s = score("11p33p55p77p22p44p6p", (), "6p", "s", rules=MS)
    assert s.fan_total == 4 and s.value == 16


def test_five_fans_capped_under_both():
    # Full Flush + Seven Pairs + Root = 5 fans
    s = score("1111p55p77p22p44p6p", (), "6p", "m")
    assert_score(s, {"Full Flush": 2, "Seven Pairs": 2, "Root": 1})
    assert s.fan_total == 5 and s.value == 8
    assert score("1111p55p77p22p44p6p", (), "6p", "m", rules=MS).value == 16
    assert score("1111p55p77p22p44p6p", (), "6p", "m", rules=get_rules("mil", fan_cap=5)
                 ).value == 32
    assert score("1111p55p77p22p44p6p", (), "6p", "m", rules=get_rules("mil", fan_cap=1)
                 ).value == 2


def test_default_rules_are_mil():
    a = score("1111p55p77p22p44p6p", (), "6p", "m")
    b = score("1111p55p77p22p44p6p", (), "6p", "m", rules=MIL)
    assert a.value == b.value == 8


def test_largest_single_gain():
    # docs/rules.md 11: self-drawn at the cap, three opponents: (8 + 1) * 3 = 27, (16 + 1) * 3 = 51
    kw = dict(self_drawn=True, after_kong=True, under_the_sea=True)
    melds = [("concealed_kong", "1p"), ("concealed_kong", "5p")]
    for rules, gain in ((MIL, 27), (MS, 51)):
        s = score("999p222p3p", melds, "3p", "m", rules=rules, **kw)
        # Kong x2 + All Pungs + Full Flush + Win after Kong + Under the Sea = 7 fans
        assert s.fan_total == 7
        assert (s.value + rules.self_draw_bonus) * 3 == gain


# ====================================================================== theoretical maximum


def test_theoretical_max_best_wait_adds_root():
    # waits 1p (111p + 123p: Root), 4p and 9s (no fan): maximum 2 points
    hand = "111p23p456s678s99s"
    assert hands.waits(hand, (), "m") == ["1p", "4p", "9s"]
    assert score(hand, (), "1p", "m").fans == {"Root": 1}
    assert score(hand, (), "4p", "m").fans == {}
    assert hands.theoretical_max(hand, (), "m") == 2


def test_theoretical_max_best_wait_adds_all_pungs():
    # three declared pungs + 2223p: waits 1p, 3p (All Pungs), 4p
    hand = "2223p"
    assert hands.waits(hand, THREE_PUNGS, "m") == ["1p", "3p", "4p"]
    assert score(hand, THREE_PUNGS, "3p", "m").fans == {"All Pungs": 1}
    assert hands.theoretical_max(hand, THREE_PUNGS, "m") == 2


def test_theoretical_max_seven_pairs_and_root():
    # regular waits 3p, 4p, 5p (0 fans); on 2p it is also Seven Pairs with a Root: 3 fans
    hand = "2223344p556677s"
    assert hands.waits(hand, (), "m") == ["2p", "3p", "4p", "5p"]
    assert score(hand, (), "3p", "m").fans == {}
    assert score(hand, (), "2p", "m").fans == {"Seven Pairs": 2, "Root": 1}
    assert hands.theoretical_max(hand, (), "m") == 8
    assert hands.theoretical_max(hand, (), "m", rules=MS) == 8
    assert hands.theoretical_max(hand, (), "m", rules=get_rules("mil", fan_cap=2)) == 4


def test_theoretical_max_not_ready_is_zero():
    assert hands.theoretical_max("123p456p789p2s5s8s1p", (), "m") == 0
    # a void tile in hand: not ready
    assert hands.theoretical_max("123p456p789p234s5m", (), "m") == 0


def test_theoretical_max_ignores_situational_fans():
    # a 0-fan ready hand stays at 1 point though Under the Sea etc. could add a fan
    hand = "123p456p789p234s5s"
    assert hands.theoretical_max(hand, (), "m") == 1
    assert score(hand, (), "5s", "m", self_drawn=True, under_the_sea=True).value == 2


def test_theoretical_max_counts_declared_kongs_full_flush_golden_wait():
    # the Kong fan of a declared kong counts (waits 6p, 9p: Kong only)
    assert hands.theoretical_max("123p456p78p55s", [("concealed_kong", "8s")], "m") == 2
    # Full Flush counts (waits 1p, 4p)
    assert hands.theoretical_max("123p456p789p23p55p", (), "m") == 4
    # Golden Wait + All Pungs count
    melds = [("pung", "1p"), ("pung", "5p"), ("pung", "9p"), ("pung", "2s")]
    assert hands.theoretical_max("3s", melds, "m") == 4
    # Kong + Kong + All Pungs + Full Flush = 5 fans: the cap applies
    km = [("concealed_kong", "1p"), ("melded_kong", "5p")]
    assert hands.theoretical_max("999p222p3p", km, "m") == 8
    assert hands.theoretical_max("999p222p3p", km, "m", rules=MS) == 16


# ====================================================================== best split


def test_seven_pairs_beats_the_regular_split():
    # 112233p 445566s 77s is also 123p 123p 456s 456s 77s (0 fans)
    assert_score(score("112233p445566s7s", (), "7s", "m"), {"Seven Pairs": 2})


def test_all_pungs_split_is_chosen():
    # 111222333p is three chows or three pungs: the pungs give All Pungs
    assert_score(score("111222333p555s7s", (), "7s", "m"), {"All Pungs": 1})
    assert_score(score("111222333p7s", [("pung", "5s")], "7s", "m"), {"All Pungs": 1})
    # the same shape completed elsewhere has no pung split
    assert_score(score("111222333p456s7s", (), "7s", "m"), {})


def test_all_pungs_split_with_the_winning_tile():
    # 11122233p + 3p: 111 222 333 (All Pungs) or 123 123 123 (none)
    assert_score(score("11122233p555s77s", (), "3p", "m"), {"All Pungs": 1})


# ====================================================================== void suit


def test_void_tile_never_complete():
    hand = "123p456p789p234s55s"
    assert hands.is_complete(hand, (), "m")
    assert hands.is_complete(hand, (), None)
    assert not hands.is_complete(hand, (), "p")
    assert not hands.is_complete(hand, (), "s")
    assert hands.shanten(hand, (), "m") == -1
    sp = "11p33p55p77p22s44s66s"
    assert hands.is_complete(sp, (), "m")
    assert not hands.is_complete(sp, (), "s")


def test_void_tile_in_hand_means_no_wait():
    hand = "123p456p789p555p3s"
    assert hands.waits(hand, (), "m") == ["3s"]
    assert hands.shanten(hand, (), "m") == 0
    assert hands.waits(hand, (), "s") == []
    assert hands.shanten(hand, (), "s") == 1  # 12 useful tiles: two tiles to bring in
    assert hands.shanten(hand, (), "p") == 12  # one useful tile


def test_waits_never_in_the_void_suit():
    # without a void this waits on 3s and 6s; with bamboo void it is a flower pig
    hand = "123p456p789p55p45s"
    assert hands.waits(hand, (), None) == ["3s", "6s"]
    assert hands.waits(hand, (), "m") == ["3s", "6s"]
    assert hands.waits(hand, (), "s") == []
    assert hands.shanten(hand, (), "s") == 2


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32))
def test_void_property(seed):
    rnd = random.Random(seed)
    conc, melds, void = ref.random_standing_hand(rnd)
    if void is None:  # pick a void that no meld uses
        free = [x for x in range(3) if all(t // 9 != x for _, t in melds)]
        assume(free)
        void = rnd.choice(free)
    w = hands.waits(np.array(conc, np.int8), melds, "mps"[void])
    assert all(x[-1] != "mps"[void] for x in w)
    if any(conc[void * 9 + r] for r in range(9)):
        assert w == []
        assert hands.shanten(np.array(conc, np.int8), melds, "mps"[void]) >= 1


# ====================================================================== errors


def test_wrong_tile_count():
    with pytest.raises(ValueError, match=r"(?i)tile count"):
        score("123p456p789p234s55s", (), "5s", "m")  # 14 standing tiles
    with pytest.raises(ValueError, match=r"(?i)tile count"):
        score("123p456p789p234s5s", [("pung", "9s")], "5s", "m")
    with pytest.raises(ValueError, match=r"(?i)tile count"):
        hands.is_complete("123p456p789p234s5s", (), "m")  # 13 tiles
    with pytest.raises(ValueError, match=r"(?i)tile count"):
        hands.is_complete("123p456p789p234s55s", [("pung", "9s")], "m")


def test_fifth_copy_counting_melds_and_win_tile():
    with pytest.raises(ValueError, match=r"(?i)(more than four|fifth) cop(y|ies) of 1p"):
        score("1111p23p456p789s9s", (), "1p", "m")  # five 1p with the winning tile
    with pytest.raises(ValueError, match=r"(?i)(more than four|fifth) cop(y|ies) of 1p"):
        score("11p234p567p99s", [("pung", "1p")], "9s", "m")  # pung 1p + two more
    with pytest.raises(ValueError, match=r"(?i)(more than four|fifth) cop(y|ies) of 1p"):
        score("1p234p567p999s", [("concealed_kong", "1p")], "1p", "m")
    with pytest.raises(ValueError, match=r"(?i)(more than four|fifth) cop(y|ies) of 1p"):
        hands.is_complete("11p234p567p999s", [("pung", "1p")], "m")


def test_not_a_win():
    with pytest.raises(ValueError, match=r"(?i)not a (win|complete)"):
        score("123p456p789p234s5s", (), "6s", "m")
    # complete tiles but holding the void suit is no win either
    with pytest.raises(ValueError, match=r"(?i)void|forbidden"):
        score("123p456p789p234s5s", (), "5s", "s")


@pytest.mark.parametrize("meld", ["pung", "concealed_kong", "melded_kong", "promoted_kong",
                                  "postponed_kong"])
def test_meld_of_the_void_suit(meld):
    with pytest.raises(ValueError, match=r"(?i)(void|forbidden) suit"):
        score("123p456p789p5s", [(meld, "9m")], "5s", "m")


@pytest.mark.parametrize("flags, words", [
    (dict(self_drawn=True, robbing_kong=True), r"self_drawn|robbing_kong"),
    (dict(after_kong=True), r"after_kong.*self_drawn|self_drawn.*after_kong"),
    (dict(robbing_kong=True, shoot_after_kong=True), r"robbing_kong|shoot_after_kong"),
    (dict(robbing_kong=True, under_the_sea=True), r"robbing_kong|under_the_sea"),
    (dict(robbing_kong=True, after_kong=True), r"robbing_kong|after_kong"),
])
def test_incompatible_flags(flags, words):
    # a kong is declared, so after_kong alone only lacks self_drawn
    with pytest.raises(ValueError, match=words):
        score("123p456p79p55s", [("melded_kong", "9s")], "8p", "m", **flags)


def test_after_kong_needs_a_declared_kong():
    with pytest.raises(ValueError, match=r"(?i)after_kong.*declared kong"):
        score("123p456p79p55s", [("pung", "9s")], "8p", "m", self_drawn=True,
              after_kong=True)
    with pytest.raises(ValueError, match=r"(?i)after_kong.*declared kong"):
        score("123p456p79p55s234s", (), "8p", "m", self_drawn=True, after_kong=True)


def test_the_valid_versions_of_the_error_hands_score():
    # guards against the error tests passing for a wrong reason
    assert score("123p456p79p55s", [("melded_kong", "9s")], "8p", "m",
                 self_drawn=True, after_kong=True).fans == {"Kong": 1, "Win after Kong": 1}
    assert score("123p456p79p55s", [("melded_kong", "9s")], "8p", "m",
                 robbing_kong=True).fans == {"Kong": 1, "Robbing the Kong": 1}
    assert score("123p456p789p5s", [("pung", "9s")], "5s", "m").fans == {}


def test_unknown_meld_kind():
    with pytest.raises(ValueError, match=r"(?i)meld kind.*chow"):
        score("123p456p789p5s", [("chow", "7s")], "5s", "m")


def test_more_impossible_inputs():
    # a discard win cannot be self-drawn
    with pytest.raises(ValueError, match=r"shoot_after_kong"):
        score("123p456p789p234s5s", (), "5s", "m", self_drawn=True, shoot_after_kong=True)
    # waits and shanten check the tile count too
    with pytest.raises(ValueError, match=r"(?i)tile count"):
        hands.waits("123p456p789p234s55s", (), "m")
    with pytest.raises(ValueError, match=r"(?i)tile count"):
        hands.waits("123p456p789p234s5s", [("pung", "9s")], "m")
    # an unknown void suit
    with pytest.raises(ValueError, match=r"(?i)void"):
        score("123p456p789p234s5s", (), "5s", "x")
    with pytest.raises(ValueError, match=r"(?i)tile count"):
        hands.shanten("123p456p789p234s55s5p", (), "m")  # 15 tiles
    # five melds
    with pytest.raises(ValueError, match=r"(?i)melds"):
        hands.waits("", [("pung", t) for t in ("1p", "2p", "3p", "4p", "5p")], "m")


# ====================================================================== Table 9

INCOMPATIBLE = {
    frozenset(p) for p in [
        ("Kong", "Seven Pairs"), ("Root", "All Pungs"), ("Root", "Golden Wait"),
        ("All Pungs", "Seven Pairs"), ("All Pungs", "Robbing the Kong"),
        ("Golden Wait", "Seven Pairs"), ("Golden Wait", "Robbing the Kong"),
        ("Seven Pairs", "Win after Kong"), ("Seven Pairs", "Robbing the Kong"),
        ("Win after Kong", "Shoot after Kong"), ("Win after Kong", "Robbing the Kong"),
        ("Shoot after Kong", "Robbing the Kong"), ("Robbing the Kong", "Under the Sea"),
    ]
}
# times a combination can be present; Full Flush and Seven Pairs are worth 2 fans each
MULTIPLICITY = {"Kong": 4, "Root": 3}
FAN_WORTH = {"Full Flush": 2, "Seven Pairs": 2}


def test_table_9_compatible_pairs_do_occur():
    """Every pair Table 9 marks "+" shows up in some scored hand (so the table above is
    read right and the scorer can produce them)."""
    examples = [
        score("555p222s3s", [("concealed_kong", "1p"), ("melded_kong", "9p")], "3s", "m",
              self_drawn=True, after_kong=True, under_the_sea=True),
        score("3s", [("promoted_kong", "1p"), ("pung", "5p"), ("pung", "9p"),
                     ("concealed_kong", "2s")], "3s", "m", self_drawn=True, after_kong=True),
        score("1p", [("promoted_kong", "2p"), ("pung", "5p"), ("pung", "9p"),
                     ("melded_kong", "3p")], "1p", "m", shoot_after_kong=True,
              under_the_sea=True),
        score("111p123p4p", [("melded_kong", "9p"), ("pung", "7p")], "4p", "m",
              self_drawn=True, after_kong=True, under_the_sea=True),
        score("111p123p79p33p", [("melded_kong", "5p")], "8p", "m", robbing_kong=True),
        score("111p123p4p", [("melded_kong", "9p"), ("pung", "7p")], "4p", "m",
              shoot_after_kong=True),
        score("1111p55p77p22p44p6p", (), "6p", "m", shoot_after_kong=True,
              under_the_sea=True),
    ]
    seen = set()
    for s in examples:
        names = sorted(s.fans)
        seen |= {frozenset(p) for p in itertools.combinations(names, 2)}
    all_pairs = {frozenset(p) for p in itertools.combinations(ref.ALL_FANS, 2)}
    assert seen & INCOMPATIBLE == set()
    assert all_pairs - INCOMPATIBLE - seen == set()


def _random_win(rnd):
    cw, melds, void = ref.random_complete_hand(rnd)
    win = rnd.choice([k for k in range(27) if cw[k]])
    conc = list(cw)
    conc[win] -= 1
    flags = ref.random_flags(rnd, cw, melds, win)
    return np.array(conc, np.int8), melds, win, void, flags


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 2**32))
def test_table_9_never_violated(seed):
    rnd = random.Random(seed)
    conc, melds, win, void, flags = _random_win(rnd)
    v = None if void is None else "mps"[void]
    rules = rnd.choice([MIL, MS])
    s = hands.score(conc, [(mk, tiles.tile_str(t)) for mk, t in melds], tiles.tile_str(win),
                    v, rules=rules, **flags)
    names = set(s.fans)
    assert names <= set(ref.ALL_FANS)
    for a, b in itertools.combinations(sorted(names), 2):
        assert frozenset((a, b)) not in INCOMPATIBLE, (a, b, s.fans)
    for name, n in s.fans.items():
        assert n > 0
        if name in FAN_WORTH:
            assert n == FAN_WORTH[name]
        else:
            assert n <= MULTIPLICITY.get(name, 1), (name, n)
    if "Golden Wait" in names:
        assert "All Pungs" in names and len(melds) == 4
    if "Seven Pairs" in names:
        assert not melds
    assert s.fan_total == sum(s.fans.values())
    assert s.value == 2 ** min(s.fan_total, rules.fan_cap)
    # the situational fans follow the flags exactly
    for flag, name in (("after_kong", "Win after Kong"), ("shoot_after_kong",
                       "Shoot after Kong"), ("robbing_kong", "Robbing the Kong"),
                       ("under_the_sea", "Under the Sea")):
        assert (name in names) == flags[flag]
    n_kongs = sum(1 for mk, _ in melds if mk != "pung")
    assert s.fans.get("Kong", 0) == n_kongs

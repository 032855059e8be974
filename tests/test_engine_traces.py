"""Scripted game traces: one (or more) per special rule of docs/rules.md.

Each trace builds a deal from given hands and a short wall (draws from the front, kong
replacements from the back), plays every decision by its string and checks state, legal
options, payments (with reasons), fans and values, scores and the end, all computed by hand
from docs/rules.md. Seats a trace does not care about get "filler" hands (trace_helpers): 13 (or
14 for the dealer) different kinds from two suits, not ready, declaring the third suit with
an indicator; they can never claim anything, and they discard what they draw.

Citations: "§N" is section N of docs/rules.md and "fine point N" its section 12.N.
Notation in comments: "w0, w1, ..." are the wall tiles from the front; "R1" is the last wall
tile (first kong replacement), "R2" the one before it. Value = 2 ** min(fans, cap).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.actions import action_from_str
from sichuan_env.core.tiles import parse_kinds

from support.trace_helpers import (
    act,
    compact,
    counts,
    discards_of,
    event_like,
    fans,
    is_complete,
    pay,
    seat_totals,
    start,
    waits,
)

game_mod = pytest.importorskip("sichuan_env.records.game")
Game = game_mod.Game
IllegalActionError = game_mod.IllegalActionError


def _done(g, end: str, scores: list[int], next_dealer: int) -> None:
    assert g.done and g.phase == "done" and g.current_seat is None
    assert g.end == end
    assert g.scores == scores
    assert sum(scores) == -48 * sum(p["reason"] == "flower_pig" for p in g.payments)
    assert seat_totals(g.payments) == g.scores
    assert g.next_dealer == next_dealer


# ============================================================================ void choice


def test_void_options_every_held_kind_plus_missing_suit_indicator():
    """§3 / fine point 2: "set aside kind k" for every kind held, "indicator for suit
    s" only for a suit with no tile. Seat 0 holds 1-9m and 1-5p (no s): 14 kind options +
    "void s". Seat 1 holds all three suits: kind options only. The set-aside tile leaves the
    hand (g.hand) and is reported by g.set_aside; choices are recorded first, in seat order.
    """
    g = Game.from_deal(
        hands=["123456789m12345p", "111m222p333s4m5p6s7m", "1p3p5p7p9p1s3s5s7s9s8p4p6p",
               "2s4s6s8s2m4m6m8m6p8p7s7p9m"],  # seat 2 holds no m, seat 3 all suits
        wall="9s 9s",
        rules="mil",
    )
    assert g.phase == "void" and g.current_seat == 0
    expected0 = [f"void {r}m" for r in range(1, 10)] + [f"void {r}p" for r in range(1, 6)]
    assert g.legal() == sorted(expected0 + ["void s"])
    # an indicator for a held suit and a kind not held are illegal; nothing changes
    for bad in ("void p", "void m", "void 9s", "discard 1m", "hu"):
        with pytest.raises(IllegalActionError):
            g.play(bad)
        assert g.current_seat == 0 and g.legal() == sorted(expected0 + ["void s"])
    g.play("void s")
    assert g.void(0) == "s" and g.set_aside(0) is None
    assert g.hand(0) == "123456789m12345p"

    assert g.current_seat == 1
    assert g.legal() == sorted(["void 1m", "void 4m", "void 7m", "void 2p", "void 5p",
                                "void 3s", "void 6s"])
    g.play("void 4m")
    assert g.void(1) == "m" and g.set_aside(1) == "4m"
    assert g.hand(1) == "1117m2225p3336s"
    assert "void m" in g.legal() and "void p" not in g.legal()  # seat 2: p and s only
    g.play("void m")
    assert "void m" not in g.legal()  # seat 3 holds all three suits
    g.play("void 9m")
    assert event_like(g.events[0], seat=0, act="void", suit="s") and "tile" not in g.events[0]
    assert event_like(g.events[1], seat=1, act="void", tile="4m")
    assert [e["act"] for e in g.events[:4]] == ["void"] * 4
    # dealer's initial turn: no draw, 14 tiles, may discard any (no forbidden tile held)
    assert g.phase == "turn" and g.current_seat == 0 and g.wall_left == 2
    assert g.legal() == discards_of("123456789m12345p")


def test_dealer_with_indicator_and_complete_hand_may_hu_on_initial_turn():
    """§4 / fine point 7: the dealer's initial-turn Hu (only possible with an indicator)
    is self-drawn: hand value + 1 from each opponent. 123m123m456m789m55m is Full Flush
    (2 fans, no root, no other split scores more) -> value 4 -> 5 from each of 1, 2, 3.
    Next turn: the seat after the winner (seat 1) draws.
    """
    hand0 = "123m123m456m789m55m"
    assert is_complete(hand0)
    g = start({0: hand0}, "1p 2p 3s", {0: "void p"}, filler_suits="ps")
    assert g.current_seat == 0 and g.phase == "turn"
    assert g.legal() == sorted(discards_of(hand0) + ["hu"])
    g.play("hu")
    assert g.hu_seats == [0]
    assert pay(g) == [(1, 0, 5, "self_drawn_hu"), (2, 0, 5, "self_drawn_hu"),
                      (3, 0, 5, "self_drawn_hu")]
    (win,) = g.wins
    assert win["seat"] == 0 and win["from"] is None and win["value"] == 4
    assert fans(win) == {"Full Flush": 2}
    assert win["event"] == 4 and event_like(g.events[4], seat=0, act="hu")
    assert g.scores == [15, -5, -5, -5]
    assert g.current_seat == 1 and g.phase == "turn" and g.wall_left == 2


@pytest.mark.parametrize(("hand0", "named"), [("111m234m567m55m999s", "1m"),
                                              ("123m123m456m789m55m", "5m")])
def test_opening_turn_hu_names_the_first_kind_the_hand_holds_most(hand0, named):
    """docs/record_format.md (a ``hu`` event's ``tile``): on the dealer's opening turn no
    tile was drawn, so the winning tile named is the first kind, in kind order, of which the
    hand holds the most copies: 111m234m567m55m999s holds three each of 1m, 5m and 9s (1m,
    not the last of them); 123m123m456m789m55m holds three 5m and two of 1m, 2m, 3m (5m,
    not the first kind held). The tile leaves the hand and is shown as won."""
    assert is_complete(hand0)
    g = start({0: hand0}, "1p 2p 3s", {0: "void p"}, filler_suits="ps")
    g.play("hu")
    (win,) = g.wins
    assert win["seat"] == 0 and win["from"] is None and win["tile"] == named
    k = parse_kinds(named)[0]
    held = parse_kinds(hand0).count(k)
    assert g.state.hu_tile[0, 0] == k
    assert g.state.won_tiles[0].sum() == 1 and g.state.won_tiles[0, k] == 1
    assert g.state.hand[0, 0].sum() == 13 and g.state.hand[0, 0, k] == held - 1


def test_set_aside_tile_is_not_usable_for_hu_and_is_discarded_automatically():
    """§3: the set-aside tile is not part of the hand -> one tile short of Hu. The same
    complete dealer hand, with 9m set aside, cannot declare Hu; its only option is the
    forced discard of the set-aside tile, which the engine applies by itself (auto).
    """
    g = start({0: "123m123m456m789m55m"}, "1p 2p 3s", {0: "void 9m"}, filler_suits="ps")
    assert g.hu_seats == [] and g.payments == []
    assert event_like(g.events[4], seat=0, act="discard", tile="9m", auto=True)
    assert g.discards(0) == ["9m"] and g.set_aside(0) is None
    assert g.hand(0) == compact("123m123m456m78m55m")
    # nobody can claim 9m (fillers hold p and s only) -> seat 1 has drawn 1p
    assert g.current_seat == 1 and g.phase == "turn" and g.wall_left == 2


# ====================================================== set-aside discard, claims, pung


DEALER_9M = "9m 123p 456p 789p 1s 3s 5s 7s"


def test_set_aside_tile_is_first_discard_and_can_be_punged_then_only_discards():
    """§3: the set-aside tile is the first discard, a real discard that can be claimed.
    §4 / fine point 5: after a pung the claimer may only discard (no kong, no Hu).
    Fine point 1 / contract: only seats with a legal claim are asked (fillers are skipped).
    """
    seat1 = "99m 123m 456m 1p 3p 5p 7p 9p"
    g = start({0: DEALER_9M, 1: seat1}, "8s 2s", {0: "void 9m", 1: "void s"},
              filler_suits="ms")
    assert event_like(g.events[4], seat=0, act="discard", tile="9m", auto=True)
    act(g, 1, "pung", legal=["pass", "pung"], phase="claim")
    assert g.melds(1) == [("pung", "9m")]
    assert g.hand(1) == "123456m13579p"
    act(g, 1, "discard 1p", legal=discards_of("123456m13579p"), phase="turn")
    # dealer holds a single 1p and is not ready (holds no pair at all) -> seat 2 draws 8s
    assert g.current_seat == 2 and g.phase == "turn" and g.wall_left == 1
    assert g.discards(0) == ["9m"] and g.discards(1) == ["1p"]
    assert [(e["seat"], e["act"]) for e in g.events[4:]] == [(0, "discard"), (1, "pung"),
                                                             (1, "discard")]
    assert g.payments == []


def test_pending_set_aside_may_pung_then_set_aside_is_discarded_automatically():
    """Fine point 3: with a pending set-aside tile a seat may claim pung; its next discard is
    the set-aside tile, the only discard offered, so it is applied automatically.
    """
    seat1 = "99m 123m 456m 2s 4s 6s 8s 8p"
    g = start({0: DEALER_9M, 1: seat1}, "3m 4m", {0: "void 9m", 1: "void 8p"},
              filler_suits="ms")
    assert g.set_aside(1) == "8p"
    act(g, 1, "pung", legal=["pass", "pung"], phase="claim")
    assert event_like(g.events[-1], seat=1, act="discard", tile="8p", auto=True)
    assert g.set_aside(1) is None and g.hand(1) == "123456m2468s"
    assert g.discards(1) == ["8p"]
    assert g.current_seat == 2 and g.wall_left == 1


@pytest.mark.parametrize("seat1, claim, discard_kinds", [
    # 11 standing tiles after the pung are 123s 456s 789s 11p: a complete shape, no Hu
    ("66p 123s 456s 789s 11p", ["hu", "pass", "pung"], "1p 1s 2s 3s 4s 5s 6s 7s 8s 9s"),
    # the fourth 6p stays in hand: no kong on the turn of the pung
    ("666p 123s 456s 789s 1p", ["kong", "pass", "pung"], "1p 6p 1s 2s 3s 4s 5s 6s 7s 8s 9s"),
])
def test_after_pung_only_discards_are_offered(seat1, claim, discard_kinds):
    """§4 ("no kong on the same turn as a pung") and fine point 5 (after a pung: only
    discard, no kong, no Hu). In case 1 the claim also offers Hu (6p completes the hand), in
    case 2 it offers a melded kong; the seat chooses pung both times.
    """
    dealer = "6p 123456789m 2p 4p 8p 9p"
    g = start({0: dealer, 1: seat1}, "1m 2m", {0: "void s", 1: "void m"})
    act(g, 0, "discard 6p")
    act(g, 1, "pung", legal=claim, phase="claim")
    assert g.melds(1) == [("pung", "6p")]
    assert g.legal() == discards_of(discard_kinds)
    act(g, 1, "discard 1p")
    assert g.current_seat == 2 and g.hu_seats == [] and g.payments == []


# ============================================================================ strict void


@pytest.mark.parametrize("rules", ["mil", "mahjongsoft"])
def test_strict_void_on_only_forbidden_discards_off_any(rules):
    """§3 option strict_void: on (mil) while the hand holds a forbidden-suit tile only
    such tiles may be discarded; off (mahjongsoft) any tile. Dealer sets aside 9m and keeps
    7m 8m; after a round (fillers discard 3s 5s 7s) it draws 9s and is offered either just
    7m/8m (mil) or every held kind (mahjongsoft).
    """
    g = start({0: "789m 123p 456p 789p 1s 2s"}, "3s 5s 7s 9s", {0: "void 9m"},
              rules=rules, filler_suits="ps")
    assert event_like(g.events[4], seat=0, act="discard", tile="9m", auto=True)
    act(g, 1, "discard 3s")
    act(g, 2, "discard 5s")
    act(g, 3, "discard 7s")
    assert g.current_seat == 0 and g.hand(0) == "78m123456789p129s"
    if rules == "mil":
        assert g.legal() == ["discard 7m", "discard 8m"]
        with pytest.raises(IllegalActionError):
            g.play("discard 1p")
        assert g.legal() == ["discard 7m", "discard 8m"] and g.current_seat == 0
    else:
        assert g.legal() == discards_of("78m123456789p129s")
        g.play("discard 1p")
        assert g.discards(0) == ["9m", "1p"]


# ================================================================================= kongs


def test_concealed_kong_pays_two_from_each_cannot_be_robbed_win_after_kong():
    """§2/4: draws from the front, kong replacement from the back. §7: concealed
    kong = 2 from each player not yet Hu. §4: a concealed kong cannot be robbed (seat 2
    waits on 5p but is not asked). Seat 1 draws w0 = 5p, kongs, gets R1 = 1p (last tile)
    and wins: Kong 1 + Win after Kong 1 = 2 fans -> 4, self-drawn -> 5 from each.
    Seat 1: 6 + 15 = 21; the others -2 - 5 = -7.
    """
    seat1 = "555p 123s 456s 789s 1p"
    seat2 = "46p 123m 456m 789m 99m"
    assert waits(seat2) == ["5p"]
    g = start({0: "123456789m 2p 3p 7p 8p 9p", 1: seat1, 2: seat2}, "5p 3m 4m 1p",
              {0: "void s", 1: "void m", 2: "void s"})
    act(g, 0, "discard 2p")
    assert g.current_seat == 1 and g.wall_left == 3
    assert g.hand(1) == "15555p123456789s"  # 5p came from the front
    act(g, 1, "kong 5p", legal=discards_of("1p 5p 1s 2s 3s 4s 5s 6s 7s 8s 9s") + ["kong 5p"])
    kong_event = len(g.events) - 1
    assert g.current_seat == 1 and g.phase == "turn"  # no robbing window
    assert g.melds(1) == [("concealed_kong", "5p")]
    assert sorted(pay(g)) == [(0, 1, 2, "concealed_kong"), (2, 1, 2, "concealed_kong"),
                              (3, 1, 2, "concealed_kong")]
    assert all(p["event"] == kong_event for p in g.payments)
    assert g.wall_left == 2 and g.hand(1) == "11p123456789s"  # 1p came from the back
    assert "hu" in g.legal()
    g.play("hu")
    (win,) = g.wins
    assert win["seat"] == 1 and win["from"] is None and win["tile"] == "1p"
    assert fans(win) == {"Kong": 1, "Win after Kong": 1} and win["value"] == 4
    assert sorted(pay(g, 3)) == [(0, 1, 5, "self_drawn_hu"), (2, 1, 5, "self_drawn_hu"),
                                 (3, 1, 5, "self_drawn_hu")]
    assert g.scores == [-7, 21, -7, -7]
    assert g.current_seat == 2 and g.wall_left == 1  # seat 2 drew 3m from the front


def test_melded_kong_paid_by_discarder_and_kong_fan_on_later_hu():
    """§7: melded kong = 2 from the discarder only. §6: the kong counts 1 fan on a
    later Hu. Seat 1 claims "kong" on the dealer's 7p (R1 = 9p replaces, discarded), fillers
    discard 1m 2m, the dealer draws 3p and discards 5p: seat 1 wins with kong 7p, 123s 456s
    789s, 55p -> Kong 1 -> 2 paid by the dealer (not Shoot after Kong: the dealer made no
    kong). Scores: seat 1 +2 +2, dealer -4.
    """
    seat1 = "777p 123s 456s 789s 5p"
    g = start({0: "123456789m 2p 4p 5p 7p 8p", 1: seat1}, "1m 2m 3p 4s 5s 9p",
              {0: "void s", 1: "void m"})
    act(g, 0, "discard 7p")
    act(g, 1, "kong", legal=["kong", "pass", "pung"], phase="claim")
    assert pay(g) == [(0, 1, 2, "melded_kong")]
    assert g.payments[0]["event"] == len(g.events) - 1
    assert g.melds(1) == [("melded_kong", "7p")]
    assert g.wall_left == 5 and g.hand(1) == "59p123456789s"
    act(g, 1, "discard 9p", legal=discards_of("5p 9p 1s 2s 3s 4s 5s 6s 7s 8s 9s"))
    act(g, 2, "discard 1m")
    act(g, 3, "discard 2m")
    act(g, 0, "discard 5p")
    act(g, 1, "hu", legal=["hu", "pass"], phase="claim")
    win = g.wins[0]
    assert win["seat"] == 1 and win["from"] == 0 and win["tile"] == "5p"
    assert fans(win) == {"Kong": 1} and win["value"] == 2
    assert pay(g, 1) == [(0, 1, 2, "hu")]
    assert g.scores == [-4, 4, 0, 0]
    assert g.current_seat == 2 and g.wall_left == 1


def test_promoted_kong_one_from_each_with_tile_just_drawn():
    """§7 / fine point 4: a kong added to a melded pung with the tile just drawn is
    promoted: 1 from each player not yet Hu. Seat 1 (9m set aside) pungs the dealer's 6p
    (then its set-aside 9m goes automatically), draws 6p on a later turn, kongs, and wins
    on R1 = 3p: Kong 1 + Win after Kong 1 -> 4, 5 from each. Seat 1: 3 + 15 = 18.
    """
    seat1 = "66p 123s 456s 789s 3p 9m"
    dealer = "6p 123456789m 1p 2p 4p 5p"
    g = start({0: dealer, 1: seat1}, "7m 2m 7p 6p 8m 3p", {0: "void s", 1: "void 9m"})
    act(g, 0, "discard 6p")
    act(g, 1, "pung", legal=["pass", "pung"])
    assert event_like(g.events[-1], seat=1, act="discard", tile="9m", auto=True)
    act(g, 2, "discard 7m")
    act(g, 3, "discard 2m")
    act(g, 0, "discard 7p")
    assert g.hand(1) == "36p123456789s"
    act(g, 1, "kong 6p", legal=discards_of("3p 6p 1s 2s 3s 4s 5s 6s 7s 8s 9s") + ["kong 6p"])
    assert g.melds(1) == [("promoted_kong", "6p")]
    assert sorted(pay(g)) == [(0, 1, 1, "promoted_kong"), (2, 1, 1, "promoted_kong"),
                              (3, 1, 1, "promoted_kong")]
    assert g.current_seat == 1 and g.wall_left == 1
    act(g, 1, "hu")
    win = g.wins[0]
    assert fans(win) == {"Kong": 1, "Win after Kong": 1} and win["value"] == 4
    assert g.scores == [-6, 18, -6, -6]


def test_postponed_kong_pays_nothing_but_counts_as_kong():
    """Fine point 4 / §7: a kong added to a melded pung with a tile held from before
    (here: the fourth 6p kept when seat 1 chose pung over kong) is postponed: 0 points, but
    it is a Kong fan. Seat 1 draws w3 = 4p, kongs 6p (no payment), wins on R1 = 4p:
    Kong 1 + Win after Kong 1 -> 4, 5 from each.
    """
    seat1 = "666p 123s 456s 789s 9m"
    dealer = "6p 2m 3m 4m 5m 6m 7m 8m 1p 2p 3p 5p 7p 9p"
    g = start({0: dealer, 1: seat1}, "1m 9m 8p 4p 5m 4p", {0: "void s", 1: "void 9m"})
    act(g, 0, "discard 6p")
    act(g, 1, "pung", legal=["kong", "pass", "pung"])
    assert event_like(g.events[-1], seat=1, act="discard", tile="9m", auto=True)
    act(g, 2, "discard 1m")
    act(g, 3, "discard 9m")
    act(g, 0, "discard 8p")
    assert g.hand(1) == "46p123456789s"
    act(g, 1, "kong 6p", legal=discards_of("4p 6p 1s 2s 3s 4s 5s 6s 7s 8s 9s") + ["kong 6p"])
    assert g.melds(1) == [("postponed_kong", "6p")]
    assert g.payments == []
    assert g.current_seat == 1 and g.wall_left == 1 and g.hand(1) == "44p123456789s"
    act(g, 1, "hu")
    assert fans(g.wins[0]) == {"Kong": 1, "Win after Kong": 1} and g.wins[0]["value"] == 4
    assert g.scores == [-5, 15, -5, -5]


# =============================================================================== robbing


def test_robbing_a_promoted_kong():
    """§4 robbing the kong: the kong does not happen (stays a pung, no kong payment, no
    replacement), the Hu is paid by the kong declarer and scores Robbing the Kong (1 fan).
    Seat 2 becomes ready (45p, waits 3p/6p) by drawing 5p; seat 1 draws its fourth 6p and
    declares a promoted kong; seat 2 robs: 456p 123s 456s 789s 99p, fans {Robbing 1} -> 2.
    Turn: after the winner counted from the declarer -> seat 3 draws.
    """
    seat1 = "66p 123s 456s 789s 3p 9m"
    dealer = "6p 2m 3m 4m 5m 6m 7m 8m 1p 2p 3p 5p 7p 9p"
    seat2 = "4p 1p 123s 456s 789s 99p"
    g = start({0: dealer, 1: seat1, 2: seat2}, "5p 3m 8m 6p 1m 2m",
              {0: "void s", 1: "void 9m", 2: "void m"})
    act(g, 0, "discard 6p")
    act(g, 1, "pung", legal=["pass", "pung"])
    act(g, 2, "discard 1p")
    assert waits(g.hand(2)) == ["3p", "6p"]
    act(g, 3, "discard 3m")
    act(g, 0, "discard 8m")
    act(g, 1, "kong 6p")
    assert g.phase == "rob"
    act(g, 2, "hu", legal=["hu", "pass"], phase="rob")
    assert event_like(g.events[-2], seat=1, act="kong", tile="6p")
    assert event_like(g.events[-1], seat=2, act="hu")
    assert g.melds(1) == [("pung", "6p")] and g.hand(1) == "3p123456789s"
    assert pay(g) == [(1, 2, 2, "hu")]
    win = g.wins[0]
    assert win["seat"] == 2 and win["from"] == 1 and win["tile"] == "6p"
    assert fans(win) == {"Robbing the Kong": 1} and win["value"] == 2
    # no replacement was drawn: of 6 wall tiles, 4 drawn plus seat 3's draw now
    assert g.current_seat == 3 and g.phase == "turn" and g.wall_left == 1


def test_declining_a_rob_sets_passed_hu_and_the_kong_goes_ahead():
    """Fine point 8: passing on a robbable kong sets passed Hu with the value declined
    (situational fans included: 45p 123s 456s 789s 99p + 6p with Robbing the Kong = 1 fan
    -> 2). The kong then happens: promoted, 1 from each of 0, 2, 3; replacement R1 = 7s.
    Seat 1 discards 3p, which seat 2 waits on: with Shoot after Kong that Hu is worth 2,
    not strictly greater than 2 -> blocked, seat 2 is not asked and simply draws.
    """
    seat1 = "66p 123s 456s 789s 3p 9m"
    dealer = "6p 2m 3m 4m 5m 6m 7m 8m 1p 2p 3p 5p 7p 9p"
    seat2 = "4p 1p 123s 456s 789s 99p"
    g = start({0: dealer, 1: seat1, 2: seat2}, "5p 3m 8m 6p 1m 7s",
              {0: "void s", 1: "void 9m", 2: "void m"})
    act(g, 0, "discard 6p")
    act(g, 1, "pung", legal=["pass", "pung"])
    act(g, 2, "discard 1p")
    act(g, 3, "discard 3m")
    act(g, 0, "discard 8m")
    act(g, 1, "kong 6p")
    act(g, 2, "pass", legal=["hu", "pass"], phase="rob")
    assert g.melds(1) == [("promoted_kong", "6p")]
    assert sorted(pay(g)) == [(0, 1, 1, "promoted_kong"), (2, 1, 1, "promoted_kong"),
                              (3, 1, 1, "promoted_kong")]
    assert g.current_seat == 1 and g.hand(1) == "3p1234567789s"
    act(g, 1, "discard 3p")
    assert event_like(g.events[-1], seat=1, act="discard", tile="3p")
    assert g.current_seat == 2 and g.phase == "turn" and g.wall_left == 0
    assert g.scores == [-1, 3, -1, -1] and g.hu_seats == []


def test_robbing_a_postponed_kong_by_two_then_wall_end():
    """§4: a postponed kong can be robbed too; every non-Hu seat the tile completes may
    rob (here seats 2 and 3), each paid by the declarer its own value (Robbing the Kong 1 ->
    2 each). Fine point 9: the declarer keeps the pung; the turn goes to the seat after the
    last winner counted from the declarer (seat 0). The wall then ends: the last-tile drawer
    (seat 1) may only discard; settlement: seat 1 (pung 6p, 3p 123s 456s 789s, waits 3p,
    value 1) is ready, the dealer is not -> dealer pays 1 (ready).
    Fine point 14: several first winners on one robbed kong -> next dealer is the declarer.
    Scores: dealer -1, seat 1 -4 + 1 = -3, seats 2 and 3 +2.
    """
    seat1 = "666p 123s 456s 789s 9m"
    dealer = "6p 2m 3m 4m 5m 6m 7m 8m 1p 2p 3p 5p 7p 9p"
    seat2 = "4p 1p 123s 456s 789s 99p"
    seat3 = "8p 2p 111m 234m 567m 55m"
    g = start({0: dealer, 1: seat1, 2: seat2, 3: seat3}, "5p 7p 8m 3p 4p 1p",
              {0: "void s", 1: "void 9m", 2: "void m", 3: "void s"})
    act(g, 0, "discard 6p")
    act(g, 1, "pung", legal=["kong", "pass", "pung"])
    act(g, 2, "discard 1p")
    act(g, 3, "discard 2p")
    assert waits(g.hand(2)) == ["3p", "6p"] and waits(g.hand(3)) == ["6p", "9p"]
    act(g, 0, "discard 8m")
    act(g, 1, "kong 6p", legal=discards_of("3p 6p 1s 2s 3s 4s 5s 6s 7s 8s 9s") + ["kong 6p"])
    act(g, 2, "hu", legal=["hu", "pass"], phase="rob")
    act(g, 3, "hu", legal=["hu", "pass"], phase="rob")
    assert g.hu_seats == [2, 3]
    assert g.melds(1) == [("pung", "6p")]
    assert pay(g) == [(1, 2, 2, "hu"), (1, 3, 2, "hu")]
    assert [fans(w) for w in g.wins] == [{"Robbing the Kong": 1}] * 2
    assert [w["from"] for w in g.wins] == [1, 1]
    act(g, 0, "discard 4p")
    assert g.wall_left == 0
    act(g, 1, "discard 1p", legal=discards_of("1p 3p 1s 2s 3s 4s 5s 6s 7s 8s 9s"))
    assert pay(g, 2) == [(0, 1, 1, "ready")]
    assert g.payments[2]["event"] == len(g.events) - 1
    _done(g, "wall_exhausted", [-1, -3, 2, 2], next_dealer=1)


# ====================================================================== shoot after kong


def test_shoot_after_kong_refunds_every_kong_payment_of_the_turn():
    """§7 / fine point 10: Hu on the discard right after the discarder's kong(s) scores
    Shoot after Kong for the winner, and the income of every kong of that turn (a melded
    kong claimed at the turn's start included) goes back, one kong_refund per payment.
    Seat 1: melded kong 7p (2 from dealer), R1 = 7s, concealed kong 5s (2 from 0, 2, 3),
    R2 = 2p, discards 1p; seat 2 (23p 123m 456m 789m 99m) wins: Shoot after Kong 1 -> 2.
    Scores: dealer -2 -2 +2 +2 = 0; seat 1 +8 -8 -2 = -2; seat 2 -2 +2 +2 = 2; seat 3 0.
    """
    seat1 = "777p 5555s 123s 89s 1p"
    seat2 = "23p 123m 456m 789m 99m"
    dealer = "7p 2p 3p 5p 6p 8p 9p 1m 2m 4m 5m 6m 7m 8m"
    g = start({0: dealer, 1: seat1, 2: seat2}, "4m 2p 7s",
              {0: "void s", 1: "void m", 2: "void s"})
    act(g, 0, "discard 7p")
    act(g, 1, "kong", legal=["kong", "pass", "pung"])
    act(g, 1, "kong 5s", legal=discards_of("1p 1s 2s 3s 5s 7s 8s 9s") + ["kong 5s"])
    assert g.melds(1) == [("melded_kong", "7p"), ("concealed_kong", "5s")]
    assert sorted(pay(g)) == [(0, 1, 2, "concealed_kong"), (0, 1, 2, "melded_kong"),
                              (2, 1, 2, "concealed_kong"), (3, 1, 2, "concealed_kong")]
    assert g.hand(1) == "12p123789s" and g.wall_left == 1
    act(g, 1, "discard 1p")
    act(g, 2, "hu", legal=["hu", "pass"], phase="claim")
    hu_event = len(g.events) - 1
    win = g.wins[0]
    assert win["seat"] == 2 and win["from"] == 1
    assert fans(win) == {"Shoot after Kong": 1} and win["value"] == 2
    after = g.payments[4:]
    assert sorted(pay(g, 4)) == [(1, 0, 2, "kong_refund"), (1, 0, 2, "kong_refund"),
                                 (1, 2, 2, "hu"), (1, 2, 2, "kong_refund"),
                                 (1, 3, 2, "kong_refund")]
    assert all(p["event"] == hu_event for p in after)
    assert g.scores == [0, -2, 2, 0]
    assert g.current_seat == 3 and g.wall_left == 0


# ============================================================================ passed Hu


def _passed_hu_deal(w4: str, tail: str):
    """Seat 2 (45p 666p 123m 456m 99m) waits 3p (value 1), 6p (Root: 2) and 9m (1).
    Seat 3 draws and discards 3p: seat 2 passes (passed Hu at value 1). The dealer draws and
    discards 3p: same value, blocked, so seat 2 is not even asked and seat 1 draws w4.
    """
    seat2 = "45p 666p 123m 456m 99m"
    assert waits(seat2) == ["9m", "3p", "6p"]
    dealer = "12345789m 125789p"
    g = start({0: dealer, 2: seat2}, f"3m 7m 3p 3p {w4} {tail}", {0: "void s", 2: "void s"})
    act(g, 0, "discard 5p")
    act(g, 1, "discard 3m")
    act(g, 2, "discard 7m")
    act(g, 3, "discard 3p")
    act(g, 2, "pass", legal=["hu", "pass"], phase="claim")
    act(g, 0, "discard 3p")
    assert event_like(g.events[-1], seat=0, act="discard", tile="3p")
    assert g.current_seat == 1 and g.phase == "turn"  # seat 2 was not asked
    return g


def test_passed_hu_blocks_equal_value_but_allows_strictly_greater():
    """Fine point 8: after passing a value-1 Hu, a Hu on a discard of the same value is not
    offered until the seat's next draw, but a strictly greater one is: 6p gives 456p + 666p
    = four 6p over two sets -> Root 1 -> value 2 > 1, paid by seat 1.
    """
    g = _passed_hu_deal("6p", "8m 1m")
    act(g, 1, "discard 6p")
    # seat 2 holds 666p: kong and pung are offered too (the wall is not empty)
    act(g, 2, "hu", legal=["hu", "kong", "pass", "pung"], phase="claim")
    win = g.wins[0]
    assert fans(win) == {"Root": 1} and win["value"] == 2 and win["from"] == 1
    assert g.scores == [0, -2, 2, 0]


def test_passed_hu_lifted_by_own_draw_and_self_draw_unaffected():
    """Fine point 8: the restriction ends with the seat's next draw; a self-drawn Hu is
    offered right at that draw, and declining it restricts nothing. Seat 2 draws 3p (hu
    offered, it discards 3p instead), seat 3 draws and discards the last 3p: seat 2 may
    claim Hu (value 1) -> seat 3 pays 1.
    """
    g = _passed_hu_deal("8m", "3p 3p 1m")
    act(g, 1, "discard 8m")
    assert g.current_seat == 2 and "hu" in g.legal()
    act(g, 2, "discard 3p")
    act(g, 3, "discard 3p")
    act(g, 2, "hu", legal=["hu", "pass"], phase="claim")
    assert g.wins[0]["value"] == 1 and g.wins[0]["from"] == 3 and fans(g.wins[0]) == {}
    assert g.scores == [0, 0, 1, -1]


def test_passed_hu_is_also_set_by_answering_pung():
    """Fine point 8: answering pung when Hu is offered also sets the passed-Hu restriction.
    Seat 1 (66p 123s 456s 789s 11p) may win on the dealer's 6p (value 1) but pungs and
    discards 1p, now waiting on 1p (value 1). Seat 2 draws and discards 1p before seat 1
    draws again: same value -> blocked, seat 1 is not asked, seat 3 draws.
    """
    g = start({0: "6p 123456789m 2p 4p 8p 9p", 1: "66p 123s 456s 789s 11p"}, "1p 2m 3m",
              {0: "void s", 1: "void m"})
    act(g, 0, "discard 6p")
    act(g, 1, "pung", legal=["hu", "pass", "pung"])
    act(g, 1, "discard 1p")
    act(g, 2, "discard 1p")
    assert event_like(g.events[-1], seat=2, act="discard", tile="1p")
    assert g.current_seat == 3 and g.phase == "turn" and g.hu_seats == []


# ====================================================== multiple Hu, Hu beats pung, 3-Hu


def test_multiple_hu_on_one_discard_beats_pung_and_turn_goes_to_discarder():
    """§4: Hu beats pung; every Hu claim on one discard succeeds, each paid by the
    discarder its own value. The dealer's set-aside 5s: seat 1 Hu (plain, 1), seat 2 asks
    pung (not done), seat 3 Hu (11s 234s 456s 678s 999s: Full Flush 2 -> 4). Fine point 9:
    next is the non-Hu seat after the last winner counted from the discarder: seat 0.
    Then the wall ends with 0 and 2 both not ready: no settlement payments. Section 9:
    several first winners on one discard -> the discarder deals next.
    """
    seat1 = "123m 456m 789m 99m 46s"
    seat2 = "55s 12p 45p 78p 9p 1s 2s 7s 8s"
    seat3 = "11s 234s 678s 999s 46s"
    g = start({0: "5s 123p 456p 789p 2m 5m 6m 8m", 1: seat1, 2: seat2, 3: seat3}, "9m 3p",
              {0: "void 5s", 1: "void p", 2: "void m", 3: "void m"})
    assert event_like(g.events[4], seat=0, act="discard", tile="5s", auto=True)
    act(g, 1, "hu", legal=["hu", "pass"], phase="claim")
    act(g, 2, "pung", legal=["pass", "pung"], phase="claim")
    act(g, 3, "hu", legal=["hu", "pass"], phase="claim")
    assert g.hu_seats == [1, 3] and g.melds(2) == []
    assert pay(g) == [(0, 1, 1, "hu"), (0, 3, 4, "hu")]
    assert [(w["seat"], w["from"], w["value"]) for w in g.wins] == [(1, 0, 1), (3, 0, 4)]
    assert fans(g.wins[0]) == {} and fans(g.wins[1]) == {"Full Flush": 2}
    assert g.current_seat == 0 and g.phase == "turn"
    act(g, 0, "discard 9m")
    act(g, 2, "discard 3p")  # last tile: no claim (dealer holds one 3p)
    _done(g, "wall_exhausted", [-5, 1, 0, 4], next_dealer=0)


def _wraparound_double_hu():
    """Seat 2 discards its set-aside 5s; seats 3 and 1 both win on it."""
    seat1 = "123m 456m 789m 99m 46s"
    seat2 = "5s 1m 2m 4m 5m 7m 8m 1p 2p 4p 5p 7p 8p"
    seat3 = "11s 234s 678s 999s 46s"
    g = start({1: seat1, 2: seat2, 3: seat3}, "2m 3m 6m",
              {1: "void p", 2: "void 5s", 3: "void m"})
    dealer_p = [t for t in discards_of(g.hand(0)) if t.endswith("p")]
    act(g, 0, dealer_p[0])  # the filler dealer discards a dots tile: nobody can claim it
    act(g, 1, "discard 2m")
    assert event_like(g.events[-1], seat=2, act="discard", tile="5s", auto=True)
    act(g, 3, "hu", legal=["hu", "pass"], phase="claim")
    act(g, 1, "hu", legal=["hu", "pass"], phase="claim")
    return g


def test_claims_asked_counter_clockwise_from_discarder_and_turn_after_last_winner():
    """Fine point 1: claim decisions are listed counter-clockwise from the discarder (here
    seat 2: seat 3, then seat 0 - no claim, not asked - then seat 1). Fine point 9: after Hu
    on a discard the turn goes to the next non-Hu seat after the last winner counted from
    the discarder: winners 3 and 1 -> the discarder itself (seat 2) draws next.
    Seat 2's discard is its set-aside 5s, applied automatically after it draws w1.
    Values: seat 3 Full Flush 4, seat 1 plain 1, both paid by seat 2.
    """
    g = _wraparound_double_hu()
    assert [(e["seat"], e["act"]) for e in g.events[-3:]] == [(2, "discard"), (3, "hu"),
                                                              (1, "hu")]
    # both won on the same discard: the order within hu_seats is not fixed by the rules
    assert sorted(g.hu_seats) == [1, 3]
    by_seat = {w["seat"]: w for w in g.wins}
    assert by_seat[3]["event"] == len(g.events) - 2 and by_seat[1]["event"] == len(g.events) - 1
    assert by_seat[3]["value"] == 4 and by_seat[1]["value"] == 1
    assert sorted(pay(g)) == [(2, 1, 1, "hu"), (2, 3, 4, "hu")]
    assert g.scores == [0, 1, -5, 4]
    assert g.current_seat == 2 and g.phase == "turn" and g.wall_left == 0


def test_simultaneous_hu_payments_and_wins_listed_in_event_order():
    """docs/record_format.md: payments and wins are listed in order of their event, and a Hu
    payment points at the winner's own hu event; the claims are listed counter-clockwise from the
    discarder (seat 3's hu is event n-2, seat 1's is n-1). So the payment (and win) of seat
    3 must come before those of seat 1: the event indices never decrease.
    """
    g = _wraparound_double_hu()
    assert [p["event"] for p in g.payments] == sorted(p["event"] for p in g.payments)
    assert [w["event"] for w in g.wins] == sorted(w["event"] for w in g.wins)


def test_three_hu_ends_the_deal_without_wall_end_settlement():
    """Fine point 12: three winners end the deal (three_hu) with no settlement, even on the
    last tile and with a flower pig at the table. Seats 1 and 3 win on the dealer's
    set-aside 5s (1 and 4); the dealer draws the last tile (strict void: only 3s or 7s),
    discards 3s and seat 2 wins (123s 456p 789p 222p 88s) with Under the Sea -> 2.
    The dealer still holds 7s but pays no flower-pig penalty.
    """
    seat1 = "123m 456m 789m 99m 46s"
    seat2 = "12s 456p 789p 222p 88s"
    seat3 = "11s 234s 678s 999s 46s"
    dealer = "5s 3s 7s 123p 456p 9p 2m 5m 6m 8m"
    g = start({0: dealer, 1: seat1, 2: seat2, 3: seat3}, "9m",
              {0: "void 5s", 1: "void p", 2: "void m", 3: "void m"})
    act(g, 1, "hu", legal=["hu", "pass"])
    act(g, 3, "hu", legal=["hu", "pass"])  # seat 2 (no claim on 5s) is not asked
    assert [e["seat"] for e in g.events[5:]] == [1, 3]
    assert g.wall_left == 0
    act(g, 0, "discard 3s", legal=["discard 3s", "discard 7s"])
    act(g, 2, "hu", legal=["hu", "pass"])
    assert fans(g.wins[2]) == {"Under the Sea": 1} and g.wins[2]["value"] == 2
    assert pay(g) == [(0, 1, 1, "hu"), (0, 3, 4, "hu"), (0, 2, 2, "hu")]
    _done(g, "three_hu", [-7, 1, 2, 4], next_dealer=0)


def test_hu_players_are_never_asked_and_never_pay_again():
    """§7 / MIL sheet §7.2: players who declared Hu neither pay nor receive afterwards; they
    are never asked again and are skipped in turn order. Seat 1 wins on the dealer's 5s
    (1). Seat 2 (9m set aside) draws its fourth 8p and declares a concealed kong (allowed
    with a pending set-aside, fine point 3): 2 from seats 0 and 3 only. Its set-aside 9m
    then goes automatically; seat 1 holds 999m but, being Hu, is not asked.
    Scores: dealer -1 -2, seat 1 +1, seat 2 +4, seat 3 -2.
    """
    seat1 = "123m 456m 789m 99m 46s"
    seat2 = "888p 9m 1s 2s 4s 5s 7s 8s 1p 2p 4p"
    dealer = "5s 1p 2p 3p 5p 6p 7p 9p 1m 2m 4m 5m 7m 8m"
    g = start({0: dealer, 1: seat1, 2: seat2}, "8p 6m 3m 4s 3s",
              {0: "void 5s", 1: "void p", 2: "void 9m"})
    act(g, 1, "hu", legal=["hu", "pass"])
    act(g, 2, "kong 8p", legal=["discard 9m", "kong 8p"])
    assert sorted(pay(g, 1)) == [(0, 2, 2, "concealed_kong"), (3, 2, 2, "concealed_kong")]
    assert event_like(g.events[-1], seat=2, act="discard", tile="9m", auto=True)
    assert g.current_seat == 3 and g.phase == "turn"
    act(g, 3, "discard 6m")
    act(g, 0, "discard 3m")
    assert g.current_seat == 2  # seat 1 skipped
    assert g.scores == [-3, 1, 4, -2]
    assert all(e["seat"] != 1 for e in g.events[6:])


# ===================================================================== wall end, fans


@pytest.mark.parametrize("rules, value, total", [("mil", 8, 33), ("mahjongsoft", 16, 57)])
def test_kong_with_one_tile_left_win_after_kong_and_under_the_sea(rules, value, total):
    """Fine point 6: a kong needs one wall tile; with exactly one left it is allowed and its
    replacement is the last tile: Win after Kong + Under the Sea together (§6). Seat 1:
    kong 5s + 123s 234s 678s 99s: Kong 1 + Full Flush 2 + Win after Kong 1 + Under the Sea
    1 = 5 fans -> 8 with cap 3 (mil), 16 with cap 4 (mahjongsoft); self-drawn -> value + 1
    from each of 3 seats, plus the concealed kong's 2 x 3. The wall is then empty: the deal
    ends, the other three are all not ready (same state) -> no settlement payments.
    """
    seat1 = "555s 123s 678s 99s 24s"
    assert not is_complete("5555s123s678s99s24s")
    g = start({0: "123456789m 1p 3p 5p 7p 9p", 1: seat1}, "5s 3s",
              {0: "void s", 1: "void m"}, rules=rules)
    act(g, 0, "discard 9m")
    assert g.wall_left == 1
    act(g, 1, "kong 5s", legal=discards_of("1s 2s 3s 4s 5s 6s 7s 8s 9s") + ["kong 5s"])
    assert g.wall_left == 0
    act(g, 1, "hu")
    win = g.wins[0]
    assert fans(win) == {"Kong": 1, "Full Flush": 2, "Win after Kong": 1, "Under the Sea": 1}
    assert win["value"] == value
    hu_pays = [p for p in pay(g) if p[3] == "self_drawn_hu"]
    assert sorted(hu_pays) == [(s, 1, value + 1, "self_drawn_hu") for s in (0, 2, 3)]
    other = -(total // 3)
    _done(g, "wall_exhausted", [other, total, other, other], next_dealer=1)
    assert len(g.payments) == 6


def test_wall_end_no_kong_pung_chain_and_under_the_sea_on_the_last_discard():
    """§4 wall end: the last-tile drawer may only discard or Hu (seat 1 draws its fourth
    4s: no kong, no replacement exists); on that discard only Hu and pung are allowed (the
    dealer holds 777p: pung but no kong); after the pung the claimer discards again and that
    discard may again be claimed: seat 2 wins on 4m (456m 123p 456p 11m 888m) with Under the
    Sea (fine point 11) -> 2 from the dealer. A Hu on a wall-end discard ends the deal; the
    three others are all not ready -> no settlement payments.
    """
    dealer = "777p 4m 123m 99m 12p 58p 9p"
    seat1 = "1p 2p 4p 5p 7p 8p 1s 2s 444s 8s 9s"
    seat2 = "123p 456p 11m 56m 888m"
    g = start({0: dealer, 1: seat1, 2: seat2}, "4s", {0: "void s", 1: "void m", 2: "void s"},
              filler_suits="ms")
    act(g, 0, "discard 9p")
    assert g.current_seat == 1 and g.wall_left == 0
    act(g, 1, "discard 7p", legal=discards_of("1p 2p 4p 5p 7p 8p 1s 2s 4s 8s 9s"))
    act(g, 0, "pung", legal=["pass", "pung"], phase="claim")
    act(g, 0, "discard 4m", legal=discards_of("7p 4m 1m 2m 3m 9m 1p 2p 5p 8p"))
    act(g, 2, "hu", legal=["hu", "pass"], phase="claim")
    win = g.wins[0]
    assert win["from"] == 0 and fans(win) == {"Under the Sea": 1} and win["value"] == 2
    _done(g, "wall_exhausted", [-2, 0, 2, 0], next_dealer=2)
    assert pay(g) == [(0, 2, 2, "hu")]


def test_wall_end_pung_chain_pung_after_pung_then_unclaimed_discard_ends():
    """§4 wall end: after a pung the claimer discards again and that discard may again
    be punged; the deal ends when the active player's discard is not claimed. Seat 1 draws
    the last tile and discards 7p, the dealer pungs (no kong offered) and discards 4m, seat 2
    pungs 4m (44m 79m: no Hu) and discards 1p, nobody claims: end. All four are not
    ready -> no payment.
    """
    dealer = "777p 4m 123m 99m 12p 58p 9p"
    seat1 = "1p 2p 4p 5p 7p 8p 1s 2s 444s 8s 9s"
    seat2 = "123p 456p 44m 79m 222m"
    assert not is_complete("123p456p444m79m222m") and waits("23p456p79m222m") == []
    g = start({0: dealer, 1: seat1, 2: seat2}, "4s", {0: "void s", 1: "void m", 2: "void s"},
              filler_suits="ms")
    act(g, 0, "discard 9p")
    act(g, 1, "discard 7p")
    act(g, 0, "pung", legal=["pass", "pung"])
    act(g, 0, "discard 4m")
    act(g, 2, "pung", legal=["pass", "pung"], phase="claim")
    assert g.melds(2) == [("pung", "4m")]
    act(g, 2, "discard 1p", legal=discards_of("1p 2p 3p 4p 5p 6p 2m 7m 9m"))
    _done(g, "wall_exhausted", [0, 0, 0, 0], next_dealer=0)
    assert g.payments == [] and g.hu_seats == []


def test_wall_end_settlement_ready_flower_pig_and_kong_refunds():
    """§8 / fine point 13 (mahjongsoft, strict_void off):
    - the dealer declares a concealed kong on its initial turn (2 from each), ends not ready
      -> returns its kong income: one kong_refund of 2 to each payer;
    - seat 1 (45p 666p 123m 456m 99m) is ready: waits 3p (1), 6p (Root, 2), 9m (1) ->
      theoretical maximum 2, paid by each not-ready seat (0, 2, 3);
    - seat 2 (indicator s) draws 2s as the last tile and discards 8m: a flower pig with a
      non-forbidden discard -> 48 to nobody;
    - seat 3 still holds its set-aside 9s (never discarded): a flower pig, exempt from the
      48 (never discarded) but not ready: it pays seat 1.
    Scores: 0: +6 -2 -6 = -2; 1: -2 +6 +2 = 6; 2: -2 -2 -48 +2 = -50; 3: -2 -2 +2 = -2.
    Nobody won: the dealer stays (section 9).
    """
    dealer = "7777m 1m 3m 5m 9m 1p 2p 3p 5p 8p 9p"
    seat1 = "45p 666p 123m 456m 99m"
    seat2 = "2m 3m 4m 5m 6m 8m 1p 2p 3p 4p 7p 8p 9p"
    seat3 = "9s 2m 4m 6m 1p 3p 5p 7p 9p 1s 3s 5s 7s"
    assert waits(seat2) == []
    g = start({0: dealer, 1: seat1, 2: seat2, 3: seat3}, "8m 2s 7p",
              {0: "void s", 1: "void s", 2: "void s", 3: "void 9s"}, rules="mahjongsoft")
    act(g, 0, "kong 7m")
    assert sorted(pay(g)) == [(1, 0, 2, "concealed_kong"), (2, 0, 2, "concealed_kong"),
                              (3, 0, 2, "concealed_kong")]
    act(g, 0, "discard 1m")
    act(g, 1, "discard 8m")
    assert g.wall_left == 0 and g.current_seat == 2
    act(g, 2, "discard 8m")
    last = len(g.events) - 1
    settle = g.payments[3:]
    assert all(p["event"] == last for p in settle)
    assert sorted(pay(g, 3), key=repr) == sorted([
        (0, 1, 2, "ready"), (2, 1, 2, "ready"), (3, 1, 2, "ready"),
        (2, None, 48, "flower_pig"),
        (0, 1, 2, "kong_refund"), (0, 2, 2, "kong_refund"), (0, 3, 2, "kong_refund"),
    ], key=repr)
    _done(g, "wall_exhausted", [-2, 6, -50, -2], next_dealer=0)


def test_wall_end_set_aside_1m_still_held_makes_a_flower_pig():
    """§8 / fine point 13: a seat still holding its set-aside tile when the wall ends is a
    flower pig, whatever kind it set aside -- also 1m, kind 0. The deal of the trace above
    with seat 3 setting aside 1m (its only tile of m, so the set-aside tile alone makes it
    a pig): the step that ends the wall reports seats 2 and 3 as flower pigs (``StepInfo``),
    and the payments are the same (seat 3 never discarded: exempt from the 48).
    """
    dealer = "7777m 1m 3m 5m 9m 1p 2p 3p 5p 8p 9p"
    seat1 = "45p 666p 123m 456m 99m"
    seat2 = "2m 3m 4m 5m 6m 8m 1p 2p 3p 4p 7p 8p 9p"
    seat3 = "1m 2s 4s 6s 1p 3p 5p 7p 9p 1s 3s 5s 7s"
    g = start({0: dealer, 1: seat1, 2: seat2, 3: seat3}, "8m 2s 7p",
              {0: "void s", 1: "void s", 2: "void s", 3: "void 1m"}, rules="mahjongsoft")
    act(g, 0, "kong 7m")
    act(g, 0, "discard 1m")
    act(g, 1, "discard 8m")
    assert g.wall_left == 0 and g.current_seat == 2 and g.state.set_aside[0, 3] == 0
    _, _, _, info = engine.step(g.state, np.array([action_from_str("discard 8m")]), info=True)
    assert info.settled[0]
    assert info.flower_pig[0].tolist() == [False, False, True, True]
    assert info.ready[0].tolist() == [False, True, False, False]
    act(g, 2, "discard 8m")
    assert (3, None, 48, "flower_pig") not in pay(g, 3)
    _done(g, "wall_exhausted", [-2, 6, -50, -2], next_dealer=0)


def test_wall_end_not_ready_kong_declarer_returns_each_kong_payment():
    """§8 / fine point 13: a not-ready player returns all kong income of the deal, one
    kong_refund per original payment. The dealer declares two concealed kongs on its initial
    turn (7m with R1 = 3m, then 2p with R2 = 6p): 2 x 3 payments of 2. Seat 1 draws the last
    tile. Everybody is not ready (same state: no ready payments), so the dealer hands back
    six refunds of 2 and every score is 0.
    """
    dealer = "7777m 2222p 1m 5m 9m 4p 8p 9p"
    assert waits("1m3m5m4p6p8p9p") == []
    g = start({0: dealer}, "1p 6p 3m", {0: "void s"})
    act(g, 0, "kong 7m")
    act(g, 0, "kong 2p")
    assert g.melds(0) == [("concealed_kong", "7m"), ("concealed_kong", "2p")]
    assert sorted(pay(g)) == sorted([(s, 0, 2, "concealed_kong") for s in (1, 2, 3)] * 2)
    act(g, 0, "discard 9m", legal=discards_of("1m 3m 5m 9m 4p 6p 8p 9p"))
    act(g, 1, "discard 1p")
    assert sorted(pay(g, 6)) == sorted([(0, s, 2, "kong_refund") for s in (1, 2, 3)] * 2)
    _done(g, "wall_exhausted", [0, 0, 0, 0], next_dealer=0)


def test_wall_end_flower_pig_exempt_when_every_discard_was_forbidden():
    """Fine point 13: a flower pig whose every discard was of its forbidden suit pays no 48
    but is still not ready: it pays the ready seat. Seat 2 sets aside 1s, holds 3s too; its
    only discard is the set-aside 1s (last tile drawn). Seat 1 ready (max 2) is paid 2 by
    each of 0, 2, 3 (seat 3 is a filler: not ready). No kongs. Scores: [-2, 6, -2, -2].
    """
    dealer = "1m 3m 5m 9m 1p 2p 3p 5p 8p 9p 7m 7m 2m 4m"
    seat1 = "45p 666p 123m 456m 99m"
    seat2 = "1s 3s 2m 4m 6m 8m 1p 2p 3p 4p 7p 8p 9p"
    g = start({0: dealer, 1: seat1, 2: seat2}, "8m 2p",
              {0: "void s", 1: "void s", 2: "void 1s"}, rules="mahjongsoft")
    act(g, 0, "discard 1m")
    act(g, 1, "discard 8m")
    assert g.wall_left == 0
    assert event_like(g.events[-1], seat=2, act="discard", tile="1s", auto=True)
    assert sorted(pay(g)) == [(0, 1, 2, "ready"), (2, 1, 2, "ready"), (3, 1, 2, "ready")]
    _done(g, "wall_exhausted", [-2, 6, -2, -2], next_dealer=0)


def test_wall_end_all_non_hu_ready_means_no_ready_payments():
    """§8: if all non-Hu players are in the same state there are no ready payments.
    All four seats are ready when the wall ends (dealer waits 1p/4p after discarding 9p,
    seat 1 5p/8p, seat 2 2p/5p, seat 3 8p); seat 1 draws the only wall tile 9m and discards
    it -> nobody pays anybody. Nobody won: the dealer stays.
    """
    dealer = "123m 456m 789m 11p 23p 9p"
    seat1 = "123m 456m 789m 55p 67p"
    seat2 = "123s 456s 789s 22s 34p"
    seat3 = "234s 567s 678s 33p 79p"
    assert waits("123m456m789m11p23p") == ["1p", "4p"]
    assert waits(seat1) == ["5p", "8p"] and waits(seat2) == ["2p", "5p"]
    assert waits(seat3) == ["8p"]
    g = start({0: dealer, 1: seat1, 2: seat2, 3: seat3}, "9m",
              {0: "void s", 1: "void s", 2: "void m", 3: "void m"})
    act(g, 0, "discard 9p")
    act(g, 1, "discard 9m", legal=discards_of("123456789m 5p 6p 7p"))
    _done(g, "wall_exhausted", [0, 0, 0, 0], next_dealer=0)
    assert g.payments == []


def test_next_dealer_unchanged_when_nobody_wins_and_turns_start_at_dealer():
    """Section 9: nobody Hu -> the dealer stays. Dealer = seat 2 (from_deal dealer=2): void
    choices still go 0, 1, 2, 3; the dealer's initial turn is seat 2's; seat 3 draws the only
    wall tile and discards it; the deal ends with all four not ready: no payments.
    """
    dealer = "1m 2m 4m 5m 7m 8m 1p 2p 4p 5p 7p 8p 9p 9m"
    g = start({2: dealer}, "6s", {2: "void s"}, dealer=2, filler_suits="ms")
    assert g.current_seat == 2 and g.wall_left == 1
    act(g, 2, "discard 9m")
    act(g, 3, "discard 6s")
    _done(g, "wall_exhausted", [0, 0, 0, 0], next_dealer=2)


# ======================================================================== illegal actions


def test_illegal_action_raises_and_changes_nothing():
    """Contract: an illegal action raises IllegalActionError (a ValueError) naming the seat,
    the action and the legal options; legal(), hands, scores and events stay unchanged.
    Checked in the claim phase (pung offered, kong not) and on a turn.
    """
    seat1 = "66p 123s 456s 789s 1p 2p"
    g = start({0: "6p 123456789m 2p 4p 8p 9p", 1: seat1}, "1m 2m", {0: "void s", 1: "void m"})
    act(g, 0, "discard 6p")
    for bad in ("kong", "hu", "discard 1p", "void 1p"):
        before = (g.current_seat, g.phase, g.legal(), [g.hand(s) for s in range(4)],
                  list(g.scores), len(g.events), len(g.payments), g.wall_left)
        with pytest.raises(IllegalActionError) as info:
            g.play(bad)
        assert isinstance(info.value, ValueError)
        message = str(info.value)
        assert "1" in message and bad in message and "pung" in message
        after = (g.current_seat, g.phase, g.legal(), [g.hand(s) for s in range(4)],
                 list(g.scores), len(g.events), len(g.payments), g.wall_left)
        assert after == before
    with pytest.raises(ValueError):  # a malformed action string is a ValueError too
        g.play("dance")
    assert g.current_seat == 1 and g.legal() == ["pass", "pung"]
    act(g, 1, "pung", legal=["pass", "pung"])
    with pytest.raises(IllegalActionError):
        g.play("kong 6p")
    assert g.legal() == discards_of("1p 2p 1s 2s 3s 4s 5s 6s 7s 8s 9s")


# =============================================================== invariants, random play


@pytest.mark.parametrize("rules", ["mil", "mahjongsoft"])
def test_random_games_payments_balance_and_match_scores(rules):
    """§7/8: every payment is a transfer, except the flower-pig penalty (to None, 48):
    sum(scores) == -48 * (number of flower_pig payments); each seat's payments add up to
    g.scores. Hu players never act again. legal() is sorted. The record matches the game.
    """
    for seed in range(12):
        g = Game.new(seed=seed, rules=rules)
        rng = random.Random(seed)
        steps = 0
        while not g.done:
            legal = g.legal()
            assert legal == sorted(legal) and legal
            assert g.current_seat not in g.hu_seats
            # prefer Hu and kongs sometimes, to reach the special rules
            strong = [a for a in legal if a == "hu" or a.startswith("kong")]
            g.play(rng.choice(strong) if strong and rng.random() < 0.7 else rng.choice(legal))
            steps += 1
            assert steps < 1000
        assert g.end in ("three_hu", "wall_exhausted")
        for p in g.payments:
            if p["reason"] == "flower_pig":
                assert p["to"] is None and p["points"] == 48
            else:
                assert p["to"] is not None and p["from"] != p["to"] and p["points"] > 0
        # payments are listed in the order they happened
        assert [p["event"] for p in g.payments] == sorted(p["event"] for p in g.payments)
        pigs = sum(p["reason"] == "flower_pig" for p in g.payments)
        assert sum(g.scores) == -48 * pigs
        assert seat_totals(g.payments) == g.scores
        assert g.next_dealer in range(4)
        hu_index = {w["seat"]: w["event"] for w in g.wins}
        for i, e in enumerate(g.events):
            if e["seat"] in hu_index:
                assert i <= hu_index[e["seat"]]
        rec = g.record()
        assert rec["format"] == "sichuan-record/1"
        assert rec["scores"] == g.scores and rec["end"] == g.end
        assert rec["payments"] == g.payments and rec["wins"] == g.wins
        assert len(rec["wall"]) == 55
        assert [len(h) for h in rec["hands"]] == [14, 13, 13, 13]
        for w in g.wins:
            assert w["value"] == 2 ** min(sum(w["fans"].values()), rec["rules"]["fan_cap"])


def test_helpers_agree_with_rules_section_11_waits():
    """Self-check of the trace helper's wait finder against §11 (a few rows)."""
    assert waits("2p2p2p3p") == ["1p", "3p", "4p"]
    assert waits("2p3p4p5p6p 9s9s") == ["1p", "4p", "7p"]
    assert waits("2p2p2p3p4p4p4p") == ["1p", "2p", "3p", "4p", "5p"]
    assert waits("2s2s2s3s4s2m2m") == ["2m", "2s", "5s"]
    assert counts("5m")[4] == 1 and compact("5p 1m 1m") == "11m5p"

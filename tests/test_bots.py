"""Rule bots on constructed positions, and never an illegal action."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_agents.bots.greedy import GreedyAgent
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_env.core import engine
from sichuan_env.core.actions import HU, PASS, PUNG, action_from_str, action_to_str
from sichuan_env.core.tiles import parse_tile
from sichuan_env.seats.agent import agent_input, make_agent, validate_agent

BOTS = [GreedyAgent, RulesAgent]


def _decide(agent, st):
    mask = engine.legal_mask(st)
    rows = np.arange(st.batch_size)
    return agent.act_batch(agent_input(agent, st, st.current.astype(np.intp), rows), mask), mask


def _state_with(hand14: str, void: str, melds: dict[str, int] | None = None):
    """A TURN state for seat 0 holding ``hand14`` (14 - 3n tiles) with void suit set."""
    from sichuan_env.core.state import TURN
    from sichuan_env.core.tiles import as_counts

    st = engine.reset([0], "mil")
    st.hand[0] = 0
    st.hand[0, 0] = as_counts(hand14)
    st.void[0] = ["mps".index(void), 0, 0, 0]
    st.void_revealed[0] = True
    st.set_aside[0] = -1
    st.phase[0] = TURN
    st.current[0] = 0
    st.active[0] = 0
    st.drawn_tile[0] = -1
    for k, code in (melds or {}).items():
        st.meld[0, 0, parse_tile(k)] = code
    return st


@pytest.mark.parametrize("bot", BOTS)
def test_void_tile_goes_first(bot):
    st = _state_with("123456789m1123p5s", "s")
    a, mask = _decide(bot(), st)
    assert action_to_str(a[0]) == "discard 5s"


@pytest.mark.parametrize("bot", BOTS)
def test_takes_self_drawn_hu(bot):
    st = _state_with("123456789m11234p", "s")
    a, mask = _decide(bot(), st)
    assert mask[0, HU] and a[0] == HU


@pytest.mark.parametrize("bot", BOTS)
def test_prefers_better_shape(bot):
    # 123456789m + 11p + 24p + 9p: throwing 9p keeps a ready hand (waits 3p)
    st = _state_with("123456789m1124p9p", "s")
    a, _ = _decide(bot(), st)
    assert action_to_str(a[0]) == "discard 9p"


def test_greedy_prefers_more_live_effective_tiles():
    # 123456789m 11p + 2p 4p 6p: throwing 2p waits on 5p, throwing 6p waits on 3p; two 3p
    # are already on the table, so 5p has more live copies
    st = _state_with("123456789m112p46p", "s")
    st.live_discards[0, parse_tile("3p")] = 2
    a, _ = _decide(GreedyAgent(), st)
    assert action_to_str(a[0]) == "discard 2p"
    st = _state_with("123456789m112p46p", "s")
    st.live_discards[0, parse_tile("5p")] = 2
    a, _ = _decide(GreedyAgent(), st)
    assert action_to_str(a[0]) == "discard 6p"


def _claim_state(hand13: str, void: str, tile: str):
    """A CLAIM window where seat 1 discarded ``tile`` and seat 0 may answer."""
    from sichuan_env.core.state import CLAIM, OPT_HU, OPT_KONG, OPT_PUNG
    from sichuan_env.core.tiles import as_counts

    st = _state_with("1m", void)  # placeholder, rewritten below
    st.hand[0, 0] = as_counts(hand13)
    t = parse_tile(tile)
    st.phase[0] = CLAIM
    st.active[0] = 1
    st.current[0] = 0
    st.claim_tile[0] = t
    st.live_discards[0, t] += 1
    h = st.hand[0, 0]
    opts = 0
    if h[t] >= 2:
        opts |= OPT_PUNG
    if h[t] == 3:
        opts |= OPT_KONG
    hh = h.copy()
    hh[t] += 1
    from sichuan_env.core import hands as hx

    if hx.batch_is_complete(hh[None], np.array([0]), np.array(["mps".index(void)]))[0]:
        opts |= OPT_HU
    st.claim_opts[0] = 0
    st.claim_opts[0, 0] = opts
    return st


@pytest.mark.parametrize("bot", BOTS)
def test_takes_hu_on_discard(bot):
    st = _claim_state("123456789m1123p", "s", "4p")
    a, mask = _decide(bot(), st)
    assert mask[0, HU] and a[0] == HU


def test_greedy_pungs_only_when_not_worse():
    # 55p in a hand far from using them: pung keeps shanten -> pung
    st = _claim_state("123456789m55p19p", "s", "5p")
    a, mask = _decide(GreedyAgent(), st)
    assert mask[0, PUNG] and a[0] == PUNG
    # seven-pairs-ish hand where the pair is needed: 11m 33m 55m 77m 99m 22p 4p
    st = _claim_state("1133557799m224p", "s", "2p")
    a, mask = _decide(GreedyAgent(), st)
    assert mask[0, PUNG]
    assert a[0] == PASS


def test_void_choice_by_shape():
    st = engine.reset([3], "mil")
    from sichuan_env.core.tiles import as_counts

    st.hand[0, 0] = as_counts("1234567m123456p9s")
    a, mask = _decide(GreedyAgent(), st)
    assert action_to_str(a[0]) == "void 9s"


@pytest.mark.parametrize("name", ["greedy", "rules", "random"])
def test_never_illegal(name):
    validate_agent(make_agent(name, seed=3), n_deals=96, seed=11)
    validate_agent(make_agent(name, seed=4), n_deals=32, seed=500, rules="mahjongsoft")


def test_registry():
    assert isinstance(make_agent("greedy"), GreedyAgent)
    assert isinstance(make_agent("rules"), RulesAgent)
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("nope")
    with pytest.raises((ValueError, FileNotFoundError)):
        make_agent("ppo:/nonexistent/model.zip")


def test_action_strings_roundtrip():
    assert action_from_str("discard 5s") == parse_tile("5s")


@pytest.mark.slow
def test_play_cli_auto_first():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "sichuan_env.play", "--opponents", "rules",
                        "--seed", "3", "--auto-first"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "deal over" in r.stdout and "legal:" in r.stdout


@pytest.mark.slow
def test_play_cli_rejects_illegal_choice():
    import subprocess
    import sys

    # seat 0 first chooses a void: 'pung' is illegal now, 'nonsense' is not understood
    r = subprocess.run([sys.executable, "-m", "sichuan_env.play", "--opponents", "greedy",
                        "--seed", "1"], input="pung\nnonsense\n", capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "illegal: pung; legal: " in r.stdout
    assert "not understood" in r.stdout
    assert "void " in r.stdout.split("illegal: pung; legal: ")[1].splitlines()[0]
    assert "(end of input)" in r.stdout


def test_rules_two_step_lookahead():
    # 1-shanten either way with the same number of effective draws; after 9p goes, the
    # draws lead to ready hands with more waits than after 2m goes
    st = _state_with("23457778m345679p", "s")
    st.void[0] = [2, -1, -1, -1]
    st.void_revealed[0] = [True, False, False, False]
    a, _ = _decide(GreedyAgent(), st)
    assert action_to_str(a[0]) == "discard 2m"
    a, _ = _decide(RulesAgent(void_bonus=0.0, wait_value=0.0), st)
    assert action_to_str(a[0]) == "discard 9p"


@pytest.mark.parametrize("opp_void, keep", [("m", "9m"), ("p", "9p")])
def test_rules_waits_on_a_suit_an_opponent_voided(opp_void, keep):
    # four sets + 9m + 9p: a single wait on either; wait on the suit an opponent throws
    st = _state_with("123456m9m123456p9p", "s")
    st.void[0] = [2, "mps".index(opp_void), 2, 2]
    a, _ = _decide(RulesAgent(), st)
    other = "9p" if keep == "9m" else "9m"
    assert action_to_str(a[0]) == f"discard {other}"


def test_rules_pungs_only_when_the_hand_gets_better():
    # ready on 1p/4p (8 live copies); punging 5p would leave a single wait: pass
    st = _claim_state("123456789m2355p", "s", "5p")
    a, mask = _decide(GreedyAgent(), st)
    assert mask[0, PUNG] and a[0] == PUNG
    a, _ = _decide(RulesAgent(), st)
    assert a[0] == PASS
    # a pair of no use to the hand: the pung (a free turn) is taken
    st = _claim_state("123456789m55p19p", "s", "5p")
    a, mask = _decide(RulesAgent(), st)
    assert mask[0, PUNG] and a[0] == PUNG


def test_rules_passes_a_cheap_discard_hu_to_fish_for_a_self_draw():
    # ready on 1p/4p; 1p is offered for a 1-point Hu, 4p still has 4 live copies
    st = _claim_state("123456789m2355p", "s", "1p")
    a, mask = _decide(RulesAgent(), st)
    assert mask[0, HU] and a[0] == PASS
    a, _ = _decide(GreedyAgent(), st)
    assert a[0] == HU
    # late in the deal the Hu is taken
    st.wall_front[0] = st.wall_back[0] - 10
    a, _ = _decide(RulesAgent(), st)
    assert a[0] == HU

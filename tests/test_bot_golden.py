"""The rule bots decide exactly as before they read the seat view.

* ``tests/data/bot_actions.json`` holds digests of the actions of greedy, rules and the
  kept RulesAgent options over seeded play under both presets (``tests/support/bot_golden.py``),
  recorded when the bots still decoded observation planes; the bots must reproduce them.
* :class:`sichuan_agents.bots.greedy.Seen` (derived from the seat view) equals, array by array, what
  the former decoder of observation planes (``tests/support/reference_bot_view.py``) gave.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from sichuan_agents.bots.greedy import GreedyAgent, Seen
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_env.core import engine
from sichuan_env.seats.agent import RandomAgent, agent_input, agent_needs, input_row
from sichuan_env.seats.observation import encode
from sichuan_env.seats.view import seat_view

from support import bot_golden
from support.reference_bot_view import view_from_observation


@pytest.mark.parametrize("preset", bot_golden.PRESETS)
def test_bot_actions_match_the_golden_digests(preset):
    want = json.loads(bot_golden.DATA.read_text())[preset]
    got = bot_golden.digests_for(preset)
    assert got["decisions"] >= 1500
    assert set(got) == set(want)
    for name in bot_golden.CONFIGS:
        assert got[name] == want[name], f"{name} ({preset}) decides differently"


def _states(preset, tables=48, steps=160, seed=7):
    """Live rows of states along seeded games (greedy seats 0/2, random seats 1/3)."""
    st = engine.reset(np.arange(seed, seed + tables), preset)
    bots = [GreedyAgent(), RandomAgent(seed)]
    for _ in range(steps):
        live = np.flatnonzero(~st.done)
        if not live.size:
            return
        yield st, live
        mask = st.legal_action_mask[live]
        seats = st.current[live].astype(np.intp)
        acts = np.zeros(st.batch_size, np.int64)
        for k, bot in enumerate(bots):
            r = np.flatnonzero(seats % 2 == k)
            acts[live[r]] = bot.act_batch(agent_input(bot, st, seats[r], live[r]), mask[r])
        st, _, _ = engine.step(st, acts, inplace=True)


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_seen_matches_the_former_plane_decoder(preset):
    checked = 0
    for st, live in _states(preset):
        # the deciding seat and also a seat that is not deciding
        for seats in (st.current[live].astype(np.intp), (st.current[live] + 1) % 4):
            new = Seen(seat_view(st, seats, live))
            old = view_from_observation(encode(st, seats, live))
            for f in Seen.FIELDS:
                a, b = getattr(new, f), getattr(old, f)
                assert a.shape == b.shape and np.array_equal(a, b), f
            checked += live.size
    assert checked > 5000


def test_planes_are_refused_with_a_clear_error():
    st = engine.reset([1], "mil")
    mask = st.legal_action_mask
    planes = encode(st, st.current.astype(np.intp))
    for bot in (GreedyAgent(), RulesAgent()):
        assert agent_needs(bot) == "view"
        with pytest.raises(TypeError, match="seat view.*seat_view\\(state, seats, rows\\)"):
            bot.act_batch(planes, mask)
        with pytest.raises(TypeError, match="observation planes are not accepted"):
            bot.act(planes[0], mask[0])
        view = seat_view(st, st.current.astype(np.intp))
        with pytest.raises(ValueError, match="one view row per mask row"):
            bot.act_batch(view, np.repeat(mask, 2, 0))
        # one row without the batch axis, as act receives it
        a = bot.act(input_row(view, 0), mask[0])
        assert isinstance(a, int) and a == int(bot.act_batch(view, mask)[0]) and mask[0, a]


def test_agent_input_follows_needs():
    st = engine.reset([1, 2, 3], "mil")
    rows = np.array([0, 2])
    seats = st.current[rows].astype(np.intp)
    view = agent_input(GreedyAgent(), st, seats, rows)
    want = seat_view(st, seats, rows)
    assert all(np.array_equal(a, b) for a, b in zip(view, want, strict=True))
    assert np.array_equal(agent_input(object(), st, seats, rows), encode(st, seats, rows))
    assert agent_input(RandomAgent(0), st, seats, rows).shape == (2, 0)

    class Odd:
        needs = "everything"

    with pytest.raises(ValueError, match="needs must be one of nothing, view, planes"):
        agent_input(Odd(), st, seats, rows)


@pytest.mark.parametrize("option", ["value=true", "danger_weight=0.5", "fold_wall=20",
                                    "pung_strict=true", "defence=false", "fan_cap=4"])
def test_removed_rules_options_are_refused(option):
    from sichuan_env.seats.agent import AgentSpecError, make_agent

    with pytest.raises(AgentSpecError, match="unexpected keyword argument"):
        make_agent(f"rules?{option}")
    assert isinstance(make_agent("rules?pung_margin=10&fish_live=4"), RulesAgent)


def test_base_agent_defaults_pass_seat_view_rows():
    from sichuan_env.seats.agent import BaseAgent, validate_agent
    from sichuan_env.seats.view import SeatView

    seen = []

    class OneAtATime(BaseAgent):  # implements act only, on one row of the view
        needs = "view"

        def act(self, view, mask):
            assert isinstance(view, SeatView) and view.hand.shape == (27,)
            seen.append(int(view.seat))
            return int(np.flatnonzero(mask)[0])

    class Batched(BaseAgent):  # implements act_batch only
        needs = "view"

        def act_batch(self, views, masks):
            assert isinstance(views, SeatView) and views.hand.shape == (masks.shape[0], 27)
            return masks.argmax(1)

    validate_agent(OneAtATime(), n_deals=2, seed=5)
    validate_agent(Batched(), n_deals=2, seed=5)
    assert set(seen) == {0, 1, 2, 3}
    st = engine.reset([4], "mil")
    view = seat_view(st, st.current.astype(np.intp))
    assert Batched().act(input_row(view, 0), st.legal_action_mask[0]) == int(
        st.legal_action_mask[0].argmax())

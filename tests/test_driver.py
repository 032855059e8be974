"""The one driver loop (sichuan_env.seats.driver): inputs by what an agent needs, one legality
check and message, held tables, and every caller going through it."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS, action_to_str
from sichuan_env.core.engine import IllegalActionError
from sichuan_env.seats.agent import BaseAgent, RandomAgent, validate_agent
from sichuan_env.seats.driver import (
    NO_OBSERVATION,
    agent_input,
    agent_needs,
    builtin_random_rng,
    check_action,
    check_actions,
    choose,
    opponent_seats,
    play_step,
    play_until_learner,
)
from sichuan_env.seats.observation import N_CHANNELS, encode
from sichuan_env.seats.view import SeatView, seat_view


def lowest_legal(masks: np.ndarray) -> np.ndarray:
    return np.asarray(masks).argmax(1).astype(np.int64)


class ViewBot(BaseAgent):
    """Discards the kind it holds most of when that is legal, else the lowest legal action;
    records what it was given."""

    needs = "view"

    def __init__(self) -> None:
        self.calls: list[tuple[SeatView, np.ndarray]] = []

    def act_batch(self, views, masks):
        assert isinstance(views, SeatView)
        self.calls.append((views, np.asarray(masks).copy()))
        out = lowest_legal(masks)
        most = np.asarray(views.hand).argmax(1)  # discard actions are 0..26
        ok = np.asarray(masks)[np.arange(len(out)), most]
        out[ok] = most[ok]
        return out


class PlanesBot(BaseAgent):
    needs = "planes"

    def __init__(self) -> None:
        self.shapes: list[tuple[int, ...]] = []

    def act_batch(self, obs, masks):
        self.shapes.append(np.asarray(obs).shape)
        return lowest_legal(masks)


class NothingBot(BaseAgent):
    needs = "nothing"

    def __init__(self) -> None:
        self.shapes: list[tuple[int, ...]] = []

    def act_batch(self, obs, masks):
        self.shapes.append(np.asarray(obs).shape)
        return lowest_legal(masks)


class AlwaysPass(BaseAgent):
    needs = "nothing"
    name = "always-pass"

    def act_batch(self, obs, masks):
        return np.full(len(masks), 87)


def test_agent_needs():
    assert agent_needs(PlanesBot()) == "planes"
    assert agent_needs(BaseAgent()) == "planes"
    assert agent_needs(object()) == "planes"
    assert agent_needs(ViewBot()) == "view"
    assert agent_needs(NothingBot()) == "nothing"
    assert not hasattr(BaseAgent, "needs_observation")  # only ``needs`` says it
    assert agent_needs(RandomAgent(0)) == "nothing"

    class Bad(BaseAgent):
        needs = "everything"

    with pytest.raises(ValueError, match="needs must be one of nothing, view, planes"):
        agent_needs(Bad())


def test_agent_input_follows_needs():
    st = engine.reset([3, 4, 5])
    rows = np.array([2, 0])
    seats = st.current[rows].astype(np.intp)
    planes = agent_input(PlanesBot(), st, seats, rows)
    np.testing.assert_array_equal(planes, encode(st, seats, rows))
    assert planes.shape == (2, N_CHANNELS, 27)
    view = agent_input(ViewBot(), st, seats, rows)
    expected = seat_view(st, seats, rows)
    for got, want in zip(view, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    assert agent_input(NothingBot(), st, seats, rows).shape == (2, 0)
    assert NO_OBSERVATION(4).shape == (4, 0) and NO_OBSERVATION(4).dtype == np.float32


def _play_deals(agent_for_every_seat, seeds) -> np.ndarray:
    st = engine.reset(seeds)
    while not st.done.all():
        live = np.flatnonzero(~st.done)
        play_step(st, live, [agent_for_every_seat])
    return st.scores.copy()


def test_view_planes_and_nothing_agents_play_the_same_when_they_choose_the_same():
    """A bot's choice must not depend on the form of its input: three bots that choose the
    lowest legal action, each given another input, play the same deals."""
    seeds = [11, 12, 13, 14]

    class ViewLowest(BaseAgent):
        needs = "view"

        def act_batch(self, views, masks):
            assert isinstance(views, SeatView) and views.hand.shape == (len(masks), 27)
            return lowest_legal(masks)

    planes, nothing = PlanesBot(), NothingBot()
    a = _play_deals(planes, seeds)
    b = _play_deals(nothing, seeds)
    c = _play_deals(ViewLowest(), seeds)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert {s[1:] for s in planes.shapes} == {(N_CHANNELS, 27)}
    assert {s[1:] for s in nothing.shapes} == {(0,)}


def test_view_bot_gets_the_view_of_the_seat_to_act():
    st = engine.reset([21, 22, 23])
    bot = ViewBot()
    for _ in range(60):
        live = np.flatnonzero(~st.done)
        if not live.size:
            break
        before = st.copy()
        play_step(st, live, [bot])
        views, masks = bot.calls[-1]
        np.testing.assert_array_equal(views.seat, before.current[live])
        np.testing.assert_array_equal(views.hand,
                                      before.hand[live, before.current[live]])
        np.testing.assert_array_equal(masks, before.legal_action_mask[live])


def test_one_call_per_agent_in_order_with_its_rows():
    st = engine.reset([1, 2, 3, 4, 5])
    calls = []

    class Rec(BaseAgent):
        needs = "nothing"

        def __init__(self, k):
            self.k = k

        def act_batch(self, obs, masks):
            calls.append((self.k, len(masks)))
            return lowest_legal(masks)

    rows = np.array([4, 0, 3, 1])
    who = np.array([1, 0, 1, 1])
    acts = choose(st, rows, [Rec(0), Rec(1), Rec(2)], who)
    assert calls == [(0, 1), (1, 3)]
    np.testing.assert_array_equal(acts, st.legal_action_mask[rows].argmax(1))


def test_illegal_action_message_names_agent_table_seat_action_and_legal_options():
    st = engine.reset([7, 8])
    before = st.copy()
    with pytest.raises(IllegalActionError) as err:
        play_step(st, np.array([0, 1]), [AlwaysPass()],
                  table_label=lambda t: f"deal {t + 100}")
    msg = str(err.value)
    legal = sorted(action_to_str(x) for x in np.flatnonzero(before.legal_action_mask[0]))
    assert msg == (f"always-pass chose illegal action 87 (pass) at deal 100, seat "
                   f"{int(before.current[0])}; legal: {legal}")
    for got, want in zip(st.arrays(), before.arrays(), strict=True):  # nothing changed
        np.testing.assert_array_equal(got, want)


def test_check_actions_shapes_types_and_range():
    masks = np.zeros((2, N_ACTIONS), bool)
    masks[:, 5] = True
    rows, seats = np.array([3, 4]), np.array([0, 1])
    np.testing.assert_array_equal(check_actions([5, 5], masks, rows, seats, who="x"), [5, 5])
    with pytest.raises(ValueError, match=r"x returned actions of shape \(3,\), expected \(2,\)"):
        check_actions([5, 5, 5], masks, rows, seats, who="x")
    with pytest.raises(ValueError, match="x returned float64 actions, expected integers"):
        check_actions([5.0, 5.0], masks, rows, seats, who="x")
    with pytest.raises(IllegalActionError, match=r"illegal action 88 \(out of range\) at "
                                                 r"table 4, seat 1; legal: \['discard 6m'\]"):
        check_actions([5, 88], masks, rows, seats, who="x")
    with pytest.raises(IllegalActionError, match=r"illegal action -1 \(out of range\)"):
        check_actions([-1, 5], masks, rows, seats, who="x")


@pytest.mark.parametrize("bad", [None, "void s", "3", 2.5, np.float64(2.0), True, [3],
                                 np.array([3])])
def test_check_action_accepts_integers_only(bad):
    mask = np.zeros(N_ACTIONS, bool)
    mask[[2, 3]] = True
    with pytest.raises(TypeError, match=r"seat 1: an action is an integer 0\.\.87 .*got "):
        check_action(bad, mask, "seat 1")


def test_check_action_integers():
    mask = np.zeros(N_ACTIONS, bool)
    mask[[2, 3]] = True
    for good in (2, np.int64(3), np.uint8(2), np.int8(3), np.array(3)):
        assert check_action(good, mask, "w") == int(good) and type(check_action(good, mask,
                                                                               "w")) is int
    for bad in (4, -1, 88, np.int64(1000)):
        with pytest.raises(IllegalActionError, match=r"w: illegal action .*; legal: "):
            check_action(bad, mask, "w")


@settings(max_examples=20, deadline=None)
@given(st_.lists(st_.booleans(), min_size=6, max_size=6), st_.integers(0, 2**31))
def test_play_step_holds_the_other_tables(moving, seed):
    st = engine.reset(list(range(seed, seed + 6)))
    rows = np.flatnonzero(moving)
    before = st.copy()
    reference = before.take(rows) if rows.size else None
    acts, (st, rewards, done) = play_step(st, rows, [NothingBot()])
    held = np.flatnonzero(~np.asarray(moving))
    for got, want in zip(st.take(held).arrays(), before.take(held).arrays(), strict=True):
        np.testing.assert_array_equal(got, want)
    assert not rewards[held].any() and not done[held].any()
    if rows.size:  # the moving tables as if stepped alone
        alone, r_alone, _ = engine.step(reference, acts)
        for got, want in zip(st.take(rows).arrays(), alone.arrays(), strict=True):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(rewards[rows], r_alone)


def test_validate_agent_with_a_view_bot_and_an_act_only_view_bot():
    validate_agent(ViewBot(), n_deals=2, seed=5)

    class ActOnlyView(BaseAgent):
        needs = "view"

        def act(self, view, mask):
            assert isinstance(view, SeatView) and view.hand.shape == (27,)  # one row, no batch axis
            return int(np.flatnonzero(mask)[0])

    validate_agent(ActOnlyView(), n_deals=2, seed=6)
    with pytest.raises(IllegalActionError, match=r"always-pass \(act_batch\) chose illegal "
                                                 r"action 87 \(pass\) at table 0 \(seed 0\)"):
        validate_agent(AlwaysPass(), n_deals=2)


def test_view_bot_in_every_caller():
    pytest.importorskip("stable_baselines3")
    from sichuan_agents.arena import run_arena
    from sichuan_env.envs.gym_env import SichuanSingleEnv
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.play.terminal import play

    bot = ViewBot()
    res = run_arena([bot, "random", "random", "random"], deals=8, seed=2, tables=3)
    assert res.stats[res.names[0]]["seat_deals"] == 8 and bot.calls

    bot = ViewBot()
    venv = SichuanVecEnv(4, learner_seats=(0, 2), opponents=bot, seed=1)
    venv.reset()
    for _ in range(30):
        venv.step(venv.action_masks().argmax(1))
    assert bot.calls
    teacher_views = venv.learner_inputs(ViewBot())
    assert isinstance(teacher_views, SeatView)
    np.testing.assert_array_equal(teacher_views.seat, venv.learner)
    np.testing.assert_array_equal(venv.learner_inputs(PlanesBot()), venv._observe())

    bot = ViewBot()
    env = SichuanSingleEnv(opponents=bot)
    _, info = env.reset(seed=4)
    term = False
    while not term:
        _, _, term, _, info = env.step(int(info["action_mask"].argmax()))
    assert bot.calls

    bot = ViewBot()
    out = io.StringIO()
    play([bot], seat=2, seed=1, auto_first=True, stdout=out)
    assert bot.calls and "deal over" in out.getvalue()


def test_illegal_opponents_are_reported_the_same_way_everywhere():
    pytest.importorskip("stable_baselines3")
    from sichuan_agents.arena import run_arena
    from sichuan_env.envs.gym_env import SichuanSingleEnv
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.play.terminal import play

    pattern = r"always-pass chose illegal action 87 \(pass\) at {} \d+, seat \d; legal: \["
    with pytest.raises(IllegalActionError, match=pattern.format("deal")):
        run_arena([AlwaysPass(), "random", "random", "random"], deals=4, seed=1, tables=2)
    with pytest.raises(IllegalActionError, match=pattern.format("slot")):
        venv = SichuanVecEnv(2, learner_seats=(0,), opponents=AlwaysPass(), seed=1)
        venv.reset()  # seat 0 chooses its void first
        venv.step(venv.action_masks().argmax(1))
    with pytest.raises(IllegalActionError, match=pattern.format("table")):
        SichuanSingleEnv(learner_seat=1, opponents=AlwaysPass()).reset(seed=1)
    with pytest.raises(IllegalActionError, match=pattern.format("table")):
        play([AlwaysPass()], seat=3, seed=1, auto_first=True, stdout=io.StringIO())


def _same_state(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.arrays(), b.arrays(), strict=True))


@pytest.mark.parametrize("bad", [None, "void s", 2.5, np.float32(3.0), True])
def test_raw_env_step_rejects_non_integers_and_changes_nothing(bad):
    from sichuan_env.envs.aec import raw_env

    e = raw_env()
    e.reset(seed=2)
    before = e.engine_state.copy()
    agent = e.agent_selection
    with pytest.raises(TypeError, match=rf"{agent}: an action is an integer 0\.\.87 "
                                        rf"\(Python or numpy\), got .*legal: \["):
        e.step(bad)
    assert _same_state(e.engine_state, before) and e.agent_selection == agent
    legal = int(np.flatnonzero(e.observe(agent)["action_mask"])[0])
    e.step(np.int64(legal))  # a numpy integer is fine
    assert not _same_state(e.engine_state, before)


@pytest.mark.parametrize("mode", ["terminate", "raise"])
@pytest.mark.parametrize("bad", [None, "void s", 2.5])
def test_gym_step_rejects_non_integers_in_both_modes(mode, bad):
    from sichuan_env.envs.gym_env import SichuanSingleEnv

    env = SichuanSingleEnv(illegal_action=mode)
    _, info = env.reset(seed=3)
    before = env.state.copy()
    with pytest.raises(TypeError, match=r"learner \(seat 0\): an action is an integer"):
        env.step(bad)
    assert _same_state(env.state, before)
    env.step(np.int64(info["action_mask"].argmax()))  # still playable


def test_vector_step_rejects_non_integer_actions():
    pytest.importorskip("stable_baselines3")
    from sichuan_env.envs.vector import SichuanVecEnv

    venv = SichuanVecEnv(3, seed=0)
    venv.reset()
    before = venv.state.copy()
    good = venv.action_masks().argmax(1)
    with pytest.raises(TypeError, match=r"actions must be integers 0\.\.87 .*got float64"):
        venv.step(good + 0.5)
    with pytest.raises(TypeError, match="got object"):
        venv.step(np.array([None] * 3))
    assert _same_state(venv.state, before)
    with pytest.raises(IllegalActionError, match=r"the learner chose illegal action 87 "
                                                 r"\(pass\) at slot 0, seat 0; legal: \["):
        venv.step(np.full(3, 87))
    assert _same_state(venv.state, before)
    venv.step(good.astype(np.uint8))


# ----------------------------------------------------------------------------- play_until_learner


@pytest.mark.parametrize("seed", [0, 3])
def test_play_until_learner_stops_at_learner_seats_and_adds_up_the_points(seed):
    """Seats 1 and 3 played by two random agents: every table ends finished or waiting
    for seat 0 or 2; the points returned are the score changes meanwhile; the same moves
    as a loop of play_step by hand."""
    st = engine.reset(np.arange(seed, seed + 6))
    ref = st.copy()
    seat_agent = np.array([-1, 0, -1, 1])
    before = st.scores.astype(np.float64)
    paid = play_until_learner(st, seat_agent, [RandomAgent(1), RandomAgent(2)])
    assert paid.shape == (6, 4) and paid.dtype == np.float64
    waiting = ~st.done
    assert np.isin(st.current[waiting], (0, 2)).all()
    np.testing.assert_array_equal(paid[waiting], st.scores[waiting] - before[waiting])
    agents = [RandomAgent(1), RandomAgent(2)]
    while True:  # by hand
        live = np.flatnonzero(~ref.done)
        who = seat_agent[ref.current[live]]
        if not (who >= 0).any():
            break
        play_step(ref, live[who >= 0], agents, who[who >= 0])
    assert _same_state(st, ref)


def test_play_until_learner_rows_per_table_seats_and_rewards():
    """Only ``rows`` move; a (B, 4) seat_agent plays other seats per table; ``rewards``
    is added to; an all-agent table plays to the end."""
    st = engine.reset([5, 6, 7])
    seat_agent = np.full((3, 4), -1)
    seat_agent[0] = 0  # table 0: every seat an agent
    seat_agent[2, 1:] = 0
    untouched = st.take([1])
    acc = np.ones((3, 4))
    out = play_until_learner(st, seat_agent, [RandomAgent(0)], rows=np.array([0, 2]),
                             rewards=acc)
    assert out is acc
    assert st.done[0] and not st.done[2] and st.current[2] == 0
    assert _same_state(st.take([1]), untouched)
    np.testing.assert_array_equal(acc[0], 1 + st.scores[0])


class SeededRandom(RandomAgent):
    """RandomAgent's draws through its own act_batch (not the compiled fast path)."""


def _restart_log(calls):
    def finished(batch, rows, tables):
        calls.append((batch.batch_size, rows.tolist(), tables.tolist()))
        engine.new_matches(batch, rows)
    return finished


@pytest.mark.parametrize("limit", [2, 10_000])
def test_play_until_learner_restarts_finished_tables_and_copies_held_ones(limit):
    """``finished`` sees every finished table before the next round and restarts it,
    so every table ends waiting for its learner; with more than ``hold_limit`` tables
    held the moving ones are played on a copy: the same moves, points and finished tables
    as without the copy (B > 16)."""
    B = 24
    learner = np.arange(B) % 4
    agents, seat_agent = opponent_seats([SeededRandom(3)] * 3, learner)
    results = []
    for lim in (limit, None):
        st = engine.reset(np.arange(40, 40 + B))
        for a in agents:
            a.rng = np.random.default_rng(3)
        calls, paid = [], np.zeros((B, 4))
        for _ in range(60):  # each learner plays its lowest legal action, bots the rest
            acts = np.where(st.done, 0, lowest_legal(st.legal_action_mask))
            paid += engine.step(st, acts, inplace=True)[1]
            play_until_learner(st, seat_agent, agents, rewards=paid, hold_limit=lim,
                               finished=_restart_log(calls))
            assert not st.done.any()
            np.testing.assert_array_equal(st.current, learner)
        results.append((st, paid, sorted(t for c in calls for t in c[2]), calls))
    (st, paid, ended, calls), (ref, ref_paid, ref_ended, _) = results
    assert _same_state(st, ref)
    np.testing.assert_array_equal(paid, ref_paid)
    assert ended == ref_ended and len(ended) > B
    if limit == 2:  # the copies: smaller batches, their rows mapped to the tables
        assert any(size < B for size, _, _ in calls)
        assert all(len(r) == len(t) for _, r, t in calls)


def test_opponent_seats_one_agent_or_three_positions():
    a, b, c = RandomAgent(0), RandomAgent(1), RandomAgent(2)
    agents, seats = opponent_seats([a, a, a], [0, 2])
    assert agents == [a]
    np.testing.assert_array_equal(seats, [[-1, 0, 0, 0], [0, 0, -1, 0]])
    agents, seats = opponent_seats([a, b, a], [3])
    assert agents == [a, b, a]  # an agent given twice keeps its two positions
    np.testing.assert_array_equal(seats, [[0, 1, 2, -1]])
    agents, seats = opponent_seats([a, b, c], np.array([1], np.int8))
    np.testing.assert_array_equal(seats, [[2, -1, 0, 1]])
    with pytest.raises(ValueError, match="three agents, got 2"):
        opponent_seats([a, b], [0])


def test_play_until_learner_checks_seat_agent():
    st = engine.reset([1])
    with pytest.raises(ValueError, match=r"seat_agent must be \(4,\) or \(1, 4\)"):
        play_until_learner(st, np.zeros(3, int), [RandomAgent(0)])
    with pytest.raises(ValueError, match="names agent 1, but 1 agents"):
        play_until_learner(st, np.array([0, 1, 0, 0]), [RandomAgent(0)])
    with pytest.raises(ValueError, match="integers"):
        play_until_learner(st, np.zeros(4), [RandomAgent(0)])


def test_random_agent_fast_path_is_the_class_only():
    """The compiled uniform chooser serves RandomAgent itself, not a subclass that
    overrides act_batch (the driver tells them apart without importing the agent module)."""
    from sichuan_env.seats.driver import builtin_random_rng

    class Lowest(RandomAgent):
        def act_batch(self, observations, masks):
            return lowest_legal(masks)

    assert builtin_random_rng(RandomAgent(3)) is not None
    assert builtin_random_rng(Lowest(3)) is None
    st = engine.reset([2, 3])
    np.testing.assert_array_equal(choose(st, np.arange(2), [Lowest(3)]),
                                  lowest_legal(st.legal_action_mask))


def test_builtin_random_rng_is_the_random_agent_class_only():
    """A class that declares ``uniform_legal_actions_rng`` in its own namespace (RandomAgent),
    not a subclass of it, nor an instance that sets the attribute itself."""

    class SubRandom(RandomAgent):
        pass

    class LooksRandom:
        uniform_legal_actions_rng = True

        def __init__(self):
            self.rng = np.random.default_rng(0)

    agent = RandomAgent(5)
    assert builtin_random_rng(agent) is agent.rng
    assert builtin_random_rng(SubRandom(5)) is None
    assert builtin_random_rng(LooksRandom()) is not None  # its own class declares it
    plain = LooksRandom()
    del LooksRandom.uniform_legal_actions_rng
    plain.uniform_legal_actions_rng = True
    assert builtin_random_rng(plain) is None
    odd = RandomAgent(5)
    odd.rng = None
    assert builtin_random_rng(odd) is None
    assert builtin_random_rng(object()) is None


def test_random_agent_moves_are_uniform_legal_actions():
    """RandomAgent.act_batch is driver.uniform_legal_actions of its generator: the same
    moves and the same draws (the generators end in the same state)."""
    from sichuan_env.seats.driver import uniform_legal_actions

    rng = np.random.default_rng(3)
    masks = rng.random((40, 88)) < 0.2
    masks[np.arange(40), rng.integers(0, 88, 40)] = True
    agent = RandomAgent(11)
    ref = np.random.default_rng(11)
    for _ in range(3):
        np.testing.assert_array_equal(agent.act_batch(None, masks),
                                      uniform_legal_actions(ref, masks, np.arange(40)))
    assert agent.rng.random() == ref.random()
    with pytest.raises(ValueError, match="row 0 of the masks has no legal action"):
        agent.act_batch(None, np.zeros((2, 88), bool))

"""One seeding scheme (sichuan_env.core.seeding, docs/seeding.md): the hash, and every entry
point's seed -> engine seed mapping checked against the entry point itself."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from sichuan_env.core import engine, seeding
from sichuan_env.core import engine_kernels as ek
from sichuan_env.records.game import Game

U64 = st_.integers(0, 2**64 - 1)


def _same_deal(a, b, fields=("key", "wall", "hand", "dealer")) -> None:
    """Same table keys, walls and hands (the deal) of every table."""
    for field in fields:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


def test_splitmix64_reference_values():
    # a splitmix64 generator started from state 0 outputs these (the published sequence)
    x = np.array([0, 0x9E3779B97F4A7C15], np.uint64)
    assert seeding.splitmix64(x).tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]


def test_one_hash():
    """The engine's deal and selfplay use the one hash (no copies)."""
    from sichuan_env.records import selfplay

    assert ek.splitmix_word.py_func is seeding.splitmix_word
    assert selfplay.splitmix64 is seeding.splitmix64
    assert engine.table_keys is seeding.table_keys


@settings(max_examples=50, deadline=None)
@given(st_.lists(U64, min_size=0, max_size=8))
def test_splitmix64_of_an_array_is_the_compiled_hash(xs):
    x = np.array(xs, np.uint64)
    want = np.array([ek.splitmix_word(np.uint64(v)) for v in xs], np.uint64)
    got = seeding.splitmix64(x)
    assert got.dtype == np.uint64 and got.shape == x.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(seeding.splitmix64(x.reshape(-1, 1)), want.reshape(-1, 1))


def _numpy_deal(key: int, episode: int, deal_index: int, dealer: int):
    """docs/seeding.md steps 2 and 3 in numpy: hands (4, 27) and the 55-tile wall."""
    u = np.uint64
    with np.errstate(over="ignore"):
        salt = u(episode) * u(0x100000) + u(deal_index)
        base = seeding.splitmix64(np.array([key], u) ^ seeding.splitmix64(np.array([salt])))[0]
        sort_keys = seeding.splitmix64(base + np.arange(108, dtype=u) * seeding.GOLDEN)
    kinds = np.argsort(sort_keys, kind="stable") // 4
    hands = np.zeros((4, 27), np.int8)
    for i in range(4):
        np.add.at(hands[(dealer + i) % 4], kinds[13 * i:13 * i + 13], 1)
    hands[dealer, kinds[52]] += 1
    return hands, kinds[53:].astype(np.int8)


@settings(max_examples=20, deadline=None)
@given(U64, st_.integers(0, 3))
def test_engine_deal_is_the_documented_shuffle(s, dealer):
    st = engine.reset([s], dealer=dealer)
    hands, wall = _numpy_deal(int(st.key[0]), int(st.episode[0]), int(st.deal_index[0]),
                              dealer)
    np.testing.assert_array_equal(st.hand[0], hands)
    np.testing.assert_array_equal(st.wall[0], wall)


@settings(max_examples=10, deadline=None)
@given(U64)
def test_engine_seed_is_the_deal_everywhere(s):
    """engine.reset([s]), Game.new(s) and the AEC env's reset(seed=s) deal the same."""
    from sichuan_env.envs.aec import raw_env

    ref = engine.reset([s])
    _same_deal(Game.new(s).state, ref)
    e = raw_env()
    e.reset(seed=s)
    _same_deal(e.engine_state, ref)


def test_aec_later_resets_draw_from_the_seed():
    from sichuan_env.envs.aec import raw_env

    e = raw_env()
    e.reset(seed=5)
    e.reset()
    rng = np.random.default_rng(5)
    _same_deal(e.engine_state, engine.reset([seeding.drawn_seed(rng)]))


@pytest.mark.parametrize("seat", [0, "random"])
def test_gym_env_deals(seat):
    from sichuan_env.envs.gym_env import SichuanSingleEnv

    env = SichuanSingleEnv(learner_seat=seat)
    env.reset(seed=9)
    rng = np.random.default_rng(9)
    if seat == "random":
        assert env.seat == int(rng.integers(4))
    # (the opponents may have chosen their voids already: compare keys and walls)
    _same_deal(env.state, engine.reset([seeding.drawn_seed(rng)]), ("key", "wall"))
    if seat == 0:  # the default random opponents follow the seed (none has moved yet)
        assert env.opponents[0].rng.random() == seeding.opponent_rng(9).random()


def test_vector_env_deals_do_not_depend_on_shards(monkeypatch):
    pytest.importorskip("stable_baselines3")
    from sichuan_env.envs import vector

    venv = vector.SichuanVecEnv(5, learner_seats=(0, 1), seed=4)
    venv.reset()
    # the keys and walls of the tables (reset already played the first moves)
    want = engine.reset(seeding.vector_table_seeds(4, 10))
    np.testing.assert_array_equal(venv.state.key, want.key)
    np.testing.assert_array_equal(venv.state.wall, want.wall)
    monkeypatch.setattr(vector, "SHARD_TABLES", 3)
    sharded = vector.SichuanVecEnv(5, learner_seats=(0, 1), seed=4)
    sharded.reset()
    assert len(sharded._states) == 4
    np.testing.assert_array_equal(sharded.state.key, want.key)


def test_arena_and_selfplay_deals():
    from sichuan_agents.arena import run_arena, wall_seed
    from sichuan_env.records.selfplay import deal_seed, selfplay

    res = run_arena(["random"] * 4, deals=8, seed=6, tables=4)
    assert res.seeds.tolist() == [seeding.arena_wall_seed(6, w) for w in (0, 0, 0, 0, 1, 1, 1, 1)]
    assert wall_seed(6, 3) == 6 * seeding.ARENA_SEED_STRIDE + 3
    recs = list(selfplay(3, 8, tables=2))
    assert [r["seed"] for r in recs] == [seeding.selfplay_deal_seed(8, i) for i in range(3)]
    assert deal_seed(8, 1) == seeding.selfplay_deal_seed(8, 1)
    for r in recs:  # a record's seed is an engine seed: Game.new deals it again
        fresh = Game.new(r["seed"]).record()
        assert (fresh["hands"], fresh["wall"]) == (r["hands"], r["wall"])


def test_vector_table_seeds_are_63_bit():
    a = seeding.vector_table_seeds(1, 8)
    assert a.dtype == np.int64 and (a >= 0).all() and len(set(a.tolist())) == 8
    # documented: another num_envs gives other deals
    assert seeding.vector_table_seeds(1, 9)[0] != a[0]


# ----------------------------------------------------------------------------- agents' seeds


def test_agent_seed_formula():
    assert seeding.agent_seed(6, 1) == 6 * 101 + 1
    assert seeding.agent_seed(6, 3, salt=2) == 6 * 101 + 3 + 7919 * 2
    assert seeding.agent_seed(None, 2) is None


def test_seat_agents_one_agent_per_spec_seeded_in_seat_order():
    from sichuan_env.seats.agent import RandomAgent, seat_agents

    mine = RandomAgent(77)
    built = seat_agents(["random", "greedy", "random", mine, mine], 5)
    assert built.seat_agent.tolist() == [0, 1, 0, 2, 2]
    assert built.names[:2] == ["random", "greedy"]
    assert built.agents[2] is mine and mine.seed == 77  # objects are used as given
    assert [a.seed for a in built.agents[:2]] == [seeding.agent_seed(5, k) for k in (1, 2)]
    assert seat_agents(["random"], None).agents[0].seed is None
    same_name = seat_agents([RandomAgent(1), RandomAgent(1)], 0, key=repr)
    assert same_name.seat_agent.tolist() == [0, 0]
    with pytest.raises(TypeError, match="lacks act_batch"):
        seat_agents([type("NoBatch", (), {"act": lambda s, o, m: 0})()], 0)


def test_every_entry_point_seeds_its_agents_by_the_one_formula(monkeypatch):
    """The arena, the gym and vector envs' opponents, train.py's opponents, the RLlib
    env's opponents and terminal play all build their agents through seat_agents."""
    import io

    from sichuan_agents import train
    from sichuan_agents.arena import _make_agents
    from sichuan_env.envs.gym_env import opponent_list
    from sichuan_env.play import terminal as play_mod
    from sichuan_env.seats import agent as agent_mod

    want = [seeding.agent_seed(3, 1), seeding.agent_seed(3, 2)]
    _, objs, seats = _make_agents(["random", "greedy", "random", "random"], 3)
    assert seats.tolist() == [0, 1, 0, 0] and [a.seed for a in objs] == want
    _, objs, _ = _make_agents(["random", "greedy", "random", "random"], 3, salt=1)
    assert [a.seed for a in objs] == [seeding.agent_seed(3, k, 1) for k in (1, 2)]
    opp = opponent_list(["random", "greedy", "random"], seed=3)
    assert opp[0] is opp[2] and [opp[0].seed, opp[1].seed] == want
    opp = train.make_opponents("random,greedy,random", 3)
    assert opp[0] is opp[2] and [opp[0].seed, opp[1].seed] == want
    one = train.make_opponents("random", 3)
    assert one[0] is one[1] is one[2] and one[0].seed == want[0]
    calls = []
    real = agent_mod.seat_agents

    def spy(specs, seed=None, preset=None, **kw):
        calls.append((list(specs), seed, preset))
        return real(specs, seed, preset, **kw)

    monkeypatch.setattr(play_mod, "seat_agents", spy)
    play_mod.play(["greedy"], seat=2, seed=3, auto_first=True, stdout=io.StringIO())
    assert calls == [(["greedy"] * 3, 3, "mil")]


def test_rllib_opponents_use_the_one_formula():
    pytest.importorskip("ray.rllib")
    from sichuan_env.envs.rllib import _opponents

    opp = _opponents("random,greedy,random", 3)
    assert opp[0] is opp[2]
    assert [opp[0].seed, opp[1].seed] == [seeding.agent_seed(3, k) for k in (1, 2)]

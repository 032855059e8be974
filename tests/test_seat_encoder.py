"""observation.SeatEncoder (one seat at a time, the state's arrays bundled once) against
observation.encode, through in-place engine steps, for every seat and table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sichuan_env.core import engine
from sichuan_env.core.rules import get_rules
from sichuan_env.seats.agent import RandomAgent
from sichuan_env.seats.observation import OBS_SHAPE, SeatEncoder, encode


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), tables=st.integers(1, 4),
       preset=st.sampled_from(["mil", "mahjongsoft"]), deals=st.integers(1, 2))
def test_seat_encoder_equals_encode_through_in_place_steps(seed, tables, preset, deals) -> None:
    rules = get_rules(preset, deals_per_match=deals)
    state = engine.reset(np.arange(seed, seed + tables), rules)
    encoder = SeatEncoder(state)
    agent = RandomAgent(seed)
    for _ in range(150):
        for seat in range(4):
            want = encode(state, seat)
            for t in range(tables):
                got = encoder.encode(seat, t)
                assert got.shape == OBS_SHAPE and got.dtype == np.float32
                np.testing.assert_array_equal(got, want[t])
        state, _, _ = engine.step(state, agent.act_batch(None, state.legal_action_mask),
                                  inplace=True, autoreset=True)
        assert encoder.state is state  # in-place steps keep the arrays


def test_seat_encoder_rejects_bad_seats_and_tables() -> None:
    encoder = SeatEncoder(engine.reset([1, 2]))
    for seat, table in ((4, 0), (-1, 0), (0, 2), (0, -1)):
        with pytest.raises(ValueError, match="seat must be 0..3 and table 0..1"):
            encoder.encode(seat, table)


def test_envs_holding_an_encoder_copy_and_pickle() -> None:
    """The encoder's bag is not picklable itself: it is rebuilt from the (copied) state,
    so a copied env goes on exactly like the original."""
    import copy
    import pickle

    from sichuan_env.envs.gym_env import SichuanSingleEnv

    env = SichuanSingleEnv(learner_seat=1, opponents=RandomAgent(2))
    env.reset(seed=4)
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        for e in (env, clone):
            assert e._encoder.state is e.state
        rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
        a, b = copy.deepcopy(env), clone
        for _ in range(40):
            out_a = a.step(int(rng_a.choice(np.flatnonzero(a.action_masks()))))
            out_b = b.step(int(rng_b.choice(np.flatnonzero(b.action_masks()))))
            np.testing.assert_array_equal(out_a[0], out_b[0])
            assert out_a[1:4] == out_b[1:4]
            if out_a[2]:
                break
    encoder = SeatEncoder(engine.reset([3]))
    copied = pickle.loads(pickle.dumps(encoder))
    np.testing.assert_array_equal(copied.encode(2), encoder.encode(2))

"""observation.SeatEncoder (one seat at a time, the state's arrays bundled once) against
observation.encode, through in-place engine steps, for every seat and table."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sichuan_env import engine
from sichuan_env.agent import RandomAgent
from sichuan_env.observation import OBS_SHAPE, SeatEncoder, encode
from sichuan_env.rules import get_rules


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

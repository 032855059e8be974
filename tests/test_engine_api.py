"""Engine API details: the seed range, validation before any change, the stored mask."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env import engine
from sichuan_env.engine import IllegalActionError

from support.policies import uniform


@pytest.mark.parametrize("bad", [[2**70], [-1], [], ["a"], [True], 2**64])
def test_reset_names_the_accepted_seed_range(bad):
    with pytest.raises(ValueError, match=r"integers in 0 \.\. 2\*\*64 - 1"):
        engine.reset(bad)


def test_largest_seed_and_unsigned_seeds_are_accepted():
    assert engine.reset([2**64 - 1]).batch_size == 1
    a = engine.reset(np.arange(3, dtype=np.uint64))
    b = engine.reset([0, 1, 2])
    assert np.array_equal(a.hand, b.hand) and np.array_equal(a.wall, b.wall)


@pytest.mark.parametrize("inplace", [False, True])
def test_an_illegal_action_on_a_later_table_changes_no_table(inplace):
    st = engine.reset(np.arange(5) + 40)
    rng = np.random.default_rng(1)
    for _ in range(30):
        st, _, _ = engine.step(st, uniform(st, st.legal_action_mask, rng))
    before = st.copy()
    actions = uniform(st, st.legal_action_mask, rng)
    actions[3] = int(np.flatnonzero(~st.legal_action_mask[3])[0])
    with pytest.raises(IllegalActionError, match="table 3"):
        engine.step(st, actions, inplace=inplace)
    for name, x, y in zip(engine.State._fields, before.arrays(), st.arrays(), strict=False):
        assert np.array_equal(x, y), name


def test_validation_reads_the_state_not_a_stale_stored_mask():
    st = engine.reset([3])
    st.legal_action_mask[:] = True  # tampered: the engine checks the state itself
    with pytest.raises(IllegalActionError):
        engine.step(st, [0])

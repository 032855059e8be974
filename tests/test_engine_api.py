"""Engine API details: the seed range, validation before any change, the stored mask, the
buffers of in-place steps."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.engine import IllegalActionError
from sichuan_env.core.rules import get_rules

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


def test_step_takes_no_mask_argument():
    st = engine.reset([1])
    with pytest.raises(TypeError, match="mask"):
        engine.step(st, st.legal_action_mask.argmax(1), mask=st.legal_action_mask)


def test_recent_finds_by_identity_and_keeps_the_last_few():
    recent = engine._Recent(2)
    a, b, c = [1.5], [1.5], [2.5]  # a == b, but not the same object
    recent.put(a, "A")
    assert recent.get(a) == "A" and recent.get(b) is None
    recent.put(b, "B")
    assert recent.get(a) == "A"  # a is now the most recent
    recent.put(c, "C")  # drops b, the oldest
    assert (recent.get(a), recent.get(b), recent.get(c)) == ("A", None, "C")


def test_in_place_steps_of_many_states_interleaved_equal_copying_steps():
    """More States stepped in place, in turn, than the engine keeps buffers for: each
    still steps exactly as the copying step does (rewards, done, step info, state)."""
    seeds = [[11, 12], [13], [14, 15, 16], [17], [18, 19], [20]]
    inplace = [engine.reset(s) for s in seeds]
    copied = [engine.reset(s) for s in seeds]
    rng = np.random.default_rng(0)
    for _ in range(60):
        for i in rng.permutation(len(seeds)):
            m = copied[i].legal_action_mask
            acts = np.argmax(rng.random(m.shape) * m, axis=1).astype(np.int64)
            copied[i], r1, d1, info1 = engine.step(copied[i], acts, autoreset=True, info=True)
            _, r2, d2, info2 = engine.step(inplace[i], acts, inplace=True, autoreset=True,
                                           info=True)
            np.testing.assert_array_equal(r1, r2)
            np.testing.assert_array_equal(d1, d2)
            for x, y in zip(info1, info2, strict=True):
                np.testing.assert_array_equal(x, y)
            for x, y in zip(copied[i].arrays(), inplace[i].arrays(), strict=True):
                np.testing.assert_array_equal(x, y)


def _same_state(a, b) -> None:
    assert a.rules == b.rules
    for name, x, y in zip(a._fields[:-1], a.arrays(), b.arrays(), strict=True):
        assert np.array_equal(x, y), name


@pytest.mark.parametrize("dealer", [0, 2])
def test_redeal_writes_what_reset_returns_into_the_same_arrays(dealer):
    rules = get_rules("mil", deals_per_match=4)
    st = engine.reset([3, 4], rules)
    rng = np.random.default_rng(0)
    for _ in range(150):  # far into the match, some tables past their first deal
        st, _, _ = engine.step(st, uniform(st, st.legal_action_mask, rng), inplace=True,
                               autoreset=True)
    arrays = [a.ctypes.data for a in st.arrays()]
    engine.redeal(st, [9, 2**64 - 1], dealer=dealer)
    _same_state(st, engine.reset([9, 2**64 - 1], rules, dealer=dealer))
    assert [a.ctypes.data for a in st.arrays()] == arrays
    with pytest.raises(ValueError, match="expected 2 seeds"):
        engine.redeal(st, [1])
    with pytest.raises(ValueError, match="dealer must be a seat"):
        engine.redeal(st, [1, 2], dealer=4)


def test_in_place_stepper_equals_step_and_refuses_illegal_actions():
    a, b = engine.reset(np.arange(3) + 11), engine.reset(np.arange(3) + 11)
    stepper = engine.InPlaceStepper(b)
    rng = np.random.default_rng(1)
    while not a.done.all():
        acts = uniform(a, a.legal_action_mask, rng).astype(np.int64)
        a, rewards, done = engine.step(a, acts, inplace=True)
        got_rewards, got_done = stepper(acts)
        assert np.array_equal(rewards, got_rewards) and np.array_equal(done, got_done)
        _same_state(a, b)
    st = engine.reset([5])
    before = st.copy()
    illegal = np.flatnonzero(~st.legal_action_mask[0])[:1].astype(np.int64)
    with pytest.raises(IllegalActionError):
        engine.InPlaceStepper(st)(illegal)
    _same_state(st, before)

"""Validation checks one action from the state: it must agree with the full legal mask."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.rules import PRESETS, get_rules

from support.policies import biased, uniform


def _single_action_rows(st: engine.State) -> np.ndarray:
    out = np.zeros((st.batch_size, 88), dtype=bool)
    ek.action_legal_rows(out, *engine.kernel_rule_args(st.rules), *st.arrays())
    return out


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("policy", [uniform, biased])
def test_single_action_check_equals_the_legal_mask_over_random_play(preset, policy):
    rules = get_rules(preset)
    st = engine.reset(np.arange(64) + 700, rules)
    rng = np.random.default_rng(5)
    checked = set()
    for _ in range(400):
        full = engine.legal_mask(st)
        assert np.array_equal(_single_action_rows(st), full)
        checked.update(np.unique(st.phase[~st.done]).tolist())
        st, _, _ = engine.step(st, policy(st, full, rng), autoreset=True)
    assert checked >= {0, 1, 2}  # void, turn and claim phases were all met


def test_single_action_check_reads_the_state_when_the_stored_mask_is_tampered():
    st = engine.reset(np.arange(8) + 3)
    rng = np.random.default_rng(2)
    for _ in range(40):
        st, _, _ = engine.step(st, uniform(st, st.legal_action_mask, rng))
    st.legal_action_mask[:] = True
    assert np.array_equal(_single_action_rows(st), engine.legal_mask(st))

"""State.put_rows: the one row copy (inverse of State.take)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from sichuan_env.core import engine
from sichuan_env.core.rules import get_rules


def _play(state, steps, seed):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        u = rng.random(state.legal_action_mask.shape)
        u[~state.legal_action_mask] = -1
        state, _, _ = engine.step(state, u.argmax(1), autoreset=True)
    return state


@settings(max_examples=25, deadline=None)
@given(st_.integers(1, 8), st_.data())
def test_put_rows_writes_exactly_the_rows(batch, data):
    dst = _play(engine.reset(list(range(batch))), data.draw(st_.integers(0, 30)), 1)
    rows = np.array(data.draw(st_.lists(st_.integers(0, batch - 1), unique=True, max_size=batch)),
                    np.intp)
    src = _play(engine.reset(list(range(100, 100 + rows.size))) if rows.size else
                dst.take(rows), data.draw(st_.integers(0, 30)), 2)
    before = dst.copy()
    dst.put_rows(rows, src)
    others = np.setdiff1d(np.arange(batch), rows)
    for got, new, old in zip(dst.arrays(), src.arrays(), before.arrays(), strict=True):
        np.testing.assert_array_equal(got[rows], new)
        np.testing.assert_array_equal(got[others], old[others])
    # the inverse of take
    back = dst.copy()
    back.put_rows(rows, dst.take(rows))
    for a, b in zip(back.arrays(), dst.arrays(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_put_rows_is_a_copy():
    dst = engine.reset([1, 2, 3])
    src = engine.reset([7])
    dst.put_rows([2], src)
    src.hand[:] = 0
    assert dst.hand[2].sum() > 0


def test_put_rows_bad_input_changes_nothing():
    dst = engine.reset([1, 2, 3])
    before = dst.copy()
    with pytest.raises(ValueError, match="2 rows but 1 tables given"):
        dst.put_rows([0, 1], engine.reset([5]))
    with pytest.raises(ValueError, match="other rules"):
        dst.put_rows([0], engine.reset([5], get_rules("mahjongsoft")))
    with pytest.raises(IndexError, match=r"table indices in \[0, 3\)"):
        dst.put_rows([3], engine.reset([5]))
    with pytest.raises(ValueError, match="1-d array of table indices"):
        dst.put_rows([0.5], engine.reset([5]))
    for a, b in zip(dst.arrays(), before.arrays(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_no_other_row_copy_helpers():
    """The driver (which plays the vector env's opponents on held-table copies), arena and
    selfplay use State.put_rows; the former copies are gone from them and from vector."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for f in ("sichuan_env/envs/vector.py", "sichuan_env/seats/driver.py",
              "sichuan_agents/arena.py", "sichuan_env/records/selfplay.py"):
        text = (root / f).read_text()
        assert "_write_rows" not in text and "_put_row" not in text, f
        if f != "sichuan_env/envs/vector.py":
            assert "put_rows(" in text, f

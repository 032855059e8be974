"""In-place steps call the compiled step without numba's type dispatch: arguments of
other layouts or types (strided or non-int64 actions, non-bool flags) must still give the
result of an ordinary step, and a State with arrays of other types gets its own
compiled step."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core import engine

from support.policies import uniform


def _trace(B: int, steps: int, transform, flags=(True, True)):
    rng = np.random.default_rng(4)
    st = engine.reset(np.arange(B) + 40)
    out = []
    for _ in range(steps):
        acts = uniform(st, st.legal_action_mask, rng).astype(np.int64)
        st, rew, done = engine.step(st, transform(acts), inplace=True, validate=flags[0],
                                    autoreset=flags[1])
        out.append((st.hand.copy(), st.scores.copy(), rew, done, st.legal_action_mask.copy()))
    return out


def _same(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            np.testing.assert_array_equal(u, v)


def _strided(acts: np.ndarray) -> np.ndarray:
    wide = np.zeros(2 * acts.size, np.int64)
    wide[::2] = acts
    return wide[::2]  # int64, shape (B,), not contiguous


def test_odd_actions_and_flags_give_the_plain_result() -> None:
    plain = _trace(7, 250, lambda a: a)
    assert not _strided(np.arange(3)).flags.c_contiguous
    _same(_trace(7, 250, _strided), plain)
    _same(_trace(7, 250, lambda a: a.astype(np.int16)), plain)
    _same(_trace(7, 250, lambda a: a.tolist()), plain)
    _same(_trace(7, 250, lambda a: a, flags=(np.bool_(True), 1)), plain)


@pytest.mark.slow  # compiles the whole step once more for Fortran-ordered arrays
def test_state_with_other_array_types_steps_alike() -> None:
    """A State whose arrays are not C-contiguous (columns of a bigger array) gets a
    compiled step of its own types and plays like the plain one."""
    st = engine.reset(np.arange(3) + 40)
    odd = type(st)(*(np.asfortranarray(a) if a.ndim > 1 else a.copy()
                     for a in st.arrays()), st.rules)
    assert not odd.hand.flags.c_contiguous
    rng = np.random.default_rng(2)
    for _ in range(200):
        acts = uniform(st, st.legal_action_mask, rng).astype(np.int64)
        st, r1, d1 = engine.step(st, acts, inplace=True, autoreset=True)
        odd, r2, d2 = engine.step(odd, acts, inplace=True, autoreset=True)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)
        for u, v in zip(st.arrays(), odd.arrays(), strict=True):
            np.testing.assert_array_equal(u, v)

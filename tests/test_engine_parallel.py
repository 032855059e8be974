"""The parallel step (in-place steps of many tables on numba's threads) gives the serial
result: every state array, reward, ``done`` flag and StepInfo field equal, for several
batch sizes (shares of the batch equal and unequal) and thread counts, and a table's play
never depends on its batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek

from support.policies import biased, uniform

ROOT = Path(__file__).resolve().parents[1]


def _play(B: int, steps: int, threads: int, policy, seed: int, preset: str = "mil",
          seeds: np.ndarray | None = None):
    """``steps`` in-place steps of B tables with auto-reset on ``threads`` threads; the
    state arrays, rewards, done flags and StepInfo arrays after every step. ``policy``
    is a function of (state, mask, rng), or a list of the actions of every step."""
    old = engine.get_threads()
    engine.set_threads(threads)
    try:
        rng = np.random.default_rng(seed)
        st = engine.reset(np.arange(B) + 7919 * seed if seeds is None else seeds, preset)
        trace, actions = [], []
        for i in range(steps):
            if callable(policy):
                acts = policy(st, st.legal_action_mask, rng).astype(np.int64)
            else:
                acts = policy[i]
            actions.append(acts)
            st, rew, done, info = engine.step(st, acts, inplace=True, autoreset=True,
                                              info=True)
            trace.append([a.copy() for a in st.arrays()] + [rew, done] + list(info))
        return trace, actions
    finally:
        engine.set_threads(old)


def _assert_same(a: list, b: list, rows: np.ndarray | None = None) -> None:
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        for j, (u, v) in enumerate(zip(x, y, strict=True)):
            if rows is not None:
                u = u[rows]
            np.testing.assert_array_equal(u, v, err_msg=f"step {i}, array {j}")


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread")
@pytest.mark.parametrize("B", [engine.PARALLEL_MIN_TABLES, 300,
                               pytest.param(1000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("policy", [uniform, biased], ids=["uniform", "biased"])
def test_parallel_equals_serial(B: int, policy) -> None:
    assert B >= engine.PARALLEL_MIN_TABLES  # the engine takes the parallel kernel
    steps = 400  # several deals per table with auto-reset (a deal is ~60-120 decisions)
    serial, acts = _play(B, steps, 1, policy, seed=B)
    parallel, acts2 = _play(B, steps, 2, policy, seed=B)
    for x, y in zip(acts, acts2, strict=True):
        np.testing.assert_array_equal(x, y)
    _assert_same(parallel, serial)
    # the first and the last tables of the batch, played as a small (serial) batch
    rows = np.r_[0:3, B - 2:B]
    small, _ = _play(rows.size, steps, 2, [a[rows] for a in acts], seed=B,
                     seeds=rows + 7919 * B)
    _assert_same(parallel, small, rows=rows)


@pytest.mark.parametrize("threads", [2, 3])
def test_parallel_kernel_direct_matches_serial_kernel(threads: int) -> None:
    """The parallel entry kernel itself (numba's default thread count, whatever the
    engine's threshold) on a small batch split unevenly: equal to the serial kernel, also
    when validation rejects."""
    B = 131
    rng = np.random.default_rng(1)
    a = engine.reset(np.arange(B) + 11)
    b = a.copy()
    bag_a = ek.state_bag(*engine.kernel_rule_args(a.rules),
                         np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32),
                         np.zeros(B, np.int32), np.zeros((B, 4), np.float32), *a.arrays())

    def parallel(acts, done, log, log_len, rew):
        bags, bounds = engine.parallel_bags(b, threads, log, log_len, rew)
        assert bounds[0] == 0 and bounds[-1] == B and (np.diff(bounds) > 0).all()
        views = [tuple(x.view() for _ in range(threads)) for x in (log, log_len, rew)]
        return ek.step_bags_parallel(acts, True, True, done, bags, bounds, *views)

    for _ in range(300):
        acts = uniform(a, a.legal_action_mask, rng).astype(np.int64)
        outs = []
        for which in ("serial", "parallel"):
            log = np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32)
            log_len = np.zeros(B, np.int32)
            rew = np.empty((B, 4), np.float32)
            done = np.empty(B, bool)
            if which == "serial":
                bad = ek.step_bag(acts, True, True, done, log, log_len, rew, bag_a)
            else:
                bad = parallel(acts, done, log, log_len, rew)
            outs.append((bad, rew, done, log_len, log))
        (bad1, *o1), (bad2, *o2) = outs
        assert bad1 == bad2 == -1
        for u, v in zip(o1[:3], o2[:3], strict=True):
            np.testing.assert_array_equal(u, v)
        for t in range(B):
            np.testing.assert_array_equal(o1[3][t, : o1[2][t]], o2[3][t, : o2[2][t]])
        for u, v in zip(a.arrays(), b.arrays(), strict=True):
            np.testing.assert_array_equal(u, v)
    # illegal actions in the last thread's share, then also in the first's: the first
    # illegal table is reported, nothing changed
    acts = uniform(a, a.legal_action_mask, rng).astype(np.int64)
    before = [x.copy() for x in b.arrays()]
    for bad_rows in ([B - 1], [5, B - 1]):
        acts[bad_rows] = -5
        bad = parallel(acts, np.empty(B, bool),
                       np.zeros((B, ek.LOG_SIZE, ek.LOG_WIDTH), np.int32),
                       np.zeros(B, np.int32), np.empty((B, 4), np.float32))
        assert bad == bad_rows[0]
        for u, v in zip(before, b.arrays(), strict=True):
            np.testing.assert_array_equal(u, v)


_MANY_THREADS = """
import numba, numpy as np
from sichuan_env.core import engine
from support.policies import uniform
out = []
for threads in (1, 3, 4):
    engine.set_threads(threads)
    rng = np.random.default_rng(5)
    st = engine.reset(np.arange(333) + 5)
    h = 0
    for _ in range(300):
        st, rew, done = engine.step(st, uniform(st, st.legal_action_mask, rng),
                                    inplace=True, autoreset=True)
        h = hash((h, rew.tobytes(), done.tobytes(), st.hand.tobytes(), st.scores.tobytes(),
                  st.legal_action_mask.tobytes()))
    out.append(h)
print(out)
assert out[0] == out[1] == out[2], out
"""


@pytest.mark.slow
def test_more_threads_than_cores_same_result() -> None:
    """1, 3 and 4 threads (more than this machine may have) give identical play."""
    env = dict(os.environ, NUMBA_NUM_THREADS="4",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    r = subprocess.run([sys.executable, "-c", _MANY_THREADS], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.parametrize("bad", [0, -1, numba.config.NUMBA_NUM_THREADS + 1, 1.5, "2", True])
def test_set_threads_rejects_bad_counts(bad) -> None:
    before = engine.get_threads()
    with pytest.raises(ValueError, match="threads must be an integer in 1.."):
        engine.set_threads(bad)
    assert engine.get_threads() == before


def test_parallel_step_restores_numba_thread_count() -> None:
    st = engine.reset(np.arange(engine.PARALLEL_MIN_TABLES))
    numba.set_num_threads(1)
    engine.set_threads(numba.config.NUMBA_NUM_THREADS)
    try:
        engine.step(st, uniform(st, st.legal_action_mask, np.random.default_rng(0)),
                    inplace=True)
        assert numba.get_num_threads() == 1
    finally:
        engine.set_threads(1)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)

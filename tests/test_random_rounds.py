"""The compiled random opponents' rounds: the generator stream they consume and rewind,
and their refusal of a table without a legal move. (The differential tests against the
vector env's plain loop are in test_fast_paths.py.)"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.envs.random_rounds import (
    ALL_WAITING,
    NO_LEGAL,
    RoundsRunner,
    UniformStream,
    pcg_floats,
    pcg_jumps,
    pcg_pick,
    rewind,
)
from sichuan_env.seats.driver import uniform_legal_actions

BIT_GENERATORS = [np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox,
                  np.random.SFC64]


def _same_state(a: np.random.Generator, b: np.random.Generator) -> None:
    sa, sb = a.bit_generator.state, b.bit_generator.state
    assert sa.keys() == sb.keys()
    for k in sa:
        if isinstance(sa[k], dict):
            for j in sa[k]:
                np.testing.assert_array_equal(sa[k][j], sb[k][j])
        else:
            np.testing.assert_array_equal(sa[k], sb[k])


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(BIT_GENERATORS), seed=st.integers(0, 2**63),
       before=st.integers(0, 5), block=st.integers(0, 400), used=st.integers(0, 400))
def test_rewind_equals_drawing_the_used_numbers(kind, seed, before, block, used) -> None:
    """A block drawn, ``used`` of it consumed, rewound: the generator's state equals one
    that drew exactly ``used`` float32 numbers (after ``before`` numbers, odd or even, so
    the 32-bit buffer is full or empty at the start)."""
    used = min(used, block)
    a = np.random.Generator(kind(seed))
    b = np.random.Generator(kind(seed))
    a.random(before, dtype=np.float32)
    b.random(before, dtype=np.float32)
    start = a.bit_generator.state
    a.random(block, dtype=np.float32)
    rewind(a, start, used)
    want = b.random(used, dtype=np.float32)
    _same_state(a, b)
    assert a.random() == b.random()
    c = np.random.Generator(kind(seed))
    c.random(before, dtype=np.float32)
    np.testing.assert_array_equal(c.random(block, dtype=np.float32)[:used], want)


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(BIT_GENERATORS), seed=st.integers(0, 2**32), first=st.integers(0, 300),
       takes=st.lists(st.integers(0, 500), max_size=8))
def test_stream_reads_the_generator_in_order(kind, seed, first, takes) -> None:
    """Blocks extended on demand read the generator's own float32 sequence, and close
    leaves it after exactly the numbers read."""
    rng = np.random.Generator(kind(seed))
    stream = UniformStream(rng, first)
    got = []
    assert stream.use_pcg == (kind is np.random.PCG64)
    for n in takes:
        if stream.use_pcg:  # what the kernel does: the numbers from the state itself
            got.append(pcg_floats(stream.pcg, n))
        else:
            if stream.pos + n > stream.buffer.size:
                stream.extend(n)
            assert stream.buffer.size - stream.pos >= n
            got.append(stream.buffer[stream.pos:stream.pos + n].copy())
        stream.pos += n
    stream.close()
    ref = np.random.Generator(kind(seed))
    want = ref.random(sum(takes), dtype=np.float32)
    np.testing.assert_array_equal(np.concatenate([np.zeros(0, np.float32), *got]), want)
    assert stream.used == sum(takes)
    _same_state(rng, ref)


def test_table_without_legal_move_is_refused_before_anything_changes() -> None:
    st_ = engine.reset(np.arange(5), "mil")
    learner = np.full(5, 3, np.int8)  # seat 0 (the dealer) acts: every table is to play
    st_.legal_action_mask[2] = False
    before = st_.copy()
    rng = np.random.default_rng(1)
    stream = UniformStream(rng, 10 * N_ACTIONS)
    acc = np.zeros(5)
    status, detail = RoundsRunner(st_).run(stream, learner, acc, None)
    assert (status, detail) == (NO_LEGAL, 2)
    assert stream.pos == 0 and not acc.any()
    for x, y in zip(st_.arrays(), before.arrays(), strict=True):
        np.testing.assert_array_equal(x, y)
    st_ = engine.reset(np.arange(5), "mil")  # the same tables, every mask intact
    status, _ = RoundsRunner(st_).run(stream, learner, acc, None)
    assert status == ALL_WAITING and (st_.current == 3).all()
    stream.close()


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**128 - 1), before=st.integers(0, 9), n=st.integers(0, 600))
def test_compiled_pcg64_is_numpys(seed, before, n) -> None:
    """The kernel's PCG64 (128-bit LCG in uint64 halves, XSL-RR output, 32-bit buffer)
    gives numpy's float32 numbers from any state, and its state ends where numpy's does."""
    rng = np.random.Generator(np.random.PCG64(seed))
    ref = np.random.Generator(np.random.PCG64(seed))
    rng.random(before, dtype=np.float32)
    ref.random(before, dtype=np.float32)
    stream = UniformStream(rng, 0)
    got = pcg_floats(stream.pcg, n)
    stream.pos += n
    stream.close()
    np.testing.assert_array_equal(got, ref.random(n, dtype=np.float32))
    _same_state(rng, ref)
    assert rng.integers(2**62) == ref.integers(2**62)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**128 - 1), before=st.integers(0, 5),
       density=st.floats(0.0, 1.0), moves=st.integers(1, 6))
def test_compiled_pick_is_uniform_legal_actions(seed, before, density, moves) -> None:
    """The kernel's move (only the legal actions' words computed, by jumps; number by
    number after an odd start) is the driver's uniform_legal_actions move with numpy's
    generator, move after move, and the generator state ends the same."""
    gen = np.random.default_rng(seed % 2**32)
    rng = np.random.Generator(np.random.PCG64(seed))
    ref = np.random.Generator(np.random.PCG64(seed))
    rng.random(before, dtype=np.float32)
    ref.random(before, dtype=np.float32)
    stream = UniformStream(rng, 0)
    J = pcg_jumps(rng.bit_generator.state["state"]["inc"])
    for _ in range(moves):
        row = gen.random(N_ACTIONS) < density
        row[gen.integers(N_ACTIONS)] = True
        want = uniform_legal_actions(ref, row[None], np.zeros(1, np.intp))[0]
        assert pcg_pick(stream.pcg, J, row) == want
        stream.pos += N_ACTIONS
    stream.close()
    _same_state(rng, ref)


def test_pcg_jumps_are_steps() -> None:
    """Row k of the jump table takes a state k steps on, as numpy's generator does."""
    bg = np.random.PCG64(9)
    inc = bg.state["state"]["inc"]
    J = pcg_jumps(inc)
    for k in range(J.shape[0]):
        probe = np.random.PCG64(9)
        state = probe.state["state"]["state"]
        if k:
            probe.advance(k)
        a = (int(J[k, 0]) << 64) | int(J[k, 1])
        c = (int(J[k, 2]) << 64) | int(J[k, 3])
        assert (a * state + c) % 2**128 == probe.state["state"]["state"]

"""The fast paths of the environments' opponent loops against plain ones.

``ReferenceVecEnv`` plays the opponents the simple way: one ``driver.play_step`` per
round over the whole batch (every waiting table held), the agents' own ``act_batch``
called as written (no compiled random choice, no sub-batches). ``PlainRandom`` (a
subclass) makes the envs take the general path too. The env must give the same observations,
rewards, dones, infos and masks for the same seeds, whatever path it takes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sichuan_env.envs.vector as vector
from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import get_rules
from sichuan_env.envs.vector import SichuanVecEnv
from sichuan_env.seats.agent import RandomAgent
from sichuan_env.seats.driver import agent_needs, play_step, uniform_legal_actions


class ReferenceVecEnv(SichuanVecEnv):
    """The opponent loop written plainly (the behaviour the fast loop must keep): no
    compiled rounds, new matches dealt on a copy by ``engine.reset_done``."""

    def _compiled_rounds(self, actions, dones, infos):
        return False

    @staticmethod
    def _new_matches(st, rows):
        st.put_rows(rows, engine.reset_done(st.take(rows)))

    def _run(self, st, L, slots, dones, infos):
        ar = np.arange(st.batch_size)
        while True:
            fin = np.flatnonzero(st.done)
            if fin.size:
                self._finish(st, fin, L[fin], slots[fin], dones, infos)
            opp = np.flatnonzero(st.current != L)
            if not opp.size:
                return st.legal_action_mask
            opps = self.opponents
            if opps[0] is opps[1] is opps[2]:
                agents, who = opps[:1], None
            else:
                agents, who = opps, (st.current[opp].astype(np.intp) - L[opp]) % 4 - 1
            _, (_, r, _) = play_step(st, opp, [PythonPath(a) for a in agents], who)
            self._acc[slots] += r[ar, L]


class PythonPath:
    """An agent's own ``act_batch``, called as written (the driver's compiled shortcut
    for the built-in random agent does not recognise the wrapper)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.needs = agent_needs(agent)

    def act_batch(self, observations: Any, masks: np.ndarray) -> np.ndarray:
        return self.agent.act_batch(observations, masks)


class PlainRandom(RandomAgent):
    """A RandomAgent subclass: the same moves, but not eligible for the compiled path."""


def _trace(venv: SichuanVecEnv, steps: int, seed: int) -> list[Any]:
    learner = RandomAgent(seed)
    out: list[Any] = [venv.reset(), venv.action_masks()]
    for _ in range(steps):
        obs, rew, done, infos = venv.step(learner.act_batch(None, venv.action_masks()))
        out += [obs, rew, done, venv.action_masks()]
        for i in np.flatnonzero(done):
            info = infos[i]
            ep = dict(info["episode"])
            ep.pop("t")  # wall time
            out += [i, info["terminal_observation"], info["final_scores"], ep]
        assert all(not infos[i] for i in np.flatnonzero(~done))
    return out


def _assert_same(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("seats", [(0,), (1, 3), (0, 1, 2, 3)])
@pytest.mark.parametrize("hold_limit", [0, 5, 256])
def test_random_opponents_same_as_reference(monkeypatch, seats, hold_limit) -> None:
    """Default (seeded) random opponents through the compiled choice and sub-batches."""
    monkeypatch.setattr(vector, "HOLD_LIMIT", hold_limit)
    rules = get_rules("mil", deals_per_match=2) if seats == (1, 3) else get_rules("mil")
    fast = SichuanVecEnv(24, rules=rules, learner_seats=seats, seed=3)
    ref = ReferenceVecEnv(24, rules=rules, learner_seats=seats, seed=3)
    _assert_same(_trace(fast, 150, 1), _trace(ref, 150, 1))


def test_other_opponents_same_as_reference(monkeypatch) -> None:
    """Three different agents per position (the general path) and a subclass of the
    random agent (not taken for the built-in one), several shards."""
    monkeypatch.setattr(vector, "HOLD_LIMIT", 3)
    monkeypatch.setattr(vector, "SHARD_TABLES", 7)
    for opponents in ([PlainRandom(1), RandomAgent(2), PlainRandom(3)], PlainRandom(4)):
        fast = SichuanVecEnv(16, learner_seats=(0, 2), opponents=opponents, seed=8)
        ref_opponents = ([PlainRandom(1), RandomAgent(2), PlainRandom(3)]
                         if isinstance(opponents, list) else PlainRandom(4))
        ref = ReferenceVecEnv(16, learner_seats=(0, 2), opponents=ref_opponents, seed=8)
        _assert_same(_trace(fast, 120, 2), _trace(ref, 120, 2))


def test_built_in_random_equals_its_subclass() -> None:
    """The compiled random choice gives what RandomAgent.act_batch gives."""
    a = SichuanVecEnv(12, learner_seats=(0, 1, 2, 3), opponents=RandomAgent(6), seed=2)
    b = SichuanVecEnv(12, learner_seats=(0, 1, 2, 3), opponents=PlainRandom(6), seed=2)
    _assert_same(_trace(a, 100, 0), _trace(b, 100, 0))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_tables=st.integers(1, 12), data=st.data())
def test_uniform_legal_actions_is_random_agent(seed, n_tables, data) -> None:
    density = data.draw(st.floats(0.01, 1.0))
    gen = np.random.default_rng(seed)
    masks = gen.random((n_tables, N_ACTIONS)) < density
    masks[np.arange(n_tables), gen.integers(0, N_ACTIONS, n_tables)] = True  # one legal
    rows = np.array(data.draw(st.lists(st.integers(0, n_tables - 1), max_size=20)), np.intp)
    agent = RandomAgent(seed)
    rng = np.random.default_rng(seed)
    want = agent.act_batch(None, masks[rows])
    got = uniform_legal_actions(rng, masks, rows)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64 and masks[rows, got].all()
    assert rng.random() == agent.rng.random()  # the same draws were used


def test_uniform_legal_actions_rejects_rows_without_legal_action() -> None:
    masks = np.ones((3, N_ACTIONS), bool)
    masks[1] = False
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="row 1 of the masks has no legal action"):
        uniform_legal_actions(rng, masks, np.array([0, 1, 2]))
    assert rng.random() == np.random.default_rng(0).random()  # nothing drawn


def _single_trace(opponents, seat, steps: int = 300) -> list[Any]:
    from sichuan_env.envs.gym_env import SichuanSingleEnv

    e = SichuanSingleEnv(learner_seat=seat, opponents=opponents)
    obs, info = e.reset(seed=11)
    out: list[Any] = [obs, info["action_mask"], info["seat"]]
    rng = np.random.default_rng(5)
    for _ in range(steps):
        obs, reward, term, trunc, info = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        out += [obs, reward, term, trunc, info["action_mask"], info["seat"]]
        if term:
            obs, info = e.reset()
            out += [obs, info["seat"]]
    return out


@pytest.mark.parametrize("seat", [0, 3, "random"])
def test_single_env_random_opponents_same_as_subclass(seat) -> None:
    """The single-agent env's compiled random moves equal RandomAgent.act_batch's (the
    subclass goes through driver.choose), one or three opponents."""
    _assert_same(_single_trace(RandomAgent(3), seat), _single_trace(PlainRandom(3), seat))
    _assert_same(_single_trace([RandomAgent(1), PlainRandom(2), RandomAgent(3)], seat),
                 _single_trace([PlainRandom(1), PlainRandom(2), PlainRandom(3)], seat))


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x.tolist() if isinstance(x, np.ndarray) else x


def _rng_state(venv: SichuanVecEnv) -> Any:
    return _plain(venv.opponents[0].rng.bit_generator.state)


@settings(max_examples=24, deadline=None)
@given(seed=st.integers(0, 2**31), seats=st.sampled_from([(0,), (2,), (1, 3), (0, 1, 2, 3)]),
       shard=st.sampled_from([5, 16, 1024]), deals=st.integers(1, 3),
       hint=st.sampled_from([0, 500, None]), steps=st.integers(1, 120),
       kind=st.sampled_from([None, "odd", np.random.PCG64DXSM, np.random.MT19937,
                             np.random.Philox]))
def test_compiled_rounds_same_as_reference(seed, seats, shard, deals, hint, steps,
                                           kind) -> None:
    """The compiled opponent rounds (random_rounds) against the plain loop: several seeds,
    seat sets, shard sizes, match lengths, the default opponents (PCG64: drawn inside the
    kernel) or a random agent on another bit generator (drawn in blocks: ``hint`` 0 gives
    blocks of one move, refilled again and again); the opponents' generator ends in the
    same state. ``"odd"``: a PCG64 that drew one number before (the 32-bit buffer full at
    each move: the kernel's number-by-number path)."""
    old = vector.SHARD_TABLES
    vector.SHARD_TABLES = shard
    try:
        rules = get_rules("mil", deals_per_match=deals)
        opponents = [None, None]
        if kind is not None:
            for i in range(2):
                opponents[i] = RandomAgent(seed)
                if kind == "odd":
                    opponents[i].rng.random(dtype=np.float32)
                else:
                    opponents[i].rng = np.random.Generator(kind(seed))
        fast = SichuanVecEnv(13, rules=rules, learner_seats=seats, seed=seed,
                             opponents=opponents[0])
        ref = ReferenceVecEnv(13, rules=rules, learner_seats=seats, seed=seed,
                              opponents=opponents[1])
        if hint is not None:
            fast._draw_hint = hint
        a, b = _trace(fast, steps, seed % 7), _trace(ref, steps, seed % 7)
        assert fast._runners, "the compiled rounds were not used"
        _assert_same(a, b)
        assert _rng_state(fast) == _rng_state(ref)
    finally:
        vector.SHARD_TABLES = old


@pytest.mark.parametrize("hint", [0, 10**6])
def test_compiled_rounds_generator_state_each_step(hint) -> None:
    """After every step (and the reset) the opponents' generator is where the plain loop
    leaves it, whether the block was too small (refilled) or far too large (rewound)."""
    fast = SichuanVecEnv(9, learner_seats=(1, 2), seed=4)
    ref = ReferenceVecEnv(9, learner_seats=(1, 2), seed=4)
    fast._draw_hint = hint
    fast.reset()
    ref.reset()
    assert _rng_state(fast) == _rng_state(ref)
    learner = np.random.default_rng(0)
    for _ in range(60):
        masks = ref.action_masks()
        np.testing.assert_array_equal(fast.action_masks(), masks)
        acts = np.array([learner.choice(np.flatnonzero(m)) for m in masks])
        fast._draw_hint = hint
        fast.step(acts)
        ref.step(acts)
        assert _rng_state(fast) == _rng_state(ref)


def test_compiled_rounds_not_used_for_other_opponents() -> None:
    """A subclass of the random agent, or three agents, take the general path."""
    for opponents in (PlainRandom(1), [RandomAgent(1), RandomAgent(2), RandomAgent(3)]):
        venv = SichuanVecEnv(4, opponents=opponents, seed=0)
        venv.reset()
        venv.step(RandomAgent(0).act_batch(None, venv.action_masks()))
        assert not venv._runners


def test_observation_arrays_held_by_the_caller_are_never_reused() -> None:
    """The env reuses an observation array only when nobody else holds it: arrays and
    views kept by the caller keep their contents; when the caller drops them, the same
    few arrays come back, with the observations of an env whose caller keeps everything."""
    held = SichuanVecEnv(6, learner_seats=(0, 2), seed=1)
    dropped = SichuanVecEnv(6, learner_seats=(0, 2), seed=1)
    learner_a, learner_b = RandomAgent(0), RandomAgent(0)
    kept = [held.reset()]
    views = [kept[0][1:3]]
    copies = [kept[0].copy()]
    obs = dropped.reset()
    np.testing.assert_array_equal(obs, copies[0])
    addresses = {obs.ctypes.data}
    del obs
    for _ in range(20):
        o = held.step(learner_a.act_batch(None, held.action_masks()))[0]
        kept.append(o)
        views.append(o[1:3])
        copies.append(o.copy())
        obs = dropped.step(learner_b.act_batch(None, dropped.action_masks()))[0]
        np.testing.assert_array_equal(obs, copies[-1])
        addresses.add(obs.ctypes.data)
        del obs
    assert len({o.ctypes.data for o in kept}) == len(kept)  # never reused while held
    for o, v, c in zip(kept, views, copies, strict=True):
        np.testing.assert_array_equal(o, c)
        np.testing.assert_array_equal(v, c[1:3])
    assert len(addresses) <= 2  # dropped arrays were reused

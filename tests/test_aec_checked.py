"""``env()``'s one-layer wrapper (``CheckedEnv``) against PettingZoo's three nested wrappers
(``reference_env``): the same results, errors and warnings for any sequence of calls."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.utils.env_logger import EnvLogger

from sichuan_env.envs.aec import AGENTS, CheckedEnv, env, reference_env

from support.reference_aec import reference_stack

# what a scripted caller does next: a legal action, an illegal one inside Discrete(88),
# one outside it, None, a bool, a numpy integer, a float, observe / last / state
MOVES = ("legal", "legal", "legal", "legal", "illegal", "out_of_range", "none", "bool",
         "numpy_legal", "float", "observe_other", "last_no_obs", "infos", "reset")


def _snapshot(e) -> tuple:
    """Everything a caller can read after a call (arrays as lists)."""
    obs, reward, term, trunc, info = e.last()
    return (
        list(e.agents), e.agent_selection, dict(e.rewards), dict(e._cumulative_rewards),
        dict(e.terminations), dict(e.truncations),
        {a: (i["legal_moves"], i["action_mask"].tolist()) for a, i in e.infos.items()},
        obs["observation"].tobytes(), obs["action_mask"].tolist(), reward, term, trunc,
        info["legal_moves"],
    )


def _action(kind: str, e, rng: np.random.Generator):
    mask = e.observe(e.agent_selection)["action_mask"] if e.agents else np.zeros(88, np.int8)
    legal = np.flatnonzero(mask)
    illegal = np.flatnonzero(mask == 0)
    if kind in ("legal", "numpy_legal"):
        if e.terminations.get(e.agent_selection, True) or not legal.size:
            return None
        a = int(rng.choice(legal))
        return np.int64(a) if kind == "numpy_legal" else a
    return {"illegal": int(rng.choice(illegal)), "out_of_range": int(rng.choice([88, 100, -1])),
            "none": None, "bool": True, "float": 2.5}[kind]


def _call(fn, *args):
    """(result, error type and text, warnings and PettingZoo log messages) of one call."""
    EnvLogger.flush()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
            err = None
        except Exception as ex:  # noqa: BLE001 - compared between the two envs
            out, err = None, (type(ex), str(ex))
    logged = [str(m) for m in EnvLogger.mqueue]
    EnvLogger.flush()
    return out, err, [str(w.message) for w in caught] + logged


def _play(make, seed: int, script: list[str]) -> list:
    e = make()
    rng = np.random.default_rng(seed)
    trace = [_call(e.reset, seed)[1:]]
    for kind in script:
        if kind == "reset":
            trace.append(_call(e.reset, seed + 1)[1:])
        elif kind == "observe_other":
            other = AGENTS[int(rng.integers(4))]
            out, err, warns = _call(e.observe, other)
            trace.append((None if out is None else out["observation"].tobytes(), err, warns))
        elif kind == "infos":  # read before last(): built from the state alone
            out, err, warns = _call(lambda: e.infos)
            trace.append((None if out is None else {
                a: (i["legal_moves"], i["action_mask"].tolist()) for a, i in out.items()},
                err, warns))
        elif kind == "last_no_obs":
            out, err, warns = _call(e.last, False)
            if out is not None:
                obs, reward, term, trunc, info = out
                out = (obs, reward, term, trunc, info["legal_moves"], info["action_mask"].tolist())
            trace.append((out, err, warns))
        else:
            action = _action(kind, e, rng)
            trace.append((repr(action), *_call(e.step, action)[1:]))
        if e.agents:
            trace.append(_snapshot(e))
        else:
            trace.append(("no agents", _call(e.step, None)[1:]))
    return trace


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**20), script=st.lists(st.sampled_from(MOVES), max_size=120))
def test_checked_env_behaves_like_pettingzoo_wrappers(seed: int, script: list[str]) -> None:
    assert _play(env, seed, script) == _play(reference_env, seed, script)


def test_whole_matches_with_illegal_moves_behave_the_same() -> None:
    """Long scripts that reach the end of matches, illegal terminations and resets."""
    for seed in range(4):
        script = list(np.random.default_rng(seed).choice(
            ["legal"] * 30 + ["illegal", "none", "reset", "observe_other"], size=600))
        assert _play(env, seed, script) == _play(reference_env, seed, script)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**20), script=st.lists(st.sampled_from(MOVES), max_size=120))
def test_env_behaves_like_the_env_before_the_speed_work(seed: int, script: list[str]) -> None:
    """The one-table fast paths (infos built when read, the State kept across resets,
    rewards of quiet steps, ``last()``) change nothing a caller sees: the same traces
    as the former ``raw_env`` in PettingZoo's wrappers (``tests/support/reference_aec.py``)."""
    assert _play(env, seed, script) == _play(reference_stack, seed, script)


def test_whole_matches_like_the_env_before_the_speed_work() -> None:
    for seed in range(3):
        script = list(np.random.default_rng(seed + 10).choice(
            ["legal"] * 30 + ["illegal", "none", "reset", "infos", "observe_other"], size=600))
        assert _play(env, seed, script) == _play(reference_stack, seed, script)
        assert _play(lambda: env("mahjongsoft"), seed, script) == _play(
            lambda: reference_stack("mahjongsoft"), seed, script)


def test_infos_after_an_illegal_move_of_another_seat_than_the_first() -> None:
    """After an illegal move the selection moves on to ``player_0`` (PettingZoo's dead
    step order); the legal moves stay the offender's, in ``last()`` and in ``infos``."""
    for seed in range(2):
        script = ["legal"] * 5 + ["illegal", "infos", "last_no_obs", "legal", "infos"]
        traces = [_play(make, seed, script) for make in (env, reference_stack)]
        assert traces[0] == traces[1]
    e = env()
    e.reset(seed=1)
    while e.agent_selection == "player_0":
        e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))
    offender = e.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(int(np.flatnonzero(e.last()[0]["action_mask"] == 0)[0]))
    EnvLogger.flush()
    assert e.agent_selection == "player_0" and e.last()[4]["legal_moves"] == []
    assert [a for a, i in e.infos.items() if i["legal_moves"]] == [offender]


def test_order_is_enforced_before_reset() -> None:
    e = env()
    assert isinstance(e, CheckedEnv)
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations",
                 "infos"):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(e, name)
    with pytest.raises(AttributeError, match="before reset"):
        e.last()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), e.state,
                 e.agent_iter):
        with pytest.raises(Exception, match="reset"):
            call()
    e.reset(seed=0)
    it = iter(e.agent_iter())
    next(it)
    with pytest.raises(AssertionError, match="step"):
        next(it)  # a step() must come between two agents
    assert str(e) == "sichuan_mahjong_v0"

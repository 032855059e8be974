"""Compiled play-outs with a policy per seat: whole deals of the built-in bots in one loop.

:func:`play_out_seats` plays every table of a batch from its current state to the end of
the deal, each seat of each table choosing with the compiled policy given for it (the
kernels of :mod:`sichuan_agents.search.rollout`: ``rules`` and ``greedy`` take the bots' own
actions at every decision, ``random`` is uniform over the legal actions from the table's
``key`` stream). It is what the environments' paired-deal rewards
(:mod:`sichuan_env.envs.paired`) use when the reference and the opponents are built-in bots.
:func:`compiled_policy` says which agent objects a compiled policy can stand in for.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numba
import numpy as np

import sichuan_env
from sichuan_agents.bots.greedy import GreedyAgent
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_agents.search import rollout as ro
from sichuan_env.core import engine
from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.jit import numba_cache_dir, source_fingerprint
from sichuan_env.core.state import State
from sichuan_env.seats.agent import RandomAgent

__all__ = ["compiled_policy", "play_out_seats"]

_i = np.int64
_RULES_DEFAULTS = vars(RulesAgent())


def _kernel_dir() -> str:
    """``<cache>/seats-<hash of this file and rollout.py>-<fingerprint of sichuan_env>``."""
    h = hashlib.sha256(Path(__file__).read_bytes() + Path(ro.__file__).read_bytes())
    engine_dir = Path(sichuan_env.__file__).resolve().parent
    return str(Path(numba_cache_dir()) / f"seats-{h.hexdigest()[:16]}-"
                                          f"{source_fingerprint(engine_dir)}")


def _njit(f: Any) -> Any:
    numba.config.CACHE_DIR = _kernel_dir()
    try:
        return numba.njit(cache=True)(f)
    finally:
        numba.config.CACHE_DIR = numba_cache_dir()


@_njit
def _play_seats(S, codes, done_out, max_steps, best):
    """Tables ``0 .. len(codes) - 1`` played to the end of the deal, seat ``s`` of table
    ``t`` by policy ``codes[t, s]``; the first table not finished within ``max_steps``
    decisions, or -1."""
    cover = np.empty((3, 12), np.int64)
    for t in range(codes.shape[0]):
        for _ in range(max_steps):
            if S.done[t]:
                break
            a = ro._policy_action(S, _i(t), codes[t, S.current[t]], best, cover)
            ek._step_table(S, _i(t), _i(a), False, done_out)
        if not S.done[t]:
            return t
    return -1


def compiled_policy(agent: Any) -> str | None:
    """The compiled policy that plays exactly as ``agent`` (``"rules"`` for a
    :class:`~sichuan_agents.bots.rules_bot.RulesAgent` with its default options, ``"greedy"`` for
    a :class:`~sichuan_agents.bots.greedy.GreedyAgent`), ``"random"`` for the built-in
    :class:`~sichuan_env.seats.agent.RandomAgent` (the same distribution, uniform over the legal
    actions, from the table's own stream), else None."""
    kind = type(agent)
    if kind is RulesAgent:
        mine = {k: v for k, v in vars(agent).items() if k != "seed"}
        return "rules" if mine == {k: v for k, v in _RULES_DEFAULTS.items() if k != "seed"} \
            else None
    if kind is GreedyAgent:
        return "greedy"
    if kind is RandomAgent:
        return "random"
    return None


def play_out_seats(state: State, policies: np.ndarray) -> np.ndarray:
    """Play every table of ``state`` to the end of its deal in place, seat ``s`` of table
    ``t`` choosing with the compiled policy ``policies[t, s]`` (a name of
    ``rollout.ROLLOUT_POLICIES``); returns the (B, 4) points of the deal. The rules must
    end a match after one deal."""
    if state.rules.deals_per_match != 1:
        raise ValueError("play_out_seats needs rules with deals_per_match=1")
    policies = np.asarray(policies)
    if policies.shape != (state.batch_size, 4):
        raise ValueError(f"expected ({state.batch_size}, 4) policies, got {policies.shape}")
    codes = np.array([ro.policy_code(str(p)) for p in policies.reshape(-1)],
                     np.int64).reshape(-1, 4)
    done = np.zeros(state.batch_size, bool)
    bag = ek.state_bag(*engine.kernel_rule_args(state.rules), *ro._outputs(state.batch_size),
                       *state.arrays())
    bad = _play_seats(bag, codes, done, 10_000, ro._best())
    if bad >= 0:  # pragma: no cover - a deal ends within a few hundred decisions
        raise RuntimeError(f"table {bad} did not finish its deal")
    return state.scores.astype(np.float64)

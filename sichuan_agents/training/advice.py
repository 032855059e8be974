"""A rule bot's choice as extra input planes: the "advice" a policy may follow or overrule.

A network trained from the rule bot's labels alone reproduces it imperfectly and starts
PPO below it. Given the bot's choice for the very decision it faces, a network learns to
copy it almost exactly within a short warm start, and PPO then only has to learn where
deviating from the bot pays (a residual policy over a heuristic). The adviser reads the
same seat view the learner's planes come from (:mod:`sichuan_env.seats.view`), so nothing hidden
leaks into the policy's input.

The adviser's action ``a`` becomes 7 planes over the 27 tile kinds:

=================  ==========================================================================
plane              meaning
=================  ==========================================================================
advice_discard     1 at kind ``a`` for a discard (actions 0..26)
advice_void        1 at kind ``a - 27`` for a set-aside tile (27..53); for a void suit by
                   indicator card (54..56), 1 at the nine kinds of that suit
advice_kong        1 at kind ``a - 57`` for a kong on one's own turn (57..83)
advice_pung        1 everywhere when the advice is pung (84)
advice_melded_kong 1 everywhere when it is a melded kong (85)
advice_hu          1 everywhere when it is Hu (86)
advice_pass        1 everywhere when it is pass (87)
=================  ==========================================================================

:class:`AdviceVecEnv` appends them to a VecEnv's observations (after the analysis planes of
:mod:`sichuan_agents.training.features`); :class:`sichuan_agents.models.ppo.PPOAgent` computes them
itself
when its model was trained with them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from sichuan_agents.training.features import StatePlanesVecEnv, augment
from sichuan_env.core.actions import (
    HU,
    KONG,
    MELDED_KONG,
    N_ACTIONS,
    PASS,
    PUNG,
    VOID_SUIT,
    VOID_TILE,
)
from sichuan_env.core.vocab import N_KINDS
from sichuan_env.seats.observation import planes_from_view

N_ADVICE_PLANES = 7
ADVICE_PLANE_NAMES = ("advice_discard", "advice_void", "advice_kong", "advice_pung",
                      "advice_melded_kong", "advice_hu", "advice_pass")


def advice_planes(actions: np.ndarray) -> np.ndarray:
    """(N,) actions -> (N, 7, 27) float32 planes (see the module docstring)."""
    a = np.asarray(actions, dtype=np.int64).reshape(-1)
    if a.size and (a.min() < 0 or a.max() >= N_ACTIONS):
        raise ValueError(f"advice actions must lie in 0..{N_ACTIONS - 1}, got "
                         f"{int(a.min())}..{int(a.max())}")
    out = np.zeros((a.shape[0], N_ADVICE_PLANES, N_KINDS), np.float32)
    rows = np.arange(a.shape[0])
    d = a < VOID_TILE
    out[rows[d], 0, a[d]] = 1.0
    v = (a >= VOID_TILE) & (a < VOID_SUIT)
    out[rows[v], 1, a[v] - VOID_TILE] = 1.0
    for r in np.flatnonzero((a >= VOID_SUIT) & (a < KONG)):
        s = a[r] - VOID_SUIT
        out[r, 1, 9 * s:9 * s + 9] = 1.0
    k = (a >= KONG) & (a < PUNG)
    out[rows[k], 2, a[k] - KONG] = 1.0
    for plane, action in ((3, PUNG), (4, MELDED_KONG), (5, HU), (6, PASS)):
        out[a == action, plane, :] = 1.0
    return out


def make_adviser(name: str = "rules", seed: int = 0) -> Any:
    """The bot whose choices fill the advice planes (a registered name or spec)."""
    from sichuan_env.seats.agent import make_agent

    return make_agent(name, seed=seed)


class AdviceVecEnv(StatePlanesVecEnv):
    """A VecEnv whose observations carry the adviser's choice for each slot's learner seat.

    ``venv`` is a :class:`sichuan_env.envs.vector.SichuanVecEnv`, possibly wrapped (the
    adviser's input comes from its ``learner_inputs``); terminal observations get empty
    advice (the deal is over, there is nothing to advise)."""

    def __init__(self, venv: VecEnv, adviser: Any) -> None:
        super().__init__(venv, N_ADVICE_PLANES)
        self.adviser = adviser
        self.current_advice: np.ndarray | None = None  # of the last observation returned

    def advice(self) -> np.ndarray:
        """(num_envs,) the adviser's action for every slot now."""
        masks = self.venv.action_masks()
        self.current_advice = np.asarray(
            self.adviser.act_batch(self.venv.learner_inputs(self.adviser), masks), np.int64)
        return self.current_advice

    def planes_now(self) -> np.ndarray:
        return advice_planes(self.advice())


class AdviceTeacher:
    """The adviser of an :class:`AdviceVecEnv` as an imitation teacher: its answer for each
    slot is the advice already computed for the observation the env last returned, so a
    warm start that imitates the adviser's own bot asks it once per decision, not twice.
    (Only for a deterministic adviser, whose second answer would be the same.)"""

    needs = "planes"

    def __init__(self, env: AdviceVecEnv) -> None:
        self.env = env
        self.name = f"advice of {env.adviser!r}"

    def act_batch(self, planes: np.ndarray, masks: np.ndarray) -> np.ndarray:
        advice = self.env.current_advice
        if advice is None or advice.shape[0] != masks.shape[0]:
            raise RuntimeError("AdviceTeacher: the env has not advised this observation")
        return advice.copy()


def advised_planes(view: Any, rules: Any, advised: np.ndarray) -> np.ndarray:
    """(N, 89, 27) float32: a network's input with advice -- the observation planes of the
    seat views ``view``, their analysis planes and the advice planes of ``advised``."""
    planes = augment(planes_from_view(view, rules))
    return np.concatenate([planes, advice_planes(advised)], axis=1)

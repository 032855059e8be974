"""Hand-analysis planes computed from an observation, for learning agents.

A policy that reads only the raw planes must discover tile efficiency by itself, which
takes many millions of steps. These extra planes give it the facts a player computes at a
glance, derived from the observer's own tiles only (so they leak nothing):

=================  ==========================================================================
plane              meaning (over the 27 tile kinds)
=================  ==========================================================================
discard_shanten    for each kind held: (shanten after discarding one of it + 1) / 8;
                   0 for kinds not held. On one's own turn this ranks the discards
shanten_now        (shanten of the standing tiles + 1) / 8, broadcast (tiles from the
                   forbidden suit count as tiles to get rid of)
waits              the kinds that would complete the standing tiles now (a ready hand's
                   waits, the tile under claim included), 0/1
useful_draws       kinds whose draw lowers the shanten of the standing tiles, weighted by
                   the copies not visible to the observer / 4
=================  ==========================================================================

:func:`augment` appends them to ``(N, C, 27)`` observations; :class:`AnalysisVecEnv` does it
for a Stable-Baselines3 ``VecEnv``; :class:`sichuan_agents.models.ppo.PPOAgent` applies it when its
model
was trained on augmented observations.

The planes are computed by a compiled kernel (numba, one row at a time, over rows in
parallel for large batches when numba has more than two threads) that calls the hand
kernels of :mod:`sichuan_env.core.hand_kernels`: shanten (the four-copies limit and declared
melds included; a candidate discard or draw looks up only the suit it changes again) and
the wait mask. ``tests/support/reference_features.py`` keeps a numpy implementation over the
batched API of :mod:`sichuan_env.core.hands`; a differential test checks that both agree bit
for bit.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from sichuan_env.core import hand_kernels as hk
from sichuan_env.core.jit import many_threads, njit, prange
from sichuan_env.seats.observation import PLANES

N_FEATURE_PLANES = 4
_HAND0 = PLANES["hand"][0]
_PUNG0 = PLANES["pung"][0]
_CKONG0 = PLANES["concealed_kong"][0]
_EKONG0 = PLANES["exposed_kong"][0]
_VOID = PLANES["my_void"][0]
_VISIBLE = PLANES["visible"][0]

# ----------------------------------------------------------------------------- the planes


@njit
def _analysis_row(tab, tables, o, res, cover, trial, scratch, work, waits):
    """The (4, 27) analysis planes of one observation o (C, 27) into res (zeros), from
    the hand kernels (``tab``: :func:`hand_kernels.shanten_tables`, ``tables``:
    :func:`hand_kernels.hand_tables`); ``cover``, ``trial`` (3, 12), ``scratch`` (4, 8)
    and ``work`` (2, 27) int64 and ``waits`` (27,) bool work space. A candidate discard or
    draw changes one suit: only that suit's cover is looked up again."""
    counts = work[0]
    meld = work[1]
    total = 0
    n_melds = 0
    top = o[_VOID, 0]
    void_at = 0
    for k in range(27):
        x = o[_HAND0, k] + o[_HAND0 + 1, k]
        x = x + o[_HAND0 + 2, k]
        x = x + o[_HAND0 + 3, k]
        counts[k] = int(np.rint(x))
        if o[_CKONG0, k] + o[_EKONG0, k] > 0.5:
            meld[k] = 2
        elif o[_PUNG0, k] > 0.5:
            meld[k] = 1
        else:
            meld[k] = 0
        if meld[k]:
            n_melds += 1
        total += counts[k]
        if o[_VOID, k] > top:
            top = o[_VOID, k]
            void_at = k
    total += 3 * n_melds
    if total != 13 and total != 14:
        return
    void = void_at // 9 if top > 0.5 else -1
    for s in range(3):
        hk.suit_cover(tab, counts, meld, n_melds, void, s, cover[s], scratch)
    now = hk.combine_covers(cover, n_melds)  # shanten of the tiles as they stand
    step = -1 if total == 14 else 1  # 14 tiles: discard one; 13: draw one
    low = now
    for k in range(27):
        if (counts[k] == 0) if step < 0 else (counts[k] == 4):
            continue
        s = k // 9
        trial[:] = cover
        counts[k] += step
        hk.suit_cover(tab, counts, meld, n_melds, void, s, trial[s], scratch)
        counts[k] -= step
        sh = hk.combine_covers(trial, n_melds)
        if step < 0:
            res[0, k] = np.float32((sh + 1) / 8.0)
            low = min(low, sh)
        elif sh < now:
            unseen = np.float32(4.0) - o[_VISIBLE, k] * np.float32(4.0)
            unseen = min(max(unseen, np.float32(0.0)), np.float32(4.0))
            res[3, k] = unseen / np.float32(4.0)
    if step < 0:  # the minimum over the candidates (an unheld kind leaves the hand as is)
        x = np.float32((low + 1) / 8.0)
        for k in range(27):
            res[1, k] = x
    else:
        x = np.float32((now + 1) / 8.0)
        hk.wait_mask(tables, counts, meld, void, waits)
        for k in range(27):
            res[1, k] = x
            res[2, k] = np.float32(1.0) if waits[k] else np.float32(0.0)


@njit
def _analysis_range(tab, tables, obs, out, lo, hi):
    cover = np.empty((3, 12), np.int64)
    trial = np.empty((3, 12), np.int64)
    scratch = np.empty((4, 8), np.int64)
    work = np.empty((2, 27), np.int64)
    waits = np.empty(27, np.bool_)
    for i in range(lo, hi):
        _analysis_row(tab, tables, obs[i], out[i], cover, trial, scratch, work, waits)


@njit
def _analysis_serial(tab, tables, obs, out):
    _analysis_range(tab, tables, obs, out, 0, obs.shape[0])


@njit(parallel=True)
def _analysis_parallel(tab, tables, obs, out):
    n = obs.shape[0]
    for task in prange((n + 31) // 32):
        _analysis_range(tab, tables, obs, out, 32 * task, min(32 * task + 32, n))


_PARALLEL_FROM = 256  # rows; only when numba has more than two threads (see observation)


def analysis_planes(obs: np.ndarray, parallel: bool | None = None) -> np.ndarray:
    """(N, C, 27) observations -> (N, 4, 27) float32 analysis planes (table above).
    ``parallel`` None: on several threads for large batches when numba has them."""
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    if obs.ndim != 3 or obs.shape[1] <= _VISIBLE or obs.shape[2] != 27:
        raise ValueError(f"observations must be (N, C, 27) planes, got shape {obs.shape}")
    out = np.zeros((obs.shape[0], N_FEATURE_PLANES, 27), np.float32)
    if obs.shape[0] == 0:
        return out
    if parallel is None:
        parallel = many_threads() and obs.shape[0] >= _PARALLEL_FROM
    (_analysis_parallel if parallel else _analysis_serial)(hk.shanten_tables(), hk.hand_tables(),
                                                            obs, out)
    return out


def augment(obs: np.ndarray) -> np.ndarray:
    """Append :func:`analysis_planes` to a batch ``(N, C, 27)`` (or one ``(C, 27)``)."""
    obs = np.asarray(obs, dtype=np.float32)
    if obs.ndim == 2:
        return augment(obs[None])[0]
    return np.concatenate([obs, analysis_planes(obs)], axis=1)


class AnalysisVecEnv(VecEnvWrapper):
    """A VecEnv whose observations carry the analysis planes (also in
    ``terminal_observation``); ``action_masks()`` passes through."""

    def __init__(self, venv: VecEnv) -> None:
        space = venv.observation_space
        assert isinstance(space, spaces.Box)
        low = np.concatenate([space.low, np.zeros((N_FEATURE_PLANES, 27), np.float32)])
        high = np.concatenate([space.high, np.ones((N_FEATURE_PLANES, 27), np.float32)])
        super().__init__(venv, observation_space=spaces.Box(low, high, dtype=np.float32))

    def reset(self) -> np.ndarray:
        return augment(self.venv.reset())

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = augment(info["terminal_observation"])
        return augment(obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()


class StatePlanesVecEnv(VecEnvWrapper):
    """Base for wrappers that append ``n_planes`` planes (values in [0, 1]) computed from the
    current state of the wrapped env rather than from its observation: subclasses
    implement :meth:`planes_now`. A terminal observation gets zeros there (the deal is
    over; its state is gone after the auto-reset)."""

    def __init__(self, venv: VecEnv, n_planes: int) -> None:
        space = venv.observation_space
        assert isinstance(space, spaces.Box)
        self.n_planes = int(n_planes)
        extra = (self.n_planes, space.shape[1])
        low = np.concatenate([space.low, np.zeros(extra, np.float32)])
        high = np.concatenate([space.high, np.ones(extra, np.float32)])
        super().__init__(venv, observation_space=spaces.Box(low, high, dtype=np.float32))

    def planes_now(self) -> np.ndarray:
        """(num_envs, n_planes, 27) for every slot now."""
        raise NotImplementedError

    def reset(self) -> np.ndarray:
        return np.concatenate([self.venv.reset(), self.planes_now()], axis=1)

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                t = info["terminal_observation"]
                info["terminal_observation"] = np.concatenate(
                    [t, np.zeros((self.n_planes, *t.shape[1:]), np.float32)])
        return np.concatenate([obs, self.planes_now()], axis=1), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()

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
for a Stable-Baselines3 ``VecEnv``; :class:`agents.ppo.PPOAgent` applies it when its model
was trained on augmented observations. Everything is batched over rows.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from sichuan_env import hands as hx
from sichuan_env.observation import PLANES
from sichuan_env.state import PHASE_NAMES

N_FEATURE_PLANES = 4
_HAND0 = PLANES["hand"][0]
_PUNG0 = PLANES["pung"][0]
_CKONG0 = PLANES["concealed_kong"][0]
_EKONG0 = PLANES["exposed_kong"][0]
_VOID = PLANES["my_void"][0]
_VISIBLE = PLANES["visible"][0]
_EYE = np.eye(27, dtype=np.int8)
assert PHASE_NAMES[0] == "void"


def _own_tiles(obs: np.ndarray):
    """(N, 27) standing counts, meld kinds (0/1 pung/2 kong) and void (-1 none)."""
    counts = obs[:, _HAND0 : _HAND0 + 4].sum(1).round().astype(np.int8)
    kong = (obs[:, _CKONG0] + obs[:, _EKONG0]) > 0.5  # relative seat 0 rows of each group
    meld = np.where(kong, 2, np.where(obs[:, _PUNG0] > 0.5, 1, 0)).astype(np.int8)
    void_row = obs[:, _VOID]
    has_void = void_row.max(1) > 0.5
    void = np.where(has_void, void_row.argmax(1) // 9, -1).astype(np.int8)
    return counts, meld, void


def analysis_planes(obs: np.ndarray) -> np.ndarray:
    """(N, C, 27) observations -> (N, 4, 27) float32 analysis planes (table above)."""
    obs = np.asarray(obs, dtype=np.float32)
    n = obs.shape[0]
    out = np.zeros((n, N_FEATURE_PLANES, 27), np.float32)
    if n == 0:
        return out
    counts, meld, void = _own_tiles(obs)
    n_melds = (meld > 0).sum(1)
    total = counts.sum(1).astype(np.int64) + 3 * n_melds
    unseen = np.clip(4.0 - obs[:, _VISIBLE] * 4.0, 0.0, 4.0)
    # a hand of 14 (after a draw) ranks its discards; a hand of 13 looks at draws and waits
    full = np.flatnonzero(total == 14)
    if full.size:
        h = counts[full]
        cand = np.repeat(h[:, None, :], 27, axis=1) - _EYE[None]  # (m, 27, 27)
        held = h > 0
        cand = np.where(held[:, :, None], cand, h[:, None, :])
        sh = hx.batch_shanten(cand.reshape(-1, 27), np.repeat(meld[full], 27, axis=0),
                              np.repeat(void[full], 27)).reshape(-1, 27)
        out[full, 0] = np.where(held, (sh + 1) / 8.0, 0.0)
        out[full, 1] = ((sh.min(1) + 1) / 8.0)[:, None]
    short = np.flatnonzero(total == 13)
    if short.size:
        h = counts[short]
        m, v = meld[short], void[short]
        now = hx.batch_shanten(h, m, v)
        out[short, 1] = ((now + 1) / 8.0)[:, None]
        out[short, 2] = hx.batch_wait_mask(h, m, v)
        cand = np.minimum(h[:, None, :] + _EYE[None], 4)  # (m, 27, 27): draw one of each
        sh = hx.batch_shanten(cand.reshape(-1, 27), np.repeat(m, 27, axis=0),
                              np.repeat(v, 27)).reshape(-1, 27)
        better = (sh < now[:, None]) & (h < 4)
        out[short, 3] = better * unseen[short] / 4.0
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

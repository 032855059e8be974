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
was trained on augmented observations.

The planes are computed by compiled kernels (numba, one row at a time, over rows in
parallel for large batches when numba has more than two threads) that read the hand tables
of :mod:`sichuan_env.hands` directly: shanten (the four-copies limit and declared melds
included, through the segment tables) and the wait mask give exactly the values of
``hands.batch_shanten`` and ``hands.batch_wait_mask``. ``tests/support/reference_features.py``
keeps the former numpy implementation; a differential test checks that both agree bit for
bit.
"""

from __future__ import annotations

import numba
import numpy as np
from gymnasium import spaces
from numba.core import types
from numba.experimental import structref
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from sichuan_env import hands as hx
from sichuan_env.jit import njit, prange
from sichuan_env.observation import PLANES
from sichuan_env.tables import N_CODES

N_FEATURE_PLANES = 4
_HAND0 = PLANES["hand"][0]
_PUNG0 = PLANES["pung"][0]
_CKONG0 = PLANES["concealed_kong"][0]
_EKONG0 = PLANES["exposed_kong"][0]
_VOID = PLANES["my_void"][0]
_VISIBLE = PLANES["visible"][0]

# ----------------------------------------------------------------------------- hand facts
# Compiled per-hand versions of hands._raw_shanten and hands._wait_mask over the same
# tables (see sichuan_env.tables): `tab` is a _Tables bag of the arrays of _hand_tables():
# one StructRef, so that each helper call counts one reference, not one per array (a tuple
# of 18 arrays passed to a helper per candidate tile cost half of the planes' time).


def _hand_tables() -> tuple[np.ndarray, ...]:
    """The lookup arrays the kernels read, in their order (loaded once by hands)."""
    t = hx._load()
    return (t.flags3, t.packed, t.best, t.seg64.view(np.int8).reshape(-1, 8), t.pat_start,
            t.pat_count, t.pat_nseg, t.pat_div, t.pat_mod, t.cfg_base, t.cfg_ext,
            t.cfg_cover, hx._LUT_SHIFT, hx._LUT_MASK, hx._LUT_MASK7, hx._NEAR9, hx._ROOM,
            hx._POPCOUNT9)


_TABLE_FIELDS = ("flags3", "packed", "best", "seg8", "pat_start", "pat_count", "pat_nseg",
                 "pat_div", "pat_mod", "cfg_base", "cfg_ext", "cfg_cover", "shift", "mask",
                 "mask7", "near9", "room", "popcount")


@structref.register
class _TablesType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class _Tables(structref.StructRefProxy):
    """The arrays of :func:`_hand_tables` (in :data:`_TABLE_FIELDS` order), as one object."""


structref.define_proxy(_Tables, _TablesType, list(_TABLE_FIELDS))


@njit
def _tables_bag(*arrays):
    return _Tables(*arrays)


@njit(inline="always")
def _suit_code(c, s):
    """Base-5 code of suit s of the (27,) counts c."""
    code = 0
    p = 1
    for r in range(9):
        code += c[9 * s + r] * p
        p *= 5
    return code


@njit(inline="always")
def _melded_cover(tab, code, pat, held, res, scratch):
    """hands._best_melded for one suit: the best cover per column 2*m + p (m <= 3) of a
    suit holding melds, from the segment tables; written into res[:8]. ``scratch``: (4, 8)
    int64 work space."""
    seg8, pat_start, pat_count, pat_nseg = tab.seg8, tab.pat_start, tab.pat_count, tab.pat_nseg
    pat_div, pat_mod, cfg_base, cfg_ext, cfg_cover, popcount = (
        tab.pat_div, tab.pat_mod, tab.cfg_base, tab.cfg_ext, tab.cfg_cover, tab.popcount)
    seg, best, val, nxt = scratch[0], scratch[1], scratch[2], scratch[3]
    nseg = pat_nseg[pat]
    for i in range(nseg):
        seg[i] = code // pat_div[pat, i] % pat_mod[pat, i]
    best[:] = -(2**30)
    first = pat_start[pat]
    for cfg in range(first, first + pat_count[pat]):
        row = cfg_base[cfg, 0] + seg[0]
        for col in range(8):
            val[col] = seg8[row, col]
        for i in range(1, nseg):
            row = cfg_base[cfg, i] + seg[i]
            for m in range(4):  # (max, +) convolution over the set and pair blocks
                for p in range(2):
                    top = -(2**30)
                    for m1 in range(m + 1):
                        for p1 in range(p + 1):
                            x = val[2 * m1 + p1] + seg8[row, 2 * (m - m1) + (p - p1)]
                            if x > top:
                                top = x
                    nxt[2 * m + p] = top
            val[:] = nxt
        ext = cfg_ext[cfg]  # outside chows: ext set blocks taken by the neighbours
        extra = popcount[held & cfg_cover[cfg]]
        for col in range(8):
            x = (val[col - 2 * ext] if col >= 2 * ext else -256) + extra
            if x > best[col]:
                best[col] = x
    for col in range(8):
        res[col] = max(best[col], 0)


@njit(inline="always")
def _suit_cover(tab, c, mk, n_melds, v, s, res, scratch):
    """Row s of hands._raw_shanten's per-suit best covers (12 columns) into res."""
    code = _suit_code(c, s)
    melded = False
    if n_melds:
        pat = 0
        held = 0
        p = 1
        for r in range(9):
            pat += mk[9 * s + r] * p
            p *= 3
            if c[9 * s + r] > 0:
                held |= 1 << r
        if tab.near9[pat] & held:  # a held rank within two of a meld kind
            melded = True
            _melded_cover(tab, code, pat, held, res, scratch)
    if s == v:
        code = 0  # void tiles never count
    best_tab = tab.best
    for col in range(8 if melded else 0, 12):
        res[col] = best_tab[code, col]


@njit
def _combine(cover, n_melds):
    """Shanten from the three suits' covers (hands._raw_shanten's last step)."""
    need = 4 - n_melds
    top = -(2**30)
    for m0 in range(need + 1):
        for m1 in range(need - m0 + 1):
            m2 = need - m0 - m1
            for pair in range(3):
                x = (cover[0, 2 * m0 + (pair == 0)] + cover[1, 2 * m1 + (pair == 1)]
                     + cover[2, 2 * m2 + (pair == 2)])
                if x > top:
                    top = x
    sh = 13 - 3 * n_melds - top
    if n_melds == 0:  # seven pairs
        pairs = min(cover[0, 10] + cover[1, 10] + cover[2, 10], 7)
        singles = cover[0, 11] + cover[1, 11] + cover[2, 11]
        sh = min(sh, 13 - (2 * pairs + min(7 - pairs, singles)))
    return sh


@njit
def _shanten(tab, c, mk, v):
    """hands.batch_shanten of one hand: (27,) counts, (27,) meld kind 0/1/2, void -1..2."""
    n = 0
    for k in range(27):
        if mk[k] > 0:
            n += 1
    cover = np.empty((3, 12), np.int64)
    scratch = np.empty((4, 8), np.int64)
    for s in range(3):
        _suit_cover(tab, c, mk, n, v, s, cover[s], scratch)
    return _combine(cover, n)


@njit
def _waits(tab, c, mk, v, out):
    """hands.batch_wait_mask of one hand into out (27,) bool-like (written as 0/1)."""
    flags3, packed = tab.flags3, tab.packed
    shift, mask, mask7, room = tab.shift, tab.mask, tab.mask7, tab.room
    codes = np.empty(3, np.int64)
    no_melds = 1
    for s in range(3):
        codes[s] = _suit_code(c, s)
    for k in range(27):
        if mk[k] != 0:
            no_melds = 0
    void_held = 1 if 0 <= v < 3 and codes[v] != 0 else 0
    idx = (flags3[codes[0]] | flags3[codes[1] + N_CODES] | flags3[codes[2] + 2 * N_CODES]
           | (no_melds << 12) | (void_held << 13))
    for s in range(3):
        pk = packed[codes[s]]
        bits = ((pk >> shift[idx, s]) & mask[idx, s]) | ((pk >> 20) & mask7[idx, s])
        for r in range(9):
            k = 9 * s + r
            out[k] = 1 if (bits >> r) & 1 and room[c[k] + 5 * mk[k]] else 0


# ----------------------------------------------------------------------------- the planes


@njit
def _analysis_row(tab, o, res, cover, trial, scratch, work):
    """The (4, 27) analysis planes of one observation o (C, 27) into res (zeros);
    ``cover``, ``trial`` (3, 12), ``scratch`` (4, 8) and ``work`` (3, 27) int64 work
    space. A candidate discard or draw changes one suit: only that suit's cover is looked
    up again."""
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
        _suit_cover(tab, counts, meld, n_melds, void, s, cover[s], scratch)
    now = _combine(cover, n_melds)  # shanten of the tiles as they stand
    step = -1 if total == 14 else 1  # 14 tiles: discard one; 13: draw one
    low = now
    for k in range(27):
        if (counts[k] == 0) if step < 0 else (counts[k] == 4):
            continue
        s = k // 9
        trial[:] = cover
        counts[k] += step
        _suit_cover(tab, counts, meld, n_melds, void, s, trial[s], scratch)
        counts[k] -= step
        sh = _combine(trial, n_melds)
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
        waits = work[2]
        _waits(tab, counts, meld, void, waits)
        for k in range(27):
            res[1, k] = x
            res[2, k] = waits[k]


@njit
def _analysis_range(tab, obs, out, lo, hi):
    cover = np.empty((3, 12), np.int64)
    trial = np.empty((3, 12), np.int64)
    scratch = np.empty((4, 8), np.int64)
    work = np.empty((3, 27), np.int64)
    for i in range(lo, hi):
        _analysis_row(tab, obs[i], out[i], cover, trial, scratch, work)


@njit
def _analysis_serial(tab, obs, out):
    _analysis_range(tab, obs, out, 0, obs.shape[0])


@njit(parallel=True)
def _analysis_parallel(tab, obs, out):
    n = obs.shape[0]
    for task in prange((n + 31) // 32):
        _analysis_range(tab, obs, out, 32 * task, min(32 * task + 32, n))


_PARALLEL_FROM = 256  # rows; only when numba has more than two threads (see observation)
_PARALLEL = numba.config.NUMBA_NUM_THREADS > 2
_TABLES: _Tables | None = None


def analysis_planes(obs: np.ndarray, parallel: bool | None = None) -> np.ndarray:
    """(N, C, 27) observations -> (N, 4, 27) float32 analysis planes (table above).
    ``parallel`` None: on several threads for large batches when numba has them."""
    global _TABLES
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    if obs.ndim != 3 or obs.shape[1] <= _VISIBLE or obs.shape[2] != 27:
        raise ValueError(f"observations must be (N, C, 27) planes, got shape {obs.shape}")
    out = np.zeros((obs.shape[0], N_FEATURE_PLANES, 27), np.float32)
    if obs.shape[0] == 0:
        return out
    if _TABLES is None:
        _TABLES = _tables_bag(*_hand_tables())
    if parallel is None:
        parallel = _PARALLEL and obs.shape[0] >= _PARALLEL_FROM
    (_analysis_parallel if parallel else _analysis_serial)(_TABLES, obs, out)
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

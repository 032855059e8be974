"""The compiled analysis planes against the former numpy implementation
(``tests/support/reference_features.py``): the same bits on observations of played tables (every
seat, both presets) and on synthetic hands rich in melds, voids and four-copy kinds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from sichuan_agents.training.features import analysis_planes
from sichuan_env.core import engine
from sichuan_env.core.rules import get_rules
from sichuan_env.seats.observation import N_CHANNELS, PLANES, encode

from support import reference_features as ref
from support.policies import biased, uniform


def _check(obs: np.ndarray) -> None:
    want = ref.analysis_planes(obs)
    for parallel in (False, True):
        got = analysis_planes(obs, parallel=parallel)
        bad = np.argwhere(got != want)
        assert not bad.size, (parallel, bad[:5].tolist())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=hs.integers(0, 2**40),
    preset=hs.sampled_from(["mil", "mahjongsoft"]),
    policy=hs.sampled_from([uniform, biased]),
    steps=hs.integers(0, 300),
)
def test_played_tables(seed, preset, policy, steps) -> None:
    st = engine.reset(np.arange(16) + seed, get_rules(preset))
    rng = np.random.default_rng(seed % 2**32)
    for _ in range(steps):
        m = engine.legal_mask(st)
        st, _, _ = engine.step(st, policy(st, m, rng), autoreset=True)
    rows = np.repeat(np.arange(16), 4)
    _check(encode(st, np.tile(np.arange(4), 16), rows))


def _synthetic(rng: np.random.Generator, n: int) -> np.ndarray:
    """Observations holding only what the planes read: own standing tiles (13 or 14 minus
    3 per meld, or any other size), own melds (up to four), own void, visible counts."""
    obs = np.zeros((n, N_CHANNELS, 27), np.float32)
    h0, pung, ck, ek = (PLANES[x][0] for x in ("hand", "pung", "concealed_kong",
                                                "exposed_kong"))
    for i in range(n):
        n_melds = int(rng.integers(0, 5))
        kinds = rng.choice(27, n_melds, replace=False)
        room = np.full(27, 4)
        for k in kinds:
            plane = int(rng.choice([pung, ck, ek], p=[0.6, 0.2, 0.2]))
            obs[i, plane, k] = 1.0
            room[k] = 1 if plane == pung else 0
        size = int(rng.choice([13, 14, int(rng.integers(0, 15))], p=[0.45, 0.45, 0.1]))
        size = max(size - 3 * n_melds, 0)
        suits = rng.choice(3, 2, replace=False)  # concentrate on two suits: more melds near
        pool = np.concatenate([np.repeat(np.arange(27), room),
                               np.repeat(np.arange(27)[np.isin(np.arange(27) // 9, suits)],
                                         room[np.isin(np.arange(27) // 9, suits)])])
        counts = np.zeros(27, int)
        for k in rng.permutation(pool):
            if counts.sum() == size:
                break
            if counts[k] < room[k]:
                counts[k] += 1
        for j in range(4):
            obs[i, h0 + j] = counts > j
        void = int(rng.integers(-1, 3))
        if void >= 0:
            obs[i, PLANES["my_void"][0], 9 * void : 9 * void + 9] = 1.0
        obs[i, PLANES["visible"][0]] = np.minimum(
            counts + rng.integers(0, 5, 27), 4) * np.float32(0.25)
    return obs


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(salt=hs.integers(0, 2**32 - 1))
def test_synthetic_hands(salt: int) -> None:
    _check(_synthetic(np.random.default_rng(salt), 64))


def test_bad_shape_and_empty() -> None:
    with pytest.raises(ValueError):
        analysis_planes(np.zeros((2, 10, 27), np.float32))
    assert analysis_planes(np.zeros((0, N_CHANNELS, 27), np.float32)).shape == (0, 4, 27)

"""The plain-Python reference of ``benchmarks/plain_python.py`` (the yardstick of the AEC
env's speed): with observations on, it builds the same planes and action mask as the
engine for the positions both reach.

The reference deals from its own shuffle, so the check deals it the engine's tiles
(hands and wall of ``engine.reset([seed])``) and plays both in lockstep: at each of the
reference's decisions the engine must ask the same seat in the same phase; the
reference's planes must equal ``observation.encode`` and its mask the engine's legal
mask; a random action legal in both is then played in both. Scores are copied from the
engine before each observation (the reference scores fewer fans, so its points differ;
its scores planes are built from whatever it holds). The reference has no passed-Hu
restriction: its passed_hu plane is 0, and a deal in which the engine's restriction
withholds a claim leaves the lockstep (allowed for a few deals).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import plain_python
from sichuan_env.core import engine
from sichuan_env.core.actions import KONG, PASS
from sichuan_env.seats.observation import N_CHANNELS, PLANES, encode

PASSED_HU = PLANES["passed_hu"][0]


class DesyncError(Exception):
    """The engine and the reference no longer ask the same seat the same question."""


class Lockstep(plain_python.Deal):
    """A reference deal of the engine's tiles whose every decision is checked against the
    engine and then played in both."""

    def __init__(self, seed: int, rng: np.random.Generator) -> None:
        st = engine.reset([seed])
        tiles: list[int] = []
        for s in range(4):  # the dealer (seat 0) first, as the reference deals
            tiles += [k for k in range(27) for _ in range(int(st.hand[0, s, k]))]
        tiles += st.wall[0, st.wall_front[0]:st.wall_back[0]].tolist()
        super().__init__(seed, observe=True, tiles=tiles)
        self.st, self.pick = st, rng
        self.compared = 0
        self.passed_hu_seen = 0

    def choose(self, seat: int, options: list) -> object:
        st = self.st
        if st.done[0] or int(st.current[0]) != seat or int(st.phase[0]) != self.phase:
            raise DesyncError(f"reference asks seat {seat} in phase {self.phase}, the engine "
                         f"seat {st.current[0]} in phase {st.phase[0]}")
        self.scores = st.scores[0].tolist()
        super().choose(seat, options)  # builds self.last_seen as in the benchmark
        planes, mask = self.last_seen
        got = np.asarray(planes, np.float32)
        want = encode(st, seat)[0]
        assert got.shape == (N_CHANNELS, 27)
        if st.passed_hu[0, seat]:
            self.passed_hu_seen += 1
            got[PASSED_HU] = want[PASSED_HU]  # not represented in the reference
        # wall_left is w / 55: float64 then float32 against float32 arithmetic (one ulp)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
        assert mask == st.legal_action_mask[0].astype(int).tolist()
        self.compared += 1
        ids = [self.mask([o]).index(1) for o in options]
        # random, but Hu and kongs taken mostly, so that wins, robbed kongs and
        # replacements are reached often (uniform random play seldom wins)
        keen = [j for j, a in enumerate(ids) if a >= KONG and a != PASS]
        if keen and self.pick.random() < 0.8:
            i = keen[int(self.pick.integers(len(keen)))]
        else:
            i = int(self.pick.integers(len(options)))
        self.st, _, _ = engine.step(st, np.array([ids[i]]), inplace=True)
        return options[i]


def test_reference_observations_and_masks_equal_the_engines() -> None:
    rng = np.random.default_rng(7)
    deals, whole, compared, won = 120, 0, 0, 0
    for seed in range(deals):
        d = Lockstep(seed, rng)
        try:
            d.play()
            assert d.st.done[0], f"seed {seed}: the reference ended before the engine"
            whole += 1
        except DesyncError:
            pass
        compared += d.compared
        won += int(d.st.hu[0].sum())
    assert whole >= 0.95 * deals
    assert compared >= 50 * deals
    assert won >= deals // 10  # positions after wins were compared too


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_observing_changes_no_decision(seed: int) -> None:
    plain = plain_python.Deal(seed)
    seen = plain_python.Deal(seed, observe=True)
    assert plain.play() == seen.play()
    assert plain.scores == seen.scores and plain.decisions > 40
    planes, mask = seen.last_seen
    assert len(planes) == N_CHANNELS and all(len(p) == 27 for p in planes)
    assert len(mask) == 88 and sum(mask) >= 1


def test_rate_reports_both_modes() -> None:
    for observe in (False, True):
        per_second, per_deal = plain_python.rate(0.2, observe=observe)
        assert per_second > 0 and 40 < per_deal < 120

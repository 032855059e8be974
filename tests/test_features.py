"""The hand-analysis planes agree with the hand evaluator and see only the observer."""

import numpy as np

from sichuan_agents.training.features import (
    N_FEATURE_PLANES,
    AnalysisVecEnv,
    analysis_planes,
    augment,
)
from sichuan_env.core import hands, tiles
from sichuan_env.envs.vector import SichuanVecEnv
from sichuan_env.records.game import Game
from sichuan_env.seats.agent import make_agent
from sichuan_env.seats.observation import N_CHANNELS, encode


def _deal(seat0: str, wall_len: int = 20) -> Game:
    """A deal whose dealer (seat 0) holds ``seat0``; the rest dealt in kind order."""
    left = 4 - tiles.parse_hand(seat0)
    rest = np.repeat(np.arange(27), left)
    others = [tiles.format_hand(np.bincount(rest[13 * i : 13 * i + 13], minlength=27))
              for i in range(3)]
    wall = tiles.format_hand(np.bincount(rest[39 : 39 + wall_len], minlength=27))
    return Game.from_deal([seat0, *others], wall)


def _obs(g: Game) -> np.ndarray:
    st = g.state
    return encode(st, st.current.astype(np.intp))


def test_discard_planes_match_hands_shanten_on_the_dealers_turn():
    hand = "12345678m112233p"  # 14 tiles: 8 m + 6 p
    g = _deal(hand)
    g.play("void s")  # the dealer has no bamboo: indicator
    for _ in range(3):
        g.play(next(a for a in g.legal() if a.startswith("void")))
    assert g.current_seat == 0 and g.phase == "turn"
    planes = analysis_planes(_obs(g))[0]
    counts = tiles.parse_hand(hand)
    for k in np.flatnonzero(counts):
        after = counts.copy()
        after[k] -= 1
        want = hands.shanten(after, (), "s")
        assert planes[0, k] * 8 - 1 == want, tiles.tile_str(k)
    assert (planes[0][counts == 0] == 0).all()
    assert planes[1, 0] * 8 - 1 == min(planes[0][counts > 0] * 8 - 1)


def test_waits_and_useful_draws_for_a_standing_hand():
    # after the dealer discards, seat 1 looks at the discard with 13 standing tiles
    g = Game.new(seed=4)
    rng = np.random.default_rng(0)
    seen = 0
    while not g.done and seen < 40:
        st = g.state
        seat = int(st.current[0])
        counts = st.hand[0, seat]
        melds = [("pung" if m == 1 else "concealed_kong", tiles.tile_str(k))
                 for k, m in enumerate(st.meld[0, seat]) if m]
        void = g.void(seat)
        if g.phase == "claim" and st.set_aside[0, seat] < 0:
            planes = analysis_planes(_obs(g))[0]
            want_waits = hands.waits(counts, melds, void)
            got = [tiles.tile_str(k) for k in np.flatnonzero(planes[2])]
            assert got == want_waits
            assert planes[1, 0] * 8 - 1 == hands.shanten(counts, melds, void)
            seen += 1
        options = g.legal()
        g.play("pass" if "pass" in options else options[rng.integers(len(options))])
    assert seen > 0


def test_augment_appends_planes_and_vec_env_carries_them():
    env = AnalysisVecEnv(SichuanVecEnv(4, opponents=make_agent("random", seed=1), seed=2))
    obs = env.reset()
    assert obs.shape == (4, N_CHANNELS + N_FEATURE_PLANES, 27)
    assert env.observation_space.contains(obs[0])
    done_seen = False
    for _ in range(400):
        m = env.action_masks()
        obs, _, dones, infos = env.step((np.random.default_rng(0).random(m.shape) * m).argmax(1))
        for d, info in zip(dones, infos, strict=True):
            if d:
                assert info["terminal_observation"].shape == obs.shape[1:]
                done_seen = True
    assert done_seen
    single = augment(obs[0, :N_CHANNELS])
    assert single.shape == obs.shape[1:]

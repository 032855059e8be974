"""A self-drawn winning tile is turned face down (docs/rules.md section 14): other seats
never see it, while a tile won on a discard stays visible."""

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.actions import HU
from sichuan_env.seats.observation import PLANES, encode


def _play_until_wins(seed: int):
    """Random play that always takes a Hu; yields states after each new win."""
    rng = np.random.default_rng(seed)
    st = engine.reset(np.arange(seed, seed + 64))
    for _ in range(400):
        if st.done.all():
            return
        m = engine.legal_mask(st)
        a = (rng.random(m.shape) * m).argmax(1)
        a = np.where(m[:, HU], HU, a)
        before = st.hu.copy()
        st, _, _ = engine.step(st, a)
        new = st.hu & ~before & ~st.done[:, None]
        if new.any():
            yield st, np.argwhere(new)


def test_self_drawn_tile_hidden_from_others_but_discard_win_shown():
    c_hu = PLANES["hu_tile"][0]
    c_vis = PLANES["visible"][0]
    self_drawn_seen = discard_win_seen = 0
    for st, wins in _play_until_wins(3):
        for t, s in wins:
            t, s = int(t), int(s)
            tile = int(st.hu_tile[t, s])
            for observer in range(4):
                r = (s - observer) % 4
                obs = encode(st, np.array([observer]), np.array([t]))[0]
                shown = obs[c_hu + r, tile] == 1.0
                if observer == s or st.hu_from[t, s] != s:
                    assert shown
                else:
                    assert not shown and obs[c_hu + r].sum() == 0
                    # moving the hidden tile to another kind changes nothing for others
                    alt = st.copy()
                    left = alt.wall[t, alt.wall_front[t]:alt.wall_back[t]]
                    others = np.flatnonzero(left != tile)
                    if others.size:
                        k = int(left[others[0]])
                        alt.wall[t, alt.wall_front[t] + others[0]] = tile
                        alt.won_tiles[t, tile] -= 1
                        alt.won_tiles[t, k] += 1
                        alt.hu_tile[t, s] = k
                        obs2 = encode(alt, np.array([observer]), np.array([t]))[0]
                        assert (obs2 == obs).all()
                    self_drawn_seen += 1
            if st.hu_from[t, s] != s:
                discard_win_seen += 1
                vis = encode(st, np.array([(s + 1) % 4]), np.array([t]))[0][c_vis]
                assert vis[tile] > 0
        if self_drawn_seen > 20 and discard_win_seen > 5:
            break
    assert self_drawn_seen and discard_win_seen

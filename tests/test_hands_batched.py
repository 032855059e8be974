"""The batched hand functions agree with the single-hand API; shapes, dtypes and the
single-hand API's error messages. (Rule cases and the brute-force reference live in
test_hands_rules.py and test_hands_reference.py.)"""

import numpy as np
import pytest

from sichuan_env.core import hand_kernels as hk
from sichuan_env.core import hands, tables, tiles
from sichuan_env.core.rules import get_rules

from support import reference_hands as rh

MELD_NAMES = {1: "pung", 2: "concealed_kong"}
COPIES = np.array([0, 3, 4])


def random_rows(rng, size, extra):
    """Hands of 13 - 3n (+ extra) standing tiles with n random melds and a random void;
    half of them built from sets so that many are ready or complete."""
    rows = []
    while len(rows) < size:
        n = int(rng.choice(5, p=[0.4, 0.25, 0.15, 0.1, 0.1]))
        suits = rng.choice(3, size=int(rng.integers(1, 4)), replace=False)
        mk = np.zeros(27, np.int8)
        for k in rng.choice([s * 9 + r for s in suits for r in range(9)], n, replace=False):
            mk[k] = rng.integers(1, 3)
        c = np.zeros(27, np.int8)
        if rng.random() < 0.5:  # sets and a pair, then drop one tile if extra == 0
            for _ in range(4 - n):
                s, r = rng.choice(suits), int(rng.integers(0, 7))
                if rng.random() < 0.5:
                    c[s * 9 + r] += 3
                else:
                    c[s * 9 + r : s * 9 + r + 3] += 1
            c[rng.choice(suits) * 9 + rng.integers(0, 9)] += 2
            if not extra:
                c[rng.choice(np.flatnonzero(c))] -= 1
        else:
            pool = np.repeat(np.arange(27), 4 - COPIES[mk])
            c = np.bincount(rng.choice(pool, 13 - 3 * n + extra, replace=False),
                            minlength=27).astype(np.int8)
        if (c + COPIES[mk] > 4).any():
            continue
        free = [s for s in range(3) if not mk[9 * s : 9 * s + 9].any()]
        void = int(rng.choice(free)) if free and rng.random() < 0.7 else -1
        rows.append((c, mk, void))
    c = np.array([r[0] for r in rows], np.int8)
    mk = np.array([r[1] for r in rows], np.int8)
    v = np.array([r[2] for r in rows], np.int8)
    return c, mk, v


def api_args(c, mk, v):
    melds = [(MELD_NAMES[int(mk[k])], tiles.tile_str(k)) for k in np.flatnonzero(mk)]
    return tiles.format_hand(c), melds, None if v < 0 else "mps"[v]


def test_batched_agrees_with_single_hand_on_standing_hands():
    rng = np.random.default_rng(1)
    c, mk, v = random_rows(rng, 400, extra=0)
    mask = hands.batch_wait_mask(c, mk, v)
    sh = hands.batch_shanten(c, mk, v)
    tmax = {cap: hands.batch_theoretical_max(c, mk, v, cap) for cap in (3, 4)}
    assert (sh == 0).sum() > 50  # the sample really holds ready hands
    for i in range(len(c)):
        args = api_args(c[i], mk[i], v[i])
        assert hands.waits(*args) == [tiles.tile_str(k) for k in np.flatnonzero(mask[i])]
        assert hands.shanten(*args) == sh[i]
        assert (sh[i] == 0) == mask[i].any()
        assert hands.theoretical_max(*args, rules=get_rules("mil")) == tmax[3][i]
        assert hands.theoretical_max(*args, rules="mahjongsoft") == tmax[4][i]


def test_batched_agrees_with_single_hand_on_full_hands():
    rng = np.random.default_rng(2)
    c, mk, v = random_rows(rng, 400, extra=1)
    n = np.count_nonzero(mk, axis=1)
    done = hands.batch_is_complete(c, n, v)
    sh = hands.batch_shanten(c, mk, v)
    assert done.sum() > 50
    np.testing.assert_array_equal(done, sh == -1)
    flags = rng.random((5, len(c))) < 0.3
    flags[1] &= flags[0]  # after_kong only on self-drawn wins
    fans = hands.batch_fans(c, mk, np.zeros(len(c), np.int8), v, *flags)
    values = {cap: hands.batch_value(fans, cap) for cap in (3, 4)}
    for i in range(len(c)):
        args = api_args(c[i], mk[i], v[i])
        assert hands.is_complete(*args) == done[i]
        assert hands.shanten(*args) == sh[i]
        if not done[i]:
            continue
        win = int(np.flatnonzero(c[i])[0])
        rest = c[i].copy()
        rest[win] -= 1
        s = hands.score(rest, args[1], win, args[2], rules="mahjongsoft")
        plain = fans[i].copy()
        plain[6:] = 0
        assert s.fans == {k: int(x) for k, x in zip(hands.FAN_NAMES, plain, strict=True) if x}
        assert s.fan_total == int(plain.sum())
        assert s.value == 2 ** min(s.fan_total, 4)
        assert values[3][i] == 2 ** min(int(fans[i].sum()), 3)
        assert values[4][i] == 2 ** min(int(fans[i].sum()), 4)


def test_shapes_and_dtypes():
    rng = np.random.default_rng(3)
    c, mk, v = random_rows(rng, 7, extra=0)
    assert hands.batch_wait_mask(c, mk, v).shape == (7, 27)
    assert hands.batch_wait_mask(c, mk, v).dtype == bool
    assert hands.batch_shanten(c, mk, v).dtype == np.int8
    assert hands.batch_shanten(c, mk, v).shape == (7,)
    tm = hands.batch_theoretical_max(c, mk, v, 3)
    assert tm.dtype == np.int32 and tm.shape == (7,)
    c14, mk14, v14 = random_rows(rng, 5, extra=1)
    n = np.count_nonzero(mk14, axis=1)
    assert hands.batch_is_complete(c14, n, v14).dtype == bool
    f = hands.batch_fans(c14, mk14, np.zeros(5), v14, *np.zeros((5, 5), bool))
    assert f.shape == (5, len(hands.FAN_NAMES)) and f.dtype == np.int8
    val = hands.batch_value(f, 3)
    assert val.shape == (5,) and val.dtype == np.int32
    empty = np.zeros((0, 27), np.int8)
    assert hands.batch_shanten(empty, empty, np.zeros(0, np.int8)).shape == (0,)
    assert hands.batch_wait_mask(empty, empty, np.zeros(0, np.int8)).shape == (0, 27)


def test_fan_names_and_score_is_frozen():
    assert hands.FAN_NAMES == ("Kong", "Root", "All Pungs", "Golden Wait", "Full Flush",
                               "Seven Pairs", "Win after Kong", "Shoot after Kong",
                               "Robbing the Kong", "Under the Sea")
    s = hands.score("1112345678999m", (), "5m", "s")
    with pytest.raises(AttributeError):
        s.value = 1  # type: ignore[misc]
    assert hash(s) == hash(hands.score("1112345678999m", (), "5m", "s"))


def test_cache_path_has_version_and_env(monkeypatch, tmp_path):
    monkeypatch.setenv("SICHUAN_ENV_CACHE", str(tmp_path))
    assert tables.cache_path().parent == tmp_path
    assert f"v{tables.TABLE_VERSION}" in tables.cache_path().name


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: hands.is_complete("123m456p789s11p"), "wrong tile count"),
        (lambda: hands.waits("123m456p789s11p"), "expected 13"),
        (lambda: hands.shanten("123m"), "expected 13 or 14"),
        (lambda: hands.waits("55555m12p456p789s"), "more than four copies of 5m"),
        (lambda: hands.waits("55m123p456p78s", [("pung", "5m")]),
         "more than four copies of 5m: 2 concealed \\+ 3 in a pung"),
        (lambda: hands.score("5m123p456p789s", [("pung", "5m")], "5m", None),
         "the win tile"),
        (lambda: hands.waits("1m", [("pung", "2m")] * 4), "two melds of one kind: 2m"),
        (lambda: hands.waits("1m", [("pung", k) for k in ("2m", "3m", "4m", "5m", "6m")]),
         "more than 4 melds"),
        (lambda: hands.waits("1m23p456p", [("chow", "2m")]), "unknown meld kind 'chow'"),
        (lambda: hands.waits("1m23p456p78s", [("pung", "5s")], "s"), "void suit"),
        (lambda: hands.waits("123m456p789s1p", (), "x"), "unknown void suit"),
        (lambda: hands.score("123m456p789s1122p", (), "5s", None), "not a win"),
        (lambda: hands.score("123m456p789m111s2p", (), "2p", "s"), "not a win.*void suit"),
        (lambda: hands.score("123m456p789m1122p", (), "2p", None, after_kong=True,
                             self_drawn=False), "after_kong"),
        (lambda: hands.score("123m456p789m1122p", (), "2p", None, after_kong=True,
                             self_drawn=True), "needs a declared kong"),
        (lambda: hands.score("123m456p789m1122p", (), "2p", None, shoot_after_kong=True,
                             self_drawn=True), "shoot_after_kong"),
        (lambda: hands.score("123m456p789m1122p", (), "2p", None, robbing_kong=True,
                             self_drawn=True), "robbing_kong"),
        (lambda: hands.score("123m456p789m1122p", (), "2p", None, robbing_kong=True,
                             under_the_sea=True), "cannot go with"),
        (lambda: hands.score("123m456p789m1122p", (), "2p", None, robbing_kong=True),
         "already holds"),
        (lambda: hands.waits("1m", [("pung", "2m"), ("pung", 99), ("pung", "4m"),
                                    ("pung", "5m")]), "kind 0..26"),
    ],
)
def test_single_hand_errors_say_why(call, words):
    with pytest.raises(ValueError, match=words):
        call()


# ------------------------------------------------- suits holding melds (segment tables)


def melded_suits(rng, size, max_melds=4, max_tiles=11):
    """(size, 9) counts and (size, 9) meld codes of single suits holding 1..max_melds
    melds; the counts respect the copies the melds leave."""
    j = rng.integers(1, max_melds + 1, size)
    kind = np.zeros((size, 9), np.int8)
    order = np.argsort(rng.random((size, 9)), axis=1)
    for q in range(max_melds):
        rows = np.flatnonzero(j > q)
        kind[rows, order[rows, q]] = rng.integers(1, 3, rows.size)
    room = 4 - COPIES[kind]
    n_tiles = rng.integers(1, np.minimum(max_tiles, 14 - 3 * j) + 1)
    weights = rng.random((size, 36)) + (np.arange(36) % 4 >= room.repeat(4, axis=1)) * 2
    picked = np.argsort(weights, axis=1) // 4
    keep = np.arange(36)[None] < n_tiles[:, None]
    h = np.zeros((size, 9), np.int8)
    np.add.at(h, (np.nonzero(keep)[0], picked[keep]), 1)
    return h, kind


def fast_melded_cover(h, kind):
    """The kernels' cover of suits holding melds (hand_kernels.melded_cover)."""
    code = h.astype(np.int64) @ 5 ** np.arange(9)
    pat = kind.astype(np.int64) @ 3 ** np.arange(9)
    held = (h > 0).astype(np.int64) @ 2 ** np.arange(9)
    out = np.empty((h.shape[0], 8), np.int64)
    hk.melded_cover_rows(hk.shanten_tables(), code, pat, held, out)
    return out


def assert_same_used_columns(h, kind):
    """The segment-table cover equals the arrangement search in every column a hand can
    use: m set blocks in a suit holding j melds only when m <= 4 - j."""
    got = fast_melded_cover(h, kind)
    want = rh._best_with_room(h, 4 - COPIES[kind])
    used = np.arange(8)[None] // 2 <= 4 - np.count_nonzero(kind, axis=1)[:, None]
    bad = np.flatnonzero(((got != want) & used).any(axis=1))
    assert bad.size == 0, [(h[i], kind[i], got[i], want[i]) for i in bad[:3]]


def test_segment_tables_match_search_random_suits():
    rng = np.random.default_rng(11)
    h, kind = melded_suits(rng, 30_000)
    assert (h <= 4 - COPIES[kind]).all()
    assert_same_used_columns(h, kind)


def test_segment_tables_match_search_every_small_single_meld_suit():
    """Every suit with one pung or kong and at most five other tiles."""
    rest = np.array(list(np.ndindex(*(5,) * 8)), np.int8)
    rest = rest[rest.sum(axis=1) <= 5]
    hs, kinds = [], []
    for k in range(9):
        for meld, copies_left in ((1, (0, 1)), (2, (0,))):
            for held in copies_left:
                hs.append(np.insert(rest, k, held, axis=1))
                kind = np.zeros((len(rest), 9), np.int8)
                kind[:, k] = meld
                kinds.append(kind)
    assert_same_used_columns(np.concatenate(hs), np.concatenate(kinds))


def melded_hands(rng, size):
    """Standing hands (13 - 3k tiles, + 1 for half of them) with k = 1..4 random melds,
    a random void suit among the suits without melds."""
    k = rng.integers(1, 5, size)
    mk = np.zeros((size, 27), np.int8)
    order = np.argsort(rng.random((size, 27)), axis=1)
    for j in range(4):
        rows = np.flatnonzero(k > j)
        mk[rows, order[rows, j]] = rng.integers(1, 3, rows.size)
    room = 4 - COPIES[mk]
    n_tiles = 13 - 3 * k + (rng.random(size) < 0.5)
    weights = rng.random((size, 108)) + (np.arange(108) % 4 >= room.repeat(4, axis=1)) * 2
    picked = np.argsort(weights, axis=1) // 4
    keep = np.arange(108)[None] < n_tiles[:, None]
    c = np.zeros((size, 27), np.int8)
    np.add.at(c, (np.nonzero(keep)[0], picked[keep]), 1)
    free = ~mk.reshape(size, 3, 9).any(axis=2)
    pick = rng.integers(0, 3, size)
    void = np.where(free[np.arange(size), pick] & (rng.random(size) < 0.7), pick, -1)
    return c, mk, void.astype(np.int8)


def test_batch_shanten_with_melds_matches_arrangement_search(monkeypatch):
    """The kernels' shanten equals the numpy reference's with the suits holding melds
    covered by the direct search instead of the segment tables."""
    rng = np.random.default_rng(12)
    c, mk, v = melded_hands(rng, 20_000)
    fast = hands.batch_shanten(c, mk, v)

    def slow(t, code, pat, held):
        h = (code[:, None] // 5 ** np.arange(9)) % 5
        room = 4 - COPIES[(pat[:, None] // 3 ** np.arange(9)) % 3]
        return rh._best_with_room(h.astype(np.int8), room)

    monkeypatch.setattr(rh, "_best_melded", slow)
    np.testing.assert_array_equal(fast, rh.batch_shanten(c, mk, v))
    assert set(np.unique(fast)) >= {-1, 0, 1, 2}


def test_batch_shanten_with_melds_matches_reference():
    from support import reference as ref

    rng = np.random.default_rng(13)
    c, mk, v = melded_hands(rng, 300)
    got = hands.batch_shanten(c, mk, v)
    for i in range(len(c)):
        melds = [(MELD_NAMES[int(mk[i, k])], int(k)) for k in np.flatnonzero(mk[i])]
        void = None if v[i] < 0 else int(v[i])
        assert got[i] == ref.shanten(tuple(int(x) for x in c[i]), melds, void), (
            tiles.format_hand(c[i]), melds, void)

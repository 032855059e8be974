"""The engine's cached wait bits (``state.waits``) equal the ones recomputed from the
hands, after every step of random play (uniform and Hu/kong/pung-biased, both presets)
and after ``reset_from_deal``; and the Hu options they feed (the stored legal mask, the
claim options) equal the ones computed from the hands."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.actions import HU
from sichuan_env.core.hands import batch_is_complete
from sichuan_env.core.state import CLAIM, DONE, OPT_HU, ROB, TURN, State

from support.policies import biased, uniform


def expected_waits(st: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(B, 4) int64 wait bits recomputed with the batched hand functions; (B, 4) bool:
    where they are defined (a seat still playing whose standing hand has 3n + 1 tiles;
    in its own turn the hand without the tile drawn); (B, 4) int64: the bits defined
    (kinds that hand holds four times are left out)."""
    B = st.batch_size
    hand = st.hand.astype(np.int16).copy()
    rows = np.arange(B)
    own = (st.phase == TURN) & (st.drawn_tile >= 0)
    hand[rows[own], st.current[own], st.drawn_tile[own]] -= 1
    n_melds = (st.meld != 0).sum(2)
    defined = (hand.sum(2) % 3 == 1) & ~st.hu & (st.phase != DONE)[:, None]
    plus = np.repeat(hand[:, :, None, :], 27, axis=2)  # (B, 4, 27 extra, 27)
    plus[:, :, np.arange(27), np.arange(27)] += 1
    np.minimum(plus, 4, out=plus)  # a fifth copy: no such hand (left out below)
    complete = batch_is_complete(
        plus.reshape(-1, 27).astype(np.int8), np.repeat(n_melds.reshape(-1), 27),
        np.repeat(st.void.reshape(-1), 27)).reshape(B, 4, 27)
    complete &= hand < 4
    bits = (complete.astype(np.int64) << np.arange(27)).sum(2)
    known = ((hand < 4).astype(np.int64) << np.arange(27)).sum(2)
    return bits, defined, known


def assert_waits(st: State) -> None:
    want, defined, known = expected_waits(st)
    got = st.waits.astype(np.int64) & known
    bad = np.argwhere(defined & (got != want))
    assert bad.size == 0, (
        f"table {bad[0][0]} seat {bad[0][1]}: cached waits {got[tuple(bad[0])]:#x}, "
        f"recomputed {want[tuple(bad[0])]:#x}")


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
@pytest.mark.parametrize("policy", [uniform, biased], ids=["uniform", "biased"])
def test_cached_waits_equal_recomputed(preset: str, policy) -> None:
    rng = np.random.default_rng(3)
    st = engine.reset(np.arange(48) + 500, preset)
    assert_waits(st)
    checked = hu_offered = 0
    for _ in range(600):
        acts = policy(st, st.legal_action_mask, rng)
        st, _, _ = engine.step(st, acts, inplace=True, autoreset=True)
        assert_waits(st)
        # the Hu options they feed, against the hands
        np.testing.assert_array_equal(st.legal_action_mask, engine.legal_mask(st))
        checked += int(expected_waits(st)[1].sum())
        hu_offered += int(st.legal_action_mask[:, HU].sum())
        window = np.isin(st.phase, (CLAIM, ROB))[:, None]
        hu_offered += int((window & (st.claim_opts & OPT_HU != 0)).sum())
    assert checked > 10_000 and hu_offered > (100 if policy is biased else 0)


def test_claim_hu_options_follow_the_hands() -> None:
    """In every claim/rob window of biased play, OPT_HU is offered to exactly the seats
    whose hand plus the tile wins (and that may claim it: not the discarder, not won,
    no set-aside tile, not of the void suit, not a smaller Hu declined before)."""
    rng = np.random.default_rng(8)
    st = engine.reset(np.arange(64) + 90)
    windows = offered = 0
    for _ in range(800):
        st, _, _ = engine.step(st, biased(st, st.legal_action_mask, rng), inplace=True,
                               autoreset=True)
        for t in np.flatnonzero(np.isin(st.phase, (CLAIM, ROB))):
            tile = int(st.claim_tile[t])
            for s in range(4):
                if s == st.active[t] or st.hu[t, s] or st.set_aside[t, s] >= 0 or \
                        st.void[t, s] == tile // 9:
                    assert not st.claim_opts[t, s] & OPT_HU
                    continue
                full = st.hand[t, s].copy()
                full[tile] += 1
                wins = batch_is_complete(full[None], np.array([(st.meld[t, s] != 0).sum()]),
                                         st.void[t, s:s + 1])[0]
                has = bool(st.claim_opts[t, s] & OPT_HU)
                if not wins:
                    assert not has
                elif st.passed_hu[t, s] == 0:
                    assert has
                windows += 1
                offered += has
    assert windows > 500 and offered > 10


def test_reset_from_deal_sets_waits() -> None:
    st = engine.reset_from_deal(
        ["1112345678999m", "11223344556677p", "123456789s2345p", "1199s5s8899p6677m"],
        "5m5m9p3s3s", dealer=1)
    assert_waits(st)
    _, defined, _ = expected_waits(st)
    assert defined[0, [0, 2, 3]].all() and not defined[0, 1]
    assert st.waits[0, 0] == 0x1FF  # nine gates: any character
    assert st.waits[0, 2] == (1 << 10) | (1 << 13)  # 2p or 5p
    assert st.waits[0, 3] == 1 << 22  # seven pairs on 5s

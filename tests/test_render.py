"""Text and HTML views of a table."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.state import CLAIM, DONE, State
from sichuan_env.core.tiles import glyph, tile_str
from sichuan_env.records.render import BACK, render_html, render_text
from sichuan_env.seats.agent import RandomAgent


def play_until(seed: int, pred, max_steps: int = 500) -> State:
    st = engine.reset([seed])
    agent = RandomAgent(seed)
    for _ in range(max_steps):
        if pred(st):
            return st
        m = engine.legal_mask(st)
        st, _, _ = engine.step(st, agent.act_batch(None, m))
    raise AssertionError("condition never met")


def test_spectator_view_shows_every_hand() -> None:
    st = engine.reset([4])
    text = render_text(st)
    for seat in range(4):
        assert f"seat {seat}" in text
        k = int(np.flatnonzero(st.hand[0, seat])[0])
        assert glyph(k) in text
    assert "phase void" in text and "wall 55" in text and "to act: seat 0" in text
    assert BACK not in text


def test_ascii_and_viewer_hides_others() -> None:
    st = play_until(6, lambda s: (s.river_len[0] >= 2).all())
    text = render_text(st, viewer=2, ascii=True)
    assert all(ord(ch) < 128 for ch in text)
    lines = text.splitlines()
    hand_lines = [ln for ln in lines if ln.strip().startswith("hand:")]
    assert len(hand_lines) == 4
    for seat, ln in enumerate(hand_lines):
        if seat == 2:
            assert "##" not in ln
            first = int(np.flatnonzero(st.hand[0, 2])[0])
            assert tile_str(first) in ln
        else:
            assert ln.count("##") == int(st.hand[0, seat].sum())
    assert "you" in text
    # voids are revealed after the first discards
    assert text.count("void ?") == 0 and "void -" not in text
    uni = render_text(st, viewer=2)
    assert BACK in uni


def test_unrevealed_void_is_hidden() -> None:
    st = play_until(2, lambda s: s.phase[0] != 0 and not s.void_revealed[0, 1:].all())
    text = render_text(st, viewer=0, ascii=True)
    assert "void ?" in text


def test_claim_hu_and_scores_shown() -> None:
    st = play_until(5, lambda s: s.phase[0] == CLAIM)
    text = render_text(st, ascii=True)
    assert "under claim: " + tile_str(int(st.claim_tile[0])) in text
    for seed in range(60):
        st = play_until(seed, lambda s: s.phase[0] == DONE, max_steps=2000)
        if st.hu[0].any():
            text = render_text(st, ascii=True)
            seat = int(np.flatnonzero(st.hu[0])[0])
            assert f"HU#{int(st.hu_rank[0, seat]) + 1} on {tile_str(int(st.hu_tile[0, seat]))}" \
                in text
            assert "ended:" in text
            assert f"score {int(st.scores[0, seat]):+d}" in text
            return
    pytest.fail("no Hu in 60 random deals")


def test_html() -> None:
    st = play_until(3, lambda s: (s.river_len[0] >= 1).all())
    page = render_html(st, viewer=1)
    assert page.count("<tr") == 5 and "<table" in page and "(you)" in page
    assert BACK in page
    full = render_html(st)
    assert BACK not in full
    with pytest.raises(ValueError):
        render_html(st, table=3)
    with pytest.raises(ValueError):
        render_text(st, viewer=7)

"""What the renderings show is decided in one place (sichuan_env.seats.view.table_view): for a
seat, the text, HTML and SVG renderings are identical whatever another seat's hidden
facts are (its standing tiles, set-aside tile, unrevealed forbidden suit, face-down
winning tile, the tile it just drew, its declined Hu); a spectator sees them change."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.state import TURN, State
from sichuan_env.records.render import render_html, render_text
from sichuan_env.records.svg import render_svg
from sichuan_env.seats.view import HIDDEN, table_view


def _snapshots(preset: str, seed: int, every: int = 7) -> list[State]:
    """One-table states along a uniformly random deal (every ``every`` steps and the end)."""
    st = engine.reset([seed], preset)
    rng = np.random.default_rng(seed)
    out = []
    step = 0
    while not st.done[0]:
        if step % every == 0:
            out.append(st.copy())
        m = st.legal_action_mask
        u = rng.random(m.shape)
        u[~m] = -1
        st, _, _ = engine.step(st, u.argmax(1))
        step += 1
    out.append(st.copy())
    return out


def _hide_otherwise(st: State, seat: int) -> State:
    """``st`` with ``seat``'s hidden facts changed (its public ones kept)."""
    x = st.copy()
    x.hand[0, seat] = np.roll(st.hand[0, seat], 1)  # other tiles, as many
    if x.set_aside[0, seat] >= 0:
        x.set_aside[0, seat] = (x.set_aside[0, seat] + 1) % 27
    if x.void[0, seat] >= 0 and not x.void_revealed[0, seat]:
        x.void[0, seat] = (x.void[0, seat] + 1) % 3
    if x.hu[0, seat] and x.hu_from[0, seat] == seat:  # self-drawn: face down to others
        k = int(x.hu_tile[0, seat])
        x.won_tiles[0, k] -= 1
        x.hu_tile[0, seat] = (k + 1) % 27
        x.won_tiles[0, (k + 1) % 27] += 1
    if x.phase[0] == TURN and x.current[0] == seat and x.drawn_tile[0] >= 0:
        x.drawn_tile[0] = (x.drawn_tile[0] + 1) % 27
    x.passed_hu[0, seat] += 3
    return x


def _renderings(st: State, viewer: int | None) -> list[str]:
    return [render_text(st, 0, viewer), render_text(st, 0, viewer, ascii=True),
            render_html(st, 0, viewer), render_svg(st, 0, viewer)]


@pytest.mark.parametrize("preset,seed", [("mil", 3), ("mahjongsoft", 8)])
def test_a_seat_never_sees_another_seats_hidden_facts(preset, seed):
    spectator_saw = 0
    for st in _snapshots(preset, seed):
        for other in range(4):
            changed = _hide_otherwise(st, other)
            for viewer in range(4):
                if viewer != other:
                    assert _renderings(changed, viewer) == _renderings(st, viewer), (
                        f"seat {viewer} sees seat {other}'s hidden facts")
            spectator_saw += _renderings(changed, None) != _renderings(st, None)
    assert spectator_saw > 0  # the changes are real: a spectator sees them


def test_table_view_hides_what_a_seat_cannot_know():
    def unrevealed(s):
        return np.flatnonzero((s.void[0] >= 0) & ~s.void_revealed[0])

    st = next(s for s in _snapshots("mil", 5, every=1) if unrevealed(s).size >= 2)
    other, viewer = (int(x) for x in unrevealed(st)[:2])
    tv = table_view(st, 0, viewer=viewer)
    assert tv.hand[viewer] is not None
    assert all(tv.hand[s] is None for s in range(4) if s != viewer)
    assert tv.hand_size.tolist() == st.hand[0].sum(1).tolist()
    assert tv.void[viewer] == st.void[0, viewer] and tv.void[other] == HIDDEN
    spectator = table_view(st, 0)
    assert all(h is not None for h in spectator.hand)
    assert spectator.void.tolist() == st.void[0].tolist()


@pytest.mark.parametrize("bad", [4, -1, True, 1.5])
def test_table_view_checks_viewer_and_table(bad):
    st = engine.reset([1])
    with pytest.raises(ValueError, match="viewer must be None or a seat 0..3"):
        table_view(st, 0, viewer=bad)
    with pytest.raises(ValueError, match="table .* out of range"):
        table_view(st, 1)

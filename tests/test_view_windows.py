"""A claim or rob window is hidden from the seats it does not ask.

The engine opens a window only when some seat has an option on the tile, so a seat that
is not asked must not learn that one is open: its view (and everything drawn from it)
is the same as in the twin deal where nobody had an option (``support.windows``): at the
window, the view equals that of the same table with the window closed, and the window's
outcome after the asked seats pass equals the twin's next state. The seats that are
asked see the window (their observations are unchanged by this rule)."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core.state import CLAIM, ROB, TURN, State
from sichuan_env.records.render import render_html, render_text
from sichuan_env.records.svg import render_svg
from sichuan_env.seats.observation import encode
from sichuan_env.seats.view import SeatView, seat_view, table_view, unobserved

from support.windows import window_twins

TWINS = list(window_twins(range(40), want=16))


def _view(st: State, seat: int) -> SeatView:
    return seat_view(st, seat, np.zeros(1, np.intp))


def _same(a: SeatView, b: SeatView) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _drawn(st: State, seat: int) -> list[str]:
    return [render_text(st, 0, seat), render_html(st, 0, seat), render_svg(st, 0, seat)]


def _closed(st: State) -> State:
    """``st`` (a window) as the same table with no window open: the turn of the seat
    that made the move, nothing under claim, nobody offered anything."""
    x = st.copy()
    x.phase[0] = TURN
    x.current[0] = x.active[0]
    x.claim_tile[0] = -1
    x.claim_opts[0] = 0
    x.claim_value[0] = 0
    x.drawn_tile[0] = -1
    return x


def test_twins_were_found_with_both_kinds_of_window():
    assert len(TWINS) >= 12
    assert any(t.window.phase[0] == CLAIM for t in TWINS)


@pytest.mark.parametrize("i", range(12))
def test_a_seat_not_asked_cannot_tell_a_window_is_open(i):
    _check_twins(TWINS[i])


def test_a_seat_not_asked_cannot_tell_a_rob_window_is_open():
    robs = list(window_twins([477, 789, 831], want=3, phases=(ROB,)))
    assert robs and all(t.window.phase[0] == ROB for t in robs)
    for tw in robs:
        _check_twins(tw)


def _check_twins(tw) -> None:
    others = [s for s in range(4) if s not in tw.asked]
    assert others
    for s in others:
        assert unobserved(tw.window, s)
        # before the move the twins are one information set
        assert _same(_view(tw.before, s), _view(tw.twin_before, s))
        # at the window: the view of the same table with no window open
        assert _same(_view(tw.window, s), _view(_closed(tw.window), s)), f"seat {s}"
        assert _drawn(tw.window, s) == _drawn(_closed(tw.window), s)
        np.testing.assert_array_equal(encode(tw.window, s), encode(_closed(tw.window), s))
        # the outcome: what the seat sees next is the twin's next state
        assert not unobserved(tw.closed, s)
        assert _same(_view(tw.closed, s), _view(tw.twin_after, s)), f"seat {s}"
        assert _drawn(tw.closed, s) == _drawn(tw.twin_after, s)
        tv = table_view(tw.window, 0, viewer=s)
        assert tv.phase == TURN and tv.claim_tile == -1 and tv.current == tw.window.active[0]


def test_the_asked_seat_and_a_spectator_see_the_window():
    for tw in TWINS:
        asked = int(tw.window.current[0])
        assert asked in tw.asked and not unobserved(tw.window, asked)
        v = _view(tw.window, asked)
        assert v.phase[0] in (CLAIM, ROB) and v.claim_tile[0] == tw.window.claim_tile[0]
        spectator = table_view(tw.window, 0)
        assert spectator.phase in (CLAIM, ROB) and spectator.current == asked

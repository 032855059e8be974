"""The replay page in a real browser: headless Chromium driven by Playwright for Python.

Needs ``pip install playwright`` (the ``viewer`` extra) and a Chromium binary: Debian's
``chromium`` package (``/usr/bin/chromium``), or the one named by ``SICHUAN_CHROMIUM``.
Playwright's own browser download is never used. Without either the tests skip and say
why. Screenshots go to ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_viewer import engine_states

from sichuan_env.core.tiles import N_KINDS, tile_str
from sichuan_env.records.record import read_jsonl
from sichuan_env.records.viewer import build_frames, write_replay
from sichuan_env.seats.view import unobserved

from support.browser import ARTIFACTS

pytestmark = pytest.mark.slow  # drives a browser

ROOT = Path(__file__).resolve().parents[1]
@pytest.fixture(scope="module")
def record() -> dict:
    recs = read_jsonl(ROOT / "tests" / "data" / "independent-mahjongsoft.jsonl")
    # a deal with kongs, several wins and wall-end payments
    return next(r for r in recs if len(r["wins"]) >= 2 and r["end"] == "wall_exhausted"
                and any(p["reason"].endswith("kong") for p in r["payments"]))


def _hand(state, seat: int) -> str:
    return " ".join(tile_str(int(k)) for k in np.repeat(np.arange(N_KINDS), state.hand[0, seat]))


class Page:
    def __init__(self, page) -> None:
        self.page = page

    def step(self) -> int:
        """The place of the frame shown (data-step is the deal's step number)."""
        return int(self.page.get_attribute("#frame", "data-index"))

    def shown(self) -> dict:
        """What the page shows now, read from the SVG drawn in the page."""
        return self.page.evaluate("""() => {
            const svg = document.querySelector('#table svg');
            const seats = [...svg.querySelectorAll('g.seat')].map(g => ({
                seat: +g.dataset.seat, score: +g.dataset.score, hand: g.dataset.hand,
                tiles: [...g.querySelectorAll('g.hand use')].map(u => u.dataset.tile),
                shownScore: g.querySelector('text.score').textContent}));
            return {wall: +svg.dataset.wall, wallText: svg.querySelector('text.wall').textContent,
                    seats, frameWall: +document.getElementById('frame').dataset.wall,
                    scores: document.getElementById('frame').dataset.scores,
                    pos: document.getElementById('pos').textContent};
        }""")


def _check(page: Page, states: list, viewer: int | None, numbers: list[int]) -> None:
    k = page.step()
    state = states[k]
    shown = page.shown()
    # the deal's step numbers, as in the page of every hand and in a review
    assert page.page.get_attribute("#frame", "data-step") == str(numbers[k])
    assert shown["pos"].startswith(f"step {numbers[k]} / {numbers[-1]}")
    wall = int(state.wall_left[0])
    assert shown["wall"] == shown["frameWall"] == wall and shown["wallText"] == f"wall {wall}"
    scores = [int(x) for x in state.scores[0]]
    assert shown["scores"] == ",".join(map(str, scores))
    for s in shown["seats"]:
        seat = s["seat"]
        assert s["score"] == scores[seat] and s["shownScore"] == f"score {scores[seat]:+d}"
        hand = _hand(state, seat)
        if viewer is None or seat == viewer:
            assert s["hand"] == hand and sorted(s["tiles"]) == sorted(hand.split())
        else:
            assert s["hand"] is None and s["tiles"] == ["back"] * len(hand.split())


@pytest.mark.parametrize("viewer", [None, 2])
def test_replay_page_in_chromium(browser, record, tmp_path: Path, viewer) -> None:
    # a seat view shows the states the seat saw (no window that did not ask it)
    states = [s for s in engine_states(record)
              if viewer is None or s.done[0] or not unobserved(s, viewer)]
    last = len(states) - 1
    out = tmp_path / "replay.html"
    write_replay(record, out, viewer=viewer, title="browser test")
    numbers = [f["step"] for f in build_frames(record, viewer)]
    page = browser.new_page(viewport={"width": 1300, "height": 950})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"request {r.url}")
            if not r.url.startswith(("file:", "data:")) else None)
    page.goto(out.as_uri())
    p = Page(page)
    assert p.step() == 0
    _check(p, states, viewer, numbers)
    for _ in range(5):  # the next button
        page.click("#next")
    assert p.step() == 5
    _check(p, states, viewer, numbers)
    page.click("#prev")
    assert p.step() == 4
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert p.step() == 6
    _check(p, states, viewer, numbers)
    page.keyboard.press("ArrowLeft")
    assert p.step() == 5
    # the slider: every payment step, and a few others
    pay_steps = sorted({k for k in range(1, last + 1)
                        if (states[k].scores[0] != states[k - 1].scores[0]).any()})
    assert pay_steps
    for k in [*pay_steps[:6], last // 2, last - 1]:
        page.eval_on_selector("#slider", "(el, v) => { el.value = v; "
                              "el.dispatchEvent(new Event('input')); }", str(k))
        assert p.step() == k
        _check(p, states, viewer, numbers)
        if k in pay_steps:
            assert page.locator("#pays li").count() >= 1
            assert "muted" not in (page.get_attribute("#pays li", "class") or "")
    page.keyboard.press("End")
    assert p.step() == last
    _check(p, states, viewer, numbers)
    assert page.is_visible("#settlement")
    settle = page.get_attribute("#settle-table", "data-scores")
    assert settle == ",".join(map(str, record["scores"]))
    assert page.locator("#log li:not(.later)").count() == len(record["payments"]) + len(
        record["wins"])
    ARTIFACTS.mkdir(exist_ok=True)
    name = "viewer-spectator.png" if viewer is None else f"viewer-seat{viewer}.png"
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    page.click("#first")
    assert p.step() == 0 and not page.is_visible("#settlement")
    assert page.is_disabled("#prev") and not page.is_disabled("#next")
    page.close()
    assert errors == []
    assert (ARTIFACTS / name).stat().st_size > 10_000

"""The play page in a real browser: Debian's Chromium driven by Playwright for Python (as
``tests/test_viewer_browser.py`` does, through the ``browser`` fixture of
``tests/support/browser.py``; without a Chromium the tests skip and say why). A whole
deal is played by clicking tiles and buttons to its settlement; screenshots go to
``test-artifacts/``.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sichuan_env.records import record as records

from support.browser import ARTIFACTS
from support.web_helpers import LiveServer, create_app, make_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server():
    srv = LiveServer(create_app(make_config(["you", "rules", "rules", "rules"], seed=21)))
    yield srv
    srv.close()


def _ready(page) -> None:
    page.wait_for_selector('#game[data-ready="1"]', timeout=30_000)


def _open(browser, srv: LiveServer, speed: int = 0):
    ctx = browser.new_context(viewport={"width": 1400, "height": 820}, accept_downloads=True)
    page = ctx.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    # a script, style or picture the Content-Security-Policy refused shows as a console
    # error (the API's 4xx answers the page expects show as "Failed to load resource")
    page.on("console", lambda m: problems.append(f"console: {m.text}")
            if m.type == "error" and "Failed to load resource" not in m.text else None)
    page.on("request", lambda r: problems.append(f"request {r.url}")
            if not r.url.startswith(srv.url) else None)
    page.goto(f"{srv.url}/?speed={speed}")
    _ready(page)
    return ctx, page, problems


def _game_of(srv: LiveServer, ctx):
    cookie = next(c["value"] for c in ctx.cookies() if c["name"] == "sichuan_game")
    return srv.app.state.store.games[cookie]


def _check_drawn(page, game) -> None:
    """The page shows the server's table: the hand, the others' tile backs, the rivers."""
    table = game.table()
    shown = page.evaluate("""() => {
        const seats = [...document.querySelectorAll('.seat')].map(box => ({
            seat: +box.dataset.seat,
            backs: box.querySelectorAll('.hand svg[data-tile="back"]').length,
            river: box.querySelector('.river').dataset.river,
            score: +box.querySelector('.score').dataset.score}));
        const hand = document.querySelector('#me .hand');
        return {seats, hand: hand.dataset.hand,
                tiles: [...hand.querySelectorAll('button svg')].map(s => s.dataset.tile)};
    }""")
    assert shown["hand"] == " ".join(table["hand"])
    assert sorted(shown["tiles"]) == sorted(table["hand"])
    assert len(shown["seats"]) == 4
    for s in shown["seats"]:
        want = table["seats"][s["seat"]]
        assert s["river"] == " ".join(want["river"]) and s["score"] == want["score"]
        assert s["backs"] == (0 if s["seat"] == table["you"] else want["standing"])


def test_whole_deal_by_clicking(browser, server, tmp_path: Path) -> None:
    ctx, page, problems = _open(browser, server)
    game = _game_of(server, ctx)
    rng = random.Random(5)
    clicks = 0
    shot = False
    ARTIFACTS.mkdir(exist_ok=True)
    while page.get_attribute("#game", "data-done") != "1":
        assert clicks < 200
        legal = game.legal()
        assert int(page.get_attribute("#game", "data-step")) == game.step
        _check_drawn(page, game)
        offered = page.eval_on_selector_all(
            "#actions button:not([disabled]), #me .hand button:not([disabled])",
            "els => els.map(e => e.dataset.action)")
        assert sorted(set(offered)) == legal  # only the legal moves, every one of them
        tiles = [a for a in legal if a.startswith(("discard ", "void ")) and a[-1] in "mps"
                 and a[-2].isdigit()]
        if "hu" in legal:
            action = "hu"
        elif tiles:
            action = rng.choice(tiles)  # click a tile of the hand
        else:
            action = rng.choice(legal)
        before = game.step
        page.locator(f'[data-action="{action}"]').first.click()
        page.wait_for_function(
            "n => { const g = document.getElementById('game');"
            " return g.dataset.ready === '1' && +g.dataset.step > n; }", arg=before)
        clicks += 1
        claim = any(a in ("pung", "kong", "hu") for a in game.legal())
        if not shot and ((clicks >= 8 and claim) or clicks == 30):
            page.screenshot(path=str(ARTIFACTS / "play-table.png"), full_page=True)
            shot = True
    assert game.done and clicks > 5
    assert page.is_visible("#settlement")
    settle = page.get_attribute("#settle-table", "data-scores")
    assert settle == ",".join(map(str, game.game.scores))
    assert page.locator("#settlement .payments li").count() == len(game.game.payments)
    log = page.eval_on_selector_all("#log li", "els => els.map(e => e.textContent)")
    assert log == game.log
    _check_drawn(page, game)
    assert page.locator("#actions button").count() == 0
    page.screenshot(path=str(ARTIFACTS / "play-settlement.png"), full_page=True)
    # the record: downloaded by the link, replayed by the records checker
    with page.expect_download() as download:
        page.click("#record-link")
    path = tmp_path / "deal.jsonl"
    download.value.save_as(path)
    assert records.main(["check", str(path)]) == 0
    assert records.read_jsonl(path)[0]["scores"] == game.game.scores
    # the replay viewer opens the finished deal
    with ctx.expect_page() as viewer_page:
        page.click("#replay-link")
    viewer = viewer_page.value
    viewer.wait_for_selector("#frame")
    # its inline script ran (the page's Content-Security-Policy allows it by its hash)
    assert viewer.inner_text("#pos").startswith("step 0 / ")
    viewer.keyboard.press("End")
    assert viewer.get_attribute("#settle-table", "data-scores") == settle
    viewer.close()
    # a new deal
    page.click("#new-deal")
    page.wait_for_selector('#game[data-deal="1"][data-ready="1"]')
    assert page.get_attribute("#game", "data-done") == "0" and game.deal_number == 1
    assert not page.is_visible("#settlement") and not page.is_visible("#record-link")
    _check_drawn(page, game)
    # a refused move shows the server's message and leaves the table as it was
    step = game.step
    page.evaluate("() => fetch('/api/act', {method: 'POST', headers: {'Content-Type': "
                  "'application/json'}, body: JSON.stringify({step: -1, action: 'pass'})})"
                  ".then(r => r.status)")
    assert game.step == step
    ctx.close()
    assert problems == []


def test_two_browser_sessions_play_two_games(browser, server) -> None:
    ctx1, page1, p1 = _open(browser, server)
    ctx2, page2, p2 = _open(browser, server, speed=120)
    g1, g2 = _game_of(server, ctx1), _game_of(server, ctx2)
    assert g1 is not g2
    # a reload keeps the session's game
    page1.reload()
    _ready(page1)
    assert _game_of(server, ctx1) is g1
    # the bots' moves are shown one frame at a time at speed 120 ms
    counts = []
    for _ in range(6):
        if g2.done:
            break
        action = g2.legal()[0]
        page2.locator(f'[data-action="{action}"]').first.click()
        while page2.get_attribute("#game", "data-ready") != "1":
            counts.append(page2.locator("#log li").count())
            page2.wait_for_timeout(40)
        _ready(page2)
    assert len(set(counts)) > 1  # the log grew while the frames played
    assert g1.step == int(page1.get_attribute("#game", "data-step"))
    # "New deal" in the middle of a deal asks first; dismissed, nothing changes
    questions: list[str] = []

    def dismiss(dialog) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page1.once("dialog", dismiss)
    before = (g1.deal_number, g1.step)
    page1.click("#new-deal")
    page1.wait_for_timeout(200)
    assert questions == ["Leave this deal and deal a new one?"]
    assert (g1.deal_number, g1.step) == before
    # two tabs of one session share its game: a move from a stale tab is refused, the
    # message shown, and the tab catches up
    tab = ctx1.new_page()
    tab.goto(f"{server.url}/?speed=0")
    _ready(tab)
    assert _game_of(server, ctx1) is g1
    step = g1.step
    action = g1.legal()[0]
    tab.locator(f'[data-action="{action}"]').first.click()
    tab.wait_for_function("n => +document.getElementById('game').dataset.step > n", arg=step)
    assert g1.step > step and page1.get_attribute("#game", "data-step") == str(step)
    stale = page1.locator("#actions button:not([disabled]), "
                          "#me .hand button:not([disabled])").first
    stale.click()
    page1.wait_for_selector("#error:not([hidden])")
    assert f"stale step {step}" in page1.text_content("#error")
    page1.wait_for_function("n => document.getElementById('game').dataset.step === n",
                            arg=str(g1.step))
    assert page1.get_attribute("#game", "data-ready") == "1"
    ctx1.close()
    ctx2.close()
    assert p1 == [] and p2 == []

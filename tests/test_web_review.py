"""Review this deal, in browser play: the human seat's review runs in a worker process in
the background while other games go on, its progress is reported, and the reviewed replay
is the review of ``python -m sichuan_agents.review`` (parts reviewed in turn make the same
whole)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import sichuan_agents.review as review_mod
from sichuan_agents.review import Reviewer, review_record
from sichuan_env.records.record import validate_record

from support.web_helpers import LiveServer, create_app, make_config

pytestmark = pytest.mark.slow  # a worker process reviews whole deals


@pytest.fixture(scope="module")
def server():
    app = create_app(make_config(["rules", "you", "rules", "rules"], seed=5, review_k=8))
    live = LiveServer(app)
    yield live
    app.state.reviews.close()
    live.close()


def _play_to_end(client) -> dict:
    st = client.post("/api/new", json={}).json()
    while not st["done"]:
        st = client.post("/api/act", json={"deal": st["deal"], "step": st["step"],
                                           "action": st["table"]["legal"][-1]}).json()
    return st


def test_review_this_deal(server, monkeypatch):
    # the play-outs run in the worker process, never in the server's own
    def not_here(*args, **kwargs):
        raise AssertionError("a review ran in the server process")

    monkeypatch.setattr(review_mod.Reviewer, "review", not_here)
    # each part waits a moment in the worker: the polls below see the progress between parts
    monkeypatch.setattr(server.app.state.reviews, "reviewer", "support.paced_review:review_part")
    with server.client() as client, server.client() as other:
        st = client.post("/api/new", json={}).json()
        resp = client.post("/api/review", json={})
        assert resp.status_code == 409 and "over" in resp.json()["error"]
        st = _play_to_end(client)
        assert client.get("/api/review").json() == {"deal": st["deal"], "status": "none",
                                                    "done": 0, "total": None}
        assert client.get("/review").status_code == 409
        assert client.post("/api/review", json={"seat": 0}).status_code == 400

        job = client.post("/api/review", json={})
        assert job.status_code == 200 and job.json()["status"] in ("queued", "running")
        # another player goes on meanwhile
        moves = [0]
        stop = threading.Event()

        def keep_playing():
            o = other.post("/api/new", json={}).json()
            while not stop.is_set():
                o = (other.post("/api/new", json={}) if o["done"] else other.post(
                    "/api/act", json={"deal": o["deal"], "step": o["step"],
                                      "action": o["table"]["legal"][0]})).json()
                moves[0] += 1

        player = threading.Thread(target=keep_playing)
        player.start()
        seen = []
        deadline = time.monotonic() + 400
        while True:
            got = client.get("/api/review").json()
            seen.append((got["status"], got["done"]))
            if got["status"] in ("done", "failed") or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        stop.set()
        player.join(60)
        assert got["status"] == "done", got
        assert got["done"] == got["total"] > 0
        assert any(s == "running" and 0 < d < got["total"] for s, d in seen)  # progress
        assert moves[0] >= 3, moves  # the other game was not held up by the review

        again = client.post("/api/review", json={}).json()
        assert again == got  # kept, not reviewed twice
        page = client.get("/review")
        assert page.status_code == 200
        assert "script-src" in page.headers["content-security-policy"]
        data = json.loads(re.search(r'<script type="application/json" id="review-data">'
                                    r"(.*?)</script>", page.text, re.S).group(1))
        rec = client.get("/api/record")
        record = json.loads(rec.text)
        monkeypatch.undo()
        whole = review_record(record, [1], Reviewer("search", rules=validate_record(record),
                                                    k=8, seed=0))
        assert {int(k): v for k, v in data["byEvent"].items()} == {
            d["event"]: d for d in whole["decisions"]}
        assert all(d["seat"] == 1 for d in data["byEvent"].values())

        nxt = client.post("/api/new", json={}).json()
        assert client.get("/api/review").json()["status"] == "none"
        assert nxt["deal"] == st["deal"] + 1


def test_review_button_in_chromium(browser, server):
    ctx = browser.new_context(viewport={"width": 1300, "height": 800})
    page = ctx.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{server.url}/?speed=0")
    page.wait_for_selector('#game[data-ready="1"]', timeout=60_000)
    assert page.is_hidden("#review-button")
    page.evaluate("""async () => {  // play the deal to its end through the page's own API
        const post = (url, body) => fetch(url, {method: 'POST', body: JSON.stringify(body),
            headers: {'Content-Type': 'application/json'}}).then(r => r.json());
        let st = await fetch('/api/state').then(r => r.json());
        while (!st.done) st = await post('/api/act', {deal: st.deal, step: st.step,
                                                      action: st.table.legal[0]});
    }""")
    page.reload()
    page.wait_for_selector('#game[data-done="1"]', timeout=60_000)
    assert page.is_visible("#review-button")
    statuses = []
    page.on("response", lambda r: statuses.append(r.url) if "/api/review" in r.url else None)
    with ctx.expect_page(timeout=400_000) as opened:
        page.click("#review-button")
        page.wait_for_selector('#review-status[data-status="running"], '
                               '#review-status[data-status="queued"], '
                               '#review-status[data-status="done"]', timeout=60_000)
    review = opened.value
    review.wait_for_load_state()
    assert review.url.split("#")[0] == f"{server.url}/review"
    assert review.locator("#review-box").count() == 1
    assert page.get_attribute("#review-status", "data-status") == "done"
    assert page.inner_text("#review-status").startswith("Review ready (")
    assert page.is_visible("#review-link") and page.is_hidden("#review-button")
    assert len(statuses) >= 2  # asked, then polled
    ctx.close()
    assert problems == []


def test_a_failing_review_fails_alone_and_the_queue_is_bounded():
    from sichuan_env.play.web.review import Reviews
    from sichuan_env.play.web.table import GameError

    async def scenario():
        bad = Reviews(k=2, reviewer="support.failing_review:review", max_queued=1)
        try:
            job = bad.start("g1", 0, 1, {"events": []})
            assert bad.start("g1", 0, 1, {}) is job  # the same deal: the same job
            with pytest.raises(GameError) as err:
                bad.start("g2", 0, 1, {})
            assert err.value.status == 503 and "reviewing 1 deals" in str(err.value)
            await job.task
            assert job.status == "failed" and "logged" in job.public()["error"]
            again = bad.start("g1", 0, 1, {"events": []})  # a failed review may be asked again
            assert again is not job and again.status == "queued"
            await again.task
            bad.forget(set())
            assert bad.jobs == {}
        finally:
            bad.close()

    # in a thread of its own: a browser test of this module may hold this thread's loop
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, scenario()).result(timeout=300)

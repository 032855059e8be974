"""The review in the replay viewer: the page data (a seat's view shows only that seat's
reviewed decisions), the viewer's ``--review`` option, and the page in Chromium (bars per
candidate with estimate and error, played and preferred marked, jumps to the costliest)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sichuan_agents.review import Reviewer, review_record
from sichuan_agents.review import main as review_main
from sichuan_env.records.record import read_jsonl, validate_record
from sichuan_env.records.viewer import build_frames, review_data, write_replay
from sichuan_env.records.viewer import main as viewer_main

from support.browser import ARTIFACTS

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "data" / "independent-mil.jsonl"


@pytest.fixture(scope="module")
def reviewed() -> tuple[dict, dict]:
    rec = read_jsonl(RECORDS)[1]
    got = review_record(rec, [1, 2], Reviewer("search", rules=validate_record(rec), k=16))
    doc = {"format": "sichuan-review/1", "reviewer": "search",
           "estimator": {"k": 16, "rollout": "rules"}, "deal": 1, **got}
    return rec, doc


def test_review_data_keeps_the_viewers_own_decisions(reviewed):
    _, doc = reviewed
    everyone = review_data(doc)
    seat1 = review_data(doc, viewer=1)
    assert {d["seat"] for d in everyone["byEvent"].values()} == {1, 2}
    assert {d["seat"] for d in seat1["byEvent"].values()} == {1}
    assert len(seat1["costliest"]) <= 5
    losses = [c["loss"] for c in seat1["costliest"]]
    assert losses == sorted(losses, reverse=True) and all(x > 0 for x in losses)
    mistakes = {d["event"] for d in doc["decisions"] if d["seat"] == 1 and d["mistake"]}
    assert {c["event"] for c in seat1["costliest"]} <= mistakes  # only significant losses
    with pytest.raises(ValueError, match="sichuan-review/1"):
        review_data({"nope": 1})


def test_one_step_numbering_in_the_review_and_both_pages(reviewed, tmp_path, capsys):
    """The review's ``step`` of a decision is the step at which the page of every hand and
    the seat's page (which leaves out windows that did not ask the seat) show it; the
    command line prints the same number."""
    rec, doc = reviewed
    for viewer in (None, 1, 2):
        frames = build_frames(rec, viewer)
        step_of = {i: f["step"] for f in frames for i in f["events"]}
        mine = [d for d in doc["decisions"] if viewer is None or d["seat"] == viewer]
        assert mine and all(step_of[d["event"]] == d["step"] for d in mine)
    seat1 = build_frames(rec, 1)
    assert len(seat1) < len(build_frames(rec))  # the seat's page skips steps
    assert review_main([str(RECORDS), "--deal", "1", "--seat", "1", "--k", "16", "--quiet",
                        "--json", str(tmp_path / "r.json")]) == 0
    printed = re.findall(r"step (\d+) \(event (\d+)\)", capsys.readouterr().out)
    assert printed
    step_of = {i: f["step"] for f in seat1 for i in f["events"]}
    assert all(step_of[int(e)] == int(s) for s, e in printed)


def test_viewer_command_takes_a_review(reviewed, tmp_path, capsys):
    _, doc = reviewed
    js = tmp_path / "r.json"
    js.write_text(json.dumps(doc))
    out = tmp_path / "p.html"
    assert viewer_main([str(RECORDS), "--deal", "1", "--seat", "1", "--review", str(js),
                        "--out", str(out)]) == 0
    assert 'id="review-data"' in out.read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert viewer_main([str(RECORDS), "--deal", "1", "--review", str(bad), "--out",
                        str(out)]) == 2
    assert viewer_main([str(RECORDS), "--deal", "0", "--review", str(js), "--out",
                        str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "not a readable review" in err[0] and "record 0" in err[1]


@pytest.mark.slow  # drives a browser
def test_review_page_in_chromium(browser, reviewed, tmp_path):
    rec, doc = reviewed
    out = tmp_path / "review.html"
    write_replay(rec, out, viewer=1, title="review test", review=doc)
    mine = [d for d in doc["decisions"] if d["seat"] == 1]
    page = browser.new_page(viewport={"width": 1300, "height": 950})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append(f"request {r.url}")
            if not r.url.startswith(("file:", "data:")) else None)
    page.goto(out.as_uri())
    assert "no reviewed decision" in page.inner_text("#review")
    for d in mine[:6]:  # the address names the review's step
        page.goto(out.as_uri() + f"#{d['step']}")
        page.reload()
        assert page.get_attribute("#frame", "data-step") == str(d["step"])
        assert page.inner_text("#pos").startswith(f"step {d['step']} / ")
        assert page.get_attribute("#review", "data-event") == str(d["event"])
        assert page.get_attribute("#review", "data-mistake") == ("1" if d["mistake"] else "0")
        why = page.locator("#review-why")
        assert why.count() == (1 if d["why"] else 0)
        if d["why"]:
            assert why.inner_text() == "why: " + d["why"]
        rows = page.eval_on_selector_all("#review .cand", """els => els.map(e => ({
            action: e.dataset.action, mean: +e.dataset.mean, se: +e.dataset.se,
            cls: e.className, marks: [...e.querySelectorAll('.mark')].map(m => m.textContent),
            fill: e.querySelector('.fill').getBoundingClientRect().width,
            err: e.querySelector('.err').getBoundingClientRect().width}))""")
        assert [r["action"] for r in rows] == [c["action"] for c in d["candidates"]]
        for r, c in zip(rows, d["candidates"], strict=True):
            assert r["mean"] == c["mean"] and r["se"] == c["se"]
            assert ("played" in r["marks"]) == (c["action"] == d["played"])
            assert ("preferred" in r["marks"]) == (c["action"] == d["reviewer"])
            assert ("best" in r["marks"]) == (c["action"] == d["best"])
        # a larger estimate draws a longer bar; a larger error a wider whisker
        by_mean = sorted(rows, key=lambda r: r["mean"])
        pairs = zip(by_mean, by_mean[1:], strict=False)
        assert all(a["fill"] <= b["fill"] + 0.5 for a, b in pairs)
        assert all(r["err"] > 0 for r in rows if r["se"] > 0)
        shown = re.search(r"estimated loss ([0-9.]+)", page.inner_text("#review-loss"))
        assert shown and abs(float(shown.group(1)) - d["loss"]) <= 0.0051
    # the costliest buttons jump to their steps
    page.goto(out.as_uri())
    buttons = page.locator("#costliest button")
    worst = sorted((d for d in mine if d["mistake"]), key=lambda d: -d["loss"])[:5]
    assert buttons.count() == len(worst) > 0
    for i, d in enumerate(worst):
        assert buttons.nth(i).inner_text().startswith(f"step {d['step']}: ")
        buttons.nth(i).click()
        assert page.get_attribute("#frame", "data-step") == str(d["step"])
        assert page.get_attribute("#review", "data-event") == str(d["event"])
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "review-seat1.png"), full_page=True)
    page.close()
    assert errors == []

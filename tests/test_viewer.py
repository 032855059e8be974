"""The SVG table and the replay viewer page (without a browser: see test_viewer_browser)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from sichuan_env.core.tiles import N_KINDS, tile_str
from sichuan_env.records.game import Game
from sichuan_env.records.record import event_action, read_jsonl, write_jsonl
from sichuan_env.records.svg import SUIT_COLOURS, render_svg, tile_defs
from sichuan_env.records.viewer import build_frames, render_page
from sichuan_env.seats.view import unobserved

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
NS = "{http://www.w3.org/2000/svg}"


def _tiles(state, seat: int) -> list[str]:
    return [tile_str(int(k)) for k in np.repeat(np.arange(N_KINDS), state.hand[0, seat])]


def _seats(svg: str) -> dict[int, ET.Element]:
    root = ET.fromstring(svg)
    return {int(g.get("data-seat")): g for g in root.iter(f"{NS}g") if g.get("data-seat")}


def _group(seat_g: ET.Element, cls: str) -> ET.Element:
    return next(g for g in seat_g.iter(f"{NS}g") if g.get("class") == cls)


def _drawn(group: ET.Element) -> list[str]:
    return [u.get("data-tile") for u in group.iter(f"{NS}use")]


def check_svg_shows(svg: str, state, viewer: int | None) -> None:
    """The picture shows exactly the engine's state, as ``viewer`` may see it."""
    root = ET.fromstring(svg)
    assert int(root.get("data-wall")) == int(state.wall_left[0])
    live = not bool(state.done[0])
    # a claim or rob window that does not ask the viewer is hidden: the turn owner shows
    hidden = viewer is not None and unobserved(state, viewer)
    current = int(state.active[0]) if hidden else int(state.current[0])
    assert int(root.get("data-current")) == (current if live else -1)
    for seat, g in _seats(svg).items():
        hand = _tiles(state, seat)
        assert int(g.get("data-score")) == int(state.scores[0, seat])
        shown = _drawn(_group(g, "hand"))
        if viewer is None or viewer == seat:
            assert g.get("data-hand") == " ".join(hand)
            assert sorted(shown) == sorted(hand)
        else:
            assert g.get("data-hand") is None
            assert shown == ["back"] * len(hand)
        river = [tile_str(int(k)) for k in state.river[0, seat, : state.river_len[0, seat]]]
        assert _drawn(_group(g, "river")) == river
        melds = [g2 for g2 in g.iter(f"{NS}g") if g2.get("class") == "meld"]
        assert [m.get("data-kind") for m in melds] == [
            tile_str(int(k)) for k in np.flatnonzero(state.meld[0, seat])]


def _random_game(seed: int, preset: str, rng) -> list:
    """States of one random (Hu/kong/pung-greedy) deal, every fifth decision and the end."""
    g = Game.new(seed, preset)
    states = [g.state]
    n = 0
    while not g.done:
        legal = g.legal()
        for a in ("hu", "kong", "pung"):
            if a in legal and rng.random() < 0.8:
                legal = [a]
                break
        g.play(legal[int(rng.integers(len(legal)))])
        n += 1
        if n % 5 == 0 or g.done:
            states.append(g.state)
    return states


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_svg_shows_the_engine_state(preset: str) -> None:
    rng = np.random.default_rng(4)
    for seed in range(6):
        for state in _random_game(seed, preset, rng):
            for viewer in (None, seed % 4):
                check_svg_shows(render_svg(state, viewer=viewer), state, viewer)


def test_seat_view_hides_private_facts() -> None:
    g = Game.new(2)
    for _ in range(2):  # seats 0 and 1 set a tile aside; 2 and 3 have not chosen yet
        g.play(g.legal()[0])
    svg = render_svg(g.state, viewer=0)
    seats = _seats(svg)
    labels = {int(g2.get("data-seat")): " ".join(t.text or "" for t in g2.iter(f"{NS}text"))
              for g2 in seats.values()}
    assert g.set_aside(0) is not None and g.set_aside(1) is not None
    assert "void ?" in labels[1] and "void -" in labels[2]
    assert f"void {g.void(0)}" in labels[0]
    aside = [u for u in seats[1].iter(f"{NS}use") if u.get("class") == "aside"]
    assert [u.get("data-tile") for u in aside] == ["back"]
    assert seats[1].get("data-aside") is None and seats[0].get("data-aside") == g.set_aside(0)
    full = _seats(render_svg(g.state))
    assert full[1].get("data-aside") == g.set_aside(1)
    # a self-drawn winning tile stays face down for the others
    rng = np.random.default_rng(0)
    for seed in range(200):
        final = _random_game(seed, "mil", rng)[-1]
        selfdrawn = [s for s in range(4) if final.hu[0, s] and final.hu_from[0, s] == s]
        if selfdrawn:
            s = selfdrawn[0]
            other = (s + 1) % 4
            mine, theirs = _seats(render_svg(final, viewer=s))[s], _seats(
                render_svg(final, viewer=other))[s]
            hu_tiles = lambda g: [u for u in g.iter(f"{NS}use")  # noqa: E731
                                  if u.get("class") == "hu-tile"]
            assert [u.get("data-tile") for u in hu_tiles(mine)] == [
                tile_str(int(final.hu_tile[0, s]))]
            assert hu_tiles(theirs) == []
            return
    pytest.fail("no self-drawn Hu in 200 deals")


def test_tile_faces_are_drawn_and_distinct() -> None:
    defs = ET.fromstring(tile_defs())
    symbols = {s.get("id"): s for s in defs.iter(f"{NS}symbol")}
    assert set(symbols) == {f"sich-{tile_str(k)}" for k in range(N_KINDS)} | {"sich-back"}
    faces = set()
    for k in range(N_KINDS):
        name = tile_str(k)
        sym = symbols[f"sich-{name}"]
        text = next(sym.iter(f"{NS}text"))
        assert text.text == name[0] and text.get("fill") == SUIT_COLOURS[name[1]]
        assert float(text.get("font-size")) >= 0.45 * 38  # the rank fills half the tile
        marks = [ET.tostring(e) for e in sym if e.tag != f"{NS}text"][1:]
        assert marks, name
        faces.add((text.text, text.get("fill"), tuple(marks)))
    assert len(faces) == N_KINDS
    page = tile_defs() + render_svg(Game.new(1).state)
    assert "<image" not in page and "@font-face" not in page and "href=\"http" not in page


def test_game_render_formats() -> None:
    g = Game.new(5)
    assert g.render(format="svg") == render_svg(g.state) == g._repr_svg_()
    assert g.render(format="svg", viewer=2) == render_svg(g.state, viewer=2)
    assert g.render() == g.render(format="text")
    assert "<table" in g.render(format="html")
    with pytest.raises(ValueError, match="format"):
        g.render(format="png")
    with pytest.raises(ValueError, match="viewer"):
        render_svg(g.state, viewer=4)
    with pytest.raises(ValueError, match="table"):
        render_svg(g.state, table=1)


# ----------------------------------------------------------------------------- frames


def engine_states(record: dict) -> list:
    """The table after each decision of ``record``, by playing its moves through Game
    (independently of the viewer's replay)."""
    g = Game.from_deal(["".join(h) for h in record["hands"]], "".join(record["wall"]),
                       dealer=record["dealer"], rules=record["rules"]["preset"])
    states = [g.state]
    made = 0  # events the engine made itself, already in its record
    for i, e in enumerate(record["events"]):
        if i < len(g.events):
            continue  # made by the engine (a forced discard)
        g.play(event_action(e))
        states.append(g.state)
        made = len(g.events)
    assert made == len(record["events"]) and g.done
    return states


@pytest.fixture(scope="module")
def sample() -> dict:
    recs = read_jsonl(DATA / "independent-mil.jsonl")
    return next(r for r in recs if len(r["wins"]) >= 2 and r["end"] == "wall_exhausted")


def test_frames_follow_the_engine(sample) -> None:
    states = engine_states(sample)
    for viewer in (None, 1):
        frames = build_frames(sample, viewer)
        # a seat sees no frame of a claim or rob window that does not ask it
        seen = [s for s in states if viewer is None or s.done[0] or not unobserved(s, viewer)]
        assert len(frames) == len(seen) and (viewer is None or len(seen) < len(states))
        covered = [i for f in frames for i in f["events"]]
        assert covered == list(range(len(sample["events"])))
        # the deal's step numbers in every view: a frame carries the step of its first
        # event (a seat's own decision always starts a frame), as the review's ``step``
        if viewer is None:
            assert [f["step"] for f in frames] == list(range(len(frames)))
            step_of = {i: f["step"] for f in frames for i in f["events"]}
        else:
            assert [f["step"] for f in frames[1:]] == [step_of[f["events"][0]]
                                                      for f in frames[1:]]
            assert frames[0]["step"] == 0 and len({f["step"] for f in frames}) == len(frames)
        for f, state in zip(frames, seen, strict=True):
            assert f["wall"] == int(state.wall_left[0])
            assert f["scores"] == [int(x) for x in state.scores[0]]
            check_svg_shows(f["svg"], state, viewer)
        pays = [p for f in frames for p in f["payments"]]
        assert len(pays) == len(sample["payments"])
        assert sum(len(f["wins"]) for f in frames) == len(sample["wins"])
        for f in frames[1:]:
            d = f["decision"]
            e = sample["events"][d["event"]]
            if viewer is None or e["seat"] == viewer:
                assert d["legal"] == e["legal"] and d["chosen"] in d["legal"]
            else:
                assert d["legal"] is None and d["chosen"] is None
                if e["act"] == "void" and "tile" in e:
                    assert e["tile"] not in d["text"]
            if viewer is not None:  # no other seat's pass told
                texts = [d["text"], *f["forced"]]
                assert not any(t.startswith("seat") and t.endswith("passes") and
                               not t.startswith(f"seat {viewer} ") for t in texts), texts


def test_page_is_self_contained(sample) -> None:
    page = render_page(sample, build_frames(sample), title="t</script><b>")
    assert page.count("<script>") == 1 and "<link" not in page and " src=" not in page
    urls = set(re.findall(r"https?://[^\s\"'<>\\]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}
    assert "t&lt;/script&gt;&lt;b&gt;" in page
    frames = json.loads(re.search(r'id="frames">(.*?)</script>', page, re.S).group(1))
    assert len(frames) == len(engine_states(sample))


# ----------------------------------------------------------------------------- CLI


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_viewer_cli_opens_arena_and_selfplay_records(tmp_path: Path) -> None:
    recs = tmp_path / "arena.jsonl"
    r = _run("sichuan_agents.arena", "--seats", "greedy,random,rules,random", "--deals", "8",
             "--seed", "3", "--tables", "8", "--no-progress", "--records", str(recs))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "arena.html"
    r = _run("sichuan_env.records.viewer", str(recs), "--deal", "5", "--seat", "2",
             "--out", str(out))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith(f"wrote {out}")
    page = out.read_text()
    assert "players: seat 0 " in page and "view: seat 2" in page
    record = read_jsonl(recs)[5]
    frames = json.loads(re.search(r'id="frames">(.*?)</script>', page, re.S).group(1))
    assert frames[-1]["scores"] == record["scores"]
    sp = tmp_path / "sp.jsonl"
    r = _run("sichuan_env.records.selfplay", "--deals", "2", "--seed", "4", "--out", str(sp),
             "--legal")
    assert r.returncode == 0, r.stderr
    r = _run("sichuan_env.records.viewer", str(sp), "--deal", "1",
             "--out", str(tmp_path / "sp.html"))
    assert r.returncode == 0, r.stderr


@pytest.mark.slow
def test_viewer_cli_bad_arguments(tmp_path: Path, sample) -> None:
    good = tmp_path / "good.jsonl"
    write_jsonl([sample], good)
    broken = dict(sample, scores=[9, 9, 9, 9])
    bad = tmp_path / "bad.jsonl"
    write_jsonl([broken], bad)
    text = tmp_path / "text.jsonl"
    text.write_text("hello\n")
    cases = [
        ([str(tmp_path / "none.jsonl"), "--out", "x.html"], 2, "no such records file"),
        ([str(good), "--deal", "1", "--out", "x.html"], 2, "past the end"),
        ([str(good), "--deal", "-1", "--out", "x.html"], 2, "--deal"),
        ([str(good), "--seat", "4", "--out", "x.html"], 2, "--seat"),
        ([str(good), "--seat", "one", "--out", "x.html"], 2, "--seat"),
        ([str(good)], 2, "--out"),
        ([str(good), "--out", str(tmp_path / "no" / "x.html")], 2, "does not exist"),
        ([str(good), "--out", str(tmp_path)], 2, "is a folder"),
        ([str(text), "--out", "x.html"], 1, "not valid JSON"),
        ([str(bad), "--out", "x.html"], 1, "does not replay"),
    ]
    for args, status, words in cases:
        r = _run("sichuan_env.records.viewer", *args, cwd=tmp_path)
        assert r.returncode == status, (args, r.stderr)
        assert len(r.stderr.splitlines()) == 1 and words in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == ""
    assert not (tmp_path / "x.html").exists()

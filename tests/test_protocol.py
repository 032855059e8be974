"""The messages of sichuan-bot/1 (sichuan_env.seats.protocol): built from the seat view only
(every hidden fact changed, every message byte-identical), read back into the very same
seat view, events that rebuild what the seat sees, and every message valid under the
JSON Schema the package ships (sichuan_env/seats/protocol.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.actions import ACTION_STRINGS
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import CLAIM, ROB, TURN, State
from sichuan_env.seats.protocol import (
    Stream,
    dumps,
    hello_message,
    json_schema,
    legal_strings,
    view_messages,
    views_from_messages,
)
from sichuan_env.seats.view import seat_view

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json_schema()


def _hidden_changed(st: State, t: int, viewer: int, rng: np.random.Generator) -> State:
    """``st`` with every fact that ``viewer`` may not know changed at table ``t``: the
    wall, the other seats' standing tiles, set-aside tiles, unrevealed suits, face-down
    winning tiles, declined Hu, claim options and answers, the tile another seat drew."""
    x = st.copy()
    x.wall[t] = rng.permutation(x.wall[t])
    for s in range(4):
        if s == viewer:
            continue
        x.hand[t, s] = np.roll(st.hand[t, s], 1 + s)
        if x.set_aside[t, s] >= 0:
            x.set_aside[t, s] = (x.set_aside[t, s] + 5) % 27
        if x.void[t, s] >= 0 and not x.void_revealed[t, s]:
            x.void[t, s] = (x.void[t, s] + 1) % 3
        if x.hu[t, s] and x.hu_from[t, s] == s:
            k = int(x.hu_tile[t, s])
            x.won_tiles[t, k] -= 1
            x.hu_tile[t, s] = (k + 1) % 27
            x.won_tiles[t, (k + 1) % 27] += 1
        x.passed_hu[t, s] += 7
        x.claim_opts[t, s] = 7 - x.claim_opts[t, s]
        x.claim_answer[t, s] = (x.claim_answer[t, s] + 1) % 5
        x.claim_value[t, s] += 3
    if not (x.phase[t] == TURN and x.active[t] == viewer):
        x.drawn_tile[t] = (x.drawn_tile[t] + 2) % 27
    return x


def _deals(preset: str, seed: int, tables: int):
    """(state, live tables, actions) before every step of uniformly random deals."""
    st = engine.reset(np.arange(seed, seed + tables), preset)
    rng = np.random.default_rng(seed)
    while not st.done.all():
        live = np.flatnonzero(~st.done)
        m = st.legal_action_mask
        u = rng.random(m.shape)
        u[~m] = -1
        acts = u.argmax(1)
        yield st, live, acts
        st, _, _ = engine.step(st, acts)


@pytest.mark.parametrize("preset,seed", [("mil", 11), ("mahjongsoft", 12)])
def test_every_message_is_the_same_whatever_the_hidden_facts(preset, seed):
    rng = np.random.default_rng(seed)
    real: dict = {}
    other: dict = {}
    n = windows = 0
    for st, live, acts in _deals(preset, seed, 16):
        for t in live.tolist():
            s = int(st.current[t])
            changed = _hidden_changed(st, t, s, rng)
            lines = []
            for streams, state in ((real, st), (other, changed)):
                view = view_messages(seat_view(state, s, np.array([t])))[0]
                stream = streams.setdefault((t, s), Stream(len(streams)))
                lines.append(dumps(stream.request(n, view, legal_strings(
                    st.legal_action_mask[t]))))
                stream.answered = ACTION_STRINGS[acts[t]]
            assert lines[0] == lines[1], f"table {t}, seat {s}: a hidden fact shows"
            windows += st.phase[t] in (CLAIM, ROB)
            n += 1
    assert n > 500 and windows > 10


def test_views_read_back_exactly():
    count = 0
    for st, live, _ in _deals("mil", 3, 24):
        v = seat_view(st, st.current[live].astype(np.intp), live)
        back = views_from_messages(json.loads(json.dumps(view_messages(v))))
        for name, a, b in zip(v._fields, v, back, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b), name
        count += live.size
    assert count > 1000


def _apply(seen: dict, events: list[dict]) -> None:
    """A stateful bot's bookkeeping: rivers, melds, Hu and revealed suits from events."""
    for e in events:
        s, act = e["seat"], e["act"]
        if act == "discard":
            seen["rivers"][s].append(e["tile"])
        elif act in ("pung", "kong") and "meld" in e:
            seen["melds"][s][e["tile"]] = e["meld"]
        elif act == "hu":
            seen["hu"][s] = True
        elif act == "void" and "suit" in e:
            seen["void"][s] = e["suit"]
        elif act == "void":
            seen["void"][s] = e["tile"][1]


@pytest.mark.parametrize("preset,seed", [("mil", 21), ("mahjongsoft", 22)])
def test_events_rebuild_what_the_seat_sees(preset, seed):
    streams: dict = {}
    books: dict = {}
    melds = draws = 0
    for st, live, acts in _deals(preset, seed, 16):
        v = seat_view(st, st.current[live].astype(np.intp), live)
        for i, view in enumerate(view_messages(v)):
            t, s = int(live[i]), view["seat"]
            stream = streams.setdefault((t, s), Stream(len(streams)))
            req = stream.request(0, view, legal_strings(st.legal_action_mask[t]))
            stream.answered = ACTION_STRINGS[acts[t]]
            book = books.setdefault((t, s), {"rivers": [[], [], [], []],
                                             "melds": [{}, {}, {}, {}],
                                             "hu": [False] * 4, "void": [None] * 4})
            _apply(book, req["events"])
            assert book["rivers"] == view["rivers"]
            assert book["melds"] == [{m["tile"]: m["type"] for m in ms} for ms in view["melds"]]
            assert book["hu"] == view["hu"]
            for o in range(4):
                if o == s or view["void_revealed"][o]:
                    assert book["void"][o] == view["void"][o]
            own = [e for e in req["events"] if e["seat"] == s and e["act"] == "draw"]
            assert [e["tile"] for e in own] == ([view["drawn"]] if view["drawn"] else [])
            melds += sum(e["act"] in ("pung", "kong") for e in req["events"])
            draws += len(own)
    assert melds > 10 and draws > 100


def test_events_follow_the_order_of_play_without_claims():
    """Seat 1's second request: the dealer's discard, then seats 2, 3, 0 in turn."""
    st = engine.reset(np.array([4]), "mil")
    stream = Stream(0)
    order = []
    while len(order) < 2:
        s = int(st.current[0])
        legal = legal_strings(st.legal_action_mask[0])
        if s == 1 and st.phase[0] == TURN:
            view = view_messages(seat_view(st, 1, np.array([0])))[0]
            order.append(stream.request(0, view, legal)["events"])
        elif s == 1:
            view = view_messages(seat_view(st, 1, np.array([0])))[0]
            stream.request(0, view, legal)
        a = int(np.flatnonzero(st.legal_action_mask[0])[0])
        if ACTION_STRINGS[a] in ("pung", "kong", "hu"):
            a = 87  # pass: keep the turn order plain
        if s == 1:
            stream.answered = ACTION_STRINGS[a]
        st, _, _ = engine.step(st, np.array([a]))
    seats = [e["seat"] for e in order[1] if e["act"] == "discard"]
    assert seats == [1, 2, 3, 0], order[1]


def test_messages_follow_the_json_schema():
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(SCHEMA)
    validator.validate(hello_message(get_rules("mil"), "m#1", 64))
    validator.validate({"type": "hello", "protocol": "sichuan-bot/1", "name": "x",
                        "version": "1", "tables": 8})
    validator.validate({"id": 3, "action": "discard 5m"})
    validator.validate({"type": "end", "table": 3})
    validator.validate({"type": "bye"})
    assert not validator.is_valid({"id": 3, "action": "discard 0m"})
    streams: dict = {}
    n = 0
    for st, live, acts in _deals("mahjongsoft", 5, 8):
        v = seat_view(st, st.current[live].astype(np.intp), live)
        for i, view in enumerate(view_messages(v)):
            t = int(live[i])
            stream = streams.setdefault((t, view["seat"]), Stream(len(streams)))
            req = stream.request(n, view, legal_strings(st.legal_action_mask[t]))
            stream.answered = ACTION_STRINGS[acts[t]]
            validator.validate(json.loads(dumps(req)))
            n += 1
    assert n > 300


@pytest.mark.parametrize("preset,seed", [("mil", 31), ("mahjongsoft", 32)])
def test_claims_follow_the_discard_they_take(preset, seed):
    """With bots that claim whatever they can, every pung or melded kong in the events
    comes right after the discard of its tile by another seat."""
    st = engine.reset(np.arange(seed, seed + 16), preset)
    rng = np.random.default_rng(seed)
    streams: dict = {}
    claims = 0
    while not st.done.all():
        live = np.flatnonzero(~st.done)
        m = st.legal_action_mask
        u = rng.random(m.shape)
        u[:, 84:87] += 2  # pung, kong, hu first
        u[~m] = -1
        acts = u.argmax(1)
        v = seat_view(st, st.current[live].astype(np.intp), live)
        for i, view in enumerate(view_messages(v)):
            t, s = int(live[i]), view["seat"]
            stream = streams.setdefault((t, s), Stream(len(streams)))
            events = stream.request(0, view, legal_strings(m[t]))["events"]
            stream.answered = ACTION_STRINGS[acts[t]]
            for j, e in enumerate(events):
                if e.get("meld") in ("pung", "melded_kong") and j > 0:
                    before = events[j - 1]
                    assert (before["act"] == "discard" and before["tile"] == e["tile"]
                            and before["seat"] != e["seat"]), (events, j)
                    claims += 1
        st, _, _ = engine.step(st, acts)
    assert claims > 20


def test_orjson_writes_the_same_bytes_as_json():
    """dumps uses orjson when installed: the same text as json.dumps, byte for byte."""
    pytest.importorskip("orjson")
    n = 0
    streams: dict = {}
    for st, live, acts in _deals("mil", 9, 8):
        v = seat_view(st, st.current[live].astype(np.intp), live)
        for i, view in enumerate(view_messages(v)):
            t = int(live[i])
            stream = streams.setdefault((t, view["seat"]), Stream(len(streams)))
            req = stream.request(n, view, legal_strings(st.legal_action_mask[t]))
            stream.answered = ACTION_STRINGS[acts[t]]
            assert dumps(req) == json.dumps(req, separators=(",", ":"))
            n += 1
    assert dumps(hello_message(get_rules("mahjongsoft"), "m#2", 8)) == json.dumps(
        hello_message(get_rules("mahjongsoft"), "m#2", 8), separators=(",", ":"))
    assert n > 300

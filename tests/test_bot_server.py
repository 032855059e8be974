"""The bot server by hand: messages written in one batch are answered in order, a request
before hello or one that is not understood gets an error answer (no traceback), and the
good requests of a batch are answered all the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from sichuan_env.core import engine
from sichuan_env.seats.protocol import PROTOCOL, Stream, dumps, legal_strings, view_messages
from sichuan_env.seats.view import seat_view

HELLO = {"type": "hello", "protocol": PROTOCOL, "rules": None, "seat": None,
         "match": "by-hand", "tables": 8}


def _requests(n: int) -> list[dict]:
    """The first requests (forbidden-suit choices) of seat 0 at ``n`` tables."""
    st = engine.reset(np.arange(3, 3 + n), "mil")
    out = []
    for t in range(n):
        view = view_messages(seat_view(st, int(st.current[t]), np.array([t])))[0]
        out.append(Stream(t).request(t, view, legal_strings(st.legal_action_mask[t])))
    return out


def _talk(lines: list[str]) -> tuple[list[dict], str]:
    """Write ``lines`` in one write to a fresh server; its answers and its stderr."""
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "sichuan_env.seats.bot_server", "rules"],
                          input="".join(x + "\n" for x in lines), capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return [json.loads(x) for x in proc.stdout.splitlines()], proc.stderr


def test_hello_requests_and_bye_in_one_batch_are_all_answered_in_order():
    reqs = _requests(3)
    answers, _ = _talk([dumps(HELLO)] + [dumps(r) for r in reqs] + ['{"type":"bye"}'])
    assert answers[0]["type"] == "hello"
    assert [a["id"] for a in answers[1:]] == [0, 1, 2]
    for a, r in zip(answers[1:], reqs, strict=True):
        assert a["action"] in r["legal"]


def test_a_request_before_hello_gets_an_error_answer_not_a_traceback():
    req = _requests(1)[0]
    answers, err = _talk([dumps(req), dumps(HELLO), dumps(dict(req, id=7))])
    assert answers[0] == {"id": 0, "error": answers[0]["error"]}
    assert "before hello" in answers[0]["error"] and "before hello" in err
    assert answers[1]["type"] == "hello"
    assert answers[2]["id"] == 7 and answers[2]["action"] in req["legal"]


def test_a_malformed_request_does_not_lose_the_good_ones_of_its_batch():
    good = _requests(2)
    bad = dict(good[0], id=5, view={"seat": 0})  # a view that is not a view
    lines = [dumps(HELLO), dumps(good[0]), dumps(bad), "not json", dumps(dict(good[1], id=1))]
    answers, err = _talk(lines)
    assert answers[0]["type"] == "hello"
    by_id = {a["id"]: a for a in answers[1:]}
    assert set(by_id) == {0, 1, 5}
    assert by_id[0]["action"] in good[0]["legal"] and by_id[1]["action"] in good[1]["legal"]
    assert "action" not in by_id[5] and "not understood" in by_id[5]["error"]
    assert "cannot read the message" in err

"""Any agent of this project as a ``sichuan-bot/1`` program (docs/protocol.md).

Command line::

    python -m sichuan_env.seats.bot_server SPEC [--tables 64] [--seed N]

``SPEC`` is an agent spec of :func:`sichuan_env.seats.agent.make_agent` (``rules``, ``greedy``,
``ppo:PATH``, ``path/to/file.py:Class``, ...; not ``exec:``). The program reads requests
from stdin and answers on stdout; it is what ``exec:python -m sichuan_env.seats.bot_server
rules`` runs, and it plays exactly as the agent in process: each request's ``view`` is
turned back into the very :class:`~sichuan_env.seats.view.SeatView` the arena would have given
the agent (:func:`sichuan_env.seats.protocol.views_from_messages`), and the requests that
arrive together are decided in one ``act_batch``. The agent is built when ``hello``
arrives, with the hello's rule options (``--seed`` seeds it). Messages are answered in
the order they came; a request that is not understood, or comes before ``hello``, is
answered ``{"id": N, "error": "..."}`` with one line on stderr (the arena counts a fault
of that decision), and the other requests of its batch are answered all the same.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

from sichuan_env.core.actions import ACTION_STRINGS, N_ACTIONS, action_from_str
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.seats.agent import agents_help, make_agent
from sichuan_env.seats.driver import NO_OBSERVATION, agent_needs
from sichuan_env.seats.observation import planes_from_view
from sichuan_env.seats.protocol import PROTOCOL, ProtocolError, dumps, loads, views_from_messages

PROG = "python -m sichuan_env.seats.bot_server"


def _version() -> str:
    """This project's version (its installed distribution's, else "unknown")."""
    from importlib import metadata

    try:
        return metadata.version("sichuan-env")
    except metadata.PackageNotFoundError:
        return "unknown"


_INDEX = {text: a for a, text in enumerate(ACTION_STRINGS)}


def _masks(requests: list[dict[str, Any]]) -> np.ndarray:
    m = np.zeros((len(requests), N_ACTIONS), np.bool_)
    for i, r in enumerate(requests):
        m[i, [_INDEX.get(text) if text in _INDEX else action_from_str(text)
              for text in r["legal"]]] = True
    return m


class Server:
    """The agent behind the protocol: :meth:`hello` then :meth:`decide` per batch."""

    def __init__(self, spec: str, seed: int | None, tables: int) -> None:
        if spec.strip().lower().startswith("exec:"):
            raise ValueError("the bot server runs an agent of this project, not exec:")
        self.spec, self.seed, self.tables = spec, seed, tables
        self.agent: Any = None
        self.rules: Rules = get_rules("mil")

    def hello(self, msg: dict[str, Any]) -> dict[str, Any]:
        if msg.get("protocol") != PROTOCOL:
            raise ProtocolError(f"protocol {msg.get('protocol')!r}; this server speaks "
                                f"{PROTOCOL}")
        if msg.get("rules"):
            self.rules = Rules.from_dict(msg["rules"])
        if self.agent is None:
            self.agent = make_agent(self.spec, seed=self.seed, preset=self.rules.preset)
        offered = int(msg.get("tables", 1))
        return {"type": "hello", "protocol": PROTOCOL, "name": f"bot_server {self.spec}",
                "version": _version(), "tables": max(1, min(offered, self.tables))}

    def decide(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        views = views_from_messages([r["view"] for r in requests])
        masks = _masks(requests)
        needs = agent_needs(self.agent)
        inputs: Any = views
        if needs == "planes":
            inputs = planes_from_view(views, self.rules)
        elif needs == "nothing":
            inputs = NO_OBSERVATION(len(requests))
        acts = np.asarray(self.agent.act_batch(inputs, masks), np.int64)
        return [{"id": r["id"], "action": ACTION_STRINGS[int(a)]}
                for r, a in zip(requests, acts, strict=True)]


def serve(server: Server, fd_in: int = 0, fd_out: int = 1) -> int:
    """Answer messages from ``fd_in`` on ``fd_out`` until ``bye`` or end of input, in the
    order they came: the requests that arrive together (between other messages) are
    decided in one ``act_batch``; a request that cannot be played (sent before ``hello``,
    or not understood) is answered ``{"id": N, "error": "..."}`` (no action: a fault of
    that decision), the others of its batch all the same."""
    buf = b""
    while True:
        chunk = os.read(fd_in, 1 << 20)  # whole batches of requests: one act_batch each
        if not chunk:
            return 0
        buf += chunk
        if b"\n" not in buf:
            continue
        *lines, buf = buf.split(b"\n")
        requests: list[dict[str, Any]] = []
        replies: list[dict[str, Any]] = []
        for line in lines:
            if not line.strip():
                continue
            try:
                msg = loads(line)
                if not isinstance(msg, dict):
                    raise TypeError(f"a message is a JSON object, got {type(msg).__name__}")
            except (ValueError, TypeError) as err:
                _complain(f"cannot read the message {line[:100]!r}: {err}")
                continue
            kind = msg.get("type")
            if kind == "request":
                requests.append(msg)
                continue
            replies += _decide(server, requests)  # what came before, first
            requests = []
            if kind == "hello":
                try:
                    replies.append(server.hello(msg))
                except (ValueError, TypeError, KeyError) as err:
                    _complain(f"cannot use the hello: {type(err).__name__}: {err}")
            elif kind == "bye":
                _write(fd_out, replies)
                return 0
        replies += _decide(server, requests)
        _write(fd_out, replies)


def _complain(text: str) -> None:
    print(f"bot_server: {text}", file=sys.stderr, flush=True)


def _decide(server: Server, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answers to ``requests``, in their order (see :func:`serve`)."""
    if not requests:
        return []
    if server.agent is None:
        _complain(f"{len(requests)} request(s) before hello")
        return [_error(r, "request before hello: send hello first") for r in requests]
    try:
        return server.decide(requests)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
        if len(requests) == 1:
            _complain(f"a request was not understood: {type(err).__name__}: {err}")
            return [_error(requests[0], f"not understood: {type(err).__name__}: {err}")]
    out: list[dict[str, Any]] = []  # one bad request in the batch: each on its own
    for r in requests:
        out += _decide(server, [r])
    return out


def _error(request: dict[str, Any], text: str) -> dict[str, Any]:
    rid = request.get("id")
    return {"id": rid if isinstance(rid, int) and not isinstance(rid, bool) else None,
            "error": text[:300]}


def _write(fd: int, replies: list[dict[str, Any]]) -> None:
    if not replies:
        return
    data = ("\n".join(dumps(r) for r in replies) + "\n").encode()
    while data:
        n = os.write(fd, data)
        data = data[n:]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("spec", help=agents_help("the agent to serve"))
    p.add_argument("--tables", type=int, default=64,
                   help="requests accepted at once (default 64)")
    p.add_argument("--seed", type=int, default=None, help="the agent's seed")
    args = p.parse_args(argv)
    if args.tables < 1:
        p.error(f"--tables must be >= 1, got {args.tables}")
    try:
        server = Server(args.spec, args.seed, args.tables)
        return serve(server)
    except (ValueError, OSError) as err:
        print(f"{PROG}: error: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())

"""``python -m sichuan_env.play --web``: serve the play page on a local address.

::

    python -m sichuan_env.play --web [--host 127.0.0.1] [--port 8000]
        [--seats you,rules,rules,rules] [--rules mil] [--seed S]

``--seats``: four comma-separated entries in seat order (seat 0 deals), exactly one of
them ``you``; the others are agent specs for :func:`sichuan_env.agent.make_agent`
(``random``, ``greedy``, ``rules``, ``ppo``, ``ppo:PATH``, ``path/to/bot.py:Class``, ...).
``--seed S``: every browser session's first deal is dealt from S, its next ones from
S+1, S+2, ...; without it each session starts from a random seed. ``--port 0`` takes a
free port. Bad arguments print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import NoReturn

PROG = "python -m sichuan_env.play --web"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(2, f"{PROG}: error: {message}\n")


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def parse_seats(text: str) -> list[str]:
    """The four seat entries of ``--seats``; raises ``ValueError`` unless there are four,
    none empty, exactly one of them ``you``."""
    seats = [s.strip() for s in text.split(",")]
    if len(seats) != 4 or not all(seats):
        raise ValueError(f"--seats takes four comma-separated entries in seat order, got "
                         f"{text!r}")
    n = sum(s.lower() == "you" for s in seats)
    if n != 1:
        raise ValueError(f"--seats needs exactly one 'you', got {n} in {text!r}")
    return seats


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a port is a number 0-65535, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number 0-65535, got {port}")
    return port


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted; returns the exit status."""
    p = _Parser(prog=PROG, description="Play Sichuan mahjong against the bots in a browser.")
    p.add_argument("--web", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                   "127.0.0.1)")
    p.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0: a free one)")
    p.add_argument("--seats", default="you,rules,rules,rules",
                   help="four seats in order, one 'you', the others agent specs (exec:COMMAND: "
                        "a program in any language, docs/protocol.md)")
    p.add_argument("--rules", default="mil", help="rule preset (default mil)")
    p.add_argument("--seed", type=int, default=None, help="the first deal's seed")
    args = p.parse_args(argv)
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as err:
        return _fail(f"the web server needs the 'web' extra ({err.name} is missing): "
                     "pip install -e '.[web]'")
    from sichuan_env.agent import make_agent
    from sichuan_env.rules import get_rules
    from sichuan_env.web.app import WebConfig, create_app
    from sichuan_env.web.table import SharedAgent, warm_up

    try:
        seats = parse_seats(args.seats)
        rules = get_rules(args.rules)
    except ValueError as err:
        return _fail(str(err))
    agents: list[SharedAgent | None] = []
    for s, spec in enumerate(seats):
        if spec.lower() == "you":
            agents.append(None)
            continue
        try:
            agent = make_agent(spec, seed=(args.seed or 0) * 10 + s, preset=rules.preset)
        except ValueError as err:  # AgentSpecError and friends
            return _fail(f"--seats: {str(err).splitlines()[0]}")
        agents.append(SharedAgent(agent, spec))
    try:
        sock = socket.create_server((args.host, args.port),
                                    family=socket.AF_INET6 if ":" in args.host
                                    else socket.AF_INET)
    except OSError as err:
        return _fail(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}")
    port = sock.getsockname()[1]
    print("Getting the engine and the bots ready (the first run compiles for a minute)...",
          file=sys.stderr, flush=True)
    try:
        warm_up(agents, rules)
    except Exception as err:  # a bot that fails in play: one line, like a bad spec
        sock.close()
        return _fail(f"--seats: a bot failed in a trial deal: {type(err).__name__}: {err}")
    hosts = [*LOOPBACK, args.host] if args.host in LOOPBACK else None
    app = create_app(WebConfig(agents, rules, args.seed), allowed_hosts=hosts)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    you = seats.index(next(s for s in seats if s.lower() == "you"))
    print(f"Sichuan mahjong: open http://{shown}:{port}/ to play seat {you} "
          f"(rules {rules.preset}; seats {', '.join(seats)}); Ctrl-C stops.", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0

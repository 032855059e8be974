"""``python -m sichuan_env.play --web``: serve the play page on a local address.

::

    python -m sichuan_env.play --web [--host 127.0.0.1] [--port 8000]
        [--seats you,rules,rules,rules] [--rules mil] [--seed S] [--allow-host NAME]
        [--max-games N] [--games-per-client N] [--idle-minutes M] [--bot-time-limit S]
        [--bot-workers N] [--fallback SPEC] [--claim-window-ms MS] [--memory-mb MB]
        [--trusted-proxy ADDR]

``--seats``: four comma-separated entries in seat order (seat 0 deals), exactly one of
them ``you``; the others are agent specs for :func:`sichuan_env.seats.agent.make_agent`
(``random``, ``greedy``, ``rules``, ``ppo``, ``ppo:PATH``, ``path/to/bot.py:Class``, ...).
Without ``--seed`` every deal's seed is drawn from a secret source (64 bits) and shown
only once the deal is over; ``--seed S`` deals deal n of every game from S+n
(reproducible, and predictable: a one-line warning says so). ``--port 0`` takes a free
port. A ``--host`` other than loopback prints a one-line warning (anyone who can reach
the port can play); the ``Host`` header must then be an IP address, ``localhost``, the
``--host`` or a name given with ``--allow-host``. ``--max-games``,
``--games-per-client``, ``--idle-minutes``, ``--bot-time-limit`` and ``--fallback`` set
the limits of docs/play.md; bots other than random, greedy and rules think in
``--bot-workers`` processes. Every discard's claim window takes ``--claim-window-ms`` at
least, whether or not a bot could claim (default: from the bots' answers in the trial
deal; see docs/play.md). ``--max-games`` is lowered to the games whose bots fit
``--memory-mb`` (default 75% of the memory available at start; what a game costs is
measured at start, :mod:`sichuan_env.play.web.memory`), with a one-line warning. The
per-address limit counts the address of the connection;
behind a reverse proxy, ``--trusted-proxy ADDR`` (repeatable) reads the client from the
``X-Forwarded-For`` header of requests from that address only. Bad arguments print one
line and exit with status 2.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from typing import NoReturn

from sichuan_env.seats.agent import agents_help

PROG = "python -m sichuan_env.play --web"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
LIGHT = ("random", "greedy", "rules")  # bots quick enough to think in the server's process


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


def _positive(kind: type, what: str):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a positive number, got "
                                             f"{text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{what} must be a positive number, got {text!r}")
        return value
    return parse


def _proxy(text: str) -> str:
    try:
        ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--trusted-proxy takes an IP address or network, "
                                         f"got {text!r}") from None
    return text.strip()


def url_host(host: str) -> str:
    """``host`` as written in a URL: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def main(argv: list[str] | None = None) -> int:
    """Run the server until interrupted; returns the exit status."""
    p = _Parser(prog=PROG, description="Play Sichuan mahjong against the bots in a browser.")
    p.add_argument("--web", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                   "127.0.0.1; another address lets other machines play: see docs/play.md)")
    p.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0: a free one)")
    p.add_argument("--seats", default="you,rules,rules,rules",
                   help=agents_help("four seats in order, one 'you', the others agents"))
    p.add_argument("--rules", default="mil", help="rule preset (default mil)")
    p.add_argument("--seed", type=int, default=None,
                   help="deal n of every game from seed+n (reproducible, and predictable: "
                   "default a secret seed per deal)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a host name the server may be reached by (repeatable; IP addresses "
                   "and localhost are always accepted)")
    p.add_argument("--max-games", type=_positive(int, "--max-games"), default=200,
                   help="games kept at most (default 200)")
    p.add_argument("--games-per-client", type=_positive(int, "--games-per-client"), default=8,
                   help="games one client address may hold (default 8)")
    p.add_argument("--idle-minutes", type=_positive(float, "--idle-minutes"), default=60.0,
                   help="a game unused this long expires (default 60)")
    p.add_argument("--bot-time-limit", type=_positive(float, "--bot-time-limit"), default=10.0,
                   help="seconds a bot may think per decision before the fallback plays "
                   "(default 10)")
    p.add_argument("--bot-workers", type=int, default=2, metavar="N",
                   help="worker processes in which bots other than random, greedy and rules "
                   "think (default 2; 0: every bot in the server's own process)")
    p.add_argument("--fallback", default="rules",
                   help="the agent that plays a decision a bot failed (default rules)")
    p.add_argument("--review-k", type=_positive(int, "--review-k"), default=256,
                   help="samples per decision of 'Review this deal' (default 256)")
    p.add_argument("--memory-mb", type=_positive(int, "--memory-mb"), default=None,
                   metavar="MB", help="memory the games may take (default 75%% of what is "
                   "available at start): --max-games is lowered to the games that fit")
    p.add_argument("--claim-window-ms", type=float, default=None, metavar="MS",
                   help="the time every discard's claim window takes at least, whether or "
                   "not a bot could claim (default: from the bots' answers in a trial deal; "
                   "0: no padding)")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDR",
                   type=_proxy,
                   help="a reverse proxy's address (or network) whose X-Forwarded-For names "
                   "the client (repeatable; default none: the client is the connection's "
                   "peer)")
    args = p.parse_args(argv)
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as err:
        return _fail(f"the web server needs the 'web' extra ({err.name} is missing): "
                     "pip install -e '.[web]'")
    from sichuan_env.core.rules import get_rules
    from sichuan_env.play.web.app import WebConfig, create_app
    from sichuan_env.play.web.bots import BotSpec, GameBots, display_name
    from sichuan_env.play.web.memory import MEMORY_SHARE, available_memory, fitting_games, game_cost
    from sichuan_env.play.web.server import listen_socket, uvicorn_config
    from sichuan_env.play.web.table import claim_window_for, warm_up
    from sichuan_env.play.web.workers import BotWorkers
    from sichuan_env.seats.agent import make_agent

    try:
        seats = parse_seats(args.seats)
        rules = get_rules(args.rules)
    except ValueError as err:
        return _fail(str(err))
    if args.review_k < 2:
        return _fail(f"--review-k must be 2 or more, got {args.review_k}")
    specs: list[BotSpec | None] = []
    for spec in [*seats, args.fallback]:
        if spec.lower() == "you":
            specs.append(None)
            continue
        try:  # a bad spec fails here, once, with its message (each game builds its own)
            make_agent(spec, seed=0, preset=rules.preset)
        except ValueError as err:  # AgentSpecError and friends
            flag = "--fallback" if len(specs) == 4 else "--seats"
            return _fail(f"{flag}: {str(err).splitlines()[0]}")
        specs.append(BotSpec(spec, rules.preset,
                             isolated=args.bot_workers > 0 and display_name(spec) not in LIGHT))
    specs = specs[:4]
    if args.bot_workers < 0:
        return _fail(f"--bot-workers must be 0 or more, got {args.bot_workers}")
    if args.claim_window_ms is not None and not 0 <= args.claim_window_ms <= 60_000:
        return _fail(f"--claim-window-ms must be 0 to 60000, got {args.claim_window_ms:g}")
    try:
        sock = listen_socket(args.host, args.port)
    except OSError as err:
        return _fail(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}")
    port = sock.getsockname()[1]
    print("Getting the engine and the bots ready (the first run compiles for a minute)...",
          file=sys.stderr, flush=True)
    heavy = sorted({sp.spec for sp in specs if sp is not None and sp.isolated})
    workers = BotWorkers(args.bot_workers, heavy, rules.preset) if heavy else None
    try:
        plain = [sp and BotSpec(sp.spec, sp.preset) for sp in specs]
        answers = warm_up(plain, rules)
        if workers is not None:
            workers.wait_ready()
        per_game = game_cost(lambda: GameBots(plain, fallback=None), GameBots.close)
    except Exception as err:  # a bot that fails in play: one line, like a bad spec
        sock.close()
        if workers is not None:
            workers.close()
        return _fail(f"--seats: a bot failed in a trial deal: {type(err).__name__}: {err}")
    if args.seed is not None:
        print(f"{PROG}: warning: --seed {args.seed}: every game's deals are dealt from known "
              "seeds, so anyone who knows the seed knows every hand and the wall",
              file=sys.stderr, flush=True)
    loopback = args.host in LOOPBACK
    if not loopback:
        print(f"{PROG}: warning: listening on {args.host}: anyone who can reach port {port} "
              "of this machine can play here (no passwords; see docs/play.md)",
              file=sys.stderr, flush=True)
    budget = (args.memory_mb * 2**20 if args.memory_mb is not None
              else available_memory())
    max_games = fitting_games(args.max_games, per_game, budget,
                              share=1.0 if args.memory_mb is not None else MEMORY_SHARE)
    if max_games < args.max_games:
        assert per_game is not None and budget is not None
        print(f"{PROG}: warning: at most {max_games} games (not {args.max_games}): a game "
              f"costs about {per_game / 2**20:.0f} MiB (its bots), and "
              + (f"--memory-mb is {args.memory_mb}" if args.memory_mb is not None else
                 f"{MEMORY_SHARE:.0%} of the {budget / 2**20:.0f} MiB available is "
                 f"{MEMORY_SHARE * budget / 2**20:.0f}"),
              file=sys.stderr, flush=True)
    window = (claim_window_for(answers, args.bot_time_limit) if args.claim_window_ms is None
              else args.claim_window_ms / 1000)
    hosts = [*LOOPBACK, args.host, *args.allow_host]
    config = WebConfig(specs, rules, args.seed, max_games=max_games,
                       per_client=args.games_per_client, idle_seconds=args.idle_minutes * 60,
                       time_limit=args.bot_time_limit, fallback=args.fallback,
                       workers=workers, review_k=args.review_k, claim_window=window)
    app = create_app(config, allowed_hosts=hosts, ip_hosts=not loopback)
    you = seats.index(next(s for s in seats if s.lower() == "you"))
    shown = ", ".join("you" if sp is None else sp.shown for sp in specs)
    print(f"Sichuan mahjong: open http://{url_host(args.host)}:{port}/ to play seat {you} "
          f"(rules {rules.preset}; seats {shown}; claim windows {window * 1000:.0f} ms); "
          "Ctrl-C stops.", flush=True)
    server = uvicorn.Server(uvicorn_config(app, args.trusted_proxy))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        if workers is not None:
            workers.close()
    return 0

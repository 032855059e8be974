"""Load test of browser play: N simulated players against a local server.

::

    python benchmarks/web_load.py [--players 50] [--seconds 60] [--search-games 1]
        [--slow-games 1 --slow-seconds 8] [--isolate-rules] [--think 1.0]
        [--bot-workers 1] [--claim-window-ms MS] [--json out.json]

Starts the server (``sichuan_env.play.web``, uvicorn on 127.0.0.1, a free port) in a process
of its own, then plays ``--players`` games at once from this process (asyncio, one
``httpx`` client and cookie per player): each player asks for a deal, and then until the
time is up picks a random legal move, waits a think time (uniform between 0.5 and 1.5
times ``--think`` seconds) and sends it; a finished deal is followed by a new one. The
first ``--search-games`` games play against three ``search`` bots (thinking in
``--bot-workers`` worker processes), the next ``--slow-games`` against three bots that
sleep ``--slow-seconds`` per decision (``tests/data/web_bots.py:Sleeper``, in the workers),
the others against three ``rules`` bots (in the server's process, or with
``--isolate-rules`` in the workers too: the games then share the workers with the slow
ones). Every player also reads ``GET /api/state`` about every 5 seconds.

Reports the latency of the moves (``POST /api/act``: the human's move and the bots' up
to the human's next decision) as p50/p95/p99 per kind of game, of the state reads and of
new deals, every error (a non-2xx answer or a failed request), and the notices of
decisions a fallback bot played (a bot that failed or ran out of time). The figures depend on
the machine and on what else runs on it: write them down with the machine, the versions
and the load printed here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- the server
def serve(port_file: str, search_games: int, bot_workers: int, time_limit: float,
          slow_games: int = 0, slow_seconds: float = 8.0, isolate_rules: bool = False,
          claim_window_ms: float | None = None) -> None:
    """Run the server (in its own process); writes its URL to ``port_file``."""
    import uvicorn

    from sichuan_env.core.rules import get_rules
    from sichuan_env.play.web.app import WebConfig, create_app, default_game
    from sichuan_env.play.web.bots import BotSpec
    from sichuan_env.play.web.server import listen_socket, uvicorn_config
    from sichuan_env.play.web.table import WebGame, warm_up
    from sichuan_env.play.web.workers import BotWorkers

    rules = get_rules("mil")
    light = [None] + [BotSpec("rules", rules.preset, isolated=isolate_rules and bot_workers > 0)
                      for _ in range(3)]
    heavy = [None] + [BotSpec("search", rules.preset, isolated=bot_workers > 0)
                      for _ in range(3)]
    sleeper = f"{ROOT / 'tests' / 'data' / 'web_bots.py'}:Sleeper?seconds={slow_seconds:g}"
    slow = [None] + [BotSpec(sleeper, rules.preset, isolated=bot_workers > 0)
                     for _ in range(3)]
    warm_up([sp and BotSpec(sp.spec, sp.preset) for sp in light], rules)
    warm = (["search"] if search_games else []) + (["rules"] if isolate_rules else [])
    workers = None
    if bot_workers and (search_games or slow_games or isolate_rules):
        workers = BotWorkers(bot_workers, warm, rules.preset)
        workers.wait_ready()
    elif search_games:
        warm_up(heavy, rules)
    config = WebConfig(light, rules, None, max_games=10_000, per_client=10_000,
                       time_limit=time_limit, workers=workers)
    if claim_window_ms is not None:
        config.claim_window = claim_window_ms / 1000

    def factory(cfg: WebConfig, number: int) -> WebGame:
        seats = (heavy if number <= search_games else
                 slow if number <= search_games + slow_games else None)
        if seats is not None:
            return WebGame(seats, rules, time_limit=time_limit, label=f"#{number}",
                           workers=workers, claim_window=cfg.claim_window)
        return default_game(cfg, number)

    app = create_app(config, allowed_hosts=["127.0.0.1"], game_factory=factory)
    sock = listen_socket("127.0.0.1", 0)  # as the command line: TCP_NODELAY
    Path(port_file).write_text(str(sock.getsockname()[1]))
    uvicorn.Server(uvicorn_config(app)).run(sockets=[sock])


# ----------------------------------------------------------------------------- the players
class Stats:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.errors: Counter[str] = Counter()
        self.notices: Counter[str] = Counter()

    def add(self, kind: str, seconds: float) -> None:
        self.times.setdefault(kind, []).append(seconds)


async def player(client: Any, kind: str, deadline: float, think: float, stats: Stats,
                 rng: random.Random) -> None:
    import httpx

    async with client:

        async def call(what: str, method: str, path: str, **kw: Any) -> dict | None:
            t = time.perf_counter()
            try:
                r = await client.request(method, path, **kw)
            except httpx.HTTPError as err:
                stats.errors[f"{what}: {type(err).__name__}"] += 1
                return None
            stats.add(what, time.perf_counter() - t)
            if r.status_code != 200:
                stats.errors[f"{what}: HTTP {r.status_code} {r.text[:80]}"] += 1
                return None
            data = r.json()
            for notice in data.get("notices", []) if method == "POST" else []:
                stats.notices[f"{kind}: {notice.split(':')[0]}"] += 1  # a fallback played
            return data

        r = await call("new deal", "POST", "/api/new", json={})
        next_read = time.monotonic() + rng.uniform(0, 5)
        while r is not None and time.monotonic() < deadline:
            await asyncio.sleep(think * rng.uniform(0.5, 1.5))
            if time.monotonic() >= next_read:
                await call("state read", "GET", "/api/state")
                next_read += 5
            if r["done"]:
                r = await call("new deal", "POST", "/api/new", json={})
                continue
            move = {"deal": r["deal"], "step": r["step"],
                    "action": rng.choice(r["table"]["legal"])}
            r = await call(f"move ({kind})", "POST", "/api/act", json=move)


async def run_players(url: str, players: int, search_games: int, seconds: float,
                      think: float, seed: int, slow_games: int = 0) -> Stats:
    import httpx

    stats = Stats()
    # the clients first: making one takes milliseconds of this process's time, which
    # would otherwise count in the first requests' latency
    clients = [httpx.AsyncClient(base_url=url, timeout=120) for _ in range(players)]
    deadline = time.monotonic() + seconds
    tasks = []
    for i in range(players):
        kind = ("search" if i < search_games else
                "slow" if i < search_games + slow_games else "rules")
        tasks.append(asyncio.create_task(player(clients[i], kind, deadline, think, stats,
                                                random.Random(seed + i))))
        if i < search_games + slow_games:  # these first: they are the server's games 1..k
            await asyncio.sleep(0.5)
    await asyncio.gather(*tasks)
    return stats


# ----------------------------------------------------------------------------- the report
def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for mod in ("numpy", "numba", "starlette", "uvicorn", "httpx"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:
            versions[mod] = "?"
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            **versions}


def percentiles(xs: list[float]) -> dict[str, float]:
    a = np.array(xs) * 1000
    return {"n": int(a.size), "p50_ms": round(float(np.percentile(a, 50)), 1),
            "p95_ms": round(float(np.percentile(a, 95)), 1),
            "p99_ms": round(float(np.percentile(a, 99)), 1),
            "max_ms": round(float(a.max()), 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--search-games", type=int, default=0)
    p.add_argument("--think", type=float, default=1.0, help="mean think time (s)")
    p.add_argument("--bot-workers", type=int, default=1)
    p.add_argument("--slow-games", type=int, default=0,
                   help="games against bots that think --slow-seconds per decision")
    p.add_argument("--slow-seconds", type=float, default=8.0)
    p.add_argument("--isolate-rules", action="store_true",
                   help="the rules bots think in the worker processes too")
    p.add_argument("--claim-window-ms", type=float, default=None,
                   help="pad claim windows to this (default the server's default)")
    p.add_argument("--time-limit", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="also write the report here")
    p.add_argument("--serve", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        serve(args.serve, args.search_games, args.bot_workers, args.time_limit,
              args.slow_games, args.slow_seconds, args.isolate_rules, args.claim_window_ms)
        return 0
    port_file = Path(f"/tmp/web_load_port_{os.getpid()}")
    port_file.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                        os.environ.get("PYTHONPATH", "")])}
    srv = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file),
                            "--search-games", str(args.search_games),
                            "--bot-workers", str(args.bot_workers),
                            "--time-limit", str(args.time_limit),
                            "--slow-games", str(args.slow_games),
                            "--slow-seconds", str(args.slow_seconds),
                            *(["--isolate-rules"] if args.isolate_rules else []),
                            *(["--claim-window-ms", str(args.claim_window_ms)]
                              if args.claim_window_ms is not None else [])], env=env)
    try:
        t0 = time.monotonic()
        while not port_file.exists() or not port_file.read_text():
            if srv.poll() is not None or time.monotonic() - t0 > 900:
                print("the server did not start", file=sys.stderr)
                return 1
            time.sleep(0.2)
        url = f"http://127.0.0.1:{port_file.read_text()}"
        load_before = os.getloadavg()
        t = time.perf_counter()
        stats = asyncio.run(run_players(url, args.players, args.search_games, args.seconds,
                                        args.think, args.seed, args.slow_games))
        wall = time.perf_counter() - t
        load_after = os.getloadavg()
    finally:
        srv.terminate()
        srv.wait(30)
        port_file.unlink(missing_ok=True)
    report = {
        "players": args.players, "search_games": args.search_games, "seconds": args.seconds,
        "think_s": args.think, "bot_workers": args.bot_workers, "wall_s": round(wall, 1),
        "slow_games": args.slow_games, "slow_seconds": args.slow_seconds,
        "isolate_rules": args.isolate_rules, "claim_window_ms": args.claim_window_ms,
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in load_after],
        "machine": machine(),
        "latency": {k: percentiles(v) for k, v in sorted(stats.times.items())},
        "errors": dict(stats.errors),
        "fallback_notices": dict(stats.notices),
    }
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

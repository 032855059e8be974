"""Play-outs per CPU-second of the search agent's rollout policies.

    python benchmarks/playouts.py [--tables 512] [--repeats 2] [--rules mil] [--threads 1]

Deals ``--tables`` tables (seeds 1000..), and for each rollout policy plays them from
the deal's start to its end with ``sichuan_agents.search.rollout.play_out`` (one compiled loop,
one thread), after a warm-up run that compiles; prints play-outs per CPU-second of each
repeat. The policies alternate, so a change of load hits them alike. With ``--threads
N`` (N > 1) it then plays the same tables on one thread and on N, one after the other,
and prints play-outs per wall-clock second of both and their ratio (meaningful only on
N free cores).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sichuan_agents.search import rollout as sr  # noqa: E402
from sichuan_env.core import engine  # noqa: E402
from sichuan_env.core.rules import get_rules  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Play-outs per CPU-second of each rollout policy.")
    p.add_argument("--tables", type=int, default=512)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--rules", default="mil")
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    if a.tables < 1 or a.repeats < 1:
        print("error: --tables and --repeats must be >= 1", file=sys.stderr)
        return 2
    try:
        engine.check_threads(a.threads)
        rules = get_rules(a.rules, deals_per_match=1)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    start = engine.reset(np.arange(1000, 1000 + a.tables), rules)
    rows = np.arange(a.tables)
    for policy in sr.ROLLOUT_POLICIES:  # compile (or load) every kernel first
        sr.play_out(start.copy(), sr.choose_actions(start.copy(), rows, policy), policy)
    for rep in range(a.repeats):
        for policy in sr.ROLLOUT_POLICIES:
            st = start.copy()
            first = sr.choose_actions(st.copy(), rows, policy)
            cpu = time.process_time()
            sr.play_out(st, first, policy)
            cpu = time.process_time() - cpu
            print(f"{policy:7s} repeat {rep + 1}: {a.tables / cpu:9.0f} play-outs per CPU-s")
    if a.threads > 1:
        _wall_clock_on_threads(start, rows, a.threads, a.repeats)
    return 0


def _wall_clock_on_threads(start: Any, rows: np.ndarray, threads: int, repeats: int
                           ) -> None:
    for policy in sr.ROLLOUT_POLICIES:  # compile (or load) the threaded kernel first
        sr.play_out(start.copy(), sr.choose_actions(start.copy(), rows, policy), policy,
                    threads=threads)
    for rep in range(repeats):
        for policy in sr.ROLLOUT_POLICIES:
            first = sr.choose_actions(start.copy(), rows, policy)
            wall = {}
            for n in (1, threads):
                st = start.copy()
                t0 = time.perf_counter()
                sr.play_out(st, first, policy, threads=n)
                wall[n] = time.perf_counter() - t0
            print(f"{policy:7s} repeat {rep + 1}: {rows.size / wall[1]:9.0f} play-outs per "
                  f"wall-s on 1 thread, {rows.size / wall[threads]:9.0f} on {threads} "
                  f"({wall[1] / wall[threads]:.2f} times)")


if __name__ == "__main__":
    sys.exit(main())

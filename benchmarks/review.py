"""Seconds to review one seat of one deal (sichuan_agents/review.py).

    python benchmarks/review.py [--deals 4] [--seed 20261129] [--rules mil] [--ks 256,64]
        [--threads 1,2]

Plays ``--deals`` deals of four ``rules`` bots (arena, seeds from ``--seed``), then
reviews seat 0 of each deal with the default reviewer (``search``) at each ``--ks`` and
``--threads``, after one warm-up review that loads the compiled kernels; prints per
setting the wall-clock and CPU seconds per reviewed seat (mean and max over the deals),
the decisions reviewed and the seconds per decision. Settings alternate deal by deal, so
a change of load hits them alike. Wall-clock figures depend on what else the machine
runs: say so beside them.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402

from sichuan_agents.arena import run_arena  # noqa: E402
from sichuan_agents.review import Reviewer, review_record  # noqa: E402
from sichuan_env.records.record import read_jsonl, validate_record  # noqa: E402


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Seconds to review one seat of one deal.")
    p.add_argument("--deals", type=int, default=4)
    p.add_argument("--seed", type=int, default=20261129)
    p.add_argument("--rules", default="mil")
    p.add_argument("--ks", default="256,64", help="samples per decision, comma-separated")
    p.add_argument("--threads", default="1", help="play-out threads, comma-separated")
    a = p.parse_args(argv)
    try:
        ks = [int(x) for x in a.ks.split(",")]
        threads = [int(x) for x in a.threads.split(",")]
    except ValueError:
        print("error: --ks and --threads are comma-separated integers", file=sys.stderr)
        return 2
    if a.deals < 1:
        print("error: --deals must be >= 1", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "deals.jsonl"
        run_arena(["rules"] * 4, deals=a.deals, duplicate=False, seed=a.seed, rules=a.rules,
                  tables=a.deals, records=path, record_deals=a.deals)
        records = read_jsonl(path)
    rules = validate_record(records[0])
    review_record(records[0], [0], Reviewer(rules=rules, k=8))  # warm-up: load the kernels
    settings = [(k, t) for k in ks for t in threads]
    got: dict[tuple[int, int], list[tuple[float, float, int]]] = {s: [] for s in settings}
    for rec in records:
        for k, t in settings:
            rv = Reviewer(rules=validate_record(rec), k=k, threads=t)
            wall, cpu = time.perf_counter(), time.process_time()
            out = review_record(rec, [0], rv)
            got[(k, t)].append((time.perf_counter() - wall, time.process_time() - cpu,
                                out["summary"]["decisions"]))
    print(f"machine: {_cpu()}, {os.cpu_count()} cores, {numba.config.NUMBA_NUM_THREADS}"
          f" numba threads; python {platform.python_version()}, numpy {np.__version__}, "
          f"numba {numba.__version__}; rules {a.rules}, {a.deals} deals of four rules bots, "
          f"seed {a.seed}, seat 0 reviewed by search")
    print(f"{'k':>5} {'threads':>7} {'wall s/seat (mean, max)':>24} {'CPU s/seat':>11} "
          f"{'decisions':>9} {'wall s/decision':>15}")
    for (k, t), rows in got.items():
        w = np.array([r[0] for r in rows])
        c = np.array([r[1] for r in rows])
        n = np.array([r[2] for r in rows])
        print(f"{k:>5} {t:>7} {w.mean():>15.2f}, {w.max():>6.2f} {c.mean():>11.2f} "
              f"{n.mean():>9.1f} {w.sum() / n.sum():>15.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

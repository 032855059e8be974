"""Decisions per second of agents playing all four seats of a batch of tables.

    python benchmarks/agent_speed.py --agents rules,fitted,ppo --tables 256 --deals 512

Every decision of ``--deals`` deals (seeds 7,000,000 + i, ``--tables`` at a time) is made
by the agent, input building (planes, seat views, advice) included; the rate is decisions
per second of this process's CPU time (``time.process_time``), so other jobs on a shared
machine slow it less than wall time, and torch runs on one thread.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, as the other benchmarks


def decisions_per_second(spec: str, deals: int, tables: int, rules: str) -> tuple[int, float]:
    """(decisions, CPU seconds) for agent ``spec`` playing every seat of ``deals`` deals."""
    from sichuan_env.core import engine
    from sichuan_env.seats.agent import make_agent
    from sichuan_env.seats.driver import choose

    agent = make_agent(spec, seed=0, preset=rules)
    n, cpu = 0, 0.0
    for lo in range(0, deals, tables):
        st = engine.reset(np.arange(lo, min(deals, lo + tables)) + 7_000_000, rules)
        while not st.done.all():
            live = np.flatnonzero(~st.done)
            t0 = time.process_time()
            acts = np.zeros(st.batch_size, np.int64)
            acts[live] = choose(st, live, [agent])
            cpu += time.process_time() - t0
            n += live.size
            engine.step(st, acts, inplace=True)
    return n, cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", default="rules,fitted,ppo")
    p.add_argument("--deals", type=int, default=512)
    p.add_argument("--tables", type=int, default=256)
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    a = p.parse_args(argv)
    if a.deals < 1 or a.tables < 1:
        p.error("--deals and --tables must be >= 1")
    import torch

    torch.set_num_threads(1)
    for spec in a.agents.split(","):
        decisions_per_second(spec, min(a.tables, a.deals), a.tables, a.rules)  # warm-up
        n, cpu = decisions_per_second(spec, a.deals, a.tables, a.rules)
        print(f"{spec:<10} {n:>9,} decisions {cpu:7.1f} CPU-s {n / cpu:>10,.0f} decisions/s",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

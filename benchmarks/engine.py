"""Engine throughput under uniformly random legal play.

    python benchmarks/engine.py [--seconds 3] [--rules mil] [--batches 1,64,1024,4096]

For each batch size: ``legal_mask`` + a random legal action per table + ``step(...,
inplace=True, mask=m, autoreset=True, validate=False)`` in a loop for a fixed time (after
a short warm-up), all in this one process. ``validate=False`` skips the legality check of
the given actions (they come from the mask, so they are legal); one extra line measures
``validate=True`` at batch 1024. Reported:

* decisions/s: table decisions applied per second (batch size x steps/s; with auto-reset
  every table always has a decision to make);
* deals/s: deals finished per second;
* steps/s: ``step`` calls per second;
* bytes/table: ``state.nbytes_per_table()``.

Targets: >= 300,000 decisions/s at the best batch size, >= 3,000 at batch 1.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from sichuan_env import engine
from sichuan_env.rules import get_rules


def run(batch: int, seconds: float, rules: str, *, validate: bool = False,
        seed: int = 0) -> dict[str, float]:
    """Random play on ``batch`` tables for about ``seconds``; returns the rates."""
    st = engine.reset(np.arange(batch) + seed * 1_000_000, get_rules(rules))
    rng = np.random.default_rng(seed)

    def one_step(st):
        m = engine.legal_mask(st)
        n = m.sum(1)
        r = (rng.random(batch) * n).astype(np.int64)
        a = (np.cumsum(m, axis=1) > r[:, None]).argmax(1)
        return engine.step(st, a, inplace=True, mask=m, autoreset=True, validate=validate)

    warm_until = time.perf_counter() + min(0.5, seconds / 4)
    while time.perf_counter() < warm_until:
        st, _, _ = one_step(st)
    steps = deals = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while True:
        st, _, done = one_step(st)
        steps += 1
        deals += int(done.sum())
        if steps % 8 == 0 and time.perf_counter() >= end:
            break
    dt = time.perf_counter() - t0
    return {
        "batch": batch,
        "decisions_s": steps * batch / dt,
        "deals_s": deals / dt,
        "steps_s": steps / dt,
        "bytes_table": st.nbytes_per_table(),
        "seconds": dt,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=3.0, help="measured time per line")
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--batches", default="1,64,1024,4096")
    args = p.parse_args(argv)
    batches = [int(x) for x in args.batches.split(",") if x]
    print(f"engine benchmark: uniformly random legal play, rules {args.rules}, "
          f"{args.seconds:g} s per line, step(inplace=True, mask=m, autoreset=True)")
    header = (f"{'batch':>6} {'validate':>8} {'decisions/s':>12} {'deals/s':>9} "
              f"{'steps/s':>9} {'bytes/table':>11}")
    print(header)
    print("-" * len(header))
    results = []
    lines = [(b, False) for b in batches] + [(1024, True)]
    for b, validate in lines:
        r = run(b, args.seconds, args.rules, validate=validate)
        results.append((r, validate))
        print(f"{b:>6} {str(validate):>8} {r['decisions_s']:>12,.0f} {r['deals_s']:>9,.1f} "
              f"{r['steps_s']:>9,.1f} {r['bytes_table']:>11,}")
        sys.stdout.flush()
    fast = [r for r, v in results if not v]
    best = max(fast, key=lambda r: r["decisions_s"])
    single = next((r for r in fast if r["batch"] == 1), None)
    print(f"best: {best['decisions_s']:,.0f} decisions/s at batch {best['batch']} "
          f"(target >= 300,000: {'met' if best['decisions_s'] >= 300_000 else 'NOT met'})")
    if single is not None:
        print(f"batch 1: {single['decisions_s']:,.0f} decisions/s (target >= 3,000: "
              f"{'met' if single['decisions_s'] >= 3_000 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

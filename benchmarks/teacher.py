"""Rollout comparisons per CPU-second: the Python rules bot against its compiled copy.

    python benchmarks/teacher.py [--deals 128] [--rules mil] [--repeats 2]

Runs ``sichuan_agents.training.rollout_teacher.generate`` on the same ``--deals`` deals (seed 7)
with the Python rules bot playing the deals and the play-outs, and with ``compiled=True``
(its compiled copy, ``sichuan_agents.search.rollout``), after a small warm-up of each that
compiles; checks that both give the same samples and prints samples per CPU-second of
each repeat and their ratio. Default sampling (``sample_prob`` 0.06, ``claim_prob`` 0.5).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sichuan_agents.training.rollout_teacher import generate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Rollout comparisons per CPU-second.")
    p.add_argument("--deals", type=int, default=128)
    p.add_argument("--rules", default="mil")
    p.add_argument("--repeats", type=int, default=2)
    a = p.parse_args(argv)
    if a.deals < 1 or a.repeats < 1:
        print("error: --deals and --repeats must be >= 1", file=sys.stderr)
        return 2
    for compiled in (False, True):  # warm-up: compile the kernels
        generate(2, 1, a.rules, compiled=compiled)
    for r in range(a.repeats):
        rates = {}
        for compiled in (False, True):
            cpu = time.process_time()
            data = generate(a.deals, 7, a.rules, compiled=compiled)
            spent = time.process_time() - cpu
            n = data["returns"].shape[0]
            rates[compiled] = (n / spent, data)
            print(f"repeat {r + 1}, {'compiled' if compiled else 'python  '}: {n} samples in "
                  f"{spent:.1f} CPU s, {n / spent:,.0f} per CPU-second", flush=True)
        same = all(np.array_equal(rates[False][1][k], rates[True][1][k], equal_nan=True)
                   for k in rates[False][1])
        print(f"repeat {r + 1}: compiled / python = {rates[True][0] / rates[False][0]:.1f}; "
              f"the same samples: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cost of paired-deal rewards: env steps per second with ``reference="rules"`` against the
plain env.

    python benchmarks/paired.py [--seconds 4] [--tables 1 256] [--opponents random greedy]

For each opponent set and table count, :class:`~sichuan_env.envs.vector.SichuanVecEnv` (learner
seat 0, random learner actions from the masks) is stepped without a reference and with
``reference="rules"`` (the reference's deals played from the deal-start copies: in the
compiled loop when the opponents are built-in bots). The columns are learner steps per
second of each and the cost per step of the paired env as a multiple of the plain env's
(the target is at most 2x). Measurements alternate between the two envs in short windows
and keep the best of each (``--clock cpu``, the default: this process's CPU time, which a
machine shared with other work disturbs less than the wall clock); the load average is
printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sichuan_env.envs.vector import SichuanVecEnv  # noqa: E402


def _runner(tables: int, opponents: str, reference: str | None):
    env = SichuanVecEnv(tables, opponents=opponents, seed=0, reference=reference)
    env.reset()
    rng = np.random.default_rng(0)

    def run() -> int:
        m = env.action_masks()
        u = rng.random(m.shape, dtype=np.float32)
        env.step(np.where(m, u, -1.0).argmax(1))
        return env.num_envs

    run()  # compiles what it needs
    return run


def paired_rates(tables: int, opponents: str, seconds: float, clock) -> tuple[float, float]:
    """(plain, paired) learner steps per second, best windows, alternating."""
    runs = [_runner(tables, opponents, None), _runner(tables, opponents, "rules")]
    best = [0.0, 0.0]
    windows = 6
    for w in range(2 * windows):
        k = w % 2
        t0 = clock()
        done = 0
        while (dt := clock() - t0) < seconds / windows:
            done += runs[k]()
        best[k] = max(best[k], done / dt)
    return best[0], best[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=4.0, help="time per env (4)")
    ap.add_argument("--tables", type=int, nargs="+", default=[1, 256])
    ap.add_argument("--opponents", nargs="+", default=["random", "greedy", "rules"])
    ap.add_argument("--clock", choices=["wall", "cpu"], default="cpu")
    a = ap.parse_args(argv)
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    print(f"load average {os.getloadavg()[0]:.2f}; {a.clock} clock; learner steps/s")
    print(f"{'opponents':>10} {'tables':>7} {'plain':>10} {'paired':>10} {'cost':>6}")
    for opp in a.opponents:
        for t in a.tables:
            plain, paired = paired_rates(t, opp, a.seconds, clock)
            print(f"{opp:>10} {t:>7} {plain:>10,.0f} {paired:>10,.0f} "
                  f"{plain / paired:>5.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

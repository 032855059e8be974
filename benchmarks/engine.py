"""Engine throughput under uniformly random legal play, and first-use compile time.

    python benchmarks/engine.py [--seconds 3] [--rules mil] [--batches 1,64,1024,4096]
                                [--threads 2] [--no-compile]

For each batch size: a uniformly random legal action per table (chosen by a small compiled
function from ``state.legal_action_mask``, so that the agent costs next to nothing) and
``step(state, actions, inplace=True, autoreset=True)`` (legality checked, the default) in a
loop for a fixed time after a short warm-up, all in this one process. One extra line
measures ``validate=False`` at batch 1024; with ``--threads N`` (N > 1) the batches of
``engine.PARALLEL_MIN_TABLES`` tables or more are measured again on N threads
(``engine.set_threads``; on a machine whose cores are busy with other work, threads make
the step slower, see its docstring). Reported:

* decisions/s: table decisions applied per second (batch size x steps/s; with auto-reset
  every table always has a decision to make); ``cpu decisions/s`` divides by the process's
  CPU time instead of the wall time (steadier on a shared machine; for the batches that
  step on several threads it adds up the threads' time);
* deals/s: deals finished per second;
* bytes/table: ``state.nbytes_per_table()``.

Then, unless ``--no-compile``: the wall time of a fresh process that imports
``sichuan_env`` and makes its first ``reset`` + ``step`` with an empty cache folder
(``SICHUAN_ENV_CACHE``: hand tables and compiled kernels built), and again with that cache.

Targets (issue 10, quiet machine): 1 table >= 150,000 decisions/s; best batch >=
2,500,000 decisions/s; first import + first step in a fresh cache under 60 s, afterwards
under 2 s. The script also runs an older engine (one without ``legal_action_mask``:
it then uses ``legal_mask`` + ``step(mask=m, validate=False)``), for side-by-side ratios.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.jit import njit
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import State

HAS_MASK_IN_STATE = "legal_action_mask" in State._fields
TARGET_ONE = 150_000
TARGET_BEST = 2_500_000
TARGET_FIRST_S = 60.0
TARGET_LATER_S = 2.0


@njit
def _random_legal(mask, u, out):
    """A uniformly random legal action per row of ``mask`` (0 for a row with none)."""
    for t in range(mask.shape[0]):
        n = 0
        for a in range(mask.shape[1]):
            n += mask[t, a]
        pick = int(u[t] * n)
        out[t] = 0
        for a in range(mask.shape[1]):
            if mask[t, a]:
                if pick == 0:
                    out[t] = a
                    break
                pick -= 1


def run(batch: int, seconds: float, rules: str, *, validate: bool = True,
        seed: int = 0) -> dict[str, float]:
    """Random play on ``batch`` tables for about ``seconds``; returns the rates."""
    st = engine.reset(np.arange(batch) + seed * 1_000_000, get_rules(rules))
    rng = np.random.default_rng(seed)
    actions = np.zeros(batch, np.int64)

    def one_step(st):
        u = rng.random(batch)
        if HAS_MASK_IN_STATE:
            _random_legal(st.legal_action_mask, u, actions)
            return engine.step(st, actions, inplace=True, autoreset=True, validate=validate)
        m = engine.legal_mask(st)
        _random_legal(m, u, actions)
        return engine.step(st, actions, inplace=True, mask=m, autoreset=True,
                           validate=validate)

    warm_until = time.perf_counter() + min(0.5, seconds / 4)
    while time.perf_counter() < warm_until:
        st, _, _ = one_step(st)
    steps = deals = 0
    t0 = time.perf_counter()
    c0 = time.process_time()
    end = t0 + seconds
    while True:
        st, _, done = one_step(st)
        steps += 1
        deals += int(done.sum())
        if steps % 8 == 0 and time.perf_counter() >= end:
            break
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {
        "batch": batch,
        "decisions_s": steps * batch / dt,
        "cpu_decisions_s": steps * batch / max(cpu, 1e-9),
        "deals_s": deals / dt,
        "bytes_table": st.nbytes_per_table(),
        "seconds": dt,
    }


_FIRST_STEP = (
    "import sichuan_env\n"
    "from sichuan_env.core import engine\n"
    "st = engine.reset([0])\n"
    "engine.step(st, [int(st.legal_action_mask[0].nonzero()[0][0])])\n"
)


def first_use_seconds() -> tuple[float, float, float, float]:
    """Seconds of import + first reset/step in a fresh process, with an empty cache folder
    and then again with the cache it left: (wall, CPU) of the first, (wall, CPU) of the
    second. CPU seconds (user + system of the child) hardly depend on the machine's load."""
    times = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, SICHUAN_ENV_CACHE=cache)
        env.pop("NUMBA_CACHE_DIR", None)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(engine.__file__).parents[1]), env.get("PYTHONPATH", "")])
        for _ in range(2):
            t0 = time.perf_counter()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", _FIRST_STEP], env=env, check=True)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
            times += [time.perf_counter() - t0, cpu]
    return times[0], times[1], times[2], times[3]


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=3.0, help="measured time per line")
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--batches", default="1,64,1024,4096")
    p.add_argument("--threads", type=int, default=1,
                   help="also measure the large batches on this many threads")
    p.add_argument("--no-compile", action="store_true", help="skip the first-use timing")
    args = p.parse_args(argv)
    if args.threads > 1 and not hasattr(engine, "set_threads"):
        print("this engine has no set_threads: --threads ignored")
        args.threads = 1
    batches = [int(x) for x in args.batches.split(",") if x]
    print(f"engine benchmark ({engine.__file__}): uniformly random legal play, rules "
          f"{args.rules}, {args.seconds:g} s per line, step(inplace=True, autoreset=True)")
    header = (f"{'batch':>6} {'threads':>7} {'validate':>8} {'decisions/s':>12} "
              f"{'cpu decisions/s':>15} {'deals/s':>9} {'bytes/table':>11}")
    print(header)
    print("-" * len(header))
    results = []
    lines = [(b, True, 1) for b in batches] + [(1024, False, 1)]
    if args.threads > 1:
        lines += [(b, True, args.threads) for b in batches if b >= engine.PARALLEL_MIN_TABLES]
    for b, validate, threads in lines:
        if threads > 1 or hasattr(engine, "set_threads"):
            engine.set_threads(threads)
        try:
            r = run(b, args.seconds, args.rules, validate=validate)
        finally:
            if threads > 1:
                engine.set_threads(1)
        results.append((r, validate))
        print(f"{b:>6} {threads:>7} {str(validate):>8} {r['decisions_s']:>12,.0f} "
              f"{r['cpu_decisions_s']:>15,.0f} {r['deals_s']:>9,.1f} {r['bytes_table']:>11,}")
        sys.stdout.flush()
    checked = [r for r, v in results if v]
    best = max(checked, key=lambda r: r["decisions_s"])
    print(f"best batch: {best['decisions_s']:,.0f} decisions/s at batch {best['batch']} "
          f"(target >= {TARGET_BEST:,}: {_met(best['decisions_s'] >= TARGET_BEST)})")
    single = next((r for r in checked if r["batch"] == 1), None)
    if single is not None:
        print(f"1 table: {single['decisions_s']:,.0f} decisions/s (target >= {TARGET_ONE:,}: "
              f"{_met(single['decisions_s'] >= TARGET_ONE)})")
    if not args.no_compile:
        first, first_cpu, later, later_cpu = first_use_seconds()
        print(f"first import + first step, fresh cache: {first:.1f} s ({first_cpu:.1f} s CPU; "
              f"target < {TARGET_FIRST_S:g} s: {_met(first < TARGET_FIRST_S)}); afterwards: "
              f"{later:.1f} s ({later_cpu:.1f} s CPU; target < {TARGET_LATER_S:g} s: "
              f"{_met(later < TARGET_LATER_S)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

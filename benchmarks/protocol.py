"""Decisions per second over the bot protocol (sichuan-bot/1) against the agent in process.

    python benchmarks/protocol.py [--deals 128] [--rules mil] [--c-bot]

One agent plays all four seats of ``--deals`` deals (seeds 7,000,000 + i), with 1 table
and with 64 tables at a time (``exec:...?tables=64``: 64 requests in flight to one
process). Rows: ``rules`` in process; ``exec:python -m sichuan_env.seats.bot_server rules``
(the same bot behind the protocol: the cost of the protocol itself); the C reference bot
(examples/bots/simple_bot.c, built with ``cc -O2`` into a temporary folder) and the
JavaScript one when ``node`` is there.

Two rates per row: ``wall`` (decisions per second of elapsed time: what a run sees, on a
shared machine it moves with the load) and ``1 core`` (decisions per CPU second of the
arena process and the bot process together, from ``time.process_time`` and
``/proc/PID/stat``: the rate if both shared one core; the figure the targets are stated
in). ``ratio`` is a row's ``1 core`` rate over in-process ``rules`` at the same tables.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, as the other benchmarks


def _child_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a running process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(spec: str, deals: int, tables: int, rules: str) -> tuple[int, float, float]:
    """(decisions, wall seconds, CPU seconds of this process and the bot's) for ``spec``
    playing every seat of ``deals`` deals, ``tables`` at a time."""
    from sichuan_env.core import engine
    from sichuan_env.seats.agent import make_agent
    from sichuan_env.seats.driver import choose

    agent = make_agent(spec, seed=0, preset=rules)
    try:
        # warm-up: one batch of whole deals (start-up and compilation are not measured)
        st = engine.reset(np.arange(max(tables, 4)) + 6_000_000, rules)
        while not st.done.all():
            live = np.flatnonzero(~st.done)
            acts = np.zeros(st.batch_size, np.int64)
            acts[live] = choose(st, live, [agent])
            engine.step(st, acts, inplace=True)
        n = 0
        proc = getattr(agent, "proc", None)  # the program (after any restart)
        child0 = _child_cpu(proc.pid) if proc is not None else 0.0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for lo in range(0, deals, tables):
            st = engine.reset(np.arange(lo, min(deals, lo + tables)) + 7_000_000, rules)
            while not st.done.all():
                live = np.flatnonzero(~st.done)
                acts = np.zeros(st.batch_size, np.int64)
                acts[live] = choose(st, live, [agent])
                n += live.size
                engine.step(st, acts, inplace=True)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        if proc is not None:
            cpu += _child_cpu(proc.pid) - child0
        faults = getattr(agent, "fault_events", 0)
        if faults:
            raise RuntimeError(f"{spec}: {faults} faults during the benchmark")
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()
    return n, wall, cpu


def _machine() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), "")
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{model or platform.processor()}, {os.cpu_count()} cores, load {load:.1f}; "
            f"Python {platform.python_version()}, numpy {np.__version__}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=128, help="deals per row at 64 tables "
                   "(1 table plays an eighth of them)")
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    a = p.parse_args(argv)
    if a.deals < 8:
        p.error("--deals must be >= 8")
    specs = [("rules (in process)", "rules"),
             ("bot_server rules", f"exec:{sys.executable} -m sichuan_env.seats.bot_server rules")]
    tmp = tempfile.mkdtemp(prefix="protocol-bench-")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        exe = Path(tmp) / "simple_bot"
        subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "examples/bots/simple_bot.c")],
                       check=True)
        specs.append(("C reference bot", f"exec:{exe}"))
    node = shutil.which("node")
    if node:
        specs.append(("JS reference bot", f"exec:{node} {ROOT / 'examples/bots/simple_bot.js'}"))
    print(f"machine: {_machine()}")
    print(f"{'bot':<20}{'tables':>7}{'decisions':>11}{'wall/s':>10}{'1 core/s':>10}"
          f"{'ratio':>7}")
    try:
        for tables in (1, 64):
            deals = a.deals if tables == 64 else max(1, a.deals // 8)
            base = None
            for label, spec in specs:
                full = spec if spec == "rules" else f"{spec}?tables={tables}"
                n, wall, cpu = run(full, deals, tables, a.rules)
                rate = n / cpu
                base = base or rate
                print(f"{label:<20}{tables:>7}{n:>11,}{n / wall:>10,.0f}{rate:>10,.0f}"
                      f"{rate / base:>7.2f}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

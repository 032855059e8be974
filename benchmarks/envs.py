"""Throughput of the environments with random play.

    python benchmarks/envs.py [--seconds 3] [--tables 64 256 1024] [--clock wall|cpu] [--aec]

Rows:

* ``engine`` (reference): ``legal_mask`` + ``step`` of the batched engine, random actions,
  batch 1 and 1024 (decisions per second; ``benchmarks/engine.py`` has the details);
* ``encode``: the observation planes alone (``observation.encode``), batch 1 and 1024
  (observations per second); ``analysis`` the PPO analysis planes of
  ``sichuan_agents.training.features``
  computed from 1024 observations (rows per second);
* ``aec``: the PettingZoo AEC env (``env()`` with its wrappers and ``raw_env``), one table,
  a loop of ``last()`` + ``step`` with random legal actions picked by ``random.choice``
  from ``info["legal_moves"]`` (decisions per second, every seat's decisions counted),
  deals from consecutive seeds; ``aec env() np`` the same with a numpy player
  (``np.flatnonzero`` of the observation's mask, a numpy generator);
* ``plain Python``: the naive implementation of ``benchmarks/plain_python.py`` (the rules'
  decision flow with lists and a recursive Hu check), random play, in its two modes:
  ``plain Python+obs`` also builds, in plain Python, each decision's observation planes and action
  mask (what ``env()`` returns to the acting agent: the fair yardstick), ``plain Python``
  (rules only) builds none. The ``aec env()`` row gives its rate as a multiple of each
  (its target is 4x the ``+obs`` one), measured in the same sitting;
* ``single``: :class:`SichuanSingleEnv`, learner seat 0, random opponents (learner steps
  per second; each includes the opponents' moves);
* ``vector``: :class:`SichuanVecEnv` with random opponents (the built-in ``RandomAgent``,
  so its compiled rounds: ``sichuan_env.envs.random_rounds``), random learner actions from the
  masks, ``num_tables`` tables, learner seat 0 (``num_envs = tables``)
  and all four seats (``num_envs = 4 * tables``); learner steps per second
  (``num_envs`` per ``step``), observations included; ``vector+analysis`` the same
  wrapped in ``AnalysisVecEnv`` (what ``train.py`` trains on by default).

The ``target`` column gives the targets of issue 10 on the 2-core reference machine with
nothing else running: PettingZoo ``env()`` >= 25,000 decisions/s (observation included),
``raw_env`` higher; the SB3 VecEnv at 1024 tables >= 200,000 learner steps/s (engine
targets: see ``benchmarks/engine.py``). Timings are best-of-3 windows to damp noise from
other processes; the load average printed says how busy the machine was.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import plain_python  # noqa: E402
from sichuan_agents.training.features import AnalysisVecEnv, analysis_planes  # noqa: E402
from sichuan_env.core import engine  # noqa: E402
from sichuan_env.envs.aec import env as aec_env  # noqa: E402
from sichuan_env.envs.aec import raw_env  # noqa: E402
from sichuan_env.envs.gym_env import SichuanSingleEnv  # noqa: E402
from sichuan_env.envs.vector import SichuanVecEnv  # noqa: E402
from sichuan_env.seats.agent import RandomAgent  # noqa: E402
from sichuan_env.seats.observation import encode  # noqa: E402

CLOCK = time.perf_counter  # --clock cpu: time.process_time (this process's CPU time)


def rate(fn: Callable[[], int], seconds: float, windows: int = 3) -> float:
    """Best units/second of ``fn`` (returns units done per call) over a few windows."""
    best = 0.0
    clock = CLOCK
    for _ in range(windows):
        t0 = clock()
        done = 0
        while (dt := clock() - t0) < seconds / windows:
            done += fn()
        best = max(best, done / dt)
    return best


def bench_engine(batch: int, seconds: float) -> float:
    st = engine.reset(np.arange(batch))
    agent = RandomAgent(0)

    def run() -> int:
        nonlocal st
        m = st.legal_action_mask
        st, _, _ = engine.step(st, agent.act_batch(None, m), inplace=True, autoreset=True)
        return batch

    return rate(run, seconds)


def _played(batch: int, steps: int = 60) -> engine.State:
    st = engine.reset(np.arange(batch))
    agent = RandomAgent(0)
    for _ in range(steps):
        st, _, _ = engine.step(st, agent.act_batch(None, engine.legal_mask(st)),
                               autoreset=True)
    return st


def bench_encode(batch: int, seconds: float) -> float:
    st = _played(batch)
    seats = st.current.astype(np.intp)
    if batch == 1:
        seat = int(seats[0])
        return rate(lambda: encode(st, seat).shape[0], seconds)
    return rate(lambda: encode(st, seats).shape[0], seconds)


def bench_analysis(batch: int, seconds: float) -> float:
    st = _played(batch)
    obs = encode(st, st.current.astype(np.intp))
    return rate(lambda: analysis_planes(obs).shape[0], seconds)


def bench_aec(wrapped: bool, seconds: float, numpy_player: bool = False) -> float:
    """Decisions/s of the AEC loop; the player picks uniformly with ``random.choice``
    from ``info["legal_moves"]`` (as the plain-Python reference picks from its menu),
    or with ``numpy_player`` from ``np.flatnonzero(obs["action_mask"])`` and a numpy
    generator (the loop of earlier measurements; the player then costs more)."""
    e = aec_env() if wrapped else raw_env()
    rng = np.random.default_rng(0)
    pick = random.Random(0)
    e.reset(seed=0)
    seed = [0]

    def run() -> int:
        n = 0
        for _ in range(200):
            if not e.agents:
                seed[0] += 1
                e.reset(seed=seed[0])
            obs, _, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            if numpy_player:
                legal = np.flatnonzero(obs["action_mask"])
                e.step(int(legal[rng.integers(legal.size)]))
            else:
                e.step(pick.choice(info["legal_moves"]))
            n += 1
        return n

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rate(run, seconds)


def bench_single(seconds: float) -> float:
    e = SichuanSingleEnv(learner_seat=0, opponents=RandomAgent(1))
    rng = np.random.default_rng(0)
    e.reset(seed=0)

    def run() -> int:
        mask = e.action_masks()
        legal = np.flatnonzero(mask)
        _, _, term, _, _ = e.step(int(legal[rng.integers(legal.size)]))
        if term:
            e.reset()
        return 1

    return rate(run, seconds)


def bench_vector(tables: int, seats: tuple[int, ...], seconds: float,
                 analysis: bool = False) -> float:
    venv = SichuanVecEnv(tables, learner_seats=seats, opponents=RandomAgent(1), seed=0)
    if analysis:
        venv = AnalysisVecEnv(venv)
    venv.reset()
    learner = RandomAgent(2)
    for _ in range(3):  # warm up past the synchronised start
        venv.step(learner.act_batch(None, venv.action_masks()))

    def run() -> int:
        venv.step(learner.act_batch(None, venv.action_masks()))
        return venv.num_envs

    return rate(run, seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    ap.add_argument("--tables", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall: elapsed time (default); cpu: this process's CPU time, "
                         "steadier on a machine shared with other work")
    ap.add_argument("--aec", action="store_true",
                    help="only the one-table rows: AEC env(), raw_env, plain Python (both modes)")
    args = ap.parse_args()
    if args.seconds <= 0 or any(t < 1 for t in args.tables):
        ap.error("--seconds must be > 0 and --tables >= 1")
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    s = args.seconds
    rows: list[tuple[str, str, int, int, float, str, str]] = []
    if args.aec:
        args.tables = []
    else:
        rows.append(("engine", "-", 1, 1, bench_engine(1, s), "decisions/s", ""))
    if not args.aec:
        rows.append(("engine", "-", 1024, 1024, bench_engine(1024, s), "decisions/s", ""))
        rows.append(("encode", "-", 1, 1, bench_encode(1, s), "observations/s", ""))
        rows.append(("encode", "-", 1024, 1024, bench_encode(1024, s), "observations/s", ""))
        rows.append(("analysis", "-", 1024, 1024, bench_analysis(1024, s), "rows/s", ""))
    env_rate = bench_aec(True, s)
    plain_obs = max(plain_python.rate(s / 3, CLOCK, observe=True)[0] for _ in range(3))
    plain = max(plain_python.rate(s / 3, CLOCK)[0] for _ in range(3))
    rows.append(("aec env()", "all", 1, 1, env_rate, "decisions/s",
                 f">= 4x plain Python + obs (now {env_rate / plain_obs:.1f}x; "
                 f"{env_rate / plain:.1f}x rules only)"))
    rows.append(("aec raw_env", "all", 1, 1, bench_aec(False, s), "decisions/s",
                 f"> env() ({env_rate:,.0f})"))
    rows.append(("aec env() np", "all", 1, 1, bench_aec(True, s, numpy_player=True),
                 "decisions/s", "(env() with the numpy player)"))
    rows.append(("plain Python+obs", "all", 1, 1, plain_obs, "decisions/s",
                 "(reference: rules, observation, mask)"))
    rows.append(("plain Python", "all", 1, 1, plain, "decisions/s",
                 "(reference: rules only)"))
    if not args.aec:
        rows.append(("single", "0", 1, 1, bench_single(s), "learner steps/s", ""))
    for t in args.tables:
        target = ">= 200,000" if t == 1024 else ""
        rows.append(("vector", "0", t, t, bench_vector(t, (0,), s), "learner steps/s", ""))
        rows.append(("vector", "0,1,2,3", t, 4 * t, bench_vector(t, (0, 1, 2, 3), s),
                     "learner steps/s", target))
        if t == max(args.tables):
            rows.append(("vector+analysis", "0,1,2,3", t, 4 * t,
                         bench_vector(t, (0, 1, 2, 3), s, analysis=True), "learner steps/s",
                         ""))
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}, "
          f"clock {args.clock}")
    print("num_tables = the constructor argument; batch = tables stepped together "
          "(= num_envs for the VecEnv)")
    print(f"{'env':<16} {'learner':<8} {'num_tables':>10} {'batch':>6} {'rate':>10}  "
          f"{'unit':<16} target")
    print("-" * 88)
    for name, seats, t, batch, r, unit, target in rows:
        print(f"{name:<16} {seats:<8} {t:>10} {batch:>6} {r:>10,.0f}  {unit:<16} {target}")


if __name__ == "__main__":
    main()

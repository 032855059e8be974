"""The arena: many deals between four agents on the batched engine, with statistics.

Command line::

    python -m sichuan_agents.arena --seats rules,greedy,random,random --deals 20000 --duplicate \\
        --seed 1 --rules mil --out results.json [--records deals.jsonl [--legal]] \\
        [--tables 1024]

Seats are agent specs for :func:`sichuan_env.seats.agent.make_agent`: ``random``, ``greedy``,
``rules``, ``fitted``, ``ppo``, ``best`` (shipped models: docs/models.md), ``ppo:PATH``,
names registered by installed packages, import paths ``package.module:ClassName`` or
``path/to/file.py:ClassName``, each optionally with ``?key=value&...`` arguments
(``tests/data/mybot.py:MyBot?prefer=low``). A spec that does not resolve to a legal agent,
or an output path that cannot be written, stops the command before the first deal with one
line on stderr and exit status 2.

Python::

    res = run_arena(["rules", "greedy", "greedy", "greedy"], deals=20000, seed=1)
    res.stats["rules"]["mean"], res.pairwise("rules", "greedy")

**Play.** ``tables`` deals run at once on one batched state. Each step, every agent gets
one ``act_batch(inputs, masks)`` call with all the tables where a seat it plays is to
decide, through :mod:`sichuan_env.seats.driver` (inputs as the agent's ``needs`` says: planes
from :func:`sichuan_env.seats.observation.encode`, a seat view, or the placeholder; one
legality check). A finished table is refilled with the next deal at once. Seat 0 deals
every deal (one deal per match).

**Duplicate mode.** Each wall (``seed`` and wall number ``w`` give the engine seed
``seed * 10_000_000 + w``, :func:`sichuan_env.core.seeding.arena_wall_seed`) is dealt four
times with the seat list rotated by ``r = 0..3``: seat ``s`` is played by
``seats[(s - r) % 4]``. So every agent plays every seat, the dealer's included, on every
wall, and the luck of the tiles cancels out in
comparisons. ``deals`` counts played deals (four per wall; rounded up to a multiple of
4). Without duplicate mode every deal has its own wall and the seats stay as given.

**Statistics.** Per agent (agents with the same spec string are one agent): mean points
per deal with a 95% confidence interval, Hu rate, self-drawn rate, deal-in rate (share
of its deals in which it paid a Hu on its own discard or robbed kong), average winning
hand value (points without the self-draw bonus), flower-pig rate, kong points (kong
income kept per deal, after refunds). The confidence interval treats the *unit* as
independent: a wall in duplicate mode (the agent's average over all its seatings on that
wall: the four rotations of one wall are correlated and are averaged first), a deal
otherwise. With ``x_1..x_n`` the unit averages, ``mean +- z * s / sqrt(n)`` where
``s`` is the sample standard deviation (ddof 1) and ``z = 1.959964`` the normal 0.975
quantile (with the thousands of walls used here the t quantile differs by < 0.1%).
``pairwise(a, b)`` does the same with the per-unit differences ``x_a - x_b``.

**Records.** ``--records FILE.jsonl`` writes the first ``--record-deals`` deals as game
records (``sichuan-record/1``): their actions are logged during play, replayed through
:class:`sichuan_env.records.game.Game` (same seed, same actions) and the replayed scores are
checked against the arena's. ``--legal`` also writes each event's legal options (the
``legal`` lists of the format, as ``python -m sichuan_env.records.selfplay --legal`` does), so
that another program can check the menus of bot-played deals.

**Bots of others** (``exec:`` programs, docs/protocol.md). No process of a bot is asked
about two seats of one deal; ``isolate_walls`` (``--isolate-walls``) also keeps every
process to one deal per wall, so no process sees two rotations of a duplicate wall.
``claim_window`` (``--claim-window SECONDS``) paces every table: a turn decision is asked
no sooner than that long after the table's previous turn decision was answered, so the
time between a bot's requests does not show whether another seat was offered a claim in
between (as long as the claims of one discard take less than the window).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import ARENA_SEED_STRIDE, arena_wall_seed
from sichuan_env.core.state import END_WALL, PHASE_NAMES
from sichuan_env.seats.agent import agents_help, seat_agents, spec_name
from sichuan_env.seats.driver import play_step

TURN = PHASE_NAMES.index("turn")

Z95 = 1.959963984540054  # NormalDist().inv_cdf(0.975)
SEED_STRIDE = ARENA_SEED_STRIDE
#: The statistics of points, null in the results of a dropped bot.
_POINT_FIELDS = ("mean", "ci_low", "ci_high", "ci_half_width", "sd_unit")
STAT_FIELDS = (
    "mean", "ci_low", "ci_high", "ci_half_width", "sd_unit", "units", "seat_deals",
    "hu_rate", "self_drawn_rate", "deal_in_rate", "avg_win_value", "flower_pig_rate",
    "kong_points",
)


def limit_blas_threads(n: int = 1) -> bool:
    """Set OpenBLAS (numpy's matmul) to ``n`` threads in this process. The bots' and the
    hand tables' small matmuls run ~35% faster single-threaded, and workers must not
    fight over the cores. Returns False when no OpenBLAS library is found."""
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "openblas" in line.lower()}
    except OSError:
        return False
    done = False
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
                    "openblas_set_num_threads64_", "scipy_openblas_set_num_threads"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn(int(n))
                done = True
                break
    return done


#: Engine seed of wall number ``wall`` of an arena run with ``seed`` (docs/seeding.md).
wall_seed = arena_wall_seed


def mean_ci(x: np.ndarray, z: float = Z95) -> tuple[float, float, float]:
    """(mean, half width, sample sd) of independent units ``x``: mean +- z * s / sqrt(n)."""
    x = np.asarray(x, np.float64)
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    if n == 1:
        return m, math.inf, math.nan
    sd = float(x.std(ddof=1))
    return m, z * sd / math.sqrt(n), sd


@dataclass
class ArenaResult:
    """Per-deal outcomes and the derived statistics of an arena run.

    Arrays over deals ``d`` and seats ``s``: ``agent[d, s]`` (index into ``names``),
    ``points``, ``hu``, ``self_drawn``, ``deal_ins`` (Hu windows won on its discards),
    ``win_value`` (sum of its winning hand values), ``pig`` and ``kong`` (kong income
    kept); ``unit[d]`` the wall (duplicate) or deal number; ``rotation[d]``.
    """

    names: list[str]
    seats: list[str]
    duplicate: bool
    seed: int
    rules: Rules
    tables: int
    agent: np.ndarray
    unit: np.ndarray
    rotation: np.ndarray
    seeds: np.ndarray
    points: np.ndarray
    hu: np.ndarray
    self_drawn: np.ndarray
    deal_ins: np.ndarray
    win_value: np.ndarray
    pig: np.ndarray
    kong: np.ndarray
    end_reason: np.ndarray
    seconds: float = 0.0
    command: str = ""
    workers: int = 1
    stats: dict[str, dict[str, float]] = field(default_factory=dict)
    #: per ``exec:`` bot (by name): timing, faults (each with its ``deal`` and
    #: ``decision``: the deal's decision number, from 0), restarts, drop
    #: (:meth:`sichuan_env.seats.exec_agent.ExecAgent.report`)
    bots: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: with ``run_arena(keep_logs=True)``: every deal's actions (deal -> list)
    logs: dict[int, list[int]] | None = None
    #: the run's first wall (``run_arena(first_wall=...)``): unit ``u`` is wall
    #: ``first_wall + u`` of ``seed``
    first_wall: int = 0

    def __post_init__(self) -> None:
        self.stats = {name: self._agent_stats(i) for i, name in enumerate(self.names)}

    @property
    def deals(self) -> int:
        return int(self.points.shape[0])

    @property
    def deals_per_second(self) -> float:
        return self.deals / self.seconds if self.seconds > 0 else math.nan

    def _index(self, name: str) -> int:
        if name not in self.names:
            raise KeyError(f"no agent {name!r} in this result; agents: {self.names}")
        return self.names.index(name)

    def unit_means(self, name: str, values: np.ndarray | None = None) -> np.ndarray:
        """(units,) the agent's average of ``values`` (default points) per unit; NaN for
        units where it did not play."""
        i = self._index(name)
        vals = self.points if values is None else values
        sel = (self.agent == i).astype(np.float64)
        n_units = int(self.unit.max()) + 1 if self.unit.size else 0
        tot = np.bincount(self.unit, weights=(vals * sel).sum(1), minlength=n_units)
        cnt = np.bincount(self.unit, weights=sel.sum(1), minlength=n_units)
        with np.errstate(invalid="ignore", divide="ignore"):
            return tot / cnt

    def _agent_stats(self, i: int) -> dict[str, float]:
        name = self.names[i]
        sel = self.agent == i
        n = int(sel.sum())
        x = self.unit_means(name)
        x = x[~np.isnan(x)]
        m, half, sd = mean_ci(x)
        wins = float(self.hu[sel].sum())
        return {
            "mean": m,
            "ci_low": m - half,
            "ci_high": m + half,
            "ci_half_width": half,
            "sd_unit": sd,
            "units": int(x.size),
            "seat_deals": n,
            "hu_rate": float(self.hu[sel].mean()) if n else math.nan,
            "self_drawn_rate": float(self.self_drawn[sel].mean()) if n else math.nan,
            "deal_in_rate": float((self.deal_ins[sel] > 0).mean()) if n else math.nan,
            "avg_win_value": float(self.win_value[sel].sum() / wins) if wins else math.nan,
            "flower_pig_rate": float(self.pig[sel].mean()) if n else math.nan,
            "kong_points": float(self.kong[sel].mean()) if n else math.nan,
        }

    def pairwise(self, a: str, b: str) -> dict[str, float]:
        """Mean difference of points per deal ``a - b`` with its 95% CI over the units
        (walls in duplicate mode) where both played."""
        d = self.unit_means(a) - self.unit_means(b)
        d = d[~np.isnan(d)]
        m, half, sd = mean_ci(d)
        return {"a": a, "b": b, "mean": m, "ci_low": m - half, "ci_high": m + half,
                "ci_half_width": half, "sd_unit": sd, "units": int(d.size)}

    def dropped(self, name: str) -> str | None:
        """Why the ``exec:`` bot ``name`` was dropped from the run (its fallback played
        the rest: its points are then no measure of the bot), else None."""
        return (self.bots.get(name) or {}).get("dropped")

    def to_dict(self) -> dict[str, Any]:
        """The results JSON; a dropped bot's points (and its pairs) are null, with
        ``dropped`` saying why."""
        pairs = []
        for i, a in enumerate(self.names):
            for b in self.names[i + 1:]:
                pair = self.pairwise(a, b)
                if self.dropped(a) or self.dropped(b):
                    pair = {k: (v if k in ("a", "b", "units") else None)
                            for k, v in pair.items()}
                    pair["dropped"] = True
                pairs.append(pair)
        agents = {}
        for name, st in self.stats.items():
            if self.dropped(name):
                st = {k: (None if k in _POINT_FIELDS else v) for k, v in st.items()}
                st["dropped"] = self.dropped(name)
            agents[name] = st
        return {
            "command": self.command,
            "seats": self.seats,
            "agents": agents,
            "pairwise": pairs,
            "deals": self.deals,
            "units": int(self.unit.max()) + 1 if self.unit.size else 0,
            "duplicate": self.duplicate,
            "seed": self.seed,
            **({"first_wall": self.first_wall} if self.first_wall else {}),
            "rules": self.rules.to_dict(),
            "tables": self.tables,
            "workers": self.workers,
            "seconds": self.seconds,
            "deals_per_second": self.deals_per_second,
            "ci": "95% normal: mean +- 1.959964 * sd(unit means, ddof=1) / sqrt(units); "
                  "unit = wall (duplicate) or deal",
            "end_reasons": {"three_hu": int((self.end_reason == 1).sum()),
                            "wall_exhausted": int((self.end_reason == END_WALL).sum())},
            **({"bots": self.bots} if self.bots else {}),
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(_jsonable(self.to_dict()), indent=2) + "\n")

    def table(self) -> str:
        """A plain-text summary, one line per agent and per pair."""
        w = max([12] + [len(n) + 2 for n in self.names])
        lines = [
            f"{self.deals} deals ({'duplicate, ' if self.duplicate else ''}"
            f"{self.stats[self.names[0]]['units']} units), rules {self.rules.preset}, "
            f"{self.seconds:.1f} s, {self.deals_per_second:.0f} deals/s, "
            f"{self.tables} tables, {self.workers} worker(s)",
            f"{'agent':<{w}}{'points/deal':>22}{'hu':>7}{'tsumo':>7}{'deal-in':>8}"
            f"{'win val':>8}{'pig':>7}{'kong':>7}",
        ]
        for name, s in self.stats.items():
            pts = ("dropped: not measured" if self.dropped(name)
                   else f"{s['mean']:+.3f} ± {s['ci_half_width']:.3f}")
            lines.append(
                f"{name:<{w}}{pts:>22}{s['hu_rate']:>7.3f}{s['self_drawn_rate']:>7.3f}"
                f"{s['deal_in_rate']:>8.3f}{s['avg_win_value']:>8.2f}"
                f"{s['flower_pig_rate']:>7.3f}{s['kong_points']:>7.2f}"
            )
        for i, a in enumerate(self.names):
            for b in self.names[i + 1:]:
                gone = [x for x in (a, b) if self.dropped(x)]
                if gone:
                    lines.append(f"{a} - {b}: not measured ({gone[0]} was dropped)")
                    continue
                p = self.pairwise(a, b)
                lines.append(f"{a} - {b}: {p['mean']:+.3f} ± {p['ci_half_width']:.3f} "
                             f"[{p['ci_low']:+.3f}, {p['ci_high']:+.3f}]")
        return "\n".join(lines)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, float | np.floating):
        x = float(x)
        return x if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


# ----------------------------------------------------------------------------- running


_agent_name = spec_name


def _make_agents(agents: Sequence[Any], seed: int, salt: int = 0, preset: str | None = None):
    """(names, agents, seat -> agent index) of the four seats: equal names are one agent,
    seeded by :func:`sichuan_env.core.seeding.agent_seed` (through
    :func:`sichuan_env.seats.agent.seat_agents`)."""
    built = seat_agents(agents, seed, preset, salt=salt, key=spec_name)
    return built.names, built.agents, built.seat_agent


def run_arena(
    agents: Sequence[Any],
    deals: int,
    duplicate: bool = True,
    seed: int = 1,
    rules: Rules | str | None = "mil",
    tables: int = 1024,
    *,
    workers: int = 1,
    progress: bool = False,
    records: str | Path | None = None,
    record_deals: int = 100,
    legal: bool = False,
    agent_seed: int | None = None,
    command: str = "",
    keep_logs: bool = False,
    address: str | None = None,
    isolate_walls: bool = False,
    claim_window: float = 0.0,
    first_wall: int = 0,
) -> ArenaResult:
    """Play ``deals`` deals between four agents (specs for :func:`make_agent` or agent
    objects; equal specs are one agent) and return their statistics.

    ``workers`` > 1 splits the walls over that many processes (agents given as specs
    only); the deals and their results are the same as with one worker, except for the
    random agents' own draws. ``address`` plays the slices as Ray tasks on that cluster
    (``auto``, ``HOST:PORT``; ``local``: a new local Ray instance), one slice per cluster
    CPU unless ``workers`` is given: the results are those of a local run with as many
    workers (:mod:`sichuan_agents.distributed`). ``records``: write the first ``record_deals``
    deals there as game records, with each event's legal options when ``legal``.
    ``keep_logs`` (one worker): keep every deal's actions in ``result.logs`` (for
    :func:`replay_records`). ``isolate_walls`` and ``claim_window``: see the module
    docstring (Bots of others). ``first_wall`` (duplicate mode): play walls
    ``first_wall``, ``first_wall + 1``, ... of ``seed``, so that a long run can be played
    in chunks whose walls are those of one run; the result's units count from 0."""
    if len(agents) != 4:
        raise ValueError(f"four seats are needed, got {len(agents)}")
    if deals < 1:
        raise ValueError("deals must be >= 1")
    rules = get_rules(rules)
    if not (isinstance(claim_window, int | float) and 0 <= claim_window <= 60):
        raise ValueError(f"claim_window must be 0..60 seconds, got {claim_window!r}")
    if not (isinstance(first_wall, int) and first_wall >= 0):
        raise ValueError(f"first_wall must be an int >= 0, got {first_wall!r}")
    if first_wall and not duplicate:
        raise ValueError("first_wall needs duplicate mode")
    aseed = seed if agent_seed is None else agent_seed
    names, objs, seat_agent = _make_agents(agents, aseed, preset=rules.preset)
    if isolate_walls:
        set_isolation(objs)
    if duplicate:
        n_units = -(-deals // 4)
        D = 4 * n_units
        unit = np.repeat(np.arange(n_units), 4)
        rot = np.tile(np.arange(4), n_units)
    else:
        D = deals
        unit = np.arange(D)
        rot = np.zeros(D, np.intp)
    seeds = np.array([wall_seed(seed, first_wall + w) for w in range(int(unit.max()) + 1)],
                     np.int64)[unit]
    deal_agent = seat_agent[(np.arange(4)[None, :] - rot[:, None]) % 4]  # (D, 4)
    T = max(1, min(int(tables), D))
    n_rec = min(int(record_deals), D) if records is not None else 0
    if keep_logs:
        if workers > 1 or address is not None:
            raise ValueError("keep_logs needs one local worker")
        n_rec = D
    desc = " vs ".join(_agent_name(a) for a in agents)
    if (workers > 1 or address is not None) and not all(isinstance(a, str) for a in agents):
        raise ValueError("workers > 1 and address need agents given as spec strings")
    t0 = time.perf_counter()
    started = False
    if address is not None:
        from sichuan_agents.distributed import cluster_cpus, start_ray

        started = start_ray(address, workers)
        if workers <= 1:  # one slice of walls per CPU of the cluster
            workers = cluster_cpus()
    workers = max(1, min(int(workers), -(-D // 4)))
    try:
        if workers == 1 and address is None:
            bots: dict[str, dict[str, Any]] = {}
            out, end_reason, logs = _play(objs, names, seeds, deal_agent, rules, T, n_rec,
                                          desc if progress else None, bots=bots,
                                          claim_window=float(claim_window))
        else:
            close_agents(objs, agents)  # each worker starts its own programs
            step = -(-D // (4 * workers)) * 4
            bounds = [(lo, min(D, lo + step)) for lo in range(0, D, step)]
            jobs = [(list(agents), aseed, k, seeds[lo:hi], deal_agent[lo:hi], rules, T,
                     n_rec if k == 0 else 0,
                     desc if (progress and k == 0 and address is None) else None,
                     float(claim_window), isolate_walls)
                    for k, (lo, hi) in enumerate(bounds)]
            if address is not None:  # Ray tasks, the results in the slices' order
                from sichuan_agents.distributed import ordered

                parts = ordered(_play_job, [(j,) for j in jobs], address=address,
                                workers=workers)
            else:
                import multiprocessing as mp

                with _worker_context(mp).Pool(len(jobs)) as pool:
                    parts = pool.map(_play_job, jobs)
            out = {k: np.concatenate([p[0][k] for p in parts]) for k in parts[0][0]}
            end_reason = np.concatenate([p[1] for p in parts])
            logs = parts[0][2]
            bots = merge_bot_reports([p[3] for p in parts], [lo for lo, _ in bounds])
    finally:
        close_agents(objs, agents)
        if started:
            import ray

            ray.shutdown()
    seconds = time.perf_counter() - t0
    res = ArenaResult(
        names=names, seats=[_agent_name(a) for a in agents], duplicate=duplicate,
        seed=seed, rules=rules, tables=T, agent=deal_agent, unit=unit, rotation=rot,
        seeds=seeds, end_reason=end_reason, seconds=seconds, command=command,
        workers=workers, points=out["points"], hu=out["hu"], self_drawn=out["self_drawn"],
        deal_ins=out["deal_ins"], win_value=out["win_value"], pig=out["pig"],
        kong=out["kong"], bots=bots, first_wall=first_wall,
    )
    if keep_logs:
        res.logs = logs
    if records is not None and n_rec:
        if keep_logs:
            logs = {d: logs[d] for d in range(min(int(record_deals), D))}
        write_records(res, logs, records, legal=legal)
    return res


def set_isolation(objs: Sequence[Any]) -> None:
    """Turn on ``isolate_walls`` for the agents that have it (``exec:`` bots)."""
    for obj in objs:
        if isinstance(getattr(obj, "isolate_walls", None), bool):
            obj.isolate_walls = True


def close_agents(objs: Sequence[Any], given: Sequence[Any]) -> None:
    """End the programs of the agents built here from specs (``exec:`` bots); agent
    objects the caller gave are the caller's to close."""
    for obj in objs:
        if obj not in given and callable(getattr(obj, "close", None)):
            obj.close()


def merge_bot_reports(parts: Sequence[dict[str, dict]], offsets: Sequence[int]
                      ) -> dict[str, dict]:
    """The ``exec:`` bot reports of several workers as one (deal numbers made global)."""
    merged: dict[str, dict] = {}
    for rep, lo in zip(parts, offsets, strict=True):
        for name, r in rep.items():
            for f in r["faults"]:
                if f.get("deal") is not None:
                    f["deal"] += lo
            if name not in merged:
                merged[name] = r
                continue
            m = merged[name]
            m["faults"] += r["faults"]
            m["fault_count"] += r["fault_count"]
            m["restarts"] += r["restarts"]
            m["processes"] = m.get("processes", 0) + r.get("processes", 0)
            m["dropped"] = m["dropped"] or r["dropped"]
            a, b = m["timing"], r["timing"]
            n = a["decisions"] + b["decisions"]
            if b["decisions"]:
                a["mean_s"] = ((a["mean_s"] or 0) * a["decisions"]
                               + b["mean_s"] * b["decisions"]) / n
                a["max_s"] = max(a["max_s"] or 0, b["max_s"])
            a["decisions"] = n
            a["over_limit"] += b["over_limit"]
    return merged


def _worker_context(mp: Any) -> Any:
    """Fork (quick) unless torch runs in this process: a forked child of a process whose
    torch thread pool has started can hang in its first forward pass, so workers of a
    process that loaded a network (a ``ppo`` seat) are spawned instead."""
    if "fork" in mp.get_all_start_methods() and "torch" not in sys.modules:
        return mp.get_context("fork")
    return mp.get_context("spawn")


def _play_job(job: tuple) -> tuple:
    agents, aseed, salt, seeds, deal_agent, rules, T, n_rec, desc, window, isolate = job
    limit_blas_threads(1)
    names, objs, _ = _make_agents(agents, aseed, salt, get_rules(rules).preset)
    if isolate:
        set_isolation(objs)
    bots: dict[str, dict[str, Any]] = {}
    try:
        return (*_play(objs, names, seeds, deal_agent, rules, T, n_rec, desc, bots=bots,
                       claim_window=window), bots)
    finally:
        close_agents(objs, ())


def _play(objs: list[Any], names: list[str], seeds: np.ndarray, deal_agent: np.ndarray,
          rules: Rules, T: int, n_rec: int, desc: str | None,
          bots: dict[str, dict[str, Any]] | None = None, claim_window: float = 0.0):
    """Play the deals ``seeds`` (agent indices ``deal_agent`` per seat) on T tables;
    ``bots`` (when given) receives the reports of ``exec:`` bots, by name. Agents with
    ``start_tables``/``end_tables`` (``exec:`` bots) are told which tables start a deal
    (and its wall: the engine seed) and which end one. ``claim_window`` > 0: a turn
    decision waits until that long after the table's previous turn decision."""
    D = seeds.size
    T = max(1, min(T, D))
    out = {k: np.zeros((D, 4), np.float64) for k in
           ("points", "hu", "self_drawn", "deal_ins", "win_value", "pig", "kong")}
    end_reason = np.zeros(D, np.int8)
    logs: dict[int, list[int]] = {d: [] for d in range(n_rec)}
    decisions = np.zeros(D, np.int64)  # decisions made so far per deal
    execs = [(k, o) for k, o in enumerate(objs) if callable(getattr(o, "take_faults", None))]
    tellers = [o for o in objs if callable(getattr(o, "start_tables", None))
               and callable(getattr(o, "end_tables", None))]
    st = engine.reset(seeds[:T], rules)
    slot = np.arange(T)  # deal of each slot, -1 idle
    for o in tellers:
        o.start_tables(slot, seeds[:T])
    paced = claim_window > 0
    turn_free = np.zeros(T)  # with claim_window: when each table may ask its next turn
    next_deal = T
    bar = None
    if desc is not None:
        from tqdm import tqdm

        bar = tqdm(total=D, unit="deal", desc=desc, file=sys.stderr)
    while True:
        if _INTERRUPTED.is_set():  # a Ctrl-C that a library's callback swallowed
            raise KeyboardInterrupt
        live = np.flatnonzero((slot >= 0) & ~st.done)
        if not live.size:
            break
        if paced:  # a turn waits for its table's window; claims go on meanwhile
            turn = st.phase[live] == TURN
            now = time.monotonic()
            ready = ~turn | (turn_free[live] <= now)
            if not ready.any():
                time.sleep(max(0.0, float(turn_free[live].min()) - now))
                continue
            live = live[ready]
            turn = turn[ready]
        who = deal_agent[slot[live], st.current[live]]
        actions, (st, _, done, info) = play_step(
            st, live, objs, who, names=names, info=True,
            table_label=lambda t: f"deal {int(slot[t])}")
        if paced:
            turn_free[live[turn]] = time.monotonic() + claim_window
        if n_rec:
            for t, a in zip(live.tolist(), actions.tolist(), strict=True):
                if slot[t] < n_rec:
                    logs[int(slot[t])].append(a)
        for _, obj in execs:  # faults of exec: bots: which deal and decision
            for f in obj.take_faults():
                t = f["table"]
                if t is not None:
                    f["deal"] = int(slot[t])
                    f["decision"] = int(decisions[slot[t]])
        decisions[slot[live]] += 1
        r, s = np.nonzero(info.win)  # the step's wins, one row per (table, winner)
        if r.size:
            d = slot[r]
            out["hu"][d, s] += 1
            out["win_value"][d, s] += info.win_value[r, s]
            self_drawn = info.win_from[r, s] < 0
            out["self_drawn"][d[self_drawn], s[self_drawn]] += 1
            # one deal-in per claim window won, charged to the discarder (kong declarer)
            payer = info.win_from.max(1)
            dealt_in = np.flatnonzero(payer >= 0)
            out["deal_ins"][slot[dealt_in], payer[dealt_in]] += 1
        fin = np.flatnonzero(done & (slot >= 0))
        if fin.size:
            d = slot[fin]
            out["points"][d] = st.scores[fin]
            end_reason[d] = st.end_reason[fin]
            out["kong"][d] = st.kong_income[fin].sum(1)
            wall_end = fin[st.end_reason[fin] == END_WALL]
            if wall_end.size:
                out["pig"][slot[wall_end]] = info.flower_pig[wall_end]
            for o in tellers:
                o.end_tables(fin)
            n_new = min(fin.size, D - next_deal)
            if n_new:
                refill = fin[:n_new]
                slot[refill] = np.arange(next_deal, next_deal + n_new)
                next_deal += n_new
                st.put_rows(refill, engine.reset(seeds[slot[refill]], rules))
                for o in tellers:
                    o.start_tables(refill, seeds[slot[refill]])
                turn_free[refill] = 0.0
            slot[fin[n_new:]] = -1
            if bar is not None:
                bar.update(fin.size)
    if bar is not None:
        bar.close()
    if bots is not None:
        for k, obj in execs:
            bots[names[k]] = obj.report()
    return out, end_reason, logs


def replay_records(res: ArenaResult, logs: dict[int, list[int]], *, legal: bool = False,
                   ) -> list[dict[str, Any]]:
    """Replay logged deals through :class:`sichuan_env.records.game.Game`; check the scores.
    ``legal``: keep each event's legal options in the records."""
    from sichuan_env.records.game import Game

    recs = []
    for d, acts in sorted(logs.items()):
        g = Game.new(int(res.seeds[d]), res.rules)
        for a in acts:
            g.play(int(a))
        rec = g.record(legal=legal)
        if not g.done or [int(x) for x in res.points[d]] != rec["scores"]:
            raise RuntimeError(f"replay of deal {d} does not match the arena's result")
        rec["arena"] = {
            "deal": d, "unit": int(res.unit[d]), "rotation": int(res.rotation[d]),
            "agents": [res.names[i] for i in res.agent[d]],
        }
        faults = [dict(f, bot=name) for name, r in res.bots.items() for f in r["faults"]
                  if f.get("deal") == d]
        if faults:
            rec["arena"]["faults"] = faults
        recs.append(rec)
    return recs


def write_records(res: ArenaResult, logs: dict[int, list[int]], path: str | Path, *,
                  legal: bool = False) -> None:
    """Write the logged deals' records, one JSON line each (see :func:`replay_records`)."""
    with open(path, "w") as f:
        for rec in replay_records(res, logs, legal=legal):
            f.write(json.dumps(rec) + "\n")


# ----------------------------------------------------------------------------- CLI


def prepare_output(path: str | Path | None) -> Path | None:
    """Check, before a run, that ``path`` can be written: create its folder, refuse a
    folder or an unwritable file. Raises ``ValueError`` saying what is wrong."""
    if path is None:
        return None
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"output path {path} is a folder, not a file")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"cannot create the folder of {path}: {err.strerror or err}") from None
    if not os.access(out.parent, os.W_OK | os.X_OK) or (out.exists() and
                                                           not os.access(out, os.W_OK)):
        raise ValueError(f"output path {path} is not writable")
    return out


def progress_available() -> bool:
    """Whether a progress bar can be shown (tqdm comes with the ``train`` extra)."""
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Numbers out of range: one line from argparse (``p.error``, exit status 2)."""
    for flag, value, low in (("--deals", args.deals, 1), ("--seed", args.seed, 0),
                             ("--tables", args.tables, 1), ("--workers", args.workers, 1),
                             ("--record-deals", args.record_deals, 0)):
        if value < low:
            p.error(f"{flag} must be >= {low}, got {value}")
    if args.legal and args.records is None:
        p.error("--legal writes legal options into records: give --records FILE.jsonl too")
    if getattr(args, "address", None) is not None:
        from sichuan_agents.distributed import address_problem

        problem = address_problem(args.address)
        if problem is not None:
            p.error(problem)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sichuan_agents.arena", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seats", required=True,
                   help=agents_help("four comma-separated agents"))
    p.add_argument("--deals", type=int, default=20000, help="deals to play (default 20000)")
    dup = p.add_mutually_exclusive_group()
    dup.add_argument("--duplicate", dest="duplicate", action="store_true", default=True,
                     help="play each wall four times with the seats rotated (default)")
    dup.add_argument("--no-duplicate", dest="duplicate", action="store_false")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rules", default="mil", help="rule preset: mil or mahjongsoft")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    p.add_argument("--records", default=None, help="write game records (JSON lines) here")
    p.add_argument("--record-deals", type=int, default=100,
                   help="how many deals (the first ones) to record (default 100)")
    p.add_argument("--legal", action="store_true",
                   help="with --records: write each event's legal options")
    p.add_argument("--tables", type=int, default=1024, help="tables played at once")
    p.add_argument("--workers", type=int, default=1,
                   help="processes sharing the walls (default 1; the machine has 2 cores)")
    p.add_argument("--address", default=None,
                   help="play the walls as Ray tasks on this cluster (auto or HOST:PORT), "
                        "one slice per CPU unless --workers is given; the results are a "
                        "local run's with as many workers")
    p.add_argument("--isolate-walls", action="store_true",
                   help="exec: bots: no process plays two deals of one wall (no process "
                        "sees two rotations of a duplicate wall)")
    p.add_argument("--claim-window", type=float, default=0.0, metavar="SECONDS",
                   help="pace each table: a turn is asked no sooner than SECONDS after the "
                        "table's previous turn, so that answer times do not show claims")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    check_args(p, args)
    if not 0 <= args.claim_window <= 60:
        p.error(f"--claim-window must be 0..60 seconds, got {args.claim_window}")
    limit_blas_threads(1)
    seats = [s.strip() for s in args.seats.split(",")]
    if len(seats) != 4:
        p.error(f"--seats needs four agents, got {len(seats)}")
    _INTERRUPTED.clear()
    previous = signal.signal(signal.SIGINT, _on_interrupt)
    try:
        prepare_output(args.out)
        prepare_output(args.records)
        res = run_arena(
            seats, args.deals, duplicate=args.duplicate, seed=args.seed, rules=args.rules,
            tables=args.tables, progress=not args.no_progress and progress_available(),
            records=args.records, record_deals=args.record_deals, legal=args.legal,
            workers=args.workers, address=args.address, isolate_walls=args.isolate_walls,
            claim_window=args.claim_window, command="python -m sichuan_agents.arena " + " ".join(
                shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv)),
        )
        if _INTERRUPTED.is_set():
            raise KeyboardInterrupt
        print(res.table())
        for name, r in res.bots.items():
            t = r["timing"]
            mean = "-" if t["mean_s"] is None else f"{1000 * t['mean_s']:.2f} ms"
            print(f"{name}: {t['decisions']} decisions, mean {mean}, {r['fault_count']} "
                  f"faults, {r['restarts']} restarts" + (", dropped" if r["dropped"] else ""))
        if args.out:
            res.save(args.out)
            print(f"results written to {args.out}")
    except (ValueError, OSError) as err:
        print(f"error: {str(err).splitlines()[0] if str(err) else err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
    return 0


#: Set by Ctrl-C in :func:`main`. Python raises KeyboardInterrupt wherever the main thread
#: is, and inside a ctypes callback (numba's compiler reports to its cache through one) the
#: exception is printed and dropped; the play loop checks this flag, so the arena still
#: stops at its next step.
_INTERRUPTED = threading.Event()


def _on_interrupt(signum: int, frame: Any) -> None:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())

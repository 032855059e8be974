"""Loss per decision of each agent under the review (sichuan_agents/review.py), every seat reviewed.

    python benchmarks/review_order.py --dir runs/review-order [--deals 24] [--seed 20261207]
        [--k 256] [--agents random,greedy,rules,best] [--rules mil] [--only 0-5]

Plays ``--deals`` deals of the four agents in the duplicate arena (each wall four times,
the seats rotated: every agent plays every seat of every wall) into ``DIR/deals.jsonl``,
then reviews all four seats of each deal with the default reviewer into
``DIR/deal-N.json``. A deal already reviewed (its file exists, with the same settings) is
kept: the run can be stopped and resumed, or split with ``--only A-B``. At the end it
prints, per agent, the decisions, the loss per decision with a 95 % interval
(bootstrap over walls: the four rotations of a wall stay together, so the agents are
compared on the same tiles), the share of decisions flagged as mistakes and their loss per
decision; then the difference of loss per decision between consecutive agents, with its
interval.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sichuan_agents.review import Reviewer, review_record  # noqa: E402
from sichuan_env.records.record import read_jsonl, validate_record  # noqa: E402

BOOTSTRAP = 4000


def _range(text: str | None, n: int) -> list[int]:
    if text is None:
        return list(range(n))
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def _rows(deals: list[dict[str, Any]], agents: list[str]) -> dict[str, np.ndarray]:
    """Per agent, (walls, 4) arrays of [decisions, loss, mistakes, mistake loss] summed
    per wall (a wall's four rotations together)."""
    walls = sorted({d["wall"] for d in deals})
    at = {w: i for i, w in enumerate(walls)}
    out = {a: np.zeros((len(walls), 4)) for a in agents}
    for deal in deals:
        for d in deal["decisions"]:
            row = out[deal["agents"][d["seat"]]][at[deal["wall"]]]
            row += [1, d["loss"], d["mistake"], d["loss"] if d["mistake"] else 0.0]
    return out


def _ratio_ci(rows: np.ndarray, col: int, idx: np.ndarray) -> tuple[float, float, float]:
    est = rows[:, col].sum() / rows[:, 0].sum()
    boots = rows[idx, col].sum(1) / rows[idx, 0].sum(1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return float(est), float(lo), float(hi)


def report(deals: list[dict[str, Any]], agents: list[str], seed: int = 0) -> str:
    """The table of loss per decision per agent, and the differences of neighbours."""
    rows = _rows(deals, agents)
    n_walls = next(iter(rows.values())).shape[0]
    idx = np.random.default_rng(seed).integers(0, n_walls, (BOOTSTRAP, n_walls))
    lines = [f"{len(deals)} deals ({n_walls} walls x 4 rotations), every seat reviewed",
             f"{'agent':<10} {'decisions':>9} {'loss/decision (95% CI)':>26} "
             f"{'mistakes':>9} {'mistake loss/decision (95% CI)':>32}"]
    for a in agents:
        r = rows[a]
        m, lo, hi = _ratio_ci(r, 1, idx)
        mm, mlo, mhi = _ratio_ci(r, 3, idx)
        lines.append(f"{a:<10} {int(r[:, 0].sum()):>9} {m:>8.3f} ({lo:.3f} to {hi:.3f})  "
                     f"{100 * r[:, 2].sum() / r[:, 0].sum():>8.1f}% "
                     f"{mm:>13.3f} ({mlo:.3f} to {mhi:.3f})")
    for a, b in zip(agents, agents[1:], strict=False):
        for col, what in ((1, "loss"), (3, "mistake loss")):
            ra, rb = rows[a], rows[b]
            est = ra[:, col].sum() / ra[:, 0].sum() - rb[:, col].sum() / rb[:, 0].sum()
            boots = (ra[idx, col].sum(1) / ra[idx, 0].sum(1)
                     - rb[idx, col].sum(1) / rb[idx, 0].sum(1))
            lo, hi = np.percentile(boots, [2.5, 97.5])
            share = float((boots > 0).mean())
            lines.append(f"{a} - {b}: {what}/decision {est:+.3f} ({lo:+.3f} to {hi:+.3f}), "
                         f"above 0 in {100 * share:.1f}% of resamples")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Loss per decision per agent under the review.")
    p.add_argument("--dir", required=True, help="folder for the records and the reviews")
    p.add_argument("--deals", type=int, default=24, help="deals (a multiple of 4)")
    p.add_argument("--seed", type=int, default=20261207)
    p.add_argument("--k", type=int, default=256, help="samples per decision")
    p.add_argument("--agents", default="random,greedy,rules,best")
    p.add_argument("--rules", default="mil")
    p.add_argument("--only", default=None, metavar="A-B", help="review only deals A to B")
    p.add_argument("--report", action="store_true", help="only print the table")
    a = p.parse_args(argv)
    agents = a.agents.split(",")
    if len(agents) != 4 or a.deals < 4 or a.deals % 4 or a.k < 2:
        print("error: four agents, a multiple of 4 deals and --k >= 2 are needed",
              file=sys.stderr)
        return 2
    try:
        wanted = _range(a.only, a.deals)
    except ValueError:
        print(f"error: --only must be N or A-B, got {a.only!r}", file=sys.stderr)
        return 2
    folder = Path(a.dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "deals.jsonl"
    if not path.exists():
        from sichuan_agents.arena import run_arena

        run_arena(agents, deals=a.deals, duplicate=True, seed=a.seed, rules=a.rules,
                  tables=a.deals, records=path, record_deals=a.deals)
    records = read_jsonl(path)
    settings = {"k": a.k, "seed": 0, "records_seed": a.seed}
    if not a.report:
        for n in [n for n in wanted if n < len(records)]:
            out = folder / f"deal-{n}.json"
            if out.exists() and json.loads(out.read_text()).get("settings") == settings:
                continue
            rec = records[n]
            t0, c0 = time.perf_counter(), time.process_time()
            got = review_record(rec, [0, 1, 2, 3],
                                Reviewer(rules=validate_record(rec), k=a.k, seed=0))
            doc = {"settings": settings, "deal": n, "wall": n // 4,
                   "agents": rec["arena"]["agents"], "decisions": got["decisions"],
                   "wall_s": round(time.perf_counter() - t0, 1),
                   "cpu_s": round(time.process_time() - c0, 1)}
            out.write_text(json.dumps(doc) + "\n")
            print(f"deal {n}: {len(got['decisions'])} decisions, {doc['wall_s']} s wall, "
                  f"{doc['cpu_s']} s CPU", flush=True)
    done = []
    for n in range(len(records)):
        f = folder / f"deal-{n}.json"
        if f.exists():
            doc = json.loads(f.read_text())
            if doc.get("settings") == settings:
                done.append(doc)
    if not done:
        print("no deal reviewed yet")
        return 0
    cpu = sum(d["cpu_s"] for d in done)
    wall = sum(d["wall_s"] for d in done)
    try:
        print(report(done, agents))
        print(f"review time: {cpu:.0f} s CPU, {wall:.0f} s wall over {len(done)} deals")
        sys.stdout.flush()
    except BrokenPipeError:  # | head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())

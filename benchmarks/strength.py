"""The strength of ``best`` on evaluation seeds fixed before the measurement.

The rule (docs/ladder.md, Strength on fixed seeds): the evaluation seeds of a preset are
the first ``--seeds`` big-endian 32-bit words of ``sha256(trees bytes + network bytes +
b"eval")``, where the trees and the network are the two files that ``best`` plays
(``sichuan_agents/models/boosted_<preset>.txt`` and ``fitted_<preset>.zip``). So the seeds
follow from the shipped files alone: nobody chooses them, and a new model gets new ones.

Each seed is one duplicate arena run (one ``--agent``, default ``best``, against three
copies of the opponent), saved as ``<out>/<agent>-<opponent>_<preset>_seed<S>.json``: the
arena's results JSON plus ``unit_diff``, each wall's difference ``agent - opponent`` (the
unit of the arena's CI). Other agents are measured on ``best``'s seeds.
A seed whose file exists is not played again, so an interrupted run continues. The pooled
figure is the mean of all walls' differences of all seeds with the arena's 95% CI
(``mean +- 1.959964 * sd / sqrt(walls)``), never a mean of the seeds' means; it is written
to ``<out>/<agent>-<opponent>_<preset>.json`` with each seed's figure.

    python benchmarks/strength.py --opponent rules --deals 6000       # 4 seeds, 24,000 deals
    python benchmarks/strength.py --opponent rules --pool-only        # pool what is saved
    python benchmarks/strength.py --agent fitted --deals 6000         # fitted on best's seeds
    python benchmarks/strength.py --agent "search?prior=best&departures=play&k=128" \
        --label search_best_k128 --deals 5000 --chunk 1000 --workers 2

``--label`` names a spec agent in the files; ``--chunk`` plays a long seed in runs of
consecutive walls (``run_arena(first_wall=...)``), each saved under ``<out>/chunks/`` as
it ends and merged into the seed's file when the last one is in, so a run of hours can be
stopped and continued. The walls are those of one run; only agents' own random draws
differ (as with ``--workers``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sichuan_agents.arena import mean_ci  # noqa: E402

#: Appended to the files' bytes before hashing: these seeds serve evaluation only.
SALT = b"eval"
#: Seeds per preset unless ``--seeds`` says otherwise (at least three).
N_SEEDS = 4
OUT = ROOT / "docs" / "strength"


def model_files(preset: str = "mil") -> list[Path]:
    """The files ``best`` plays for ``preset``, in the order they are hashed."""
    models = ROOT / "sichuan_agents" / "models"
    return [models / f"boosted_{preset}.txt", models / f"fitted_{preset}.zip"]


def eval_seeds(files: Sequence[str | Path], n: int = N_SEEDS) -> list[int]:
    """The first ``n`` (1..8) big-endian 32-bit words of sha256(files' bytes + SALT)."""
    if not 1 <= n <= 8:
        raise ValueError(f"1..8 seeds come from one sha256, got {n}")
    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).read_bytes())
    h.update(SALT)
    d = h.digest()
    return [int.from_bytes(d[4 * i:4 * i + 4], "big") for i in range(n)]


def unit_diff(res: Any, a: str, b: str) -> np.ndarray:
    """Each wall's mean points per deal ``a - b`` of an :class:`ArenaResult` (the units
    of its ``pairwise`` CI)."""
    d = res.unit_means(a) - res.unit_means(b)
    return d[~np.isnan(d)]


def figure(diffs: np.ndarray) -> dict[str, float]:
    """Mean, 95% CI and walls of per-wall differences, as the arena computes them."""
    m, half, sd = mean_ci(np.asarray(diffs, np.float64))
    return {"mean": m, "ci_low": m - half, "ci_high": m + half, "ci_half_width": half,
            "sd_unit": sd, "units": int(np.asarray(diffs).size)}


def pool(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Pool per-seed runs (each with ``seed``, ``deals`` and ``unit_diff``): the figure
    over all their walls together, and each seed's own figure beside it."""
    if not runs:
        raise ValueError("nothing to pool")
    per_seed = [{"seed": r["seed"], "deals": r["deals"], **figure(r["unit_diff"])}
                for r in runs]
    allw = np.concatenate([np.asarray(r["unit_diff"], np.float64) for r in runs])
    return {"seeds": [r["seed"] for r in runs], "deals": int(sum(r["deals"] for r in runs)),
            "pooled": figure(allw), "per_seed": per_seed}


def seed_path(out: Path, agent: str, opponent: str, preset: str, seed: int) -> Path:
    return out / f"{agent}-{opponent}_{preset}_seed{seed}.json"


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the arena's workers)."""
    import resource

    own, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                 resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _play(seed: int, deals: int, agent: str, label: str, opponent: str, preset: str,
          workers: int, first_wall: int = 0) -> dict[str, Any]:
    """One duplicate arena run of ``agent`` against three ``opponent`` as a dict: the
    arena's results JSON, ``unit_diff`` (each wall's ``agent - opponent``), each side's
    per-wall means (to merge chunks) and the CPU seconds it took."""
    from sichuan_agents.arena import limit_blas_threads, run_arena

    limit_blas_threads(1)
    seats = [agent] + [opponent] * 3
    cmd = (f"python -m sichuan_agents.arena --seats '{','.join(seats)}' --deals {deals} "
           f"--seed {seed} --rules {preset}" + (f" --workers {workers}" if workers > 1 else ""))
    cpu0 = _cpu_seconds()
    res = run_arena(seats, deals, seed=seed, rules=preset, command=cmd, workers=workers,
                    first_wall=first_wall)
    a, b = res.names  # the agent (seat 0) first
    d = res.to_dict()
    d["cpu_seconds"] = _cpu_seconds() - cpu0
    d["unit_diff"] = [float(x) for x in unit_diff(res, a, b)]
    d["unit_means"] = {label: [float(x) for x in res.unit_means(a)],
                       opponent: [float(x) for x in res.unit_means(b)]}
    d["agents"] = {label: d["agents"][a], opponent: d["agents"][b]}
    d["pairwise"] = [{**d["pairwise"][0], "a": label, "b": opponent}]
    if label != agent:
        d["agent_spec"] = agent
    return d


def _write(path: Path, d: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(d) + "\n")
    tmp.replace(path)


#: The fields of an agent's arena figure that are rates per seat-deal (merged by seat-deals).
_PER_DEAL = ("hu_rate", "self_drawn_rate", "deal_in_rate", "flower_pig_rate", "kong_points")


def merge_chunks(parts: Sequence[dict[str, Any]], label: str, opponent: str) -> dict[str, Any]:
    """One seed's figure from its chunks (consecutive walls): the walls' differences and
    means concatenated, the CIs recomputed over all walls, rates weighted by seat-deals,
    the value per win by wins; times and deals summed."""
    if not parts:
        raise ValueError("no chunks to merge")
    starts = [p.get("first_wall", 0) for p in parts]
    if starts != [sum(p["deals"] // 4 for p in parts[:i]) for i in range(len(parts))] \
            or any(p["deals"] % 4 for p in parts):
        raise ValueError("chunks must be consecutive walls in order, from wall 0")
    d = {k: v for k, v in parts[0].items() if k not in ("first_wall", "unit_means")}
    d["command"] = parts[0]["command"].split(" --deals")[0] + (
        f" --deals {sum(p['deals'] for p in parts)} --seed {parts[0]['seed']} "
        f"--rules {parts[0]['rules']['preset']} (played in {len(parts)} chunks of "
        "consecutive walls: run_arena(first_wall=...))")
    for key in ("deals", "units", "seconds", "cpu_seconds"):
        d[key] = sum(p[key] for p in parts)
    d["deals_per_second"] = d["deals"] / d["seconds"]
    d["end_reasons"] = {k: sum(p["end_reasons"][k] for p in parts)
                        for k in parts[0]["end_reasons"]}
    d["unit_diff"] = [x for p in parts for x in p["unit_diff"]]
    d["chunks"] = [{"first_wall": p.get("first_wall", 0), "deals": p["deals"],
                    "seconds": p["seconds"], "cpu_seconds": p["cpu_seconds"]} for p in parts]
    agents = {}
    for name in (label, opponent):
        means = np.concatenate([np.asarray(p["unit_means"][name], np.float64)
                                for p in parts])
        st: dict[str, Any] = figure(means[~np.isnan(means)])
        figs = [p["agents"][name] for p in parts]
        n = np.array([f["seat_deals"] for f in figs], np.float64)
        st["seat_deals"] = int(n.sum())
        for k in _PER_DEAL:
            st[k] = float(np.dot(n, [f[k] for f in figs]) / n.sum())
        wins = n * np.array([f["hu_rate"] for f in figs])
        st["avg_win_value"] = float(np.dot(wins, [f["avg_win_value"] for f in figs])
                                    / wins.sum())
        agents[name] = st
    d["agents"] = agents
    d["pairwise"] = [{"a": label, "b": opponent, **figure(np.asarray(d["unit_diff"]))}]
    return d


def run_seed(seed: int, deals: int, agent: str, opponent: str, preset: str,
             out: Path, *, label: str | None = None, chunk: int = 0,
             workers: int = 1) -> Path:
    """Play (unless saved) and save one seed's duplicate arena run. ``chunk`` > 0 plays it
    in runs of that many deals over consecutive walls, each saved under ``out/chunks/``
    as it ends (an interrupted seed resumes at its first unsaved chunk), then merged."""
    label = label or agent
    path = seed_path(out, label, opponent, preset, seed)
    if path.exists():
        return path
    if chunk <= 0:
        _write(path, _play(seed, deals, agent, label, opponent, preset, workers))
        return path
    walls, per = -(-deals // 4), max(1, chunk // 4)
    files = []
    for lo in range(0, walls, per):
        hi = min(walls, lo + per)
        part = out / "chunks" / f"{path.stem}_walls{lo}-{hi - 1}.json"
        if not part.exists():
            t0 = time.perf_counter()
            _write(part, {**_play(seed, 4 * (hi - lo), agent, label, opponent, preset,
                                  workers, first_wall=lo), "first_wall": lo})
            print(f"  seed {seed} walls {lo}-{hi - 1}: {part} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        files.append(part)
    _write(path, merge_chunks([json.loads(f.read_text()) for f in files], label, opponent))
    for part in files:
        part.unlink()
    return path


def pooled_report(seeds: Sequence[int], agent: str, opponent: str, preset: str, out: Path,
                  files: Sequence[Path]) -> dict[str, Any]:
    """The pooled figure of the saved seeds, with the rule that gave them."""
    runs = []
    for s in seeds:
        r = json.loads(seed_path(out, agent, opponent, preset, s).read_text())
        runs.append({"seed": s, "deals": r["deals"], "unit_diff": r["unit_diff"],
                     "seconds": r["seconds"]})
    rep = pool(runs)
    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).read_bytes())
    return {"a": agent, "b": opponent, "rules": preset,
            "seed_rule": "first 32-bit big-endian words of sha256(" +
                         " + ".join(Path(f).name for f in files) + ' + b"eval")',
            "files_sha256": h.hexdigest(),
            "seconds": float(sum(r["seconds"] for r in runs)), **rep}


def versus(seeds: Sequence[int], a: str, b: str, opponent: str, preset: str,
           out: Path) -> dict[str, Any]:
    """``a`` against ``b`` on the walls both played (each seed's first walls): per wall
    ``(a - opponent) - (b - opponent)``, pooled over the seeds as :func:`pool` does. The
    two ran at different tables, so this is not a head-to-head game, but the walls (the
    tiles' luck) are shared, which removes most of their variance."""
    runs = []
    for s in seeds:
        ra, rb = (json.loads(seed_path(out, x, opponent, preset, s).read_text())
                  for x in (a, b))
        n = min(len(ra["unit_diff"]), len(rb["unit_diff"]))
        diff = np.asarray(ra["unit_diff"][:n]) - np.asarray(rb["unit_diff"][:n])
        runs.append({"seed": s, "deals": 4 * n, "unit_diff": [float(x) for x in diff]})
    return {"a": a, "b": b, "opponent": opponent, **pool(runs)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agent", default="best", help="the measured seat's agent (a spec)")
    p.add_argument("--label", default=None,
                   help="the agent's name in file names and figures (needed when --agent "
                        "is a spec with options, e.g. search?prior=best)")
    p.add_argument("--opponent", default="rules", help="the three other seats' agent")
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--seeds", type=int, default=N_SEEDS, help="seeds (3..8)")
    p.add_argument("--deals", type=int, default=6000, help="deals per seed")
    p.add_argument("--chunk", type=int, default=0,
                   help="play each seed in runs of this many deals, each saved as it ends "
                        "(an interrupted run resumes; default: the whole seed at once)")
    p.add_argument("--workers", type=int, default=1, help="arena processes (default 1)")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--pool-only", action="store_true", help="pool the saved seeds only")
    p.add_argument("--versus", default=None, metavar="LABEL",
                   help="also compare with LABEL's saved seeds on the walls both played")
    p.add_argument("--print-seeds", action="store_true", help="print the seeds and exit")
    a = p.parse_args(argv)
    try:
        if not 3 <= a.seeds <= 8:
            raise ValueError(f"--seeds must be 3..8, got {a.seeds}")
        label = a.label or a.agent
        for name in (label, a.opponent):
            if not name.replace("_", "").isalnum():
                raise ValueError(f"agent names here are plain names (they name files), "
                                 f"got {name!r}; give a spec a --label")
        if a.chunk < 0 or a.workers < 1:
            raise ValueError(f"--chunk must be >= 0 and --workers >= 1, got {a.chunk} and "
                             f"{a.workers}")
        if a.deals < 4:
            raise ValueError(f"--deals must be >= 4, got {a.deals}")
        files = model_files(a.rules)
        seeds = eval_seeds(files, a.seeds)
        if a.print_seeds:
            print(" ".join(map(str, seeds)))
            return 0
        out = Path(a.out)
        if not a.pool_only:
            for s in seeds:
                t0 = time.perf_counter()
                path = run_seed(s, a.deals, a.agent, a.opponent, a.rules, out, label=label,
                                chunk=a.chunk, workers=a.workers)
                print(f"seed {s}: {path} ({time.perf_counter() - t0:.0f} s)", flush=True)
        rep = pooled_report(seeds, label, a.opponent, a.rules, out, files)
        if a.versus:
            rep["versus"] = versus(seeds, label, a.versus, a.opponent, a.rules, out)
        if label != a.agent:
            rep["agent_spec"] = a.agent
    except (ValueError, OSError, KeyError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else e}", file=sys.stderr)
        return 2
    path = Path(a.out) / f"{label}-{a.opponent}_{a.rules}.json"
    path.write_text(json.dumps(rep, indent=1) + "\n")
    pf = rep["pooled"]
    for s in rep["per_seed"]:
        print(f"seed {s['seed']}: {s['mean']:+.3f} [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"
              f" ({s['deals']} deals)")
    print(f"pooled {label} - {a.opponent}: {pf['mean']:+.3f} [{pf['ci_low']:+.3f}, "
          f"{pf['ci_high']:+.3f}] ({rep['deals']} deals, {len(rep['seeds'])} seeds) -> {path}")
    if "versus" in rep:
        v = rep["versus"]["pooled"]
        print(f"{label} - {a.versus} on the same walls: {v['mean']:+.3f} [{v['ci_low']:+.3f}, "
              f"{v['ci_high']:+.3f}] ({rep['versus']['deals']} deals)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

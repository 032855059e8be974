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


def run_seed(seed: int, deals: int, agent: str, opponent: str, preset: str,
             out: Path) -> Path:
    """Play (unless saved) and save one seed's duplicate arena run."""
    from sichuan_agents.arena import limit_blas_threads, run_arena

    path = seed_path(out, agent, opponent, preset, seed)
    if path.exists():
        return path
    limit_blas_threads(1)
    seats = [agent] + [opponent] * 3
    cmd = (f"python -m sichuan_agents.arena --seats {','.join(seats)} --deals {deals} "
           f"--seed {seed} --rules {preset}")
    res = run_arena(seats, deals, seed=seed, rules=preset, command=cmd)
    d = res.to_dict()
    d["unit_diff"] = [float(x) for x in unit_diff(res, agent, opponent)]
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(d) + "\n")
    tmp.replace(path)
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agent", default="best", help="the measured seat's agent")
    p.add_argument("--opponent", default="rules", help="the three other seats' agent")
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--seeds", type=int, default=N_SEEDS, help="seeds (3..8)")
    p.add_argument("--deals", type=int, default=6000, help="deals per seed")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--pool-only", action="store_true", help="pool the saved seeds only")
    p.add_argument("--print-seeds", action="store_true", help="print the seeds and exit")
    a = p.parse_args(argv)
    try:
        if not 3 <= a.seeds <= 8:
            raise ValueError(f"--seeds must be 3..8, got {a.seeds}")
        for name in (a.agent, a.opponent):
            if not name.replace("_", "").isalnum():
                raise ValueError(f"agent names here are plain names (they name files), "
                                 f"got {name!r}")
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
                path = run_seed(s, a.deals, a.agent, a.opponent, a.rules, out)
                print(f"seed {s}: {path} ({time.perf_counter() - t0:.0f} s)", flush=True)
        rep = pooled_report(seeds, a.agent, a.opponent, a.rules, out, files)
    except (ValueError, OSError, KeyError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else e}", file=sys.stderr)
        return 2
    path = Path(a.out) / f"{a.agent}-{a.opponent}_{a.rules}.json"
    path.write_text(json.dumps(rep, indent=1) + "\n")
    pf = rep["pooled"]
    for s in rep["per_seed"]:
        print(f"seed {s['seed']}: {s['mean']:+.3f} [{s['ci_low']:+.3f}, {s['ci_high']:+.3f}]"
              f" ({s['deals']} deals)")
    print(f"pooled {a.agent} - {a.opponent}: {pf['mean']:+.3f} [{pf['ci_low']:+.3f}, "
          f"{pf['ci_high']:+.3f}] ({rep['deals']} deals, {len(rep['seeds'])} seeds) -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Fit the boosted agent's trees (:mod:`sichuan_agents.models.boosted`) to search comparisons.

The shards are those of :mod:`sichuan_agents.training.search_teacher`: at sampled own turns of
deals of four rules bots, the search agent's candidates (column 0: the rules bot's
choice) and each one's mean points over ``k`` play-outs on sampled deals. Every other
candidate becomes one training row: its features (:mod:`sichuan_agents.models.candidate_features`)
and,
as the target, its mean points minus the rules bot's choice's. A LightGBM regressor
(least squares) learns that difference, so its prediction for a candidate is its
expected gain over the bot's choice given what the seat sees.

With ``--val N`` the last ``N`` shards are held out: the trees are fitted on the others,
and the held-out *gain* -- the search's value of the candidate the trees choose (at each
margin) minus the value of the bot's choice, per sample and per deal -- is printed and
saved. Those values played no part in the fit, so the gain is an unbiased estimate of
what the trees' choices are worth *as the search values them* (the search's own sampling
of the hidden hands included); the arena says what they are worth in play.

    python -m sichuan_agents.training.boost runs/st/*.npz --val 5 --out runs/boost/trees.txt
    python -m sichuan_agents.training.boost runs/st/*.npz --val 0 --out
    sichuan_agents/models/boosted_mil.txt
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.models.candidate_features import (
    FEATURE_NAMES,
    candidate_features,
    candidate_kinds,
)
from sichuan_agents.training.distill import load_shards

#: LightGBM settings (the command's defaults).
DEFAULTS = {"trees": 800, "leaves": 63, "lr": 0.03, "min_leaf": 200, "subsample": 0.8,
            "colsample": 0.8}
MARGINS = (0.0, 0.1, 0.2)


def training_rows(data: dict[str, np.ndarray], rows: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets of every candidate other than the bot's choice, at the
    samples ``rows``: (R, N_FEATURES) float32 and (R,) float32 points over column 0."""
    feats, valid = candidate_features(data["planes"][rows], data["candidates"][rows])
    valid[:, 0] = False
    returns = data["returns"][rows]
    target = returns - returns[:, :1]
    return feats[valid], target[valid].astype(np.float32)


def usable(data: dict[str, np.ndarray]) -> np.ndarray:
    """Samples the trees can score: column 0 a discard or kong (own-turn samples)."""
    return candidate_kinds(data["candidates"][:, :1])[:, 0] >= 0


def seat_deal_weights(paths: list[str], shard: np.ndarray) -> np.ndarray:
    """(N,) per sample: the seat-deals it stands for the inverse of, ``1 / (sample_prob x
    4 x deals)`` of its shard (search_teacher samples every own turn it may with
    ``sample_prob``), so that a sum of gains times these weights is a gain per deal."""
    per_shard = []
    for path in paths:
        with np.load(path) as d:
            meta = d["meta"]
        per_shard.append(1.0 / (meta[2] / 1e6 * 4 * meta[1]))
    return np.asarray(per_shard)[shard]


def shard_prior(paths: list[str]) -> str:
    """The search prior (candidate 0) the shards name (``rules`` where a shard names none);
    ValueError when they differ, since their targets are gains over different choices."""
    priors = set()
    for path in paths:
        with np.load(path) as d:
            priors.add(str(d["prior"]) if "prior" in d.files else "rules")
    if len(priors) > 1:
        raise ValueError(f"the shards mix search priors ({', '.join(sorted(priors))}); fit "
                         "one prior's shards at a time")
    return priors.pop()


def held_out(booster: Any, data: dict[str, np.ndarray], rows: np.ndarray, shards: int
             ) -> dict[str, Any]:
    """The search's value of the trees' choices over the bot's at the samples ``rows``
    (of ``shards`` shards; ``data["seat_deal_weight"]``: :func:`seat_deal_weights`), per
    margin: per sample and per deal (95% CIs), and how often the trees depart."""
    cands = data["candidates"][rows]
    feats, valid = candidate_features(data["planes"][rows], cands)
    valid[:, 0] = False
    pred = np.full(cands.shape, -np.inf)
    pred[:, 0] = 0.0
    pred[valid] = booster.predict(feats[valid])
    returns = data["returns"][rows]
    diff = np.where(valid, returns - returns[:, :1], 0.0)
    weight = data["seat_deal_weight"][rows]
    out: dict[str, Any] = {"samples": int(rows.size), "shards": int(shards)}
    for margin in MARGINS:
        p = pred.copy()
        p[:, 1:] -= margin
        pick = p.argmax(1)
        gain = diff[np.arange(rows.size), pick]
        per_deal = gain * weight * rows.size / shards  # mean: the gain per deal
        out[f"margin_{margin:g}"] = {
            "departures": float((pick > 0).mean()),
            "per_sample": float(gain.mean()),
            "per_sample_ci95": 1.96 * float(gain.std(ddof=1) / np.sqrt(rows.size)),
            "per_deal": float(per_deal.mean()),
            "per_deal_ci95": 1.96 * float(per_deal.std(ddof=1) / np.sqrt(rows.size)),
        }
    return out


def fit_trees(x: np.ndarray, y: np.ndarray, *, seed: int = 0, threads: int = 1,
              **settings: Any) -> Any:
    """A LightGBM booster fitted to (x, y) with :data:`DEFAULTS` updated by ``settings``
    (deterministic for a given seed, thread count and machine)."""
    import lightgbm

    s = {**DEFAULTS, **settings}
    params = {"objective": "regression", "learning_rate": s["lr"], "num_leaves": s["leaves"],
              "min_child_samples": s["min_leaf"], "bagging_fraction": s["subsample"],
              "bagging_freq": 1, "feature_fraction": s["colsample"], "seed": seed,
              "deterministic": True, "force_row_wise": True, "num_threads": threads,
              "verbose": -1}
    train = lightgbm.Dataset(x, y, feature_name=list(FEATURE_NAMES), free_raw_data=True)
    return lightgbm.train(params, train, num_boost_round=s["trees"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("shards", nargs="+", help="search_teacher shards (.npz)")
    p.add_argument("--out", required=True, help="the trees file to write (.txt; its "
                   "metadata goes beside it as .json)")
    p.add_argument("--val", type=int, default=0, help="shards held out (the last ones)")
    p.add_argument("--trees", type=int, default=DEFAULTS["trees"])
    p.add_argument("--leaves", type=int, default=DEFAULTS["leaves"])
    p.add_argument("--lr", type=float, default=DEFAULTS["lr"])
    p.add_argument("--min-leaf", type=int, default=DEFAULTS["min_leaf"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    missing = [s for s in a.shards if not Path(s).is_file()]
    if missing:
        print(f"boost: no such file: {missing[0]}", file=sys.stderr)
        return 2
    if not 0 <= a.val < len(a.shards) or a.trees < 1 or a.leaves < 2 or a.lr <= 0 or \
            a.min_leaf < 1 or a.threads < 1:
        print("boost: --val must leave shards to fit (0 <= val < shards), --trees >= 1, "
              "--leaves >= 2, --lr > 0, --min-leaf >= 1, --threads >= 1", file=sys.stderr)
        return 2
    shards = sorted(a.shards)
    try:
        prior = shard_prior(shards)
    except ValueError as e:
        print(f"boost: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"boost: the shards are not search_teacher shards: {e}", file=sys.stderr)
        return 2
    try:
        data = load_shards(shards)
    except (KeyError, ValueError, OSError) as e:
        print(f"boost: the shards are not search_teacher shards: {e}", file=sys.stderr)
        return 2
    data["seat_deal_weight"] = seat_deal_weights(shards, data["shard"])
    ok = usable(data)
    n_fit = len(shards) - a.val
    fit_rows = np.flatnonzero(ok & (data["shard"] < n_fit))
    val_rows = np.flatnonzero(ok & (data["shard"] >= n_fit))
    started = time.time()
    x, y = training_rows(data, fit_rows)
    if y.size == 0:
        print("boost: the fitted shards hold no own-turn comparisons", file=sys.stderr)
        return 2
    print(f"{fit_rows.size} samples fitted ({y.size} candidate rows), {val_rows.size} held "
          "out", flush=True)
    settings = {"trees": a.trees, "leaves": a.leaves, "lr": a.lr, "min_leaf": a.min_leaf}
    booster = fit_trees(x, y, seed=a.seed, threads=a.threads, **settings)
    seconds = time.time() - started
    report = held_out(booster, data, val_rows, a.val) if a.val else None
    if report:
        for margin in MARGINS:
            r = report[f"margin_{margin:g}"]
            print(f"held out, margin {margin:g}: departs on {r['departures']:.1%}, "
                  f"{r['per_sample']:+.4f} [±{r['per_sample_ci95']:.4f}] per sample, "
                  f"{r['per_deal']:+.3f} [±{r['per_deal_ci95']:.3f}] per deal", flush=True)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    booster.save_model(str(out))
    import lightgbm

    meta = {"what": "trees predicting each own-turn candidate's search value over the "
                    f"{prior} prior's choice (sichuan_agents.training.boost)",
            "command": "python -m sichuan_agents.training.boost " + " ".join(
                sys.argv[1:] if argv is None else argv),
            "prior": prior,
            "shards": [Path(s).name for s in shards], "held_out_shards": a.val,
            "samples_fitted": int(fit_rows.size), "rows_fitted": int(y.size),
            "settings": {**DEFAULTS, **settings, "seed": a.seed, "threads": a.threads},
            "features": list(FEATURE_NAMES), "held_out": report,
            "seconds": round(seconds, 1), "lightgbm": lightgbm.__version__,
            "python": platform.python_version()}
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {out} and {out.with_suffix('.json')} ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

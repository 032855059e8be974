"""The ladder: every pair of agents in the duplicate arena, and one rating per agent.

Command line::

    python -m sichuan_agents.ladder --agents random,greedy,rules,ppo:runs/a/model.zip,mypkg:Bot \\
        --deals 8000 --seed 1 --out ladder.json [--markdown docs/ladder.md] \\
        [--resume ladder.json] [--rules mil] [--tables 1024] [--workers 1]

Agents are specs for :func:`sichuan_env.seats.agent.make_agent` (names, ``ppo:PATH``, import
paths ``package.module:Class`` or ``path/to/file.py:Class``, ``exec:COMMAND`` programs of
any language (docs/protocol.md), ``?key=value`` arguments).

**Pairs.** For every pair (A, B) the arena (:func:`sichuan_agents.arena.run_arena`, duplicate
mode) plays ``deals / 2`` deals of A against three copies of B and as many of B against
three copies of A, both with the same ``seed``, hence on the same walls. The pair's
difference is, per wall, the average over the two seatings of (A's points per deal − B's
points per deal), and its 95% CI is ``mean ± 1.96 · sd(per-wall values) / sqrt(walls)``
(the arena's interval, with the two seatings of a wall averaged first).

**Rating.** One number per agent, fitted to every pair's difference by weighted least
squares: ``r_A − r_B ≈ d_AB`` with weight ``1 / se_AB²`` (``se`` the pair's standard
error), the ratings summing to zero (so a rating reads as points per deal against the
average of these agents). Its uncertainty is the fit's covariance ``(Xᵀ W X)⁺``;
``±`` is 1.96 standard errors. ``chi2`` over ``dof = pairs − agents + 1`` tells whether the
pair differences are consistent with one number per agent (about ``dof`` when they are);
when ``chi2 / dof > 1`` the covariance is multiplied by ``chi2 / dof`` (``scale``), so
the interval also covers how badly one number per agent fits (some bots do better
against one opponent than their rating says).

``lead`` is an agent's rating minus the next agent's, with the 95% CI of that difference
(from the same covariance).

**Rates.** Hu, self-drawn and deal-in rates per agent over all its seat-deals on the
ladder (every opponent, both seatings), as the arena defines them.

**Resume.** The JSON (``--out``) is rewritten after every pair; ``--resume FILE`` reuses
the pairs FILE holds when its deals, seed and rules are the ones asked for (an error
otherwise) and plays only the others; a FILE that does not exist yet starts a new ladder
(so one command can be repeated until it is complete).

**Markdown.** ``--markdown FILE`` writes the tables between the lines
``<!-- ladder:begin -->`` and ``<!-- ladder:end -->`` of FILE (the rest of the file is
kept; a file without them gets the section appended, a missing file is created).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.arena import (
    Z95,
    _agent_name,
    limit_blas_threads,
    mean_ci,
    prepare_output,
    progress_available,
    run_arena,
)
from sichuan_env.core.rules import get_rules
from sichuan_env.seats.agent import agents_help

FORMAT = "sichuan-ladder/1"
RATE_FIELDS = ("hu_rate", "self_drawn_rate", "deal_in_rate")
BEGIN = "<!-- ladder:begin -->"
END = "<!-- ladder:end -->"


# ----------------------------------------------------------------------------- one pair


def play_pair(a: Any, b: Any, deals: int, seed: int = 1, rules: str = "mil",
              tables: int = 1024, workers: int = 1, progress: bool = False,
              address: str | None = None) -> dict[str, Any]:
    """Both seatings of one pair (``deals / 2`` deals each, same walls) and the pair's
    difference ``a − b`` in points per deal with its 95% CI (``address``: the walls as
    Ray tasks on that cluster, see :func:`sichuan_agents.arena.run_arena`). A pair with an
    ``exec:`` bot that was dropped (its fallback played its seats) is not measured: its
    difference is NaN, ``dropped`` says why, and the rating fit leaves it out."""
    half = max(4, -(-deals // 2))
    name_a, name_b = _agent_name(a), _agent_name(b)
    runs = []
    diffs = []
    dropped: list[str] = []
    t0 = time.perf_counter()
    for seats in ([a, b, b, b], [b, a, a, a]):
        res = run_arena(seats, half, seed=seed, rules=rules, tables=tables, workers=workers,
                        progress=progress, address=address)
        diffs.append(res.unit_means(name_a) - res.unit_means(name_b))
        dropped += [f"{n}: {res.dropped(n)}" for n in (name_a, name_b) if res.dropped(n)]
        runs.append({
            "seats": [_agent_name(s) for s in seats],
            "deals": res.deals,
            "seconds": res.seconds,
            "pairwise": res.pairwise(name_a, name_b),
            "agents": {n: {k: res.stats[n][k] for k in ("mean", "ci_half_width",
                                                       "seat_deals", *RATE_FIELDS)}
                       for n in (name_a, name_b)},
        })
    per_wall = (diffs[0] + diffs[1]) / 2
    per_wall = per_wall[~np.isnan(per_wall)]
    m, hw, sd = mean_ci(per_wall)
    out = {"a": name_a, "b": name_b, "mean": m, "ci_low": m - hw, "ci_high": m + hw,
           "ci_half_width": hw, "sd_unit": sd, "units": int(per_wall.size),
           "seconds": time.perf_counter() - t0, "runs": runs}
    if dropped:
        out.update(mean=math.nan, ci_low=math.nan, ci_high=math.nan, ci_half_width=math.nan,
                   sd_unit=math.nan, dropped="; ".join(dict.fromkeys(dropped)))
    return out


def flip_pair(p: dict[str, Any]) -> dict[str, Any]:
    """The same pair seen from ``b``: ``b − a``."""
    q = dict(p)
    q["a"], q["b"] = p["b"], p["a"]
    q["mean"] = -p["mean"]
    q["ci_low"], q["ci_high"] = -p["ci_high"], -p["ci_low"]
    return q


# ----------------------------------------------------------------------------- rating


def fit_ratings(names: Sequence[str], pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Weighted least-squares points rating (see the module docstring): per agent
    ``rating`` and ``ci_half_width``; ``chi2`` and ``dof`` of the fit. Agents without a
    finished pair get NaN."""
    names = list(names)
    index = {n: i for i, n in enumerate(names)}
    usable = [p for p in pairs if p["a"] in index and p["b"] in index
              and math.isfinite(p["mean"]) and math.isfinite(p["ci_half_width"])
              and p["ci_half_width"] > 0]
    n = len(names)
    X = np.zeros((len(usable), n))
    d = np.zeros(len(usable))
    w = np.zeros(len(usable))
    for k, p in enumerate(usable):
        X[k, index[p["a"]]] = 1.0
        X[k, index[p["b"]]] = -1.0
        d[k] = p["mean"]
        w[k] = (Z95 / p["ci_half_width"]) ** 2
    seen = np.abs(X).sum(0) > 0
    rating = np.full(n, math.nan)
    half = np.full(n, math.nan)
    full_cov = np.full((n, n), math.nan)
    chi2 = math.nan
    if usable:
        Xs = X[:, seen]
        # ratings of the agents that played, summing to zero: the pseudo-inverse picks the
        # solution orthogonal to the constant vector (the fit's only null direction when
        # the pairs connect the agents)
        cov = np.linalg.pinv(Xs.T @ (w[:, None] * Xs))
        r = cov @ Xs.T @ (w * d)
        r -= r.mean()
        chi2 = float((w * (Xs @ r - d) ** 2).sum())
    dof = len(usable) - int(seen.sum()) + 1 if usable else 0
    scale = max(1.0, chi2 / dof) if dof > 0 else 1.0
    if usable:
        rating[seen] = r
        half[seen] = Z95 * np.sqrt(np.clip(np.diag(cov), 0, None) * scale)
        full_cov[np.ix_(seen, seen)] = cov * scale
    return {"rating": dict(zip(names, rating.tolist(), strict=True)),
            "ci_half_width": dict(zip(names, half.tolist(), strict=True)),
            "covariance": full_cov.tolist(), "chi2": chi2, "dof": dof, "pairs": len(usable),
            "scale": scale}


def agent_rates(names: Sequence[str], pairs: Sequence[dict[str, Any]]) -> dict[str, dict]:
    """Hu / self-drawn / deal-in rates per agent over all its seat-deals on the ladder."""
    out = {}
    for name in names:
        tot = {k: 0.0 for k in RATE_FIELDS}
        deals = 0
        for p in pairs:
            for run in p["runs"]:
                s = run["agents"].get(name)
                if s is None or not s["seat_deals"]:
                    continue
                deals += s["seat_deals"]
                for k in RATE_FIELDS:
                    tot[k] += s[k] * s["seat_deals"]
        out[name] = {k: (tot[k] / deals if deals else math.nan) for k in RATE_FIELDS}
        out[name]["seat_deals"] = deals
    return out


def standings(names: Sequence[str], pairs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per agent, best rating first: rating, its CI and the rates."""
    fit = fit_ratings(names, pairs)
    rates = agent_rates(names, pairs)
    rows = [{"agent": n, "rating": fit["rating"][n], "ci_half_width": fit["ci_half_width"][n],
             **rates[n]} for n in names]
    rows.sort(key=lambda r: -r["rating"] if math.isfinite(r["rating"]) else math.inf)
    cov = np.asarray(fit["covariance"])
    index = {n: i for i, n in enumerate(names)}
    for k, r in enumerate(rows):
        r["rank"] = k + 1
        # lead over the next agent down, with the 95% CI of the difference of ratings
        r["lead"] = r["lead_ci_half_width"] = math.nan
        if k + 1 < len(rows):
            i, j = index[r["agent"]], index[rows[k + 1]["agent"]]
            r["lead"] = r["rating"] - rows[k + 1]["rating"]
            var = cov[i, i] + cov[j, j] - 2 * cov[i, j]
            r["lead_ci_half_width"] = Z95 * math.sqrt(max(var, 0.0)) if math.isfinite(var) \
                else math.nan
    return rows


# ----------------------------------------------------------------------------- the ladder


def _settings(deals: int, seed: int, rules: str) -> dict[str, Any]:
    return {"deals": int(deals), "seed": int(seed), "rules": get_rules(rules).to_dict()}


def load_resume(path: str | Path, deals: int, seed: int, rules: str) -> list[dict[str, Any]]:
    """The finished pairs of a ladder JSON made with the same deals, seed and rules (none
    when the file does not exist yet)."""
    if not Path(path).exists():
        return []
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"--resume: cannot read {path}: {err}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"--resume: {path} is not a ladder file ({FORMAT})")
    want = _settings(deals, seed, rules)
    have = data.get("settings", {})
    diff = [k for k in want if have.get(k) != want[k]]
    if diff:
        shown = ", ".join(f"{k} {have.get(k)!r} (asked {want[k]!r})" for k in diff
                          if k != "rules") + (", other rules" if "rules" in diff else "")
        raise ValueError(f"--resume: {path} was played with {shown}; use the same settings "
                         "or start a new file")
    return list(data.get("pairs", []))


def run_ladder(agents: Sequence[Any], deals: int, seed: int = 1, rules: str = "mil", *,
               tables: int = 1024, workers: int = 1, progress: bool = False,
               done: Sequence[dict[str, Any]] = (), out: str | Path | None = None,
               command: str = "", log: Any = None, address: str | None = None
               ) -> dict[str, Any]:
    """Play every pair not in ``done`` (see the module docstring) and return the ladder
    as a dict (what ``--out`` holds); ``out`` is rewritten after every pair. ``address``:
    every arena run's walls as Ray tasks on that cluster (joined once for the ladder)."""
    names = [_agent_name(a) for a in agents]
    if len(names) < 2:
        raise ValueError("a ladder needs at least two agents")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"agents named twice: {', '.join(dup)}")
    if deals < 8:
        raise ValueError("deals must be >= 8 (four per wall, two seatings)")
    finished: dict[tuple[str, str], dict[str, Any]] = {}
    for p in done:
        finished[(p["a"], p["b"])] = p
        finished[(p["b"], p["a"])] = flip_pair(p)
    todo = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    pairs: list[dict[str, Any]] = []
    started = False
    if address is not None:
        from sichuan_agents.distributed import start_ray

        started = start_ray(address, workers)
    try:
        ladder, reused = _play_pairs(agents, names, todo, finished, pairs, deals, seed, rules,
                                     tables, workers, progress, address, out, command, log)
    finally:
        if started:
            import ray

            ray.shutdown()
    if out is not None and reused == len(todo):
        _write_json(out, ladder)
    return ladder


def _play_pairs(agents, names, todo, finished, pairs, deals, seed, rules, tables, workers,
                progress, address, out, command, log) -> tuple[dict[str, Any], int]:
    t0 = time.perf_counter()
    reused = 0
    ladder: dict[str, Any] = {}
    for k, (i, j) in enumerate(todo):
        key = (names[i], names[j])
        if key in finished:
            pairs.append(finished[key])
            reused += 1
        else:
            if log is not None:
                print(f"[{k + 1}/{len(todo)}] {names[i]} vs {names[j]}", file=log, flush=True)
            pairs.append(play_pair(agents[i], agents[j], deals, seed, rules, tables, workers,
                                   progress, address))
        ladder = _ladder_dict(names, pairs, deals, seed, rules, command,
                              time.perf_counter() - t0, reused)
        if out is not None and key not in finished:
            _write_json(out, ladder)
    return ladder, reused


def _ladder_dict(names, pairs, deals, seed, rules, command, seconds, reused) -> dict:
    return {
        "format": FORMAT,
        "command": command,
        "agents": list(names),
        "settings": _settings(deals, seed, rules),
        "standings": standings(names, pairs),
        "fit": {k: v for k, v in fit_ratings(names, pairs).items()
                if k not in ("rating", "ci_half_width", "covariance")},
        "pairs": pairs,
        "pairs_reused": reused,
        "seconds": seconds,
        "method": "pairs: duplicate arena, deals/2 deals of A vs 3 B and of B vs 3 A on the "
                  "same walls; per-wall average of the two seatings' A-B points/deal; 95% CI "
                  "mean +- 1.959964 sd/sqrt(walls). rating: weighted least squares "
                  "r_A - r_B = d_AB, weights 1/se^2, ratings sum to zero; CI from the fit's "
                  "covariance times max(1, chi2/dof)",
    }


def jsonable(x: Any) -> Any:
    """``x`` with numpy numbers as Python ones and non-finite floats as None (JSON)."""
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [jsonable(v) for v in x]
    if isinstance(x, float | np.floating):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _write_json(path: str | Path, data: dict[str, Any]) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(jsonable(data), indent=2) + "\n")
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- text


def _f(x: Any, fmt: str) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else \
        format(x, fmt)


def _lead(r: dict[str, Any]) -> str:
    lead, half = r.get("lead"), r.get("lead_ci_half_width")
    if lead is None or not math.isfinite(lead):
        return "–"
    return f"{lead:+.3f} [{lead - half:+.3f}, {lead + half:+.3f}]"


def ranked_pairs(ladder: dict[str, Any]) -> list[dict[str, Any]]:
    """The pairs with the better-rated agent as ``a``, in the order of the standings."""
    rank = {r["agent"]: r["rank"] for r in ladder["standings"]}
    pairs = [p if rank[p["a"]] <= rank[p["b"]] else flip_pair(p) for p in ladder["pairs"]]
    return sorted(pairs, key=lambda p: (rank[p["a"]], rank[p["b"]]))


def reproduce_command(ladder: dict[str, Any]) -> str:
    """The command that plays this ladder again (without the output options)."""
    s = ladder["settings"]
    rules = s["rules"]["preset"]
    return (f"python -m sichuan_agents.ladder --agents {','.join(ladder['agents'])} "
            f"--deals {s['deals']} --seed {s['seed']}"
            + ("" if rules == "mil" else f" --rules {rules}"))


def markdown(ladder: dict[str, Any]) -> str:
    """The standings and the pair table as Markdown (between the section markers)."""
    s = ladder["settings"]
    lines = [
        BEGIN,
        f"Generated by `{reproduce_command(ladder)}` "
        f"({s['deals']} deals per pair, seed {s['seed']}, rules {s['rules']['preset']}, "
        f"{sum(p['seconds'] for p in ladder['pairs']):.0f} s of play).",
        "",
        "| rank | agent | rating (points/deal) | 95% CI | ahead of the next (95% CI) "
        "| Hu rate | self-drawn | deal-in |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in ladder["standings"]:
        lo = r["rating"] - r["ci_half_width"] if r["rating"] is not None else None
        hi = r["rating"] + r["ci_half_width"] if r["rating"] is not None else None
        lines.append(
            f"| {r['rank']} | `{r['agent']}` | **{_f(r['rating'], '+.3f')}** | "
            f"[{_f(lo, '+.3f')}, {_f(hi, '+.3f')}] | {_lead(r)} | {_f(r['hu_rate'], '.3f')} | "
            f"{_f(r['self_drawn_rate'], '.3f')} | {_f(r['deal_in_rate'], '.3f')} |")
    fit = ladder["fit"]
    lines += [
        "",
        f"Rating: weighted least squares over the {fit['pairs']} pairs (chi2 "
        f"{_f(fit['chi2'], '.2f')} on {fit['dof']} degrees of freedom"
        + (f"; intervals widened by sqrt(chi2/dof) = {math.sqrt(fit['scale']):.2f}"
           if fit.get("scale", 1.0) > 1.0 else "")
        + "); ratings sum to zero, so a rating is points per deal against the average of "
        "these agents.",
        "",
        "| A | B | A − B points/deal (95% CI) | A − B, one A vs three B | A − B, one B vs "
        "three A | walls | time |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in ranked_pairs(ladder):
        one, rev = p["runs"] if p["runs"][0]["seats"][0] == p["a"] else p["runs"][::-1]
        cells = []
        for run in (one, rev):
            pw = run["pairwise"]
            sign = 1.0 if pw["a"] == p["a"] else -1.0
            cells.append(f"{_f(sign * pw['mean'], '+.3f')} ± {_f(pw['ci_half_width'], '.3f')}")
        if p.get("dropped"):
            lines.append(f"| `{p['a']}` | `{p['b']}` | not measured (dropped) | – | – | "
                         f"{p['units']} | {_f(p['seconds'], '.1f')} s |")
            continue
        lines.append(
            f"| `{p['a']}` | `{p['b']}` | **{_f(p['mean'], '+.3f')}** "
            f"[{_f(p['ci_low'], '+.3f')}, {_f(p['ci_high'], '+.3f')}] | {cells[0]} | "
            f"{cells[1]} | {p['units']} | {_f(p['seconds'], '.1f')} s |")
    lines.append(END)
    return "\n".join(lines)


def write_markdown(path: str | Path, ladder: dict[str, Any]) -> None:
    """Replace the ladder section of ``path`` (see the module docstring)."""
    path = Path(path)
    section = markdown(ladder)
    if not path.exists():
        path.write_text(f"# Bot ladder\n\n{section}\n")
        return
    text = path.read_text()
    a, b = text.find(BEGIN), text.find(END)
    if a >= 0 and b > a:
        text = text[:a] + section + text[b + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def summary(ladder: dict[str, Any]) -> str:
    """A plain-text version of the standings and the pairs."""
    w = max([8] + [len(r["agent"]) + 2 for r in ladder["standings"]])
    lines = [f"{'rank':<5}{'agent':<{w}}{'rating':>9}{'± 95%':>8}{'lead':>8}{'± 95%':>8}"
             f"{'hu':>7}{'tsumo':>7}{'deal-in':>8}"]
    for r in ladder["standings"]:
        lines.append(f"{r['rank']:<5}{r['agent']:<{w}}{_f(r['rating'], '+.3f'):>9}"
                     f"{_f(r['ci_half_width'], '.3f'):>8}{_f(r.get('lead'), '+.3f'):>8}"
                     f"{_f(r.get('lead_ci_half_width'), '.3f'):>8}{_f(r['hu_rate'], '.3f'):>7}"
                     f"{_f(r['self_drawn_rate'], '.3f'):>7}{_f(r['deal_in_rate'], '.3f'):>8}")
    for p in ranked_pairs(ladder):
        if p.get("dropped"):
            lines.append(f"{p['a']} - {p['b']}: not measured (dropped: {p['dropped']})")
            continue
        lines.append(f"{p['a']} - {p['b']}: {_f(p['mean'], '+.3f')} "
                     f"[{_f(p['ci_low'], '+.3f')}, {_f(p['ci_high'], '+.3f')}] over "
                     f"{p['units']} walls")
    lines.append(f"{ladder['seconds']:.1f} s ({ladder['pairs_reused']} pair(s) reused)")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sichuan_agents.ladder", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agents", required=True,
                   help=agents_help("comma-separated agents (at least two)"))
    p.add_argument("--deals", type=int, default=8000,
                   help="deals per pair, split between the two seatings (default 8000)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rules", default="mil", help="rule preset: mil or mahjongsoft")
    p.add_argument("--out", default=None, help="write the ladder as JSON here")
    p.add_argument("--markdown", default=None,
                   help="write the tables into this Markdown file's ladder section")
    p.add_argument("--resume", default=None,
                   help="reuse the finished pairs of this ladder JSON (default --out too)")
    p.add_argument("--tables", type=int, default=1024, help="tables played at once")
    p.add_argument("--workers", type=int, default=1, help="processes per arena run")
    p.add_argument("--address", default=None,
                   help="play every arena run's walls as Ray tasks on this cluster (auto or "
                        "HOST:PORT), one slice per CPU unless --workers is given")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    for flag, value, low in (("--deals", args.deals, 8), ("--seed", args.seed, 0),
                             ("--tables", args.tables, 1), ("--workers", args.workers, 1)):
        if value < low:  # one line from argparse, exit status 2, before any work
            p.error(f"{flag} must be >= {low}, got {value}"
                    + (" (four deals per wall, two seatings)" if flag == "--deals" else ""))
    if args.address is not None:
        from sichuan_agents.distributed import address_problem

        problem = address_problem(args.address)
        if problem is not None:
            p.error(problem)
    limit_blas_threads(1)
    agents = [s.strip() for s in args.agents.split(",") if s.strip()]
    out = args.out if args.out is not None else args.resume
    command = "python -m sichuan_agents.ladder " + " ".join(
        shlex.quote(x) for x in (sys.argv[1:] if argv is None else argv))
    try:
        prepare_output(out)
        prepare_output(args.markdown)
        done = load_resume(args.resume, args.deals, args.seed, args.rules) \
            if args.resume else []
        from sichuan_env.seats.agent import make_agent

        for spec in agents:  # every spec is checked before the first deal
            agent = make_agent(spec, seed=args.seed)
            if callable(getattr(agent, "close", None)):  # an exec: bot's program
                agent.close()
        ladder = run_ladder(agents, args.deals, args.seed, args.rules, tables=args.tables,
                            workers=args.workers, done=done, out=out, command=command,
                            address=args.address,
                            progress=not args.no_progress and progress_available(),
                            log=sys.stderr)
        print(summary(ladder))
        if out:
            print(f"ladder written to {out}")
        if args.markdown:
            write_markdown(args.markdown, ladder)
            print(f"tables written to {args.markdown}")
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

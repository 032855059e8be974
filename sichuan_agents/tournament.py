"""The tournament: every bot on the same duplicate walls in every seat order that
matters, a rating per bot and a leaderboard (Markdown, JSON, one sortable HTML page).

Command line::

    python -m sichuan_agents.tournament --agents rules,greedy,random,exec:./mybot \\
        --walls 100 --seed 1 --out DIR [--rules mil] [--tables 256] [--workers 2]

Agents are specs for :func:`sichuan_env.seats.agent.make_agent`, ``exec:COMMAND`` programs of
any language included (docs/protocol.md).

**Seatings.** Four-player mahjong is not a sum of pairs: who sits after whom decides who
can pung whose discards and who feeds whom. A *lineup* is a cyclic order of four seats:
with four or more bots, every group of four bots in each of its 6 cyclic orders (the
orders up to rotation); with two or three bots, every cyclic sequence of four seats that
uses each bot at least once (a bot then plays several seats). Every lineup plays the
same ``walls`` walls (``seed``) in the arena's duplicate mode
(:func:`sichuan_agents.arena.run_arena`:
each wall four times, the seats rotated), so every bot meets the same tiles in every
seat and every order.

**Results per bot.** Points per deal with a 95% CI, the unit being the wall (a bot's
average over all its deals on that wall, every lineup included: ``mean ± 1.96·sd/√walls``),
Hu and deal-in rates, and the faults of ``exec:`` bots.

**Rating.** openskill's Plackett-Luce model (the ``openskill`` library, ``tournament``
extra): every deal is one match between the distinct bots at its table, ranked by their
points in the deal (a bot on two seats counts its average); the deals are fed wall by
wall. ``mu ± sigma`` is the rating, ``ordinal = mu − 3·sigma`` the conservative value the
leaderboard is sorted by. The points per deal beside it are the model-free measure.

**Best and worst deals.** For each bot the deal where it scored most and least; their
records are in ``DIR/deals.jsonl`` and each is a replay page of :mod:`sichuan_env.records.viewer`
in ``DIR/replays/``, linked from the HTML leaderboard.

**Resume, progress, workers.** Each finished lineup is saved in ``DIR/lineups/``; a
command run again with the same settings plays only the missing ones (other settings:
an error). A line is printed per lineup. ``--workers`` lineups are played at once, each
worker in its own process with its own bots (and programs).
"""

from __future__ import annotations

import argparse
import contextlib
import html
import importlib.util
import itertools
import json
import math
import multiprocessing as mp
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.arena import limit_blas_threads, mean_ci, replay_records, run_arena
from sichuan_agents.ladder import jsonable
from sichuan_env.core.rules import get_rules
from sichuan_env.core.seeding import agent_seed
from sichuan_env.seats.agent import agents_help, spec_name

FORMAT = "sichuan-tournament/1"
PROG = "python -m sichuan_agents.tournament"


# ----------------------------------------------------------------------------- lineups


def lineups(n: int) -> list[tuple[int, ...]]:
    """The seatings (bot index per seat 0..3) a tournament of ``n`` bots plays: cyclic
    orders up to rotation (see the module docstring), in a fixed order."""
    if n < 2:
        raise ValueError(f"a tournament needs at least two agents, got {n}")
    if n >= 4:
        return [(g[0], *rest) for g in itertools.combinations(range(n), 4)
                for rest in itertools.permutations(g[1:])]
    out = []
    for seq in itertools.product(range(n), repeat=4):
        if len(set(seq)) == n and seq == min(seq[i:] + seq[:i] for i in range(4)):
            out.append(seq)
    return out


# ----------------------------------------------------------------------------- playing

_BUILT: dict[str, Any] = {}


def _agent(spec: str, k: int, seed: int, preset: str, lineup: int) -> Any:
    """The bot of ``spec`` (the ``k``-th agent) for lineup number ``lineup``, named by its
    spec: built anew with seed :func:`sichuan_env.core.seeding.agent_seed` ``(seed, k + 1,
    lineup)``, so a lineup plays the same whenever and wherever it is played; an
    ``exec:`` bot's program is started once per process and kept."""
    if spec in _BUILT:
        return _BUILT[spec]
    from sichuan_env.seats.agent import make_agent

    agent = make_agent(spec, seed=agent_seed(seed, k + 1, lineup), preset=preset)
    if callable(getattr(agent, "close", None)):
        _BUILT[spec] = agent
    else:
        with contextlib.suppress(AttributeError):  # results name it by its spec
            agent.name = spec
    return agent


def close_built() -> None:
    """End the programs of the bots built in this process."""
    for agent in _BUILT.values():
        close = getattr(agent, "close", None)
        if callable(close):
            close()
    _BUILT.clear()


def play_lineup(specs: Sequence[str], number: int, settings: dict[str, Any]
                ) -> dict[str, Any]:
    """Play lineup ``number`` on every wall; the compact result saved in ``DIR/lineups``."""
    preset = get_rules(settings["rules"]).preset
    lineup = lineups(len(specs))[number]
    built: dict[str, Any] = {}
    for b in lineup:
        if specs[b] not in built:
            built[specs[b]] = _agent(specs[b], b, settings["seed"], preset, number)
    objs = [built[specs[b]] for b in lineup]
    for obj in built.values():
        if callable(getattr(obj, "clear_report", None)):
            obj.clear_report()  # an exec: bot's faults and timing of this lineup only
    names = [spec_name(o) for o in objs]
    if len(set(names)) != len(built):
        raise ValueError(f"two agents of {sorted(built)} go by one name: give each its own")
    res = run_arena(objs, deals=4 * settings["walls"], duplicate=True, seed=settings["seed"],
                    rules=settings["rules"], tables=settings["tables"], keep_logs=True,
                    isolate_walls=settings.get("isolate_walls", True))
    index = {name: lineup[names.index(name)] for name in res.names}
    bot = np.array([index[res.names[i]] for i in range(len(res.names))])[res.agent]  # (D, 4)
    points = res.points.astype(np.int64)
    picks: dict[int, dict[str, int]] = {}
    for b in sorted(set(lineup)):
        mine = (bot == b)
        own = np.where(mine, points, 0).sum(1) / mine.sum(1)
        picks[b] = {"best": int(np.argmax(own)), "worst": int(np.argmin(own))}
    wanted = sorted({d for p in picks.values() for d in p.values()})
    recs = replay_records(res, {d: res.logs[d] for d in wanted})
    records = {str(d): r for d, r in zip(wanted, recs, strict=True)}
    for r in records.values():
        r["arena"]["agents"] = [specs[int(b)] for b in bot[r["arena"]["deal"]]]
    return {
        "lineup": [specs[b] for b in lineup],
        "wall": res.unit.tolist(), "rotation": res.rotation.tolist(),
        "bot": bot.tolist(), "points": points.tolist(),
        "hu": res.hu.astype(np.int64).tolist(), "deal_ins": res.deal_ins.astype(np.int64).tolist(),
        "picks": {specs[b]: p for b, p in picks.items()}, "records": records,
        "bots": {index[n]: r for n, r in res.bots.items()} if res.bots else {},
        "seconds": res.seconds,
    }


def _worker(specs: list[str], todo: list[int], settings: dict[str, Any], out: str,
            queue: Any) -> None:
    limit_blas_threads(1)
    try:
        for i in todo:
            _save_lineup(Path(out), i, play_lineup(specs, i, settings))
            queue.put(("done", i))
    except KeyboardInterrupt:
        pass
    except Exception as err:  # noqa: BLE001 - reported to the parent as one line
        first = str(err).splitlines()[0] if str(err) else ""
        queue.put(("error", f"{type(err).__name__}: {first}"))
    finally:
        close_built()
        queue.put(("exit", None))


def _lineup_path(out: Path, i: int) -> Path:
    return out / "lineups" / f"{i:04d}.json"


def _save_lineup(out: Path, i: int, result: dict[str, Any]) -> None:
    path = _lineup_path(out, i)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, separators=(",", ":")))
    tmp.replace(path)  # whole files only: a stopped run leaves no half lineup


def _check_settings(out: Path, settings: dict[str, Any]) -> None:
    path = out / "settings.json"
    if path.exists():
        old = json.loads(path.read_text())
        if old != settings:
            diff = [k for k in settings if old.get(k) != settings[k]]
            raise ValueError(f"{out} holds a tournament with other settings ({', '.join(diff)}"
                             "); give another --out or the same settings to resume it")
    else:
        path.write_text(json.dumps(settings, indent=2) + "\n")


def need_openskill() -> None:
    """ValueError (one line) when the rating's library is not installed."""
    if importlib.util.find_spec("openskill") is None:
        raise ValueError("the rating needs openskill: pip install -e \".[tournament]\"")


def run_tournament(specs: Sequence[str], walls: int, seed: int, out: str | Path, *,
                   rules: str = "mil", tables: int = 256, workers: int = 1,
                   log: Any = None, command: str = "", isolate_walls: bool = True
                   ) -> dict[str, Any]:
    """Play every missing lineup into ``out``, then write and return the leaderboard.
    ``isolate_walls`` (default): no process of an ``exec:`` bot plays two deals of one
    wall, in any lineup (:func:`sichuan_agents.arena.run_arena`)."""
    need_openskill()
    specs = list(specs)
    if len(set(specs)) != len(specs):
        raise ValueError("an agent is named twice")
    if walls < 1:
        raise ValueError("walls must be >= 1")
    get_rules(rules)
    out = Path(out)
    (out / "lineups").mkdir(parents=True, exist_ok=True)
    settings = {"format": FORMAT, "agents": specs, "walls": int(walls), "seed": int(seed),
                "rules": rules, "tables": int(tables)}
    if not isolate_walls:  # the results do not depend on it: kept only when off
        settings["isolate_walls"] = False
    _check_settings(out, settings)
    plan = lineups(len(specs))
    todo = [i for i in range(len(plan)) if not _lineup_path(out, i).exists()]
    say = (lambda text: print(text, file=log, flush=True)) if log is not None else (
        lambda text: None)
    say(f"{len(plan)} lineups x {walls} walls x 4 rotations; {len(plan) - len(todo)} done, "
        f"{len(todo)} to play with {max(1, min(workers, len(todo)))} worker(s)")
    t0 = time.perf_counter()
    done = len(plan) - len(todo)
    if workers <= 1 or len(todo) <= 1:
        limit_blas_threads(1)
        try:
            for i in todo:
                _save_lineup(out, i, play_lineup(specs, i, settings))
                done += 1
                say(f"[{done}/{len(plan)}] {', '.join(specs[b] for b in plan[i])} "
                    f"({time.perf_counter() - t0:.0f} s)")
        finally:
            close_built()
    else:
        _play_parallel(specs, plan, todo, settings, out, workers, say, done, t0)
    board = leaderboard(specs, out, settings, command)
    write_leaderboard(out, board)
    return board


def _play_parallel(specs, plan, todo, settings, out, workers, say, done, t0) -> None:
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods()
                        and "torch" not in sys.modules else "spawn")
    queue = ctx.Queue()
    n = max(1, min(workers, len(todo)))
    procs = [ctx.Process(target=_worker, args=(specs, todo[k::n], settings, str(out), queue))
             for k in range(n)]
    for p in procs:
        p.start()
    alive, error = n, None
    try:
        while alive:
            kind, value = queue.get()
            if kind == "done":
                done += 1
                say(f"[{done}/{len(plan)}] {', '.join(specs[b] for b in plan[value])} "
                    f"({time.perf_counter() - t0:.0f} s)")
            elif kind == "error":
                error = error or value
            else:
                alive -= 1
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    if error:
        raise ValueError(f"a worker stopped: {error}")


# ----------------------------------------------------------------------------- results


def _rating(specs: Sequence[str], parts: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """openskill Plackett-Luce ratings from every deal (see the module docstring)."""
    try:
        from openskill.models import PlackettLuce
    except ImportError as err:
        raise ValueError("the rating needs openskill: pip install -e '.[tournament]'") from err
    model = PlackettLuce()
    ratings = [model.rating(name=s) for s in specs]
    walls = max(max(p["wall"]) for p in parts) + 1
    by_wall = [[] for _ in range(walls)]
    for p in parts:
        for d, w in enumerate(p["wall"]):
            by_wall[w].append((p["bot"][d], p["points"][d]))
    for deals in by_wall:
        for bots, pts in deals:
            present = sorted(set(bots))
            score = [float(np.mean([x for b2, x in zip(bots, pts, strict=True) if b2 == b]))
                     for b in present]
            new = model.rate([[ratings[b]] for b in present], scores=score)
            for b, team in zip(present, new, strict=True):
                ratings[b] = team[0]
    return {s: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()}
            for s, r in zip(specs, ratings, strict=True)}


def leaderboard(specs: Sequence[str], out: Path, settings: dict[str, Any],
                command: str = "") -> dict[str, Any]:
    """The leaderboard of the saved lineups in ``out``."""
    plan = lineups(len(specs))
    parts = [json.loads(_lineup_path(out, i).read_text()) for i in range(len(plan))]
    n, walls = len(specs), settings["walls"]
    tot = np.zeros((n, walls))
    cnt = np.zeros((n, walls))
    hu = np.zeros(n)
    deal_in = np.zeros(n)
    best: dict[str, tuple] = {}
    worst: dict[str, tuple] = {}
    records: list[dict[str, Any]] = []
    bots: dict[str, dict[str, Any]] = {}
    for li, p in enumerate(parts):
        b = np.array(p["bot"])
        pts = np.array(p["points"], np.float64)
        w = np.array(p["wall"])
        for k in range(n):
            mine = b == k
            if not mine.any():
                continue
            np.add.at(tot[k], w, np.where(mine, pts, 0).sum(1))
            np.add.at(cnt[k], w, mine.sum(1))
            hu[k] += np.array(p["hu"])[mine].sum()
            deal_in[k] += (np.array(p["deal_ins"])[mine] > 0).sum()
        for spec, pick in p["picks"].items():
            k = specs.index(spec)
            for which, store, better in (("best", best, 1), ("worst", worst, -1)):
                d = pick[which]
                mine = b[d] == k
                value = float(pts[d][mine].mean())
                if spec not in store or better * value > better * store[spec][0]:
                    store[spec] = (value, li, d)
        for k, r in p["bots"].items():
            spec = specs[int(k)]
            acc = bots.setdefault(spec, {"decisions": 0, "faults": 0, "restarts": 0,
                                         "dropped": None, "time_s": 0.0, "max_s": 0.0})
            t = r["timing"]
            acc["decisions"] += t["decisions"]
            acc["time_s"] += (t["mean_s"] or 0) * t["decisions"]
            acc["max_s"] = max(acc["max_s"], t["max_s"] or 0)
            acc["faults"] += r["fault_count"]
            acc["restarts"] += r["restarts"]
            acc["dropped"] = acc["dropped"] or r["dropped"]
    links: dict[tuple[int, int], int] = {}
    for store in (best, worst):
        for _, li, d in store.values():
            if (li, d) not in links:
                links[(li, d)] = len(records)
                rec = dict(parts[li]["records"][str(d)])
                rec["tournament"] = {"lineup": parts[li]["lineup"], "deal": d}
                records.append(rec)
    rating = _rating(specs, parts)
    rows = []
    for k, spec in enumerate(specs):
        with np.errstate(invalid="ignore", divide="ignore"):
            units = tot[k] / cnt[k]
        m, half, sd = mean_ci(units[cnt[k] > 0])
        seat_deals = int(cnt[k].sum())
        row = {"agent": spec, **rating[spec], "mean": m, "ci_low": m - half,
               "ci_high": m + half, "ci_half_width": half, "walls": int((cnt[k] > 0).sum()),
               "seat_deals": seat_deals, "hu_rate": hu[k] / seat_deals,
               "deal_in_rate": deal_in[k] / seat_deals,
               "best": {"points": best[spec][0], "record": links[best[spec][1:]]},
               "worst": {"points": worst[spec][0], "record": links[worst[spec][1:]]}}
        if spec in bots:
            acc = bots[spec]
            row["exec"] = {"decisions": acc["decisions"], "faults": acc["faults"],
                           "restarts": acc["restarts"], "dropped": acc["dropped"],
                           "mean_ms": 1000 * acc["time_s"] / acc["decisions"]
                           if acc["decisions"] else None, "max_ms": 1000 * acc["max_s"]}
        rows.append(row)
    rows.sort(key=lambda r: -r["ordinal"])
    for i, r in enumerate(rows):
        r["rank"] = i + 1
    return {"format": FORMAT, "settings": settings, "command": command,
            "lineups": len(plan), "deals": int(sum(len(p["wall"]) for p in parts)),
            "rating": "openskill PlackettLuce (defaults mu 25, sigma 25/3); a match per "
                      "deal between its distinct bots ranked by points; fed wall by wall; "
                      "sorted by ordinal = mu - 3 sigma",
            "ci": "95% normal: mean +- 1.959964 * sd(per-wall means, ddof=1) / sqrt(walls)",
            "standings": rows, "records": records}


def _f(x: Any, fmt: str) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, fmt)


def markdown(board: dict[str, Any]) -> str:
    """The leaderboard as a Markdown table."""
    s = board["settings"]
    lines = [f"Tournament: {len(s['agents'])} agents, {board['lineups']} lineups, "
             f"{s['walls']} walls (seed {s['seed']}, rules {s['rules']}), {board['deals']} "
             "deals.", "",
             "| rank | agent | rating (ordinal) | mu ± sigma | points/deal (95% CI) | hu | "
             "deal-in | seat-deals | faults |", "|---|---|---|---|---|---|---|---|---|"]
    for r in board["standings"]:
        faults = str(r["exec"]["faults"]) if "exec" in r else ""
        if "exec" in r and r["exec"]["dropped"]:
            faults += ", dropped: its points are partly its fallback's"
        lines.append(f"| {r['rank']} | `{r['agent']}` | {r['ordinal']:.2f} | {r['mu']:.2f} ± "
                     f"{r['sigma']:.2f} | {_f(r['mean'], '+.3f')} ± "
                     f"{_f(r['ci_half_width'], '.3f')} | {r['hu_rate']:.3f} | "
                     f"{r['deal_in_rate']:.3f} | {r['seat_deals']} | {faults} |")
    lines += ["", board["rating"] + ".", "CI: " + board["ci"] + "."]
    if board["command"]:
        lines += ["", f"Reproduce: `{board['command']}`"]
    return "\n".join(lines) + "\n"


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Leaderboard</title>
<style>
body{{font-family:system-ui,sans-serif;margin:2em;color:#222}}
table{{border-collapse:collapse}} th,td{{padding:.3em .7em;border-bottom:1px solid #ddd;
text-align:right}} td.a,th.a{{text-align:left}} th{{cursor:pointer;background:#f4f4f4}}
th[aria-sort=ascending]::after{{content:" ▲"}} th[aria-sort=descending]::after{{content:" ▼"}}
</style></head><body>
<h1>Leaderboard</h1>
<p>{summary}</p>
<table id="board"><thead><tr>{head}</tr></thead><tbody>
{rows}
</tbody></table>
<p>{notes}</p>
<script>
for (const th of document.querySelectorAll("#board th")) {{
  th.addEventListener("click", () => {{
    const col = th.cellIndex, body = th.closest("table").tBodies[0];
    const down = th.getAttribute("aria-sort") !== "descending";
    for (const other of th.parentNode.children) other.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
    const key = (tr) => {{ const c = tr.cells[col]; const v = c.dataset.v ?? c.textContent;
      const x = parseFloat(v); return isNaN(x) ? v : x; }};
    const rows = [...body.rows].sort((a, b) => {{ const x = key(a), y = key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (down ? -1 : 1); }});
    for (const tr of rows) body.appendChild(tr);
  }});
}}
</script></body></html>
"""

_COLUMNS = ("rank", "agent", "rating (ordinal)", "mu", "sigma", "points/deal", "95% CI",
            "hu", "deal-in", "seat-deals", "faults", "best deal", "worst deal")


def render_html(board: dict[str, Any], replays: dict[int, str]) -> str:
    """The sortable leaderboard page (``replays``: record index -> replay page)."""
    def cell(text: Any, value: Any = None, left: bool = False) -> str:
        v = "" if value is None else f' data-v="{html.escape(str(value))}"'
        return f'<td{v}{" class=a" if left else ""}>{text}</td>'

    rows = []
    for r in board["standings"]:
        faults = r["exec"]["faults"] if "exec" in r else ""
        if "exec" in r and r["exec"]["dropped"]:
            faults = f"{faults}, dropped"
        links = []
        for which in ("best", "worst"):
            page = replays[r[which]["record"]]
            links.append(cell(f'<a href="{html.escape(page)}">{r[which]["points"]:+.1f}</a>',
                              r[which]["points"]))
        rows.append("<tr>" + "".join([
            cell(r["rank"]), cell(html.escape(r["agent"]), r["agent"], left=True),
            cell(f"{r['ordinal']:.2f}"), cell(f"{r['mu']:.2f}"), cell(f"{r['sigma']:.2f}"),
            cell(_f(r["mean"], "+.3f"), r["mean"]),
            cell(f"[{_f(r['ci_low'], '+.3f')}, {_f(r['ci_high'], '+.3f')}]", r["ci_low"]),
            cell(f"{r['hu_rate']:.3f}"), cell(f"{r['deal_in_rate']:.3f}"),
            cell(r["seat_deals"]), cell(faults, r["exec"]["faults"] if "exec" in r else -1),
            *links,
        ]) + "</tr>")
    s = board["settings"]
    summary = (f"{len(s['agents'])} agents, {board['lineups']} lineups (every cyclic seat "
               f"order), {s['walls']} duplicate walls, seed {s['seed']}, rules {s['rules']}: "
               f"{board['deals']} deals. Click a column to sort.")
    head = "".join(f'<th{" class=a" if c == "agent" else ""}>{html.escape(c)}</th>'
                   for c in _COLUMNS)
    notes = html.escape(board["rating"] + ". CI: " + board["ci"] + ".")
    return _PAGE.format(summary=html.escape(summary), head=head, rows="\n".join(rows),
                        notes=notes)


def write_leaderboard(out: Path, board: dict[str, Any]) -> None:
    """``leaderboard.json``, ``.md``, ``.html``, ``deals.jsonl`` and ``replays/``."""
    from sichuan_env.records.viewer import write_replay

    (out / "replays").mkdir(exist_ok=True)
    replays = {}
    with open(out / "deals.jsonl", "w") as f:
        for i, rec in enumerate(board["records"]):
            f.write(json.dumps(rec) + "\n")
            name = f"replays/deal-{i:03d}.html"
            write_replay(rec, out / name, title=f"{' · '.join(rec['arena']['agents'])}")
            replays[i] = name
    slim = {k: v for k, v in board.items() if k != "records"}
    slim["replays"] = [replays[i] for i in range(len(board["records"]))]
    (out / "leaderboard.json").write_text(json.dumps(jsonable(slim), indent=2) + "\n")
    (out / "leaderboard.md").write_text(markdown(board))
    (out / "leaderboard.html").write_text(render_html(board, replays))


# ----------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agents", required=True,
                   help=agents_help("comma-separated agents (at least two)"))
    p.add_argument("--walls", type=int, default=100, help="duplicate walls (default 100)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, help="the tournament's folder (resumed if it "
                   "holds one with the same settings)")
    p.add_argument("--rules", default="mil", help="rule preset: mil or mahjongsoft")
    p.add_argument("--tables", type=int, default=256, help="tables played at once")
    p.add_argument("--workers", type=int, default=1, help="lineups played at once")
    p.add_argument("--share-walls", action="store_true",
                   help="let one process of an exec: bot play several deals of one wall "
                        "(fewer processes; a bot could then remember a wall)")
    args = p.parse_args(argv)
    for flag, value, low in (("--walls", args.walls, 1), ("--seed", args.seed, 0),
                             ("--tables", args.tables, 1), ("--workers", args.workers, 1)):
        if value < low:
            p.error(f"{flag} must be >= {low}, got {value}")
    specs = [s.strip() for s in args.agents.split(",") if s.strip()]
    command = f"{PROG} " + " ".join(shlex.quote(x) for x in
                                    (sys.argv[1:] if argv is None else argv))
    try:
        need_openskill()  # before any lineup is played
        lineups(len(specs))
        from sichuan_env.seats.agent import make_agent

        for spec in specs:  # every spec is checked (and every program started) first
            agent = make_agent(spec, seed=args.seed, preset=get_rules(args.rules).preset)
            if callable(getattr(agent, "close", None)):
                agent.close()
        board = run_tournament(specs, args.walls, args.seed, args.out, rules=args.rules,
                               tables=args.tables, workers=args.workers, log=sys.stderr,
                               command=command, isolate_walls=not args.share_walls)
    except (ValueError, OSError) as err:
        print(f"error: {str(err).splitlines()[0] if str(err) else err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted (the finished lineups are kept; run again to resume)",
              file=sys.stderr)
        return 130
    print(markdown(board), end="")
    print(f"leaderboard written to {Path(args.out) / 'leaderboard.html'} (.md, .json)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

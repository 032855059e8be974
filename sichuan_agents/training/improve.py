"""Repeated policy improvement: rollouts by generation k, fitted into generation k+1.

    python -m sichuan_agents.training.improve --init sichuan_agents/models/fitted_mil.zip --out
    runs/improve \\
        --generations 3 --shards 12 --val 3 --deals 2000 --arena-deals 8000

One generation is one step of policy iteration (:mod:`sichuan_agents.training.rollout_teacher`,
:mod:`sichuan_agents.training.distill`):

1. **rollouts**: the current generation's model plays four seats of ``--shards`` shards of
   ``--deals`` deals, and every play-out (shard seeds ``--seed-base + 100 * k + j``);
   column 0 of each sample is its own choice;
2. **fit**: a copy of it is fitted to the comparisons of all but the last ``--val``
   shards; the held-out shards estimate what its changed choices win per deal over the
   current generation (``per_deal`` with a 95% CI; unbiased: those returns took no part);
3. **arena**: the fitted model against three ``rules`` (duplicate, ``--arena-deals`` deals
   of ``--arena-seed``; the same deals for every generation, and for the start);
4. **keep only if better**: the new model becomes the current generation when its held-out
   gain is above zero and its arena figure is not below the current one's (minus
   ``--arena-tolerance``); otherwise it is recorded as rejected and the next try starts
   again from the current generation with new shards.

Everything lands in ``--out``: ``state.json`` (what is done; running the same command again
resumes after the last finished step), ``genK/`` (shards and model), ``current.zip`` (the
latest kept generation) and ``generations.md`` (one row per generation tried).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

STATE = "state.json"


def keep_generation(held_out: dict[str, float], arena: dict[str, float],
                    current_arena: dict[str, float], tolerance: float = 0.0) -> bool:
    """Whether a fitted generation replaces the current one: its held-out gain per deal
    over the current generation is above zero and its arena figure against ``rules`` is
    not below the current one's by more than ``tolerance`` points per deal."""
    return held_out["per_deal"] > 0 and arena["diff"] >= current_arena["diff"] - tolerance


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--init", default=None,
                   help="generation 0 (default: the shipped fitted model for --rules)")
    p.add_argument("--out", required=True)
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--generations", type=int, default=3, help="generations to try in all")
    p.add_argument("--shards", type=int, default=12)
    p.add_argument("--val", type=int, default=3, help="shards held out of each fit")
    p.add_argument("--deals", type=int, default=2000, help="deals per shard")
    p.add_argument("--seed-base", type=int, default=600)
    p.add_argument("--sample-prob", type=float, default=0.03)
    p.add_argument("--claim-prob", type=float, default=1.0)
    p.add_argument("--void-prob", type=float, default=0.02)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--margin", type=float, default=0.5)
    p.add_argument("--discard-margin", type=float, default=3.0)
    p.add_argument("--void-margin", type=float, default=3.0)
    p.add_argument("--arena-deals", type=int, default=8000)
    p.add_argument("--arena-seed", type=int, default=77)
    p.add_argument("--arena-tolerance", type=float, default=0.0)
    p.add_argument("--tables", type=int, default=256, help="tables per rollout batch")
    a = p.parse_args(argv)
    for flag, v, lo in (("--generations", a.generations, 1), ("--shards", a.shards, 2),
                        ("--val", a.val, 1), ("--deals", a.deals, 1), ("--epochs", a.epochs, 1),
                        ("--arena-deals", a.arena_deals, 4), ("--tables", a.tables, 1)):
        if v < lo:
            p.error(f"{flag} must be >= {lo}, got {v}")
    if a.val >= a.shards:
        p.error(f"--val must leave shards to fit on: --val {a.val} of --shards {a.shards}")
    if not all(0 < x <= 1 for x in (a.sample_prob, a.claim_prob, a.void_prob)):
        p.error("--sample-prob, --claim-prob and --void-prob must be in (0, 1]")
    if a.init is not None and not Path(a.init).is_file():
        p.error(f"--init: no such file {a.init!r}")
    return a


#: Settings that must match when a run is resumed (the others may change between calls).
FIXED = ("init", "rules", "shards", "val", "deals", "seed_base", "sample_prob", "claim_prob",
         "void_prob", "epochs", "lr", "margin", "discard_margin", "void_margin",
         "arena_deals", "arena_seed")


def load_state(out: Path, config: dict[str, Any]) -> dict[str, Any]:
    """The run's state: a new one, or the saved one when its fixed settings match."""
    path = out / STATE
    if not path.exists():
        return {"config": config, "current": 0, "generations": []}
    state = json.loads(path.read_text())
    diff = [k for k in FIXED if state["config"].get(k) != config.get(k)]
    if diff:
        raise SystemExit(f"improve: {out} holds a run with other settings ({', '.join(diff)}); "
                         "give another --out")
    return state


def save_state(out: Path, state: dict[str, Any]) -> None:
    tmp = out / (STATE + ".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(out / STATE)


def arena_row(model_path: Path, rules: str, deals: int, seed: int) -> dict[str, float]:
    """A model against three ``rules``: duplicate arena, points per deal over the bot."""
    from sichuan_agents.arena import run_arena
    from sichuan_agents.models.ppo import PPOAgent

    agent = PPOAgent(model_path, rules=rules)
    agent.name = "model"
    res = run_arena([agent, "rules", "rules", "rules"], deals=deals, duplicate=True,
                    seed=seed, rules=rules, progress=False)
    d = res.pairwise("model", "rules")
    return {"diff": round(d["mean"], 4), "ci_low": round(d["ci_low"], 4),
            "ci_high": round(d["ci_high"], 4), "deals": int(res.deals), "seed": seed}


def write_table(out: Path, state: dict[str, Any]) -> None:
    """``generations.md``: one row per generation tried."""
    c = state["config"]
    lines = [f"Generations of `python -m sichuan_agents.training.improve` ({c['rules']}; "
             f"{c['shards']} shards of {c['deals']} deals, {c['val']} held out; arena: "
             f"{c['arena_deals']} deals of seed {c['arena_seed']} against three `rules`)", "",
             "| gen | from | samples fitted / held out | held-out gain per deal over its "
             "parent | arena − `rules` | kept |", "|---|---|---|---|---|---|"]
    g0 = state.get("start_arena")
    if g0:
        lines.append(f"| 0 | {Path(c['init']).name} | – | – | {g0['diff']:+.3f} "
                     f"[{g0['ci_low']:+.3f}, {g0['ci_high']:+.3f}] | start |")
    for g in state["generations"]:
        if "kept" not in g:
            continue
        h, ar = g["held_out"], g["arena"]
        lines.append(f"| {g['k']} | gen {g['parent']} | {g['train_samples']:,} / "
                     f"{g['val_samples']:,} | {h['per_deal']:+.3f} [±{h['per_deal_ci95']:.3f}]"
                     f" | {ar['diff']:+.3f} [{ar['ci_low']:+.3f}, {ar['ci_high']:+.3f}] | "
                     f"{'yes' if g['kept'] else 'no'} |")
    (out / "generations.md").write_text("\n".join(lines) + "\n")


def run(a: argparse.Namespace, log: Any = print) -> dict[str, Any]:
    """Run (or resume) the loop; returns the final state."""
    import torch

    from sichuan_agents.models.ppo import PPOAgent, shipped_model
    from sichuan_agents.training.distill import fit, load_shards
    from sichuan_agents.training.ppo_policy import load_model
    from sichuan_agents.training.rollout_teacher import generate

    torch.set_num_threads(1)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    init = Path(a.init) if a.init else shipped_model(a.rules, "fitted")
    config = {k: getattr(a, k) for k in FIXED} | {"init": str(init)}
    state = load_state(out, config)
    current = out / "current.zip"
    if not current.exists():
        shutil.copy(init, current)
        meta = init.with_suffix(".json")
        if meta.exists():
            shutil.copy(meta, current.with_suffix(".json"))
    if "start_arena" not in state:
        log(f"generation 0 ({init.name}) in the arena: {a.arena_deals} deals")
        state["start_arena"] = arena_row(current, a.rules, a.arena_deals, a.arena_seed)
        state["current_arena"] = state["start_arena"]
        save_state(out, state)
    while len([g for g in state["generations"] if "kept" in g]) < a.generations:
        if not state["generations"] or "kept" in state["generations"][-1]:
            state["generations"].append({"k": len(state["generations"]) + 1,
                                         "parent": state["current"], "shards": []})
            save_state(out, state)
        g = state["generations"][-1]
        k = g["k"]
        folder = out / f"gen{k}"
        folder.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        player = PPOAgent(current, rules=a.rules)
        for j in range(a.shards):
            seed = a.seed_base + 100 * (k - 1) + j
            path = folder / f"s{seed}.npz"
            if str(path) in g["shards"]:
                continue
            log(f"gen {k}: shard {j + 1}/{a.shards} (seed {seed}, {a.deals} deals, played "
                f"by gen {g['parent']})")
            data = generate(a.deals, seed, a.rules, a.sample_prob, a.claim_prob, a.void_prob,
                            tables=a.tables, player=player)
            np.savez_compressed(path, **data)
            g["shards"].append(str(path))
            save_state(out, state)
        model_path = folder / "model.zip"
        if "held_out" not in g:
            data = load_shards(g["shards"])
            val = np.flatnonzero(data["shard"] >= a.shards - a.val)
            train = np.flatnonzero(data["shard"] < a.shards - a.val)
            model = load_model(current, device="cpu")
            layout = player.layout
            hist = fit(model, data, train, val, epochs=a.epochs, lr=a.lr,
                       margin=a.margin, discard_margin=a.discard_margin,
                       void_margin=a.void_margin, seed=k,
                       log=lambda s, k=k: log(f"gen {k}: {s[:160]}"))
            model.sichuan_rules = a.rules
            model.sichuan_input = dict(layout)
            model.save(model_path)
            last = hist[-1]
            g["held_out"] = {"per_deal": float(last.get("per_deal", 0.0)),
                             "per_deal_ci95": float(last.get("per_deal_ci95", 0.0)),
                             "deviate": float(last["deviate"])}
            g["train_samples"], g["val_samples"] = int(train.size), int(val.size)
            save_state(out, state)
        if "arena" not in g:
            log(f"gen {k}: arena, {a.arena_deals} deals against rules")
            g["arena"] = arena_row(model_path, a.rules, a.arena_deals, a.arena_seed)
            save_state(out, state)
        g["kept"] = keep_generation(g["held_out"], g["arena"], state["current_arena"],
                                    a.arena_tolerance)
        if g["kept"]:
            shutil.copy(model_path, current)
            current.with_suffix(".json").unlink(missing_ok=True)
            state["current"], state["current_arena"] = k, g["arena"]
        g["seconds"] = round(g.get("seconds", 0) + time.perf_counter() - t0, 1)
        save_state(out, state)
        write_table(out, state)
        h, ar = g["held_out"], g["arena"]
        log(f"gen {k}: held-out {h['per_deal']:+.3f} [±{h['per_deal_ci95']:.3f}] per deal "
            f"over gen {g['parent']}, arena {ar['diff']:+.3f} [{ar['ci_low']:+.3f}, "
            f"{ar['ci_high']:+.3f}]: {'kept' if g['kept'] else 'rejected'}")
    write_table(out, state)
    return state


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    state = run(a, log=lambda s: print(s, flush=True))
    print(f"current generation: {state['current']} ({Path(a.out) / 'current.zip'}); "
          f"table: {Path(a.out) / 'generations.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

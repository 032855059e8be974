"""PPO fine-tuning of a strong policy: critic first, then PPO held near the start by KL.

    python -m sichuan_agents.training.finetune --init sichuan_agents/models/fitted_mil.zip --out
    runs/ft \\
        --total-steps 2000000 --eval-every 200000 --eval-deals 2000

Starts from a model that reads the advice planes (a shipped ``fitted`` model by default)
and trains it with :class:`sichuan_agents.training.kl_ppo.KLMaskablePPO` on the batched
environment with the oracle critic (:mod:`sichuan_agents.training.oracle_critic`):

0. the start's logits are multiplied by ``--sharpen`` (its choices unchanged): a fitted
   model's logits are returns in points, so its softmax is too soft for sampled rollouts
   to play as the policy does (entropy about 0.5 nats per decision);
1. **critic warm-up**: rollouts of the start policy train the value function alone (the
   actor frozen) until its explained variance stops rising (``--warmup-patience``
   rollouts without a gain of 0.01, at most ``--warmup-max`` rollouts);
2. **PPO with a KL penalty** (``--kl-coef``) to the frozen start policy, large batches;
3. **opponents**: a pool, one seat each after the learner's: ``rules``, the start policy
   and a past self (a snapshot of the learner taken every ``--snapshot-every`` decisions;
   each refresh plays a random earlier snapshot), or the names given by ``--opponents``;
4. ``--reference rules`` (or ``start``, or any agent): paired-deal rewards
   (:mod:`sichuan_env.envs.paired`): every deal is also played from its start with that agent
   in the learner's seat, and its points are subtracted at the deal's end.

Every ``--eval-every`` PPO decisions (and before the first), the duplicate arena plays the
policy against three ``rules`` on ``--eval-deals`` deals of ``--eval-seed`` (the same deals
each time): ``curve.jsonl`` and ``curve.png`` (points per deal against ``rules`` over PPO
decisions, with 95% CIs and the start's level) in ``--out``, with ``checkpoints/`` and
``model.zip`` (saved with its input layout and preset).

**Resuming.** ``state.json`` in ``--out`` records the run's settings, the warm-up's length,
the PPO decisions done and the last checkpoint (written after the warm-up and after every
``--eval-every`` decisions). Running the command again with the same ``--out`` continues
from there: no second warm-up, the curve goes on, the optimizer's state comes back with
the weights, and the tables are dealt from ``--seed`` plus the decisions done (new deals,
not a replay). ``--total-steps``, ``--time-limit`` and ``--threads`` may change between
runs; any other setting that differs is a one-line error (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.seats.agent import agents_help


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--init", default=None,
                   help="the model to start from (default: the shipped fitted model)")
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--out", required=True)
    p.add_argument("--total-steps", type=int, default=2_000_000,
                   help="PPO learner decisions after the warm-up")
    p.add_argument("--tables", type=int, default=64, help="tables per learner seat (64)")
    p.add_argument("--n-steps", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=8192)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--ent-coef", type=float, default=0.0)
    p.add_argument("--kl-coef", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=0.1)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--sharpen", type=float, default=4.0,
                   help="multiply the start's logits by this (argmax unchanged) so that the "
                        "sampled rollouts play close to the deterministic policy (4)")
    p.add_argument("--warmup-max", type=int, default=20, help="critic-only rollouts at most")
    p.add_argument("--warmup-patience", type=int, default=2)
    p.add_argument("--opponents", default="pool",
                   help=agents_help("pool (rules, the start policy, a past self) or three "
                                    "agents"))
    p.add_argument("--reference", default=None,
                   help=agents_help("paired-deal rewards (sichuan_env.envs.paired): each deal is "
                                    "also played from its start by this agent in the "
                                    "learner's seat, its points subtracted at the deal's "
                                    "end; an agent (rules), start (the start policy, "
                                    "frozen), or none (default)"))
    p.add_argument("--snapshot-every", type=int, default=100_000)
    p.add_argument("--eval-every", type=int, default=200_000)
    p.add_argument("--eval-deals", type=int, default=2000)
    p.add_argument("--eval-seed", type=int, default=4242)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-limit", type=float, default=0.0, help="minutes (0: none)")
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args(argv)
    if a.reference == "none":
        a.reference = None  # a run recorded without the option has None
    for flag, v, lo in (("--total-steps", a.total_steps, 0), ("--tables", a.tables, 1),
                        ("--n-steps", a.n_steps, 1), ("--batch-size", a.batch_size, 1),
                        ("--epochs", a.epochs, 1), ("--warmup-max", a.warmup_max, 0),
                        ("--warmup-patience", a.warmup_patience, 1),
                        ("--eval-every", a.eval_every, 1), ("--eval-deals", a.eval_deals, 4),
                        ("--snapshot-every", a.snapshot_every, 1)):
        if v < lo:
            p.error(f"{flag} must be >= {lo}, got {v}")
    if not a.sharpen > 0:
        p.error(f"--sharpen must be > 0, got {a.sharpen}")
    if not (a.lr > 0 and a.kl_coef >= 0 and 0 < a.clip < 1 and 0 < a.gamma <= 1):
        p.error("--lr must be > 0, --kl-coef >= 0, --clip in (0, 1), --gamma in (0, 1]")
    if a.init is not None and not Path(a.init).is_file():
        p.error(f"--init: no such file {a.init!r}")
    return a


def arena_point(agent: Any, rules: str, deals: int, seed: int) -> dict[str, float]:
    """``agent`` against three ``rules``: duplicate arena, points per deal over the bot."""
    from sichuan_agents.arena import run_arena

    agent.name = "learner"
    res = run_arena([agent, "rules", "rules", "rules"], deals=deals, duplicate=True,
                    seed=seed, rules=rules, tables=512, progress=False)
    d = res.pairwise("learner", "rules")
    return {"diff": d["mean"], "ci_low": d["ci_low"], "ci_high": d["ci_high"],
            "deals": res.deals}


def plot_curve(points: list[dict[str, Any]], path: Path, title: str) -> None:
    """The learning curve: arena points against ``rules`` over PPO decisions."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.array([p["steps"] for p in points], float)
    y = np.array([p["diff"] for p in points])
    lo = np.array([p["ci_low"] for p in points])
    hi = np.array([p["ci_high"] for p in points])
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.fill_between(x, lo, hi, alpha=0.25, label="95% CI")
    ax.plot(x, y, marker="o", label="policy − rules")
    ax.axhline(y[0], color="grey", ls="--", lw=1, label="start policy")
    ax.axhline(0, color="black", lw=0.5)
    ax.set_xlabel("PPO learner decisions (after the critic warm-up)")
    ax.set_ylabel("points per deal vs rules")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


#: Settings a resumed run may change (the rest must match the run in ``--out``).
RESUMABLE_CHANGES = ("total_steps", "time_limit", "threads", "out")


def run_settings(a: argparse.Namespace, init: Path) -> dict[str, Any]:
    """The settings that define a run (what a resumed run must repeat)."""
    kept = {k: v for k, v in vars(a).items() if k not in RESUMABLE_CHANGES}
    kept["init"] = str(init)
    return kept


def read_state(out: Path) -> dict[str, Any] | None:
    """The run recorded in ``out/state.json``, or None for a fresh run."""
    path = out / "state.json"
    return json.loads(path.read_text()) if path.is_file() else None


def write_state(out: Path, state: dict[str, Any]) -> None:
    """Write ``out/state.json`` whole or not at all (a temporary file, then a rename)."""
    tmp = out / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(out / "state.json")


def read_curve(path: Path, done: int) -> list[dict[str, Any]]:
    """The curve's points up to ``done`` PPO decisions (a point written after the last
    checkpoint is dropped, and the file rewritten without it)."""
    if not path.is_file():
        return []
    points = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    kept = [p for p in points if p["steps"] <= done]
    if len(kept) != len(points):
        path.write_text("".join(json.dumps(p) + "\n" for p in kept))
    return kept


def sharpen(policy: Any, factor: float) -> None:
    """Scale the actor's output layer by ``factor``: every logit times ``factor``, so the
    most likely action stays the same and a sample follows it more often."""
    import torch

    with torch.no_grad():
        policy.action_net.weight.mul_(factor)
        policy.action_net.bias.mul_(factor)


class Pool:
    """Snapshots of the learner; :meth:`refresh` loads a random one into the past-self seat."""

    def __init__(self, agent: Any, seed: int) -> None:
        self.agent = agent
        self.states: list[dict[str, Any]] = []
        self.rng = np.random.default_rng(seed)

    def add(self, policy: Any) -> None:
        import copy

        self.states.append(copy.deepcopy(policy.state_dict()))

    def refresh(self) -> int:
        i = int(self.rng.integers(len(self.states)))
        self.agent.model.policy.load_state_dict(self.states[i])
        return i


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    import torch

    from sichuan_agents.models.ppo import PPOAgent, shipped_model
    from sichuan_agents.training.advice import AdviceVecEnv, make_adviser
    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.kl_ppo import KLMaskablePPO
    from sichuan_agents.training.oracle_critic import OracleVecEnv
    from sichuan_agents.training.ppo_policy import load_model
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.seats.agent import make_agent

    torch.set_num_threads(max(1, a.threads))
    init = Path(a.init) if a.init else shipped_model(a.rules, "fitted")
    out = Path(a.out)
    settings = run_settings(a, init)
    resume = read_state(out)
    if resume is not None:
        differ = [f"--{k.replace('_', '-')} {resume['settings'].get(k)!r} there, {v!r} here"
                  for k, v in settings.items() if resume["settings"].get(k) != v]
        if differ:
            print(f"finetune: {out} holds a run with other settings ({'; '.join(differ)}): "
                  "use another --out or the same settings", file=sys.stderr)
            return 2
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    start = PPOAgent(init, rules=a.rules)
    layout = start.layout
    if not (layout["advice"] and layout["oracle"]):
        print(f"finetune: {init} must read the advice planes and have an oracle critic",
              file=sys.stderr)
        return 2
    if a.opponents == "pool":
        past = PPOAgent(init, rules=a.rules, deterministic=False)
        sharpen(past.model.policy, a.sharpen)
        pool: Pool | None = Pool(past, a.seed)
        opponents = [make_agent("rules", seed=a.seed + 1), start, past]
    else:
        pool = None
        names = [s.strip() for s in a.opponents.split(",")]
        if len(names) != 3:
            print("finetune: --opponents takes pool or three agent names", file=sys.stderr)
            return 2
        opponents = [make_agent(n, seed=a.seed + i, preset=a.rules) for i, n in
                     enumerate(names)]
    done = 0 if resume is None else int(resume["done"])
    reference = start if a.reference == "start" else a.reference
    try:
        env = SichuanVecEnv(a.tables, rules=a.rules, opponents=opponents, seed=a.seed + done,
                            reference=reference)
    except ValueError as err:
        print(f"finetune: --reference: {err}", file=sys.stderr)
        return 2
    base_env = env
    env = OracleVecEnv(AdviceVecEnv(AnalysisVecEnv(env), make_adviser("rules")))
    lr = float(a.lr)
    model = load_model(init, env=env, device="cpu", cls=KLMaskablePPO, custom_objects={
        "learning_rate": lr, "lr_schedule": lambda _: lr, "clip_range": lambda _: a.clip},
        n_steps=a.n_steps, batch_size=a.batch_size, n_epochs=a.epochs, ent_coef=a.ent_coef,
        gamma=a.gamma, tensorboard_log=str(out / "tb"))
    model.sichuan_rules = a.rules
    model.sichuan_input = dict(layout)
    sharpen(model.policy, a.sharpen)
    model.kl_coef = a.kl_coef
    model.freeze_reference()
    if pool is not None:
        pool.add(model.policy)
    if resume is not None:  # the reference above stays the (sharpened) start
        model.set_parameters(str(out / resume["checkpoint"]), exact_match=True, device="cpu")
        model.num_timesteps = int(resume["warm_steps"]) + done
        if pool is not None:
            pool.add(model.policy)
        print(f"resuming {out} after {done:,} PPO decisions ({resume['checkpoint']})",
              flush=True)
    rollout = a.n_steps * env.num_envs
    log = open(out / "log.jsonl", "a")  # noqa: SIM115 (written through the run)
    t0 = time.perf_counter()

    def note(**kw: Any) -> None:
        kw["seconds"] = round(time.perf_counter() - t0, 1)
        log.write(json.dumps(kw) + "\n")
        log.flush()

    def checkpoint(name: str, steps: int) -> None:  # after warm_steps is set below
        model.save(out / "checkpoints" / name)
        write_state(out, {"settings": settings, "warm_steps": warm_steps, "done": steps,
                          "checkpoint": f"checkpoints/{name}"})

    # 1. the critic alone, until its explained variance stops rising
    model.critic_only = True
    best_ev, stale = -np.inf, 0
    for i in range(a.warmup_max if resume is None else 0):
        model.learn(rollout, reset_num_timesteps=False, progress_bar=False)
        ev = model.last_stats["explained_variance"]
        note(phase="warmup", rollout=i + 1, **model.last_stats)
        print(f"critic warm-up {i + 1}: explained variance {ev:+.3f}", flush=True)
        if ev > best_ev + 0.01:
            best_ev, stale = ev, 0
        else:
            stale += 1
            if stale >= a.warmup_patience:
                break
    model.critic_only = False
    if resume is None:
        warm_steps = int(model.num_timesteps)
        checkpoint("warm.zip", 0)
    else:
        warm_steps = int(resume["warm_steps"])
    # 2. PPO with the KL penalty; the curve every --eval-every decisions
    curve_path = out / "curve.jsonl"
    if resume is None:
        curve_path.unlink(missing_ok=True)  # a fresh run draws a fresh curve
    points = read_curve(curve_path, done)
    title = (f"{a.rules}: PPO from {init.name}, KL {a.kl_coef}, lr {lr:g}, batch "
             f"{a.batch_size}; {a.eval_deals} deals, seed {a.eval_seed}")

    def evaluate(steps: int) -> None:
        agent = PPOAgent(model, rules=a.rules)
        pt = {"steps": steps, **arena_point(agent, a.rules, a.eval_deals, a.eval_seed)}
        points.append(pt)
        with open(curve_path, "a") as f:
            f.write(json.dumps(pt) + "\n")
        plot_curve(points, out / "curve.png", title)
        print(f"[{steps:,} PPO decisions] policy - rules {pt['diff']:+.3f} "
              f"[{pt['ci_low']:+.3f}, {pt['ci_high']:+.3f}] ({pt['deals']} deals)", flush=True)

    if not points or points[-1]["steps"] != done:
        evaluate(done)
    next_snap = (done // a.snapshot_every + 1) * a.snapshot_every
    while done < a.total_steps:
        if a.time_limit and time.perf_counter() - t0 > 60 * a.time_limit:
            print(f"time limit reached after {done:,} PPO decisions", flush=True)
            break
        chunk = min(a.eval_every, a.total_steps - done)
        model.learn(chunk, reset_num_timesteps=False, progress_bar=False)
        done = int(model.num_timesteps) - warm_steps
        note(phase="ppo", steps=done, **model.last_stats)
        print(f"{done:,} PPO decisions: {json.dumps(model.last_stats)}", flush=True)
        if pool is not None and done >= next_snap:
            pool.add(model.policy)
            base_env.flush_references()  # earlier deals' reference deals meet the old self
            pool.refresh()
            next_snap += a.snapshot_every
        checkpoint(f"ppo_{done}.zip", done)
        evaluate(done)
    model.save(out / "model.zip")
    log.close()
    print(f"wrote {out / 'model.zip'}, {out / 'curve.png'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

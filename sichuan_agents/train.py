"""Train a masked PPO agent on the batched environment and measure it against the bots.

    python train.py                      # the default run: minutes on 2 CPU cores
    python train.py --total-steps 3000000 --tables 256 --opponents greedy --out runs/long

Uses sb3-contrib's MaskablePPO (illegal actions are masked out of the policy) on
:class:`sichuan_env.envs.vector.SichuanVecEnv`: ``--tables`` tables for each learner seat, the
other seats played inside the environment, batched, by ``--opponents``: one bot name for
all three seats or three names (the seats after the learner), ``self`` for frozen
snapshots of the learner (refreshed every ``--snapshot-every`` steps). The network reads
the observation planes (:mod:`sichuan_agents.training.ppo_policy`) through two convolutions of
``--channels`` channels (most of its arithmetic); the model saves the width
(``sichuan_channels``; RLlib's ``policy.pt`` in its configuration).

Before PPO the policy imitates a rule bot (``--imitate rules``, the default; ``none`` to
start from scratch) for ``--imitate-steps`` learner decisions on the same environment,
DAgger style (:mod:`sichuan_agents.training.imitation`): PPO then refines a policy that already
plays
sensibly instead of discovering tile efficiency from nothing. By default the policy also
reads the rules bot's choice as advice planes (``--advice auto``:
:mod:`sichuan_agents.training.advice`), so that the imitation ends where ``rules`` is, and PPO is
held near that start by a KL penalty (``--kl-coef``, :mod:`sichuan_agents.training.kl_ppo`): it
moves only where its advantages keep paying. The final evaluation plays the start too
(``start.zip``), on the same walls, and the last line says what PPO itself added.

Writes to ``--out``: ``model.zip`` (the final policy), ``checkpoints/`` (periodic),
``tb/`` (TensorBoard logs: ``tensorboard --logdir OUT/tb``), ``eval.jsonl`` (every periodic
evaluation) and ``results.json`` (the final table). Evaluations use the arena in duplicate
mode: the agent against ``random`` and against ``greedy`` on the same walls with the seats
rotated, reporting mean points per deal with a 95% confidence interval.
``--resume OUT/checkpoints/xxx.zip`` continues a run.

``--backend rllib`` trains the same network with Ray RLlib instead, rollouts spread over
``--env-runners`` processes (or a cluster: ``--address``); ``--algo appo`` samples and
learns at the same time (RLlib's asynchronous APPO) instead of PPO's turns; see
:mod:`sichuan_agents.training.rllib_train` and the README's "Scaling out".

Hardware: ``--device auto`` (the default) puts the learner (SB3's, or RLlib's) on the GPU
when torch sees one, else on the CPU; ``--threads`` (default: this machine's cores) sets
torch's threads. A model saved from a GPU learner loads on a machine without one.
``--precision bf16`` computes the network's convolutions and wide layer in bfloat16 while
learning (:func:`sichuan_agents.training.ppo_policy.network_precision`); ``auto`` does so where the
hardware computes bfloat16 (a CPU with AMX or AVX-512 BF16, a GPU of compute capability 8
or later), else float32; the default is ``fp32``. The header line prints the precision
and the model saves it (``sichuan_precision``); the saved model acts in float32.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.seats.agent import agents_help

#: ``--channels`` when not given: the width of the network's convolutions (a model that
#: names none was built with sichuan_agents.training.ppo_policy.CHANNELS; the number is written
#: here so that parsing the options stays free of torch).
DEFAULT_CHANNELS = 64
#: PPO passes over each rollout. Two, not four: in the default run (PPO against three
#: ``random`` bots after the imitation of ``rules``) two passes halved the update's cost and
#: ended stronger against ``greedy`` and head to head (docs/history/performance.md).
DEFAULT_EPOCHS = 2
#: ``--kl-coef`` when not given: PPO held near its imitated start
#: (docs/history/expert-iteration.md).
DEFAULT_KL = 0.5


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="sb3", choices=["sb3", "rllib"],
                   help="sb3: MaskablePPO in this process (default); rllib: Ray RLlib PPO with "
                        "env runners (needs the rllib extra)")
    p.add_argument("--algo", default="ppo",
                   help="rllib: ppo (sample, then learn) or appo (asynchronous: the env "
                        "runners sample while the learner learns) (ppo)")
    p.add_argument("--sampler", default="auto", choices=["auto", "bulk", "rllib"],
                   help="rllib: how env runners sample: bulk (all tables stepped as arrays, "
                        "episodes built at the end; bot opponents only) or rllib (RLlib's "
                        "per-step loop); auto: bulk against bots, rllib in self-play (auto)")
    p.add_argument("--env-runners", type=int, default=2,
                   help="rllib: env runner processes, one CPU each (2)")
    p.add_argument("--device", default="auto",
                   help="where the learner runs: auto (the GPU when torch sees one, else "
                        "the CPU), cpu or cuda (auto)")
    p.add_argument("--num-gpus-per-learner", type=float, default=None,
                   help="rllib: GPUs for the learner (default: 1 when --device resolves to "
                        "cuda, else 0)")
    p.add_argument("--address", default=None,
                   help="rllib: join this Ray cluster (e.g. auto or HOST:6379); default: "
                        "start a local Ray instance")
    p.add_argument("--total-steps", type=int, default=393_216,
                   help="PPO learner decisions after the warm start, rounded up to whole "
                        "rollouts of --n-steps x environments (393216: 24 rollouts of "
                        "64 steps x 256 environments)")
    p.add_argument("--tables", type=int, default=64,
                   help="tables per learner seat (sb3) or per env runner (rllib) (64)")
    p.add_argument("--learner-seats", default="0,1,2,3",
                   help="seats the learner plays, one table set each (0,1,2,3)")
    p.add_argument("--opponents", default="greedy",
                   help=agents_help("bot for the other seats, or three comma-separated "
                                    "(greedy); self: the learner itself (with --backend "
                                    "rllib, self-play at all four seats)"))
    p.add_argument("--reference", default="none",
                   help=agents_help("paired-deal rewards (sichuan_env.envs.paired): each deal is "
                                    "also played from its start by this agent in the "
                                    "learner's seat and its points are subtracted at the "
                                    "deal's end; none (default), an agent (rules), or self: "
                                    "a frozen greedy copy of the learner, refreshed every "
                                    "--snapshot-every steps (sb3, without --advice)"))
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/default", help="output folder (runs/default)")
    p.add_argument("--resume", default=None,
                   help="a checkpoint to continue from (sb3: a .zip, whose PPO settings stay "
                        "unless --lr, --ent-coef, --epochs, --batch-size, --gamma are given; "
                        "rllib: a checkpoint "
                        "folder, e.g. OUT/checkpoint)")
    p.add_argument("--n-steps", type=int, default=64, help="rollout length per env (64)")
    p.add_argument("--batch-size", type=int, default=2048)
    p.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS,
                   help=f"PPO passes over each rollout ({DEFAULT_EPOCHS})")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--ent-coef", type=float, default=0.0,
                   help="entropy bonus (0: none; a bonus pulls the policy off its start "
                        "against the KL penalty)")
    p.add_argument("--kl-coef", type=float, default=DEFAULT_KL,
                   help="weight of KL(policy || start) in PPO's loss: the start is the "
                        "policy after the warm start (or the resumed checkpoint), and PPO "
                        "moves away from it only where its advantages keep paying; 0: plain "
                        f"MaskablePPO ({DEFAULT_KL})")
    p.add_argument("--checkpoint-every", type=int, default=200_000,
                   help="steps (200000; 0: off)")
    p.add_argument("--eval-every", type=int, default=200_000, help="steps (200000; 0: off)")
    p.add_argument("--eval-deals", type=int, default=500,
                   help="walls per periodic evaluation (each played 4 times, duplicate)")
    p.add_argument("--eval-against", default="random,greedy",
                   help="bots the evaluations play against (random,greedy)")
    p.add_argument("--final-eval-deals", type=int, default=2000,
                   help="walls for the final evaluation (2000)")
    p.add_argument("--snapshot-every", type=int, default=100_000,
                   help="self-play: refresh the frozen opponents every N steps")
    p.add_argument("--time-limit", type=float, default=0.0,
                   help="stop learning after this many minutes (0: no limit)")
    p.add_argument("--features", default="analysis", choices=["analysis", "raw"],
                   help="observation for the policy: raw planes, or with the hand-analysis "
                        "planes of sichuan_agents.training.features (default analysis)")
    p.add_argument("--advice", default="auto",
                   help="give the policy a bot's choice for each decision as extra input "
                        "planes (sichuan_agents/training/advice.py): rules, greedy or none; auto: "
                        "rules, except in self-play and with --backend rllib (none) and "
                        "with --resume (the checkpoint's) (auto)")
    p.add_argument("--oracle-critic", action="store_true",
                   help="the value function also reads the hidden tiles (other hands, the "
                        "wall) during training; the policy never does "
                        "(sichuan_agents/training/oracle_critic.py)")
    p.add_argument("--imitate", default="rules",
                   help="warm start: imitate this bot (rules, greedy) before PPO, DAgger "
                        "style (sichuan_agents/imitation.py); none = start from scratch; skipped "
                        "with --resume (rules)")
    p.add_argument("--imitate-steps", type=int, default=57_344,
                   help="learner decisions labelled by the teacher, rounded up to whole "
                        "chunks of 32 steps x environments (57344: 7 chunks of 32 x 256)")
    p.add_argument("--imitate-epochs", type=int, default=8,
                   help="passes over each labelled chunk (8)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "auto"],
                   help="the network's arithmetic while learning: fp32, bf16 (bfloat16 "
                        "convolutions and wide layer, about 1.7x faster on CPUs with AMX or "
                        "AVX-512 BF16 and on GPUs; the saved model acts in float32), or auto: "
                        "bf16 where the hardware does it, else fp32 (fp32)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads (default: this machine's cores)")
    p.add_argument("--channels", type=int, default=DEFAULT_CHANNELS,
                   help="the network's convolution channels: most of its arithmetic, so "
                        "fewer learn faster per CPU-second; a resumed run keeps its "
                        f"checkpoint's ({DEFAULT_CHANNELS})")
    args = p.parse_args(argv)
    check_args(p, args)
    # the options written on the command line (a resumed run takes these from it)
    given = sys.argv[1:] if argv is None else argv
    args.given = sorted({a.split("=")[0] for a in given if a.startswith("--")})
    return args


# Numeric options: (flag, smallest value). Zero is a legitimate value of --seed,
# --env-runners (RLlib samples in the driver), --total-steps (warm start only),
# --imitate-steps, --eval-every and --checkpoint-every (0: off).
INT_LIMITS = (
    ("--seed", 0), ("--env-runners", 0), ("--total-steps", 0), ("--tables", 1),
    ("--n-steps", 1), ("--batch-size", 1), ("--epochs", 1), ("--checkpoint-every", 0),
    ("--eval-every", 0), ("--eval-deals", 1), ("--final-eval-deals", 1),
    ("--snapshot-every", 1), ("--imitate-steps", 0), ("--imitate-epochs", 1),
    ("--threads", 1), ("--channels", 1),
)
# (flag, smallest value, whether the smallest value itself is allowed); all finite
FLOAT_LIMITS = (
    ("--num-gpus-per-learner", 0.0, True), ("--lr", 0.0, False), ("--ent-coef", 0.0, True),
    ("--time-limit", 0.0, True), ("--gamma", 0.0, False), ("--kl-coef", 0.0, True),
)


def check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Arguments out of range, an ``--out`` folder that cannot be created, a cluster that
    does not answer, a device that is not there: one line from argparse (``p.error``,
    exit status 2) before any work is done."""
    from sichuan_agents.training.hardware import machine_cores, resolve_device, resolve_precision

    if args.threads is None:
        args.threads = machine_cores()
    for flag, low in INT_LIMITS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value < low:
            p.error(f"{flag} must be >= {low}, got {value}")
    for flag, low, inclusive in FLOAT_LIMITS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is None:  # --num-gpus-per-learner: from --device below
            continue
        if not math.isfinite(value) or value < low or (value == low and not inclusive):
            p.error(f"{flag} must be a number {'>=' if inclusive else '>'} {low:g}, "
                    f"got {value}")
    if args.gamma > 1:
        p.error(f"--gamma must be in (0, 1], got {args.gamma}")
    seats = [s.strip() for s in args.learner_seats.split(",")]
    if not seats or any(s not in ("0", "1", "2", "3") for s in seats) or len(set(seats)) != len(
            seats):
        p.error(f"--learner-seats must be distinct seats 0..3 separated by commas, got "
                f"{args.learner_seats!r}")
    if args.resume is not None and not (Path(args.resume).exists() or (
            args.backend == "sb3" and Path(args.resume + ".zip").is_file())):
        p.error(f"--resume: no such checkpoint {args.resume!r}")
    if args.algo not in ALGOS:
        p.error(f"--algo must be one of {', '.join(ALGOS)}, got {args.algo!r}")
    if args.algo != "ppo" and args.backend != "rllib":
        p.error(f"--algo {args.algo} needs --backend rllib (the sb3 backend trains ppo)")
    if args.sampler == "bulk" and args.backend == "rllib" and "self" in args.opponents.split(","):
        p.error("--sampler bulk plays one learner seat against bots; self-play needs "
                "--sampler rllib (or auto)")
    if args.backend == "rllib" and args.address is None and args.env_runners > machine_cores():
        p.error(f"--env-runners {args.env_runners} needs {args.env_runners} CPUs, but the "
                f"local Ray instance gets this machine's {machine_cores()} cores: use "
                f"--env-runners {machine_cores()} or fewer, or --address to join a cluster")
    if args.address is not None:
        if args.backend != "rllib":
            p.error("--address joins a Ray cluster for --backend rllib; add --backend rllib")
        from sichuan_agents.training.cluster import address_problem

        problem = address_problem(args.address)
        if problem is not None:
            p.error(problem)
    if args.advice == "auto":
        args.advice = resolved_advice(args)
    if args.reference != "none":
        if args.backend == "rllib" and "self" in args.opponents.split(","):
            p.error("--reference needs bot opponents with --backend rllib (one learner seat "
                    "per table); self-play at all four seats has no learner seat to pair")
        if args.reference == "self" and args.backend == "rllib":
            p.error("--reference self needs --backend sb3")
        if args.reference == "self" and args.advice != "none":
            p.error("--reference self does not combine with --advice (use --advice none)")
    problem = out_problem(args.out)
    if problem is not None:
        p.error(problem)
    # last: asking torch about a GPU imports it (seconds), the checks above are instant
    try:
        args.device = resolve_device(args.device)
    except ValueError as e:
        p.error(str(e))
    if args.num_gpus_per_learner is None:
        args.num_gpus_per_learner = 1.0 if args.device == "cuda" else 0.0
    # where the network computes: the learner, and with rllib the env runners' CPUs too
    devices = {args.device, "cpu"} if args.backend == "rllib" else {args.device}
    args.precision = resolve_precision(args.precision, devices)


ALGOS = ("ppo", "appo")


def out_problem(path: str) -> str | None:
    """Why the output folder ``path`` cannot be used, or None. A missing folder is
    created and removed again, so that nothing is left behind by a refused run."""
    out = Path(path)
    if out.exists():
        if not out.is_dir():
            return f"--out {path} is a file; give a folder (it is created if missing)"
        if not os.access(out, os.W_OK | os.X_OK):
            return f"--out {path}: the folder is not writable"
        return None
    missing = [out]
    while not missing[-1].parent.exists() and missing[-1].parent != missing[-1]:
        missing.append(missing[-1].parent)
    try:
        out.mkdir(parents=True)
    except OSError as err:
        return f"--out {path}: cannot create the folder: {err.strerror or err}"
    for folder in missing:  # deepest first
        folder.rmdir()
    return None


def resolved_advice(args: argparse.Namespace) -> str:
    """``--advice auto``: the adviser of a resumed checkpoint (none when it has none);
    none in self-play and with the rllib backend (neither reads advice planes); else
    ``rules``, so that the imitation starts PPO where the rules bot is."""
    if args.resume is not None:
        return checkpoint_adviser(args.resume) or "none"
    if args.backend == "rllib" or "self" in args.opponents.split(","):
        return "none"
    return "rules"


def checkpoint_adviser(path: str) -> str | None:
    """The adviser named in an SB3 checkpoint's saved input layout (``sichuan_input`` in
    the zip's ``data``), None when it names none or cannot be read."""
    import zipfile

    file = path if Path(path).is_file() else path + ".zip"
    try:
        with zipfile.ZipFile(file) as z:
            data = json.loads(z.read("data"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    layout = data.get("sichuan_input")
    return layout.get("adviser") if isinstance(layout, dict) else None


def resume_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """PPO settings written on the command line: a resumed run uses them instead of the
    checkpoint's own (the others come from the checkpoint)."""
    out: dict[str, Any] = {}
    for name, flag in (("ent_coef", "--ent-coef"), ("n_epochs", "--epochs"),
                       ("batch_size", "--batch-size"), ("gamma", "--gamma")):
        if flag in args.given:
            out[name] = getattr(args, flag[2:].replace("-", "_"))
    if "--lr" in args.given:
        lr = float(args.lr)
        out["learning_rate"] = lr
        out["custom_objects"] = {"learning_rate": lr, "lr_schedule": lambda _: lr}
    return out


def resumed_channels(args: argparse.Namespace, saved: int) -> int:
    """The channels of a resumed run: the checkpoint's (``saved``); ``--channels`` written
    on the command line must agree (one line, exit status 2, when it does not)."""
    if "--channels" in args.given and args.channels != saved:
        print(f"error: --channels {args.channels}: the checkpoint {args.resume} has "
              f"{saved} channels (leave --channels out to keep them)", file=sys.stderr)
        raise SystemExit(2)
    return saved


def make_opponents(spec: str, seed: int, model: Any = None) -> list[Any]:
    """The three opponents of ``--opponents`` (one name or three; ``self``: one frozen copy
    of ``model`` for all its seats), built by :func:`sichuan_env.seats.agent.seat_agents`: equal
    names are one agent, seeded by :func:`sichuan_env.core.seeding.agent_seed` of ``seed``."""
    from sichuan_agents.models.ppo import SnapshotAgent
    from sichuan_env.seats.agent import seat_agents

    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(names) not in (1, 3):
        raise SystemExit(f"--opponents takes one name or three, got {spec!r}")
    if len(names) == 1:
        names = names * 3
    if "self" in names:
        if model is None:
            raise SystemExit("--opponents self needs a model (internal error)")
        snapshot = SnapshotAgent(model)  # one frozen copy for all its seats
        names = [snapshot if n == "self" else n for n in names]
    try:
        built = seat_agents(names, seed)
    except ValueError as err:  # one line, no traceback, exit status 2
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    return [built.agents[k] for k in built.seat_agent]


def warm_start(model: Any, env: Any, teacher: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Imitate ``teacher`` (the ``--imitate`` bot) for ``--imitate-steps`` learner decisions
    before PPO."""
    from sichuan_agents.training.imitation import CHUNK, imitate

    per_chunk = CHUNK * env.num_envs
    total = -(-args.imitate_steps // per_chunk) * per_chunk  # imitate learns whole chunks
    rounded = (f"; --imitate-steps {args.imitate_steps:,} rounded up"
               if total != args.imitate_steps else "")
    print(f"imitating {args.imitate}: {total:,} learner decisions ({total // per_chunk} chunks "
          f"of {per_chunk:,}{rounded}), {args.imitate_epochs} passes per chunk", flush=True)

    history: list[dict[str, Any]] = []
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="decision", desc="imitation", file=sys.stderr)

    def log(s: Any) -> None:
        history.append(vars(s))
        if bar is not None:
            bar.update(s.steps - bar.n)
            bar.set_postfix(agreement=f"{s.agreement:.3f}",
                            cross_entropy=f"{s.cross_entropy:.3f}")

    stats = imitate(model, env, teacher, args.imitate_steps, epochs=args.imitate_epochs,
                    seed=args.seed, log=log)
    if bar is not None:
        bar.close()
    print(f"imitation done in {stats.seconds:.0f} s: the policy's first choice agrees with "
          f"{args.imitate} on {stats.agreement:.1%} of the last chunk's decisions", flush=True)
    return {"teacher": args.imitate, **vars(stats), "history": history}


def evaluate(model: Any, rules: str, walls: int, seed: int, opponents=("random", "greedy"),
             tables: int = 512, keep_walls: bool = False) -> dict[str, Any]:
    """Duplicate arena: the agent against three copies of each opponent bot, ``walls``
    walls each played four times with the seats rotated. ``model`` is an SB3 model or an
    agent (an object with ``act_batch``). ``keep_walls``: each row also holds
    ``_wall_diffs``, the agent's points minus the bot's per wall (to pair two
    evaluations; :func:`public` drops it)."""
    from sichuan_agents.arena import run_arena
    from sichuan_agents.models.ppo import PPOAgent

    agent = model if hasattr(model, "act_batch") else PPOAgent(model, deterministic=True)
    agent.name = "ppo"
    results: dict[str, Any] = {}
    for name in opponents:
        res = run_arena([agent, name, name, name], deals=4 * walls, duplicate=True, seed=seed,
                        rules=rules, tables=tables, progress=False)
        diff = res.pairwise("ppo", name)
        stats = res.stats["ppo"]
        results[name] = {
            "walls": walls, "deals": res.deals,
            "ppo_mean": stats["mean"], "ppo_ci95": [stats["ci_low"], stats["ci_high"]],
            "diff_vs_bot": diff["mean"], "diff_ci95": [diff["ci_low"], diff["ci_high"]],
            "hu_rate": stats["hu_rate"], "deal_in_rate": stats["deal_in_rate"],
            "flower_pig_rate": stats["flower_pig_rate"],
        }
        if keep_walls:
            results[name]["_wall_diffs"] = res.unit_means("ppo") - res.unit_means(name)
    return results


def format_results(results: dict[str, Any]) -> str:
    lines = [f"{'opponent':<10} {'walls':>6} {'ppo points/deal':>24} {'ppo - bot':>24} "
             f"{'hu rate':>8} {'deal-in':>8}"]
    for name, r in results.items():
        lo, hi = r["ppo_ci95"]
        dlo, dhi = r["diff_ci95"]
        lines.append(
            f"{name:<10} {r['walls']:>6} {r['ppo_mean']:>+8.3f} [{lo:+.3f}, {hi:+.3f}]"
            f" {r['diff_vs_bot']:>+8.3f} [{dlo:+.3f}, {dhi:+.3f}] {r['hu_rate']:>8.3f}"
            f" {r['deal_in_rate']:>8.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.backend == "rllib":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            raise SystemExit("--backend rllib needs Ray RLlib: pip install -e '.[rllib]'")
        from sichuan_agents.training.rllib_train import checkpoint_channels, train

        saved = checkpoint_channels(args.resume) if args.resume else None
        if saved is not None:
            args.channels = resumed_channels(args, saved)
        return train(args, evaluate, format_results, warm_start)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback

    from sichuan_agents.models.ppo import SnapshotAgent
    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.ppo_policy import (
        load_model,
        network_channels,
        network_precision,
        policy_kwargs,
    )
    from sichuan_env.envs.vector import SichuanVecEnv

    torch.set_num_threads(args.threads)
    out = Path(args.out)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    seats = tuple(int(s) for s in args.learner_seats.split(","))
    eval_against = tuple(s.strip() for s in args.eval_against.split(",") if s.strip())
    self_play = "self" in args.opponents.split(",")

    teacher = None
    if args.imitate != "none" and not args.resume:
        from sichuan_env.seats.agent import make_agent

        try:
            teacher = make_agent(args.imitate, seed=args.seed + 999)
        except (ValueError, FileNotFoundError) as e:
            raise SystemExit(f"--imitate: {e}") from None
    # opponents that are not "self" exist before the model; "self" snapshots need it
    placeholder = None if self_play else make_opponents(args.opponents, args.seed)
    reference = None if args.reference == "none" else (
        "random" if args.reference == "self" else args.reference)  # self: set below
    try:
        env = SichuanVecEnv(args.tables, rules=args.rules, learner_seats=seats,
                            opponents=placeholder, seed=args.seed, reference=reference)
    except ValueError as err:  # an unknown --reference: one line, exit status 2
        print(f"error: --reference: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    if args.features == "analysis" or args.advice != "none":
        env = AnalysisVecEnv(env)
    if args.advice != "none":
        if self_play:
            raise SystemExit("--advice does not combine with --opponents self")
        from sichuan_agents.training.advice import AdviceVecEnv, make_adviser

        env = AdviceVecEnv(env, make_adviser(args.advice, seed=args.seed + 555))
    policy: Any = "MlpPolicy"
    kwargs = policy_kwargs(channels=args.channels)
    if args.oracle_critic:
        from sichuan_agents.training.oracle_critic import OracleVecEnv
        from sichuan_agents.training.ppo_policy import OracleCriticPolicy

        env = OracleVecEnv(env)
        policy, kwargs = OracleCriticPolicy, policy_kwargs(channels=args.channels,
                                                           policy_planes=env.policy_planes)
    n_envs = env.num_envs
    ppo_class = MaskablePPO
    if args.kl_coef > 0:
        from sichuan_agents.training.kl_ppo import KLMaskablePPO

        ppo_class = KLMaskablePPO
    if args.resume:
        model = load_model(args.resume, cls=ppo_class, env=env, device=args.device,
                           tensorboard_log=str(out / "tb"), **resume_overrides(args))
        args.channels = resumed_channels(args, network_channels(model.policy))
    else:
        model = ppo_class(
            policy, env, n_steps=args.n_steps, batch_size=args.batch_size,
            n_epochs=args.epochs, learning_rate=args.lr, gamma=args.gamma, gae_lambda=0.95,
            ent_coef=args.ent_coef, policy_kwargs=kwargs, seed=args.seed,
            tensorboard_log=str(out / "tb"), device=args.device, verbose=0,
        )
    model.sichuan_rules = args.rules  # saved with the model: the preset its planes follow
    model.sichuan_precision = args.precision  # and the arithmetic it learned in
    model.sichuan_channels = args.channels  # and its convolutions' width
    from sichuan_agents.training.layout import make_layout

    # and which planes it reads (sichuan_agents/training/layout.py)
    model.sichuan_input = make_layout(
        args.features == "analysis" or args.advice != "none",
        None if args.advice == "none" else args.advice, args.oracle_critic)
    if self_play:
        env.unwrapped.opponents = make_opponents(args.opponents, args.seed, model)
    self_reference = None
    if teacher is not None and args.advice == args.imitate and not args.oracle_critic:
        from sichuan_agents.training.advice import AdviceTeacher

        teacher = AdviceTeacher(env)  # the advice is the teacher's choice: ask once
    imitation = None
    if teacher is not None:
        with network_precision(model.policy, args.precision):
            imitation = warm_start(model, env, teacher, args)
    if args.kl_coef > 0:
        model.kl_coef = args.kl_coef
        model.freeze_reference()  # the start: after the warm start, or the checkpoint
    if args.reference == "self":  # the paired deals' reference: the learner, frozen
        self_reference = SnapshotAgent(model, deterministic=True)
        env.unwrapped.set_reference(self_reference)
    # the start, kept to measure what PPO itself adds (the final evaluation plays it too)
    start_path = out / "start.zip"
    if args.total_steps > 0:
        model.save(start_path)
    planned = planned_steps(args.total_steps, n_envs * model.n_steps)

    class Periodic(BaseCallback):
        """Self-play snapshot refresh and periodic arena evaluation."""

        def __init__(self) -> None:
            super().__init__()
            self.next_eval = args.eval_every
            self.next_snap = args.snapshot_every

        def _on_step(self) -> bool:
            if args.time_limit and time.perf_counter() - t0 > 60 * args.time_limit:
                print(f"\ntime limit of {args.time_limit} min reached at "
                      f"{self.num_timesteps:,} steps", flush=True)
                return False
            if (self_play or self_reference) and self.num_timesteps >= self.next_snap:
                # deals started before the refresh: their reference deals meet the
                # opponents (and the reference) their learner met
                env.unwrapped.flush_references()
                for opp in env.unwrapped.opponents:
                    if isinstance(opp, SnapshotAgent):
                        opp.update(self.model)
                if self_reference is not None:
                    self_reference.update(self.model)
                self.next_snap += args.snapshot_every
            if args.eval_every and self.num_timesteps >= self.next_eval:
                res = evaluate(self.model, args.rules, args.eval_deals, args.seed + 7,
                               opponents=eval_against)
                for name, r in res.items():
                    self.logger.record(f"eval/ppo_minus_{name}", r["diff_vs_bot"])
                    self.logger.record(f"eval/ppo_points_vs_{name}", r["ppo_mean"])
                with open(out / "eval.jsonl", "a") as f:
                    f.write(json.dumps({"steps": self.num_timesteps, **res}) + "\n")
                print(f"\n[eval @ {self.num_timesteps:,} steps]\n{format_results(res)}",
                      flush=True)
                self.next_eval += args.eval_every
            return True

    class StepBar(BaseCallback):
        """A tqdm bar of the PPO decisions (SB3's own bar is rich's, which draws nothing
        into a log file) counting to ``total``, whole rollouts: it ends at its total."""

        def __init__(self, total: int) -> None:
            super().__init__()
            self.total = total
            self.bar: Any = None

        def _on_training_start(self) -> None:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, unit="step", desc="PPO", file=sys.stderr)

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    callbacks = CallbackList([
        *([CheckpointCallback(save_freq=max(1, args.checkpoint_every // n_envs),
                              save_path=str(out / "checkpoints"), name_prefix="ppo")]
          if args.checkpoint_every else []),
        Periodic(),
        *([StepBar(planned)] if not args.no_progress else []),
    ])
    rounded = (f"; --total-steps {args.total_steps:,} rounded up"
               if planned != args.total_steps else "")
    print(f"training MaskablePPO: {planned:,} steps ({planned // (n_envs * model.n_steps)} "
          f"rollouts of {n_envs * model.n_steps:,}{rounded}), KL to the start "
          f"{args.kl_coef:g}, {n_envs} envs "
          f"({args.tables} tables x seats {seats}), opponents {args.opponents}, "
          f"{'' if args.reference == 'none' else f'paired with {args.reference}, '}"
          f"rules {args.rules}, learner on {args.device} ({args.threads} torch threads, "
          f"{args.precision}), {args.channels} channels, out {out}", flush=True)
    start_steps = int(model.num_timesteps)
    t0 = time.perf_counter()
    with network_precision(model.policy, args.precision):
        model.learn(total_timesteps=planned, callback=callbacks,
                    reset_num_timesteps=not args.resume)
    train_time = time.perf_counter() - t0
    model.save(out / "model.zip")
    steps_done = int(model.num_timesteps) - start_steps
    sps = steps_done / train_time
    print(f"trained {steps_done:,} steps in {train_time:.0f} s "
          f"({sps:,.0f} env steps/s, learning included); saved {out / 'model.zip'}",
          flush=True)

    t1 = time.perf_counter()
    results = evaluate(model, args.rules, args.final_eval_deals, args.seed + 1000,
                       opponents=eval_against, keep_walls=True)
    start_results = None
    if start_path.is_file() and steps_done > 0:  # the start on the same walls
        start_results = evaluate(load_model(start_path, device="cpu"), args.rules,
                                 args.final_eval_deals, args.seed + 1000,
                                 opponents=eval_against, keep_walls=True)
    print(f"\nfinal evaluation (duplicate arena, {args.final_eval_deals} walls x 4 seatings, "
          f"{time.perf_counter() - t1:.0f} s); 95% confidence intervals")
    print(format_results(results))
    if start_results is not None:
        print(f"the start ({start_path.name}, before PPO) on the same walls:")
        print(format_results(start_results))
    contribution = ppo_contribution(results, start_results)
    summary = {"args": vars(args), "steps": steps_done, "train_seconds": train_time,
               "steps_per_second": sps, "imitation": imitation,
               "results": public(results), "start_results": public(start_results),
               "ppo_contribution": contribution}
    (out / "results.json").write_text(json.dumps(summary, indent=2))
    for name, r in results.items():
        print(f"beats {name} (CI excludes zero):", "yes" if r["diff_ci95"][0] > 0 else "no")
    print(compare_line(results, args.rules, contribution))
    return 0


def planned_steps(total: int, rollout: int) -> int:
    """PPO learns in whole rollouts of ``rollout`` decisions: ``total`` rounded up to
    them (what the progress bar counts to)."""
    return -(-total // rollout) * rollout


def public(results: dict[str, Any] | None) -> dict[str, Any] | None:
    """``results`` without the per-wall arrays that :func:`evaluate` keeps for pairing."""
    if results is None:
        return None
    return {name: {k: v for k, v in r.items() if not k.startswith("_")}
            for name, r in results.items()}


def ppo_contribution(results: dict[str, Any], start: dict[str, Any] | None
                     ) -> dict[str, Any]:
    """Per bot, the final policy's (agent − bot) minus its start's on the same walls, with
    a 95% CI over the walls (paired: each wall's luck cancels)."""
    from sichuan_agents.arena import mean_ci

    out: dict[str, Any] = {}
    for name, r in results.items():
        if start is None or name not in start:
            continue
        d = r["_wall_diffs"] - start[name]["_wall_diffs"]
        m, half, _ = mean_ci(d[~np.isnan(d)])
        out[name] = {"mean": m, "ci95": [m - half, m + half]}
    return out


def compare_line(results: dict[str, Any], rules: str,
                 contribution: dict[str, Any] | None = None) -> str:
    """This run's result, what PPO added to its start, and the shipped agents' ladder
    rows for the preset."""
    from sichuan_agents.models.ppo import shipped_rows

    mine = ", ".join(f"{r['diff_vs_bot']:+.3f} vs {name}" for name, r in results.items())
    ppo = ""
    if contribution:
        ppo = " (PPO's own part: " + ", ".join(
            f"{c['mean']:+.3f} [{c['ci95'][0]:+.3f}, {c['ci95'][1]:+.3f}] vs {name}"
            for name, c in contribution.items()) + ")"
    shipped = "; ".join(shipped_rows(rules)) or "none for this preset"
    return (f"this run: {mine}{ppo}; shipped ({rules}): {shipped}; how they were made: "
            "docs/models.md")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    sys.exit(main())

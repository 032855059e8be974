"""Throughput of ``train.py``'s SB3 path: env steps per second with learning, the rollouts
alone per CPU-second, and the PPO learner's samples per second.

    python benchmarks/train.py                               # train.py's defaults, CPU
    python benchmarks/train.py --device cuda --tables 1024 --threads 8 --out sb3.json

Builds what ``python train.py --imitate none`` trains (MaskablePPO on
:class:`sichuan_env.envs.vector.SichuanVecEnv` with the analysis planes, ``--tables`` tables for
each of the four learner seats, ``--opponents`` inside the env, the learner on
``--device``, ``--precision``, the network's convolutions ``--channels`` wide), runs one
rollout and update to warm up, then ``--iterations`` timed ones (each: ``n_steps`` steps of
every env, then ``epochs`` passes in minibatches), the whole repeated ``--repeats`` times
(the best repeat is kept). Reported per repeat and best:

* ``env_steps_per_s``: env steps over the wall-clock time of rollouts and updates
  together (what ``train.py`` prints as "env steps/s, learning included");
* ``env_steps_per_cpu_s``: the same over the CPU-seconds of this process (steadier than
  the wall clock when other processes share the cores);
* ``rollout_steps_per_cpu_s``: env steps per CPU-second of this process during the
  rollouts (the engine, the bots, the planes and the policy's forward pass): with other
  processes on the cores this moves less than the wall-clock figures;
* ``learner_samples_per_s``: rollout samples per wall-clock second of the PPO update
  (each sample is used ``epochs`` times; ``learner_sample_passes_per_s`` counts those);
  ``learner_samples_per_cpu_s`` per CPU-second of the update.

Prints the machine (CPU model, cores, GPU) and library versions first; the load average
before and after each repeat says how busy the machine was.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build(args: argparse.Namespace) -> Any:
    """The MaskablePPO model train.py builds for these settings (no imitation)."""
    import torch
    from sb3_contrib import MaskablePPO

    from sichuan_agents import train
    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.ppo_policy import policy_kwargs
    from sichuan_env.envs.vector import SichuanVecEnv

    torch.set_num_threads(args.threads)
    env = SichuanVecEnv(args.tables, learner_seats=(0, 1, 2, 3),
                        opponents=train.make_opponents(args.opponents, 0), seed=0)
    return MaskablePPO("MlpPolicy", AnalysisVecEnv(env), n_steps=args.n_steps,
                       batch_size=args.batch_size, n_epochs=args.epochs, learning_rate=5e-4,
                       gamma=0.995, gae_lambda=0.95, ent_coef=0.01,
                       policy_kwargs=policy_kwargs(channels=args.channels), seed=0,
                       device=args.device, verbose=0)


def measure(model: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Time ``--iterations`` rollouts + updates of ``model`` (see the module docstring)."""
    timed = {"rollout_wall": 0.0, "rollout_cpu": 0.0, "learn_wall": 0.0, "learn_cpu": 0.0}
    collect, learn = model.collect_rollouts, model.train

    def timed_collect(*a: Any, **k: Any) -> Any:
        w, c = time.perf_counter(), time.process_time()
        out = collect(*a, **k)
        timed["rollout_wall"] += time.perf_counter() - w
        timed["rollout_cpu"] += time.process_time() - c
        return out

    def timed_train() -> None:
        w, c = time.perf_counter(), time.process_time()
        learn()
        timed["learn_wall"] += time.perf_counter() - w
        timed["learn_cpu"] += time.process_time() - c

    model.collect_rollouts, model.train = timed_collect, timed_train
    per_iter = model.n_envs * model.n_steps
    load_before = os.getloadavg()[0]
    try:
        model.learn(per_iter, reset_num_timesteps=False)  # warm-up: compile, allocate
        for k in timed:
            timed[k] = 0.0
        w, c = time.perf_counter(), time.process_time()
        model.learn(per_iter * args.iterations, reset_num_timesteps=False)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
    finally:
        del model.collect_rollouts, model.train
    steps = per_iter * args.iterations
    return {
        "tables_per_seat": args.tables, "envs": model.n_envs, "steps": steps,
        "device": args.device, "threads": args.threads, "channels": args.channels,
        "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
        "env_steps_per_s": round(steps / wall, 1),
        "env_steps_per_cpu_s": round(steps / cpu, 1),
        "rollout_steps_per_cpu_s": round(steps / timed["rollout_cpu"], 1),
        "rollout_steps_per_s": round(steps / timed["rollout_wall"], 1),
        "learner_samples_per_s": round(steps / timed["learn_wall"], 1),
        "learner_sample_passes_per_s": round(steps * model.n_epochs / timed["learn_wall"], 1),
        "learner_samples_per_cpu_s": round(steps / timed["learn_cpu"], 1),
        "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    from sichuan_agents.training.hardware import (
        describe_machine,
        machine_cores,
        resolve_device,
        resolve_precision,
    )

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=64, help="tables per learner seat (64)")
    p.add_argument("--n-steps", type=int, default=64, help="rollout length per env (64)")
    p.add_argument("--batch-size", type=int, default=2048, help="minibatch size (2048)")
    p.add_argument("--epochs", type=int, default=None,
                   help="PPO passes over each rollout (default: train.py's)")
    p.add_argument("--opponents", default="random")
    p.add_argument("--device", default="auto", help="auto, cpu or cuda (auto)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch threads (default: this machine's cores)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "auto"],
                   help="the network's arithmetic (train.py --precision) (fp32)")
    p.add_argument("--channels", type=int, default=None,
                   help="the network's convolution channels (train.py --channels; default: "
                        "train.py's default)")
    p.add_argument("--iterations", type=int, default=2, help="timed rollouts+updates (2)")
    p.add_argument("--repeats", type=int, default=2, help="keep the best of this many (2)")
    p.add_argument("--out", default=None, help="write the rows as JSON here")
    args = p.parse_args(argv)
    from sichuan_agents import train

    if args.channels is None:
        args.channels = train.DEFAULT_CHANNELS
    if args.epochs is None:
        args.epochs = train.DEFAULT_EPOCHS
    for flag, value in (("--tables", args.tables), ("--n-steps", args.n_steps),
                        ("--batch-size", args.batch_size), ("--epochs", args.epochs),
                        ("--iterations", args.iterations), ("--repeats", args.repeats),
                        ("--channels", args.channels)):
        if value < 1:
            p.error(f"{flag} must be >= 1, got {value}")
    try:
        args.device = resolve_device(args.device)
    except ValueError as e:
        p.error(str(e))
    args.threads = args.threads or machine_cores()
    args.precision = resolve_precision(args.precision, {args.device})
    print(describe_machine(), flush=True)
    from sichuan_agents.training.ppo_policy import network_precision

    rows = []
    for rep in range(args.repeats):
        model = build(args)
        with network_precision(model.policy, args.precision):
            row = measure(model, args)
        row["precision"] = args.precision
        rows.append(row)
        print(f"  run {rep + 1}: {row['env_steps_per_s']:>9,.0f} env steps/s learning "
              f"included ({row['env_steps_per_cpu_s']:,.0f} per CPU-s); rollouts "
              f"{row['rollout_steps_per_cpu_s']:,.0f} steps per CPU-s "
              f"({row['rollout_steps_per_s']:,.0f}/s); learner "
              f"{row['learner_samples_per_s']:,.0f} samples/s x {args.epochs} epochs; load "
              f"{row['load_before']} -> {row['load_after']}", flush=True)
    best = max(rows, key=lambda r: r["env_steps_per_s"])
    print(f"best of {args.repeats}: {best['env_steps_per_s']:,.0f} env steps/s learning "
          f"included ({best['envs']} envs, learner on {args.device}, {args.threads} threads, "
          f"{args.precision}, {args.channels} channels)")
    if args.out:
        Path(args.out).write_text(json.dumps({"machine": describe_machine(), "best": best,
                                              "runs": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

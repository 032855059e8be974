"""Scaling of ``train.py --backend rllib``: env steps per second, learning included, for
several numbers of env runners and both algorithms.

    python benchmarks/rllib.py                          # 1 and 2 env runners, PPO, CPU learner
    python benchmarks/rllib.py --algo ppo appo --runners 1 2 4 8 15 --gpu 1 --out scaling.json
    python benchmarks/rllib.py --sample-only --runners 1   # env steps per runner CPU-second

Prints the machine (CPU model, cores, GPU) and library versions first.

For each number of env runners N: a local Ray instance with N + 1 CPUs, the PPO
configuration of :func:`sichuan_agents.training.rllib_train.build_config` (``--tables`` tables per
runner,
rollouts of ``--n-steps`` per table, so a train batch of N x tables x n-steps env steps,
``--epochs`` passes in minibatches of ``--batch-size``; ``--algo appo``: APPO's settings
of the same function), one warm-up iteration, then
``--iterations`` timed ones, the whole repeated ``--repeats`` times alternating the runner
counts (the best of each is kept). Reported: env steps sampled per wall-clock second over the
timed iterations (sampling and learning, as in training), the seconds per iteration spent
sampling and learning (RLlib's timers; APPO samples while it learns), the learner's
samples per second (PPO: the train batch over the update time, each sample used
``--epochs`` times; APPO: the samples trained on over the wall-clock time, each used
``max(1, epochs // 2)`` times), and the load average of the machine before and after
(other processes share the cores). ``--opponents self`` measures self-play.
With ``--sample-only`` also the env steps per CPU-second of the runner processes: with
free cores N runners reach about N times that (it does not depend on other processes'
load, the wall-clock figure does).
``--sample-only`` times the env runners alone (parallel ``sample()`` calls, no learning):
how rollouts scale with N when the learner is taken out. ``--sampler bulk|rllib`` picks
the env runner (``train.py --sampler``; default ``auto``: bulk against bots).
``--channels N`` sets the convolution channels of the network (the module's
``model_config["channels"]``; default train.py's), for runners and learner alike.
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


def _timer(result: dict, *names: str) -> float:
    timers = result.get("timers", {})
    for n in names:
        if n in timers:
            v = timers[n]
            return float(v) if not isinstance(v, dict) else float("nan")
    return float("nan")


def _sampled(result: dict) -> int:
    """Env steps sampled so far (0 before APPO's first batch arrives)."""
    return int(result.get("env_runners", {}).get("num_env_steps_sampled_lifetime", 0))


def _trained(result: dict) -> float:
    """Samples the learner has trained on so far (each counted once per pass)."""
    learners = result.get("learners", {})
    for key in ("__all_modules__", "learner"):
        v = learners.get(key, {}).get("num_env_steps_trained_lifetime")
        if v is not None:
            return float(v)
    v = learners.get("learner", {}).get("num_module_steps_trained_lifetime")
    return float(v) if v is not None else float("nan")


def algo_config(runners: int, args: argparse.Namespace, algo_name: str = "ppo") -> Any:
    """The algorithm config of one measurement: ``train.py --backend rllib``'s
    (:func:`sichuan_agents.training.rllib_train.build_config`) with this script's settings, the
    network's ``channels`` from ``--channels`` (train.py's default when not given)."""
    from sichuan_agents import train
    from sichuan_agents.training.rllib_train import build_config

    targs = train.parse_args([
        "--backend", "rllib", "--algo", algo_name,
        "--env-runners", str(runners), "--tables", str(args.tables),
        "--n-steps", str(args.n_steps), "--epochs", str(args.epochs),
        "--batch-size", str(args.batch_size), "--opponents", args.opponents,
        "--num-gpus-per-learner", str(args.gpu), "--imitate", "none", "--seed", "0",
        "--device", "cuda" if args.gpu else "cpu", "--precision", args.precision,
        "--sampler", args.sampler,
        "--channels", str(args.channels),
    ])
    return build_config(targs)


def measure(runners: int, args: argparse.Namespace, algo_name: str = "ppo") -> dict:
    import ray

    config = algo_config(runners, args, algo_name)
    load_before = os.getloadavg()[0]
    ray.init(num_cpus=runners + 1, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        algo = config.build_algo()
        if args.sample_only:
            return _sample_only(algo, runners, args, load_before)
        warm = algo.train()  # warm-up: actors started, first batch
        while not _sampled(warm):  # APPO: until the first batch came back
            warm = algo.train()
        before = _sampled(warm)
        trained_before = _trained(warm)
        samp_t, learn_t = [], []
        t0 = time.perf_counter()
        for _ in range(args.iterations):
            r = algo.train()
            samp_t.append(_timer(r, "env_runner_sampling_timer"))
            learn_t.append(_timer(r, "learner_update_timer"))
        wall = time.perf_counter() - t0
        steps = _sampled(r) - before
        trained = _trained(r) - trained_before
        algo.stop()
    finally:
        ray.shutdown()
    learn_s = sum(learn_t) / len(learn_t)
    if algo_name == "ppo":
        learner_sps = steps / args.iterations / learn_s if learn_s > 0 else float("nan")
    else:
        learner_sps = trained / wall
    return {
        "algo": algo_name, "sampler": args.sampler, "channels": args.channels,
        "precision": args.precision, "learner_samples_per_s": round(learner_sps, 1),
        "env_runners": runners, "tables_per_runner": args.tables, "steps": steps,
        "seconds": round(wall, 2), "env_steps_per_s": round(steps / wall, 1),
        "sample_s_per_iter": round(sum(samp_t) / len(samp_t), 3),
        "learn_s_per_iter": round(sum(learn_t) / len(learn_t), 3),
        "learner": "GPU" if args.gpu else "CPU",
        "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
    }


def _sample_only(algo, runners: int, args: argparse.Namespace, load_before: float) -> dict:
    def sample(runner) -> int:
        return sum(len(e) for e in runner.sample())

    group = algo.env_runner_group
    local = runners == 0

    def round_() -> int:
        return sum(group.foreach_env_runner(sample, local_env_runner=local))

    def cpu_seconds() -> float:
        return sum(group.foreach_env_runner(lambda r: time.process_time(),
                                            local_env_runner=local))

    round_()  # warm-up
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    steps = sum(round_() for _ in range(args.iterations))
    wall = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu0
    algo.stop()
    return {
        "env_steps_per_runner_cpu_s": round(steps / cpu, 1), "sampler": args.sampler,
        "channels": args.channels, "precision": args.precision,
        "env_runners": runners, "tables_per_runner": args.tables, "steps": steps,
        "seconds": round(wall, 2), "env_steps_per_s": round(steps / wall, 1),
        "sample_s_per_iter": round(wall / args.iterations, 3), "learn_s_per_iter": 0.0,
        "learner": "none (sampling only)", "algo": "none", "learner_samples_per_s": 0.0,
        "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    p.add_argument("--algo", nargs="+", default=["ppo"], choices=["ppo", "appo"],
                   help="algorithms to measure (ppo)")
    p.add_argument("--tables", type=int, default=64, help="tables per env runner (64)")
    p.add_argument("--n-steps", type=int, default=64, help="rollout length per table (64)")
    p.add_argument("--epochs", type=int, default=None,
                   help="PPO passes over each rollout (default: train.py's)")
    p.add_argument("--batch-size", type=int, default=2048, help="minibatch size (2048)")
    p.add_argument("--iterations", type=int, default=4, help="timed iterations (4)")
    p.add_argument("--opponents", default="random")
    p.add_argument("--gpu", type=float, default=0, help="GPUs for the learner (0)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                   help="the network's arithmetic (train.py --precision) (fp32)")
    p.add_argument("--channels", type=int, default=None,
                   help="convolution channels of the network (train.py's default)")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the learner (1)")
    p.add_argument("--repeats", type=int, default=2,
                   help="measure each runner count this many times, alternating; keep the "
                        "best (damps other processes' load) (2)")
    p.add_argument("--sampler", default="auto", choices=["auto", "bulk", "rllib"],
                   help="the env runners' sampler (train.py --sampler) (auto)")
    p.add_argument("--sample-only", action="store_true",
                   help="time the env runners' sampling alone (no learning)")
    p.add_argument("--out", default=None, help="write the rows as JSON here")
    args = p.parse_args(argv)
    if args.channels is not None and args.channels < 1:
        p.error(f"--channels must be at least 1, got {args.channels}")
    if args.epochs is not None and args.epochs < 1:
        p.error(f"--epochs must be at least 1, got {args.epochs}")
    from sichuan_agents.train import DEFAULT_CHANNELS, DEFAULT_EPOCHS

    if args.channels is None:
        args.channels = DEFAULT_CHANNELS
    if args.epochs is None:
        args.epochs = DEFAULT_EPOCHS
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from sichuan_agents.training.hardware import describe_machine

    print(describe_machine(), flush=True)
    torch.set_num_threads(args.threads)
    algos = ["sampling"] if args.sample_only else args.algo
    best: dict[tuple[str, int], dict] = {}
    for rep in range(args.repeats):  # alternate the runner counts, keep each one's best
        for a in algos:
            for n in args.runners:
                row = measure(n, args, "ppo" if a == "sampling" else a)
                cpu = row.get("env_steps_per_runner_cpu_s")
                per_cpu = f" ({cpu:,.0f} per runner CPU-second)" if cpu else ""
                learner = (f", learner {row['learner_samples_per_s']:,.0f} samples/s"
                           if row["learner_samples_per_s"] else "")
                split = ("sampling and learning overlap" if a == "appo" else
                         f"{row['sample_s_per_iter']:.2f} s sampling + "
                         f"{row['learn_s_per_iter']:.2f} s learning per iteration")
                print(f"  run {rep + 1}: {a:>8} {n:>3} env runners ({row['channels']} "
                      f"channels, {row['precision']}) "
                      f"{row['env_steps_per_s']:>9,.0f} env steps/s{per_cpu}, {split}"
                      f"{learner}, load {row['load_before']} -> {row['load_after']}",
                      flush=True)
                key = (a, n)
                if key not in best or row["env_steps_per_s"] > best[key]["env_steps_per_s"]:
                    best[key] = row
    rows = [best[(a, n)] for a in algos for n in args.runners]
    for a in algos:
        base = best[(a, args.runners[0])]
        for n in args.runners:
            row = best[(a, n)]
            print(f"{a:>8} {n:>3} env runners: {row['env_steps_per_s']:>9,.0f} env steps/s "
                  f"(x{row['env_steps_per_s'] / base['env_steps_per_s']:.2f} vs "
                  f"{base['env_runners']}; best of {args.repeats})", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"machine": describe_machine(), "rows": rows},
                                             indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""PPO or APPO with Ray RLlib (new API stack) on the batched environment: ``train.py
--backend rllib [--algo appo]``.

Each env runner (a Ray actor, one CPU) holds ``--tables`` tables in one
:class:`sichuan_env.envs.rllib.SichuanVectorEnv` and steps them batched (the engine, the bots and
the observation planes); against bots, ``--sampler bulk`` (the default,
:class:`sichuan_env.envs.rllib_bulk.BulkEnvRunner`) also makes one forward pass per step for all
tables and builds the episodes from arrays, ``--sampler rllib`` runs RLlib's per-step loop
(:class:`sichuan_env.envs.rllib.SichuanEnvRunner`, also what self-play uses); the learner
(:class:`sichuan_agents.training.rllib_module.TilePlanesRLModule`,
the SB3 policy's network) runs in the driver, on the GPU with ``--device auto`` when torch
sees one (``--num-gpus-per-learner``). ``--algo ppo`` (default) alternates: every runner
samples ``--n-steps`` per table, then the learner makes ``--epochs`` passes. ``--algo
appo`` (RLlib's APPO: V-trace-corrected PPO with a target network,
:class:`~sichuan_agents.training.rllib_module.TilePlanesAPPOModule`) overlaps them: the runners keep
sampling while the learner trains on each runner's batch as it arrives (each batch used
``max(1, epochs // 2)`` times), and the runners get new weights after every update.
Every learner seat maps to the one trained module ``learner`` (:func:`policy_mapping_fn`):
``--opponents self`` is self-play of that module at all four seats; bot names put one
learner seat per table (``--learner-seats`` in turn over the tables) against three bots
played inside the env runners, batched.

Writes to ``--out``: ``checkpoint/`` (the final RLlib checkpoint, for ``--resume``),
``checkpoints/step_N/`` (periodic), ``policy.pt`` (the network alone, for the
``rllib:PATH`` agent: loads without Ray), ``tb/`` (TensorBoard), ``progress.jsonl`` (one
line per training iteration), ``eval.jsonl`` (periodic evaluations) and ``results.json``
(the final duplicate-arena table, as the SB3 path writes it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from sichuan_agents.models.rllib_agent import MODULE_ID, RLlibAgent, load_net, save_policy
from sichuan_agents.training.hardware import machine_cores
from sichuan_agents.training.ppo_policy import CHANNELS
from sichuan_agents.training.rllib_net import TilePlanesNet


def policy_mapping_fn(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Every seat RLlib plays maps to the one trained module."""
    return MODULE_ID


def make_bots(spec: str, seed: int, preset: str | None = None) -> list[Any]:
    """Three bots from ``--opponents`` (one name or three), built in each env runner the
    way every env builds its opponents (:func:`sichuan_env.seats.agent.seat_agents`: equal names
    are one bot, seeds by :func:`sichuan_env.core.seeding.agent_seed`, the rule ``preset``)."""
    from sichuan_env.seats.agent import seat_agents

    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(names) == 1:
        names = names * 3
    built = seat_agents(names, seed, preset)
    return [built.agents[k] for k in built.seat_agent]


def opponents_factory(spec: str, seed: int, preset: str | None = None):
    """None for self-play, else a picklable zero-argument callable returning three bots."""
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(names) not in (1, 3):
        raise ValueError(f"--opponents takes one name or three, got {spec!r}")
    if "self" in names:
        if set(names) != {"self"}:
            raise ValueError("with --backend rllib, 'self' is self-play at all four seats; "
                             "it cannot be mixed with bots")
        return None
    make_bots(spec, seed, preset)  # fail here, in the driver, on an unknown name or file
    return partial(make_bots, spec, seed, preset)


def env_config(args: argparse.Namespace) -> dict[str, Any]:
    from sichuan_agents.training.features import N_FEATURE_PLANES, analysis_planes

    seats = tuple(int(s) for s in args.learner_seats.split(","))
    cfg: dict[str, Any] = {
        "rules": args.rules, "learner_seats": seats, "illegal": "raise",
        "opponents": opponents_factory(args.opponents, args.seed, args.rules),
    }
    if getattr(args, "reference", "none") != "none":  # paired-deal rewards
        cfg["reference"] = args.reference
    if args.features == "analysis":
        cfg["features"] = analysis_planes
        cfg["num_features"] = N_FEATURE_PLANES
    return cfg


def env_runner_class(args: argparse.Namespace) -> type:
    """``--sampler``: :class:`sichuan_env.envs.rllib_bulk.BulkEnvRunner` (``bulk``; ``auto``
    against bots) or :class:`sichuan_env.envs.rllib.SichuanEnvRunner` (``rllib``; ``auto`` in
    self-play)."""
    sampler = getattr(args, "sampler", "auto")
    self_play = "self" in [s.strip() for s in args.opponents.split(",")]
    if sampler == "auto":
        sampler = "rllib" if self_play else "bulk"
    if sampler == "bulk":
        if self_play:
            raise ValueError("--sampler bulk needs bot opponents; self-play runs on "
                             "--sampler rllib")
        from sichuan_env.envs.rllib_bulk import BulkEnvRunner

        return BulkEnvRunner
    from sichuan_env.envs.rllib import SichuanEnvRunner

    return SichuanEnvRunner


def build_config(args: argparse.Namespace) -> Any:
    """The algorithm config of a run: PPOConfig (``--algo ppo``) or APPOConfig (``--algo
    appo``), see the module docstring."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    from sichuan_agents.training.rllib_module import module_spec
    from sichuan_env.envs.rllib import SichuanMultiAgentEnv

    algo = getattr(args, "algo", "ppo")
    runners = max(0, int(args.env_runners))
    fragment = int(args.n_steps)
    gpus = float(args.num_gpus_per_learner or 0)
    if algo == "appo":
        from ray.rllib.algorithms.appo import APPOConfig

        # one runner's rollout per train batch: the learner takes each as it arrives
        batch = fragment * args.tables
        minibatch = max(fragment, min(args.batch_size, batch) // fragment * fragment)
        config = APPOConfig().training(
            lr=args.lr, gamma=args.gamma, lambda_=0.95, entropy_coeff=args.ent_coef,
            clip_param=0.2, vf_loss_coeff=0.5, grad_clip=0.5, use_kl_loss=False,
            num_epochs=1, minibatch_size=minibatch, train_batch_size_per_learner=batch,
            circular_buffer_iterations_per_batch=max(1, args.epochs // 2),
        ).reporting(min_time_s_per_iteration=1)  # IMPALA's default: 10 s per iteration
    else:
        from ray.rllib.algorithms.ppo import PPOConfig

        batch = fragment * args.tables * max(1, runners)
        config = PPOConfig().training(
            lr=args.lr, gamma=args.gamma, lambda_=0.95, entropy_coeff=args.ent_coef,
            clip_param=0.2, vf_loss_coeff=0.5, vf_clip_param=1e6, grad_clip=0.5,
            use_kl_loss=False, num_epochs=args.epochs,
            minibatch_size=min(args.batch_size, batch), train_batch_size_per_learner=batch,
        )
    return (
        config
        .environment(SichuanMultiAgentEnv, env_config=env_config(args))
        .env_runners(
            env_runner_cls=env_runner_class(args), num_env_runners=runners,
            num_envs_per_env_runner=args.tables, rollout_fragment_length=fragment,
            num_cpus_per_env_runner=1, sample_timeout_s=600.0,
        )
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=policy_mapping_fn,
                     policies_to_train=[MODULE_ID])
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={MODULE_ID: module_spec(
                {"precision": getattr(args, "precision", "fp32"),
                 "channels": getattr(args, "channels", CHANNELS)}, algo=algo)}))
        .learners(num_learners=0, num_gpus_per_learner=gpus)
        .debugging(seed=args.seed, log_level="ERROR")
        .reporting(metrics_num_episodes_for_smoothing=100)
    )


def policy_layout(args: argparse.Namespace) -> dict[str, Any]:
    """The input layout of the network a run trains (saved in ``policy.pt``)."""
    from sichuan_agents.training.layout import make_layout

    return make_layout(analysis=args.features == "analysis")


#: The first convolution's weights in the trained module's state (out channels first).
_FIRST_CONV = "net.features_extractor.convs.0.weight"


def checkpoint_channels(path: str | Path) -> int | None:
    """The convolutions' channels of the network in the RLlib checkpoint folder ``path``
    (what ``--resume`` continues), or None when there is no checkpoint there. Read from the
    module's saved weights (RLlib pickles them as numpy arrays), without building it."""
    learner = Path(path) / "learner_group"
    if not learner.is_dir():
        return None
    state_file = learner / "learner" / "rl_module" / MODULE_ID / "module_state.pkl"
    if state_file.is_file():
        import pickle

        with open(state_file, "rb") as f:
            state = pickle.load(f)
        if _FIRST_CONV in state:
            return int(state[_FIRST_CONV].shape[0])
    return int(load_net(path).config["channels"])


def learner_net(algo: Any) -> TilePlanesNet:
    """A CPU copy of the trained module's network."""
    module = algo.learner_group._learner.module[MODULE_ID]
    net = TilePlanesNet(**module.net.config)  # acts in float32 whatever the learner used
    net.load_state_dict({k: v.detach().cpu() for k, v in module.net.state_dict().items()})
    return net


def set_learner_weights(algo: Any, state: dict[str, Any]) -> None:
    """Load a network state dict into the learner (and APPO's target network) and push it
    to the env runners."""
    module = algo.learner_group._learner.module[MODULE_ID]
    module.net.load_state_dict(state)
    if hasattr(module, "_old_net"):
        module._old_net.load_state_dict(state)
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group,
                                       inference_only=True)


def _get(d: dict[str, Any], *keys: str, default: Any = float("nan")) -> Any:
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def imitation_warm_start(args: argparse.Namespace,
                         warm_start: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """SB3 imitation of ``--imitate`` (as the SB3 path does), returned as network weights."""
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.ppo_policy import policy_kwargs
    from sichuan_agents.training.rllib_net import from_sb3_state
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.seats.agent import make_agent

    teacher = make_agent(args.imitate, seed=args.seed + 999, preset=args.rules)
    seats = tuple(int(s) for s in args.learner_seats.split(","))
    bots = make_bots("random" if args.opponents == "self" else args.opponents, args.seed,
                     args.rules)
    env = SichuanVecEnv(args.tables, rules=args.rules, learner_seats=seats, opponents=bots,
                        seed=args.seed)
    if args.features != "analysis":
        raise SystemExit("--imitate with --backend rllib needs --features analysis")
    env = AnalysisVecEnv(env)
    kwargs = policy_kwargs(channels=getattr(args, "channels", CHANNELS))
    model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size,
                        learning_rate=args.lr, policy_kwargs=kwargs, seed=args.seed,
                        device="cpu", verbose=0)
    stats = warm_start(model, env, teacher, args)
    return from_sb3_state(model.policy.state_dict()), stats


def train(args: argparse.Namespace, evaluate: Any, format_results: Any,
          warm_start: Any) -> int:
    """Run ``train.py --backend rllib`` (``evaluate``, ``format_results`` and
    ``warm_start`` are train.py's, shared with the SB3 path)."""
    import ray
    import torch

    torch.set_num_threads(max(1, args.threads))
    out = Path(args.out)
    if args.resume and not (Path(args.resume) / "learner_group").is_dir():
        raise SystemExit(f"--resume: no RLlib checkpoint folder at {args.resume} (expected "
                         "OUT/checkpoint or OUT/checkpoints/step_N)")
    try:
        config = build_config(args)
    except (ValueError, FileNotFoundError) as e:
        raise SystemExit(f"--opponents: {e}") from None
    if args.address:  # reach the cluster before minutes of imitation, not after
        from sichuan_agents.training.cluster import ClusterError, connect

        try:
            connect(args.address, include_dashboard=False, log_to_driver=False)
        except ClusterError as err:
            print(f"error: {err}", file=sys.stderr)
            raise SystemExit(2) from None
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if args.env_runners > cpus:
            ray.shutdown()
            print(f"error: --env-runners {args.env_runners} needs {args.env_runners} CPUs, "
                  f"but the Ray cluster at {args.address} has {cpus}: use --env-runners "
                  f"{cpus} or fewer", file=sys.stderr)
            raise SystemExit(2)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    imitation = weights = None
    if args.imitate != "none" and not args.resume:
        try:
            weights, imitation = imitation_warm_start(args, warm_start)
        except (ValueError, FileNotFoundError) as e:
            raise SystemExit(f"--imitate: {e}") from None
    if not args.address:  # train.check_args: env runners <= cores; the learner is here
        ray.init(num_cpus=max(1, args.env_runners, machine_cores()),
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(out / "tb"))
    try:
        algo = config.build_algo()
        if args.resume:
            algo.restore_from_path(str(Path(args.resume).resolve()))
        elif weights is not None:
            set_learner_weights(algo, weights)
        mode = "self-play" if args.opponents == "self" else f"vs {args.opponents}"
        print(f"training RLlib {args.algo.upper()}: {args.total_steps:,} steps, "
              f"{args.env_runners} env runners x {args.tables} tables, {mode}, rules "
              f"{args.rules}, learner on {'GPU' if args.num_gpus_per_learner else 'CPU'}, "
              f"{args.channels} channels, out {out}", flush=True)
        steps = 0
        start = None
        next_ckpt, next_eval = args.checkpoint_every, args.eval_every
        t0 = time.perf_counter()
        while steps < args.total_steps:
            result = algo.train()
            lifetime = int(_get(result, "env_runners", "num_env_steps_sampled_lifetime",
                                default=0))
            if start is None:  # steps before this run (resume) are not counted
                start = lifetime - int(_get(result, "env_runners", "num_env_steps_sampled",
                                            default=0))
            steps = lifetime - start
            elapsed = time.perf_counter() - t0
            row = {
                "iteration": int(result.get("training_iteration", 0)), "steps": steps,
                "seconds": round(elapsed, 3), "env_steps_per_s": steps / elapsed,
                "episode_return_mean": _get(result, "env_runners", "module_episode_returns_mean",
                                            MODULE_ID),
                "policy_loss": _get(result, "learners", MODULE_ID, "policy_loss"),
                "vf_loss": _get(result, "learners", MODULE_ID, "vf_loss"),
                "entropy": _get(result, "learners", MODULE_ID, "entropy"),
            }
            with open(out / "progress.jsonl", "a") as f:
                f.write(json.dumps(row) + "\n")
            for k, v in row.items():
                if k not in ("iteration", "steps") and isinstance(v, int | float):
                    writer.add_scalar(f"rllib/{k}", float(v), lifetime)
            if not args.no_progress:
                print(f"  iter {row['iteration']:>4} {steps:>10,} steps {elapsed:7.0f} s "
                      f"{row['env_steps_per_s']:8,.0f} steps/s  return "
                      f"{row['episode_return_mean']:+.3f}  entropy {row['entropy']:.3f}",
                      flush=True)
            if args.checkpoint_every and steps >= next_ckpt:
                algo.save_to_path(str((out / "checkpoints" / f"step_{lifetime}").resolve()))
                next_ckpt += args.checkpoint_every
            if args.eval_every and steps >= next_eval:
                res = evaluate(RLlibAgent(learner_net(algo), layout=policy_layout(args)),
                               args.rules, args.eval_deals, args.seed + 7)
                for name, r in res.items():
                    writer.add_scalar(f"eval/ppo_minus_{name}", r["diff_vs_bot"], lifetime)
                with open(out / "eval.jsonl", "a") as f:
                    f.write(json.dumps({"steps": lifetime, **res}) + "\n")
                print(f"\n[eval @ {steps:,} steps]\n{format_results(res)}", flush=True)
                next_eval += args.eval_every
            if args.time_limit and elapsed > 60 * args.time_limit:
                print(f"time limit of {args.time_limit} min reached at {steps:,} steps")
                break
        train_time = time.perf_counter() - t0
        algo.save_to_path(str((out / "checkpoint").resolve()))
        # from the checkpoint just written: APPO's learner may have updated since
        net = load_net(out / "checkpoint")
        save_policy(net, out / "policy.pt", policy_layout(args))
        algo.stop()
    finally:
        writer.close()
        ray.shutdown()
    sps = steps / train_time
    print(f"trained {steps:,} steps in {train_time:.0f} s ({sps:,.0f} env steps/s, learning "
          f"included); saved {out / 'checkpoint'} and {out / 'policy.pt'}", flush=True)
    t1 = time.perf_counter()
    results = evaluate(RLlibAgent(net, layout=policy_layout(args)), args.rules,
                       args.final_eval_deals, args.seed + 1000)
    print(f"\nfinal evaluation (duplicate arena, {args.final_eval_deals} walls x 4 seatings, "
          f"{time.perf_counter() - t1:.0f} s); 95% confidence intervals")
    print(format_results(results))
    summary = {"args": vars(args), "backend": "rllib", "algo": args.algo, "steps": steps,
               "train_seconds": train_time, "steps_per_second": sps,
               "imitation": imitation, "results": results}
    (out / "results.json").write_text(json.dumps(summary, indent=2, default=str))
    beat_random = results["random"]["diff_ci95"][0] > 0 if "random" in results else False
    print("beats random (CI excludes zero):", "yes" if beat_random else "no")
    return 0

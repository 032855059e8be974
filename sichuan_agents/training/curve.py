"""Learning curves in resumable chunks: train, evaluate in the duplicate arena, append, plot.

    python -m sichuan_agents.training.curve --out runs/curves/scratch-paired --start scratch \\
        --reference rules --budget-steps 10000000 --chunk-steps 500000

Trains for ``--budget-steps`` learner decisions in chunks of ``--chunk-steps``; after each
chunk the policy plays the duplicate arena (``train.evaluate``: three copies of each bot of
``--against``, ``--eval-walls`` walls of ``--eval-seed`` dealt four times with the seats
rotated, the same walls at every point) and the point (steps, CPU-seconds of training,
points per deal minus each bot with its 95% CI) is appended to ``OUT/curve.json`` and drawn
into ``OUT/curve.png`` (against steps and against CPU-seconds). ``--time-limit`` stops
starting chunks after that many minutes of training (for curves over the same hour).

* ``--start scratch``: PPO from a random network (``train.py --imitate none --advice none
  --kl-coef 0``; every chunk resumes the previous chunk's model, on new walls);
* ``--start fitted`` or a model file that reads the advice planes and has an oracle critic:
  the PPO fine-tune (:mod:`sichuan_agents.training.finetune`, its own resumable run in
  ``OUT/finetune``, critic warm-up first); the start is evaluated as point 0.

``--reference rules`` (or any agent; ``none``: plain rewards) trains with paired-deal
rewards (:mod:`sichuan_env.envs.paired`). Running the same command again continues where the
last finished chunk ended (another ``--budget-steps`` extends the curve; any other
setting that differs is a one-line error, exit 2). ``--commit`` commits ``curve.json`` and
``curve.png`` to git after every point, so a long run leaves its curve behind as it goes.
``--trainer-args "..."`` hands more options to the trainer (after the curve's own, so they
win), e.g. the fine-tune's ``--lr``.

``--compare A B ... --out FIG.png`` trains nothing: it draws the curves of several folders
on one figure (policy minus each bot against CPU-seconds), e.g. plain against paired.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.seats.agent import agents_help

#: Options that may change between the runs of one curve.
RESUMABLE = ("budget_steps", "time_limit", "commit", "quiet")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True,
                   help="the curve's folder (with --compare: the figure, a .png)")
    p.add_argument("--compare", nargs="+", metavar="CURVE", default=None,
                   help="train nothing: draw these curves (folders or curve.json files) on "
                        "one figure, policy minus each bot of their --against, into --out")
    p.add_argument("--start", default="scratch",
                   help="scratch (PPO from a random network), fitted (the shipped fitted "
                        "model, fine-tuned) or a model file to fine-tune (scratch)")
    p.add_argument("--reference", default="none",
                   help=agents_help("paired-deal rewards against this agent, or none "
                                    "(none)"))
    p.add_argument("--opponents", default="greedy",
                   help="scratch: the bot(s) the learner trains against (greedy); fine-tune: "
                        "pool or three agents (pool)")
    p.add_argument("--budget-steps", type=int, default=10_000_000,
                   help="learner decisions in all (10000000)")
    p.add_argument("--chunk-steps", type=int, default=500_000,
                   help="learner decisions between two points (500000)")
    p.add_argument("--time-limit", type=float, default=0.0,
                   help="minutes of training (wall clock, evaluations excluded, summed over "
                        "resumed runs) after which no new chunk starts (0: none)")
    p.add_argument("--tables", type=int, default=64, help="tables per learner seat (64)")
    p.add_argument("--against", default="rules,greedy", help="bots evaluated against")
    p.add_argument("--eval-walls", type=int, default=2000,
                   help="walls per point and bot, each dealt 4 times (2000)")
    p.add_argument("--eval-seed", type=int, default=4242)
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (1)")
    p.add_argument("--commit", action="store_true",
                   help="git-commit curve.json and curve.png after every point")
    p.add_argument("--quiet", action="store_true", help="hide the trainers' output")
    p.add_argument("--trainer-args", default="",
                   help="more options for the trainer (train.py from scratch, the fine-tune "
                        "otherwise), one string, e.g. \"--lr 1e-4 --kl-coef 0.05\"; they "
                        "come after the curve's own and so override them")
    a = p.parse_args(argv)
    if a.compare is not None:
        if not a.out.endswith(".png"):
            p.error(f"--compare draws a .png: --out must end in .png, got {a.out!r}")
        for c in a.compare:
            if not _curve_file(Path(c)).is_file():
                p.error(f"--compare: no curve.json at {c}")
        return a
    for flag, v, lo in (("--budget-steps", a.budget_steps, 1),
                        ("--chunk-steps", a.chunk_steps, 1), ("--tables", a.tables, 1),
                        ("--eval-walls", a.eval_walls, 1), ("--threads", a.threads, 1)):
        if v < lo:
            p.error(f"{flag} must be >= {lo}, got {v}")
    if a.start not in ("scratch", "fitted") and not Path(a.start).is_file():
        p.error(f"--start: scratch, fitted or a model file, got {a.start!r}")
    if a.start != "scratch" and a.opponents == "greedy":
        a.opponents = "pool"
    a.against = ",".join(s.strip() for s in a.against.split(",") if s.strip())
    try:
        shlex.split(a.trainer_args)
    except ValueError as err:
        p.error(f"--trainer-args: {err}")
    return a


def _curve_file(path: Path) -> Path:
    return path if path.suffix == ".json" else path / "curve.json"


def settings_of(a: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in vars(a).items() if k not in RESUMABLE}


def read_curve(out: Path) -> dict[str, Any] | None:
    path = out / "curve.json"
    return json.loads(path.read_text()) if path.is_file() else None


def write_curve(out: Path, curve: dict[str, Any]) -> None:
    """``OUT/curve.json`` whole or not at all."""
    tmp = out / "curve.json.tmp"
    tmp.write_text(json.dumps(curve, indent=1))
    tmp.replace(out / "curve.json")


def _draw(ax: Any, x: np.ndarray, pts: list[dict[str, Any]], bot: str, label: str,
          alpha: float) -> None:
    """One line of policy minus ``bot`` with its 95% band."""
    ax.fill_between(x, [p["vs"][bot]["ci_low"] for p in pts],
                    [p["vs"][bot]["ci_high"] for p in pts], alpha=alpha)
    ax.plot(x, [p["vs"][bot]["diff"] for p in pts], marker="o", ms=3, label=label)


def plot(curve: dict[str, Any], path: Path) -> None:
    """Points per deal minus each bot, with 95% CIs, against steps and CPU-seconds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = curve["points"]
    s = curve["settings"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, key, label in ((axes[0], "steps", "learner decisions (env steps)"),
                           (axes[1], "cpu_seconds", "CPU-seconds of training")):
        x = np.array([p[key] for p in pts], float)
        for bot in s["against"].split(","):
            _draw(ax, x, pts, bot, f"policy − {bot}", alpha=0.2)
        ax.axhline(0, color="black", lw=0.5)
        ax.set_xlabel(label)
    axes[0].set_ylabel("points per deal (duplicate arena)")
    axes[0].legend(fontsize=8)
    ref = "plain rewards" if s["reference"] == "none" else f"paired with {s['reference']}"
    fig.suptitle(f"{s['rules']}: PPO from {s['start']}, {ref}, vs {s['opponents']}; "
                 f"{s['eval_walls']} walls x 4, seed {s['eval_seed']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _label(curve: dict[str, Any]) -> str:
    s = curve["settings"]
    ref = "plain" if s["reference"] == "none" else f"paired ({s['reference']})"
    return f"{s['start']}, {ref}"


def plot_compare(curves: list[dict[str, Any]], path: Path) -> None:
    """Several curves on one figure: a panel per bot (policy minus that bot, 95% CIs)
    against CPU-seconds of training."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bots = list(dict.fromkeys(b for c in curves for b in c["settings"]["against"].split(",")))
    fig, axes = plt.subplots(1, len(bots), figsize=(5 * len(bots), 3.8), squeeze=False)
    for ax, bot in zip(axes[0], bots, strict=True):
        for c in curves:
            pts = [p for p in c["points"] if bot in p["vs"]]
            x = np.array([p["cpu_seconds"] for p in pts], float)
            _draw(ax, x, pts, bot, _label(c), alpha=0.15)
        ax.axhline(0, color="black", lw=0.5)
        ax.set_title(f"policy − {bot}", fontsize=9)
        ax.set_xlabel("CPU-seconds of training")
    axes[0][0].set_ylabel("points per deal (duplicate arena)")
    axes[0][0].legend(fontsize=8)
    s = curves[0]["settings"]
    fig.suptitle(f"{s['rules']}: {s['eval_walls']} walls x 4, seed {s['eval_seed']}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def evaluate(model_path: Path, a: argparse.Namespace) -> dict[str, Any]:
    """The duplicate arena against each bot of ``--against``."""
    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_agents.train import evaluate as arena

    agent = PPOAgent(model_path, rules=a.rules)
    res = arena(agent, a.rules, a.eval_walls, a.eval_seed, opponents=tuple(a.against.split(",")))
    return {bot: {"diff": r["diff_vs_bot"], "ci_low": r["diff_ci95"][0],
                  "ci_high": r["diff_ci95"][1], "deals": r["deals"]} for bot, r in res.items()}


def _quietly(quiet: bool) -> Any:
    if not quiet:
        return contextlib.nullcontext()
    return contextlib.redirect_stdout(io.StringIO())


def train_scratch(a: argparse.Namespace, out: Path, done: int, chunk: int) -> tuple[Path, int]:
    """One chunk of ``train.py`` from scratch (or resuming the curve's model); returns
    the model and the steps it trained."""
    from sichuan_agents import train

    work = out / "train"
    argv = ["--imitate", "none", "--advice", "none", "--kl-coef", "0", "--total-steps",
            str(chunk), "--tables", str(a.tables), "--opponents", a.opponents,
            "--reference", a.reference, "--rules", a.rules,
            "--seed", str(a.seed + done), "--eval-every", "0", "--checkpoint-every", "0",
            "--final-eval-deals", "1", "--eval-against", "random", "--no-progress",
            "--threads", str(a.threads), "--device", "cpu", "--out", str(work),
            *shlex.split(a.trainer_args)]
    models = out / "models"  # one per point: a resumed curve goes on from its last point
    models.mkdir(exist_ok=True)
    if done:
        argv += ["--resume", str(models / f"{done}.zip")]
    with _quietly(a.quiet):
        code = train.main(argv)
    if code:
        raise SystemExit(f"curve: train.py stopped with status {code}")
    steps = int(json.loads((work / "results.json").read_text())["steps"])
    model = models / f"{done + steps}.zip"
    shutil.copyfile(work / "model.zip", model)
    return model, steps


def train_finetune(a: argparse.Namespace, out: Path, done: int, chunk: int) -> tuple[Path, int]:
    """The fine-tune continued to ``done + chunk`` PPO decisions; returns the model and the
    decisions it added."""
    from sichuan_agents.training import finetune

    work = out / "finetune"
    argv = ["--out", str(work), "--total-steps", str(done + chunk), "--tables",
            str(a.tables), "--opponents", a.opponents, "--rules", a.rules, "--seed",
            str(a.seed), "--eval-every", str(10 ** 12), "--eval-deals", "4", "--threads",
            str(a.threads)]
    if a.start != "fitted":
        argv += ["--init", a.start]
    if a.reference != "none":
        argv += ["--reference", a.reference]
    argv += shlex.split(a.trainer_args)
    with _quietly(a.quiet):
        code = finetune.main(argv)
    if code:
        raise SystemExit(f"curve: the fine-tune stopped with status {code}")
    now = int(json.loads((work / "state.json").read_text())["done"])
    return work / "model.zip", now - done


def _commit(out: Path, steps: int) -> None:
    files = [str(out / "curve.json"), str(out / "curve.png")]
    subprocess.run(["git", "add", "-f", *files], check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"curve {out.name}: {steps:,} steps", "--",
                    *files], check=True)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.compare is not None:
        curves = [json.loads(_curve_file(Path(c)).read_text()) for c in a.compare]
        plot_compare(curves, Path(a.out))
        print(f"wrote {a.out}")
        return 0
    out = Path(a.out)
    curve = read_curve(out)
    settings = settings_of(a)
    if curve is not None:
        differ = [f"--{k.replace('_', '-')} {curve['settings'].get(k)!r} there, {v!r} here"
                  for k, v in settings.items() if curve["settings"].get(k) != v]
        if differ:
            print(f"curve: {out} holds a curve with other settings ({'; '.join(differ)}): "
                  "use another --out or the same settings", file=sys.stderr)
            return 2
    else:
        curve = {"settings": settings, "points": []}
    out.mkdir(parents=True, exist_ok=True)
    import torch

    torch.set_num_threads(a.threads)
    pts = curve["points"]
    done = pts[-1]["steps"] if pts else 0
    cpu = pts[-1]["cpu_seconds"] if pts else 0.0
    wall = pts[-1].get("train_seconds", 0.0) if pts else 0.0
    if not pts and a.start != "scratch":  # the start itself
        from sichuan_agents.models.ppo import shipped_model

        init = shipped_model(a.rules, "fitted") if a.start == "fitted" else Path(a.start)
        pts.append({"steps": 0, "cpu_seconds": 0.0, "vs": evaluate(init, a)})
    while done < a.budget_steps:
        if a.time_limit and wall >= 60 * a.time_limit:
            print(f"curve: time limit reached after {wall:,.0f} s of training", flush=True)
            break
        chunk = min(a.chunk_steps, a.budget_steps - done)
        t0, w0 = time.process_time(), time.perf_counter()
        trainer = train_scratch if a.start == "scratch" else train_finetune
        model, steps = trainer(a, out, done, chunk)
        done += steps
        cpu += time.process_time() - t0
        wall += time.perf_counter() - w0
        point = {"steps": done, "cpu_seconds": round(cpu, 1), "train_seconds": round(wall, 1),
                 "vs": evaluate(model, a)}
        pts.append(point)
        write_curve(out, curve)
        plot(curve, out / "curve.png")
        line = ", ".join(f"{b} {v['diff']:+.3f} [{v['ci_low']:+.3f}, {v['ci_high']:+.3f}]"
                         for b, v in point["vs"].items())
        print(f"[{done:,} steps, {cpu:,.0f} CPU-s] policy minus {line}", flush=True)
        if a.commit:
            _commit(out, done)
    if pts:
        write_curve(out, curve)
        plot(curve, out / "curve.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())

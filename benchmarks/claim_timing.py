"""Does the time between a bot's requests show that another seat was offered a claim?

    python benchmarks/claim_timing.py [--deals 20] [--think 0.1] [--window 0.3] [--seed 1]

A probe bot (``exec:``, it writes down when each request arrives) plays seat 0 of
``--deals`` deals, one table at a time, against three ``rules`` bots that think
``--think`` seconds on each claim decision (a claim or a robbed-kong window) and write
down when they are asked. Each pair of consecutive requests to the probe in one deal
where nothing was claimed in between (no meld, no Hu: every claim offered was passed)
is a sample: its gap, and whether another seat was offered a claim in between (the
hidden fact). Samples are grouped by what the probe can count from its views (the
discards in between, and whether the later request is its own claim decision); within
each group, a classifier "a long gap means a claim" is scored by its AUC (0.5: chance)
and the accuracy of the best threshold on the gap (chosen on the samples themselves, so
it flatters the classifier), next to the share of the larger class (what guessing it
alone gets); the groups' figures are averaged weighted by their samples.
Two runs: the arena as it is, and with ``--claim-window`` (``claim_window``) set to
``--window`` seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.arena import run_arena
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_env.core.state import PHASE_NAMES

CLAIMS = (PHASE_NAMES.index("claim"), PHASE_NAMES.index("rob"))
PROBE = r'''
import json, sys, time
log = open(sys.argv[1], "a")
for line in sys.stdin:
    now = time.monotonic()
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps({"type": "hello", "name": "probe", "tables": 4}), flush=True)
    elif msg["type"] == "request":
        legal = msg["legal"]
        v = msg["view"]
        public = [sum(map(len, v["rivers"])), sum(map(len, v["melds"])), sum(v["hu"])]
        log.write(json.dumps([now, msg["table"], v["phase"], *public]) + "\n")
        log.flush()
        print(json.dumps({"id": msg["id"], "action": "hu" if "hu" in legal else legal[0]}),
              flush=True)
    elif msg["type"] == "bye":
        break
'''


class SlowClaims(RulesAgent):
    """``rules``, thinking ``think`` seconds on each claim decision (times kept)."""

    def __init__(self, think: float, asked: list[float], seed: int = 0) -> None:
        super().__init__(seed=seed)
        self.think, self.asked = think, asked
        self.name = "slow-claims"

    def act_batch(self, obs: Any, masks: np.ndarray) -> np.ndarray:
        claims = int(np.isin(np.asarray(obs.phase), CLAIMS).sum())
        if claims:
            self.asked.append(time.monotonic())
            time.sleep(self.think * claims)
        return super().act_batch(obs, masks)


def auc(score: np.ndarray, label: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties half (Mann-Whitney)."""
    pos, neg = score[label], score[~label]
    if not pos.size or not neg.size:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (pos.size * neg.size))


def best_threshold_accuracy(score: np.ndarray, label: np.ndarray) -> float:
    cuts = np.append(np.unique(score), np.inf)  # np.inf: all negative
    return float(max(((score >= c) == label).mean() for c in cuts))


def probe(deals: int, think: float, window: float, seed: int, dump: Path | None = None
          ) -> dict[str, Any]:
    """One run: the samples' count, share of claims, AUC and best-threshold accuracy."""
    with tempfile.TemporaryDirectory() as tmp:
        bot_file, log = Path(tmp) / "probe.py", Path(tmp) / "log.jsonl"
        bot_file.write_text(PROBE)
        asked: list[float] = []
        slow = SlowClaims(think, asked, seed=seed)
        t0 = time.perf_counter()
        run_arena([f"exec:{sys.executable} {bot_file} {log}", slow, slow, slow], deals=deals,
                  duplicate=False, seed=seed, tables=1, claim_window=window)
        seconds = time.perf_counter() - t0
        reqs = [json.loads(x) for x in log.read_text().splitlines()]
    times = np.array(sorted(asked))
    groups: dict[tuple[int, bool], list[tuple[float, bool]]] = {}
    for a, b in zip(reqs, reqs[1:], strict=False):
        if a[1] != b[1] or a[4:] != b[4:]:  # another deal; or a claim was taken
            continue
        key = (b[3] - a[3], b[2] in ("claim", "rob"))
        hidden = bool(((times > a[0]) & (times < b[0])).any())
        groups.setdefault(key, []).append((b[0] - a[0], hidden))
    if dump is not None:
        dump.write_text(json.dumps({str(k): v for k, v in groups.items()}) + "\n")
    out: dict[str, Any] = {"window_s": window, "seconds": seconds}
    for own_claim in (False, True):
        n = w_auc = w_acc = w_maj = pos = 0.0
        for (_, claim), rows in groups.items():
            g = np.array([r[0] for r in rows])
            y = np.array([r[1] for r in rows])
            if claim != own_claim or y.all() or not y.any():
                continue  # one class only: nothing to tell apart
            n += y.size
            pos += y.sum()
            w_auc += y.size * auc(g, y)
            w_acc += y.size * best_threshold_accuracy(g, y)
            w_maj += y.size * max(y.mean(), 1 - y.mean())
        key = "own_claim" if own_claim else "turn"
        out[key] = {"samples": int(n), "claim_share": pos / n if n else float("nan"),
                    "auc": w_auc / n if n else float("nan"),
                    "best_threshold_accuracy": w_acc / n if n else float("nan"),
                    "majority": w_maj / n if n else float("nan")}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=20)
    p.add_argument("--think", type=float, default=0.1)
    p.add_argument("--window", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only-window", action="store_true", help="skip the run without it")
    p.add_argument("--dump", default=None, help="write the samples (JSON) here")
    args = p.parse_args(argv)
    for window in (args.window,) if args.only_window else (0.0, args.window):
        dump = None if args.dump is None else Path(f"{args.dump}.{window:g}.json")
        r = probe(args.deals, args.think, window, args.seed, dump)
        for key, what in (("turn", "its turns"), ("own_claim", "its own claims")):
            x = r[key]
            print(f"claim window {r['window_s']:.2f} s, gaps before {what}: "
                  f"{x['samples']} gaps, {100 * x['claim_share']:.0f}% with a hidden claim; "
                  f"AUC {x['auc']:.3f}, best threshold "
                  f"{100 * x['best_threshold_accuracy']:.1f}% (majority "
                  f"{100 * x['majority']:.1f}%); run {r['seconds']:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Timing probe of browser play: does the answer to a discard tell that a bot was asked?

::

    python benchmarks/web_timing.py [--bots rules] [--deals 40] [--claim-window-ms MS]
        [--runs both|unpadded|padded] [--json out.json]

Plays ``--deals`` deals of one browser game (:class:`sichuan_env.play.web.table.WebGame`, in
this process: the server's own work without the network) with three ``--bots`` bots, the
human playing random legal moves, twice: once without padding (``claim_window`` 0) and
once with it (``--claim-window-ms``; default as the command line chooses it, from the
bots' answers in a trial deal). Each of the human's discards is timed up to its next
decision (what a player sees as the server's answer) and labelled with what the player
may not know: whether a bot seat was asked in the discard's claim window (and passed: a
discard that a bot claimed is left out, the claim is public). Reports, for
each run, how many discards of each kind, their median times, and the AUC of a threshold
on the time as a classifier of the label (0.5: the time tells nothing; 1: it tells all),
with its standard error; and the same for the time of the discard's window alone (from
the discard to the window's end, padding included: what the padding makes constant; the
rest of the answer is the bots' turns up to the human's next decision).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def auc(pos: list[float], neg: list[float]) -> tuple[float, float]:
    """AUC of ``pos`` above ``neg`` (ties half) and its standard error (Hanley-McNeil)."""
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    a = float(((p > n).sum() + 0.5 * (p == n).sum()) / (p.size * n.size))
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    var = (a * (1 - a) + (p.size - 1) * (q1 - a * a) + (n.size - 1) * (q2 - a * a)) \
        / (p.size * n.size)
    return a, float(np.sqrt(max(var, 0.0)))


def probe(bots: str, deals: int, claim_window: float, seed: int) -> dict[str, Any]:
    from sichuan_env.core.actions import PASS
    from sichuan_env.core.rules import get_rules
    from sichuan_env.core.state import CLAIM, ROB
    from sichuan_env.play.web.bots import BotSpec
    from sichuan_env.play.web.table import DealSeeds, WebGame

    rules = get_rules("mil")
    game = WebGame([None] + [BotSpec(bots, rules.preset)] * 3, rules, DealSeeds(seed),
                   claim_window=claim_window)
    rng = random.Random(seed)
    seen: list[tuple[int, int]] = []  # (phase, action) of each bot decision
    decide = game.bots.decide

    def spy(g: Any) -> Any:
        d = decide(g)
        seen.append((int(g.state.phase[0]), int(d.action)))
        return d

    game.bots.decide = spy  # type: ignore[method-assign]
    spans: list[float] = []  # how long each window took, padding included
    close = game._close_window

    def spy_close(since: float) -> None:
        close(since)
        spans.append(time.monotonic() - since)

    game._close_window = spy_close  # type: ignore[method-assign]
    asked: list[float] = []
    not_asked: list[float] = []
    window_asked: list[float] = []
    window_not_asked: list[float] = []
    for _ in range(deals):
        while not game.done:
            legal = game.legal()
            action = rng.choice(legal)
            seen.clear()
            spans.clear()
            t = time.perf_counter()
            game.act(game.step, action)
            took = time.perf_counter() - t
            if not action.startswith("discard"):
                continue
            window = list(itertools.takewhile(lambda d: d[0] in (CLAIM, ROB), seen))
            if any(a != PASS for _, a in window):
                continue  # a bot claimed: public, the player sees it
            (asked if window else not_asked).append(took)
            (window_asked if window else window_not_asked).append(spans[0])
        game.new_deal()
    a, se = auc(asked, not_asked) if asked and not_asked else (float("nan"), float("nan"))
    wa, wse = (auc(window_asked, window_not_asked) if window_asked and window_not_asked
               else (float("nan"), float("nan")))
    return {"claim_window_ms": round(claim_window * 1000, 2),
            "discards_asked": len(asked), "discards_not_asked": len(not_asked),
            "median_ms_asked": round(float(np.median(asked)) * 1000, 2) if asked else None,
            "median_ms_not_asked": (round(float(np.median(not_asked)) * 1000, 2)
                                    if not_asked else None),
            "auc": round(a, 3), "auc_se": round(se, 3),
            "window_median_ms_asked": (round(float(np.median(window_asked)) * 1000, 2)
                                       if window_asked else None),
            "window_median_ms_not_asked": (round(float(np.median(window_not_asked)) * 1000, 2)
                                           if window_not_asked else None),
            "window_auc": round(wa, 3), "window_auc_se": round(wse, 3),
            "windows_over": game.windows_over, "windows": game.windows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bots", default="rules")
    p.add_argument("--deals", type=int, default=40)
    p.add_argument("--claim-window-ms", type=float, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", choices=["both", "unpadded", "padded"], default="both")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    from sichuan_env.core.rules import get_rules
    from sichuan_env.play.web.bots import BotSpec
    from sichuan_env.play.web.table import claim_window_for, warm_up

    rules = get_rules("mil")
    answers = warm_up([None] + [BotSpec(args.bots, rules.preset)] * 3, rules)
    window = (claim_window_for(answers, 10.0) if args.claim_window_ms is None
              else args.claim_window_ms / 1000)
    report: dict[str, Any] = {"bots": args.bots, "deals": args.deals,
                              "load_avg_before": os.getloadavg()}
    for run, pad in (("unpadded", 0.0), ("padded", window)):
        if args.runs in ("both", run):
            report[run] = probe(args.bots, args.deals, pad, args.seed)
            print(json.dumps({run: report[run]}), file=sys.stderr, flush=True)
    report["load_avg_after"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the search agent's choices are worth, decision by decision (a diagnostic).

    python benchmarks/search_decisions.py [--deals 64] [--seed 8301] [--rules mil]
        [--share 0.2] [--top 6] [--pool 1536] [--truth 768] [--hands discards]
        [--save FILE] [--load FILE] [--settings "k=256&top=4;k=64&top=4;oracle=1"]

Arena figures move slowly: a search setting against ``rules`` needs thousands of deals
for an interval of a few tenths of a point. This script values single decisions instead.
Four ``rules`` bots play ``--deals`` deals of ``--seed``; at a share (``--share``) of seat
0's decisions that the search agent would search, it records the seat's view, its legal
mask, the search's candidates (up to ``--top``, in the search's order, the ``rules``
choice first) and the real table (read from the engine state the arena holds, as
``benchmarks/search_oracle.py`` does: this script cheats on purpose, no agent does).
For every recorded decision it plays every candidate out with ``rules`` play-outs

* on ``--pool`` deals drawn by the search's sampler from the seat's view (one pool per
  ``--hands`` sampling): what the search sees;
* on ``--truth`` copies of the real table with the wall's order shuffled: what each
  candidate is worth with the real hands, every seat playing ``rules`` afterwards.

A search *setting* is then simulated from the pools: ``k`` samples drawn (with
replacement) from the pool, the agent's choice rule applied, the choice scored by the
truth pool as its gain over the ``rules`` choice. Averaged over decisions and replicates,
times the decisions searched per deal, that is the one-step gain in points per deal: what
playing that choice once, then ``rules``, adds -- a close proxy of the arena figure, with
the decision-to-decision luck of the arena removed, and every setting valued on the same
decisions (paired intervals between settings).

Settings (``;``-separated, each ``key=value&...``): ``k`` samples, ``z`` the choice rule's
margin in standard errors (default 1), ``top`` candidates (at most ``--top``), ``hands``
the pool's sampling, ``halving`` a share of the budget spent on a first round over every
candidate before the rest goes to the ``rules`` choice and the best challenger (default:
none, one round), ``oracle=1`` the best candidate by half the truth pool (scored on the
other half). The rows print with 95% intervals over decisions, each with its gain per deal
split by the phase of the decisions (own turn, claim window, kong robbing, void choice);
``--save`` keeps the pools
(an ``.npz``) and ``--load`` reads them back to simulate other settings without play-outs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import search_oracle as real_state  # noqa: E402  (the seat-view hook that sees the table)

from sichuan_agents.search.agent import SearchAgent, pick_column  # noqa: E402
from sichuan_agents.search.rollout import play_out  # noqa: E402
from sichuan_agents.search.sampler import HAND_SAMPLING, sample_states  # noqa: E402
from sichuan_env.core.rules import Rules, get_rules  # noqa: E402
from sichuan_env.core.state import CLAIM, ROB, TURN, VOID, State  # noqa: E402
from sichuan_env.seats.view import SeatView  # noqa: E402


class DecisionProbe(SearchAgent):
    """Plays as ``rules``; records a share of the decisions it would search (view row,
    legal mask, candidates, the real table)."""

    def __init__(self, seed: int, rules: Rules, top: int, share: float) -> None:
        super().__init__(seed, top=top, rules=rules)
        self.share = share
        self.pick_rng = np.random.default_rng(seed + 1)
        self.found = 0  # decisions with two or more candidates
        self.kept: list[tuple[SeatView, np.ndarray, list[int], State]] = []

    def _search(self, views: SeatView, masks: np.ndarray, ask: np.ndarray,
                cands: list[list[int]], out: np.ndarray) -> None:
        state = real_state._seen["state"]
        for i, cand in zip(ask.tolist(), cands, strict=True):
            if len(cand) < 2:
                continue
            self.found += 1
            if self.pick_rng.random() >= self.share:
                continue
            t = real_state._real_table(i)
            real = State(*state.take(np.array([t])).arrays(), self.rules)
            row = SeatView(*(f[i:i + 1] for f in views))
            self.kept.append((row, masks[i].copy(), list(cand), real))


def _play(tables: State, cand: list[int], seat: int, rng: np.random.Generator) -> np.ndarray:
    """(n, len(cand)) the seat's points, every candidate played on every table."""
    n, c = tables.batch_size, len(cand)
    tables.key[:] = rng.integers(0, 2**63, n, dtype=np.uint64)
    batch = tables.take(np.repeat(np.arange(n), c))
    scores = play_out(batch, np.tile(np.asarray(cand, np.int64), n), "rules")
    return scores[:, seat].reshape(n, c).astype(np.float32)


def collect(a: argparse.Namespace, rules: Rules, hands: list[str]) -> dict[str, Any]:
    """Play the deals, record decisions, play out their pools; the pools as arrays."""
    probe = DecisionProbe(a.seed, rules, a.top, a.share)
    cpu = real_state.play_seeing_the_table(probe, a.deals, a.seed, rules)
    print(f"{len(probe.kept)} of {probe.found} searched decisions recorded in {a.deals} "
          f"deals ({cpu:.0f} CPU s)", flush=True)
    model = None
    if any(h in ("model", "shaped", "safe") for h in hands):
        from sichuan_agents.search.hand_model import shipped_hand_model

        model = shipped_hand_model()
    rng = np.random.default_rng(a.seed + 2)
    pools: dict[str, list[np.ndarray]] = {h: [] for h in hands}
    truth: list[np.ndarray] = []
    ncand: list[int] = []
    phase: list[int] = []
    started = time.process_time()
    for j, (row, mask, cand, real) in enumerate(probe.kept):
        seat = int(row.seat[0])
        drawn = {h: sample_states(row, 0, mask, rules, a.pool, rng, h, model) for h in hands}
        ok = np.ones(len(cand), bool)
        for st in drawn.values():
            ok &= st.legal_action_mask[:, cand].all(0)
        cand = [c for c, good in zip(cand, ok.tolist(), strict=True) if good]
        if len(cand) < 2:
            continue
        for h, st in drawn.items():
            pools[h].append(_play(st, cand, seat, rng))
        truth.append(_play(real_state.shuffled_copies(real, 0, rules, a.truth, rng), cand, seat,
                           rng))
        ncand.append(len(cand))
        phase.append(int(row.phase[0]))
        if (j + 1) % 50 == 0:
            spent = time.process_time() - started
            print(f"  {j + 1} of {len(probe.kept)} decisions played out ({spent:.0f} CPU s)",
                  flush=True)
            if a.save:  # what is done so far, should the run be stopped
                save(a.save, _data(pools, truth, ncand, phase, probe.found / a.deals))
    return _data(pools, truth, ncand, phase, probe.found / a.deals)


def _data(pools: dict[str, list[np.ndarray]], truth: list[np.ndarray], ncand: list[int],
          phase: list[int], per_deal: float) -> dict[str, Any]:
    return {"pools": {h: _pack(p) for h, p in pools.items()}, "truth": _pack(truth),
            "ncand": np.asarray(ncand, np.int64), "phase": np.asarray(phase, np.int64),
            "per_deal": per_deal}


def _pack(rows: list[np.ndarray]) -> np.ndarray:
    width = max(r.shape[1] for r in rows)
    out = np.full((len(rows), rows[0].shape[0], width), np.nan, np.float32)
    for j, r in enumerate(rows):
        out[j, :, :r.shape[1]] = r
    return out


def save(path: str, data: dict[str, Any]) -> None:
    np.savez_compressed(path, truth=data["truth"], ncand=data["ncand"], phase=data["phase"],
                        per_deal=np.float64(data["per_deal"]),
                        **{f"pool_{h}": p for h, p in data["pools"].items()})


def load(path: str) -> dict[str, Any]:
    with np.load(path) as f:
        phase = f["phase"] if "phase" in f.files else np.full(len(f["ncand"]), -1)
        return {"truth": f["truth"], "ncand": f["ncand"], "per_deal": float(f["per_deal"]),
                "phase": phase,
                "pools": {k[5:]: f[k] for k in f.files if k.startswith("pool_")}}


# ------------------------------------------------------------------ the choice rules
def choose(pool: np.ndarray, c: int, setting: dict[str, float], rng: np.random.Generator
           ) -> int:
    """One simulated search: its choice among the first ``c`` columns of ``pool``."""
    k, z = int(setting["k"]), float(setting.get("z", 1.0))
    clip = float(setting["clip"]) if "clip" in setting else None
    share = float(setting.get("halving", 0.0))
    n = pool.shape[0]
    if share <= 0 or c <= 2:
        return pick_column(pool[rng.integers(0, n, k), :c], z, clip)
    budget = k * c
    first = max(2, int(round(share * budget / c)))
    rows = rng.integers(0, n, first)
    d = pool[rows, 1:c] - pool[rows, :1]
    challenger = 1 + int(np.argmax(d.mean(0)))
    second = max(0, int(round((budget - first * c) / 2)))
    rows = np.concatenate([rows, rng.integers(0, n, second)])
    cols = [0, challenger]
    return cols[pick_column(pool[np.ix_(rows, cols)], z, clip)]


def simulate(data: dict[str, Any], setting: dict[str, float], replicates: int,
             seed: int) -> np.ndarray:
    """Per decision, the mean gain (truth points of the choice minus of the ``rules``
    choice) over ``replicates`` simulated searches."""
    truth, ncand = data["truth"], data["ncand"]
    hands = str(setting.get("hands", next(iter(data["pools"]))))
    if hands not in data["pools"]:
        raise ValueError(f"no pool for hands={hands!r}; have: {', '.join(data['pools'])}")
    pool = data["pools"][hands]
    top = int(setting.get("top", truth.shape[2]))
    rng = np.random.default_rng(seed)
    gains = np.zeros(len(ncand))
    half = truth.shape[1] // 2
    for j in range(len(ncand)):
        c = min(int(ncand[j]), top)
        if c < 2:
            continue
        value = truth[j, :, :c].mean(0, dtype=np.float64)
        if setting.get("oracle"):
            pick_on = truth[j, :half, :c].mean(0, dtype=np.float64)
            score = truth[j, half:, :c].mean(0, dtype=np.float64)
            gains[j] = score[int(np.argmax(pick_on))] - score[0]
            continue
        got = [choose(pool[j], c, setting, rng) for _ in range(replicates)]
        gains[j] = float(np.mean(value[got])) - value[0]
    return gains


def parse_setting(text: str) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    for part in text.split("&"):
        key, _, value = part.partition("=")
        if key not in ("k", "z", "clip", "top", "hands", "halving", "oracle") or not value:
            raise ValueError(f"bad setting {text!r}: expected key=value with keys k, z, "
                             "clip, top, hands, halving, oracle")
        out[key] = value if key == "hands" else float(value)
    if "k" not in out and not out.get("oracle"):
        raise ValueError(f"bad setting {text!r}: k is needed")
    return out


def report(data: dict[str, Any], settings: list[str], replicates: int, seed: int) -> None:
    from sichuan_agents.arena import mean_ci

    per_deal = data["per_deal"]
    print(f"{len(data['ncand'])} decisions, {per_deal:.2f} searched per deal; gain over "
          f"the rules choice, one step, rules afterwards (95% CI over decisions)")
    base = None
    for text in settings:
        g = simulate(data, parse_setting(text), replicates, seed)
        m, h, _ = mean_ci(g)
        line = (f"{text:28s} {m:+.4f} [{m - h:+.4f}, {m + h:+.4f}] per decision, "
                f"{m * per_deal:+.3f} [{(m - h) * per_deal:+.3f}, {(m + h) * per_deal:+.3f}] "
                f"per deal")
        if base is None:
            base = g
        else:
            dm, dh, _ = mean_ci(g - base)
            line += f"; - first row {dm * per_deal:+.3f} [{(dm - dh) * per_deal:+.3f}, " \
                    f"{(dm + dh) * per_deal:+.3f}]"
        print(line, flush=True)
        parts = [f"{name} {g[data['phase'] == ph].sum() / len(g) * per_deal:+.3f} "
                 f"({(data['phase'] == ph).sum()})"
                 for ph, name in ((TURN, "turn"), (CLAIM, "claim"), (ROB, "rob"), (VOID, "void"))
                 if (data["phase"] == ph).any()]
        if parts:
            print(f"{'':28s} per deal by phase (decisions): {', '.join(parts)}", flush=True)


# the search's default first (the other rows are paired with it), as in docs/search.md
DEFAULT_SETTINGS = ("k=256&top=4;k=64&top=4;k=128&top=4;k=512&top=4;k=256&top=4&z=0;"
                    "k=256&top=4&halving=0.5;oracle=1&top=4")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Search choices valued decision by decision "
                                "with the real hands (a diagnostic that cheats).")
    p.add_argument("--deals", type=int, default=64)
    p.add_argument("--seed", type=int, default=8301)
    p.add_argument("--rules", default="mil")
    p.add_argument("--share", type=float, default=0.2)
    p.add_argument("--top", type=int, default=6)
    p.add_argument("--pool", type=int, default=1536)
    p.add_argument("--truth", type=int, default=768)
    p.add_argument("--hands", default="discards", help="comma-separated samplings")
    p.add_argument("--settings", default=DEFAULT_SETTINGS)
    p.add_argument("--replicates", type=int, default=32)
    p.add_argument("--save", default=None)
    p.add_argument("--load", default=None)
    a = p.parse_args(argv)
    hands = a.hands.split(",")
    settings = [s for s in a.settings.split(";") if s]
    try:
        if a.deals < 1 or a.seed < 0 or not 0 < a.share <= 1 or a.top < 2:
            raise ValueError("--deals >= 1, --seed >= 0, --share in (0, 1] and --top >= 2")
        if a.pool < 2 or a.truth < 2 or a.replicates < 1:
            raise ValueError("--pool and --truth must be >= 2, --replicates >= 1")
        if bad := [h for h in hands if h not in HAND_SAMPLING]:
            raise ValueError(f"unknown hand sampling {bad[0]!r}; known: "
                             f"{', '.join(HAND_SAMPLING)}")
        for s in settings:
            parse_setting(s)
        rules = get_rules(a.rules)
        data = load(a.load) if a.load else collect(a, rules, hands)
        if not len(data["ncand"]):
            raise ValueError("no decision recorded: play more --deals or a larger --share")
        if a.save:
            save(a.save, data)
        report(data, settings, a.replicates, a.seed)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

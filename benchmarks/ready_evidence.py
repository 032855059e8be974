"""How often the other seats are ready, and on what, against the search's sampled hands.

    python benchmarks/ready_evidence.py [--deals 48] [--seed 8101] [--rules mil]
                                        [--samples 64] [--hands discards,shaped,safe]

Four ``rules`` bots play; at a quarter of seat 0's own turns, for every other seat still
playing that has chosen its void suit and discarded, the script reads the seat's real
waits (from the engine state the arena holds, as ``benchmarks/search_oracle.py`` does:
it cheats on purpose, no agent does) and draws ``--samples`` deals from seat 0's view
with each ``--hands`` sampling of :func:`sichuan_agents.search.sampler.sample_states`.

Printed, per sampling: the share of sampled hands that are ready (overall, and where the
real seat is or is not ready), and the Brier score of the chance that the seat waits on
each kind of its two playing suits (the share of samples waiting on it, against 1 where
the real hand does); a constant chance (the overall rate) is the reference. Then, for the
public facts ``hands=safe`` uses (:func:`sichuan_agents.search.sampler.dead_kinds`), how many of
the real waits fall on them, against the seat's other kinds. Last, the share of those
seats whose last discard the ``rules`` policy would have made from their real hand, and
from their hands in the samples (what ``hands=explained`` weighs,
:func:`sichuan_agents.search.sampler.explains_last_discard`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import search_oracle as real_state  # noqa: E402  (the seat-view hook that sees the table)

from sichuan_agents.search.sampler import (  # noqa: E402
    HAND_SAMPLING,
    Known,
    dead_kinds,
    explains_last_discard,
    sample_states,
)
from sichuan_env.core.hands import batch_wait_mask  # noqa: E402
from sichuan_env.core.rules import Rules, get_rules  # noqa: E402
from sichuan_env.core.state import State  # noqa: E402
from sichuan_env.core.vocab import N_KINDS, SUIT_OF  # noqa: E402
from sichuan_env.seats.view import SeatView  # noqa: E402


def _waits(st: State, a: int) -> np.ndarray:
    """(B, 27) bool: the kinds seat ``a``'s standing hand waits on, per table."""
    return batch_wait_mask(st.hand[:, a], st.meld[:, a], st.void[:, a])


class _Probe(real_state.TurnProbe):
    """At a share of its own turns, records the other seats' real waits and their waits
    in sampled deals."""

    def __init__(self, seed: int, rules: Rules, samples: int, share: float,
                 hands: list[str]) -> None:
        super().__init__(seed, rules, samples, share)
        self.hands = hands

    def probe(self, views: SeatView, masks: np.ndarray, i: int, real: State) -> None:
        known = Known(views, i)
        sampled = {h: sample_states(views, i, masks[i], self.rules, self.samples, self.rng, h)
                   for h in self.hands}
        for a in known.others:
            n = int(known.river_len[a])
            if known.hu[a] or n == 0 or real.void[0, a] < 0:
                continue
            own = np.zeros(N_KINDS, bool)
            own[np.asarray(known.river[a, :n], np.intp)] = True
            self.rows.append(dict(
                real=_waits(real, a)[0], playing=int(real.void[0, a]) != SUIT_OF,
                last_discard={"real": bool(explains_last_discard(real, known, a)[0]),
                              **{h: float(explains_last_discard(s, known, a).mean())
                                 for h, s in sampled.items()}},
                own=own, passed=dead_kinds(known, a) & ~own,
                **{h: _waits(s, a) for h, s in sampled.items()}))


def summary(rows: list[dict[str, Any]], hands: list[str], head: str) -> str:
    """The printed lines (see the module docstring)."""
    ready = np.array([r["real"].any() for r in rows])
    truth = np.concatenate([r["real"][r["playing"]] for r in rows]).astype(np.float64)
    lines = [head, f"other seats ready: {ready.mean():.3f} of {len(rows)} seat positions"]
    for h in hands:
        rate = np.array([r[h].any(1).mean() for r in rows])
        chance = np.concatenate([r[h].mean(0)[r["playing"]] for r in rows])
        lines.append(f"{h:9s} sampled ready {rate.mean():.3f} (real ready "
                     f"{rate[ready].mean():.3f}, not ready {rate[~ready].mean():.3f}); wait Brier "
                     f"{np.mean((chance - truth) ** 2):.4f}")
    lines.append(f"constant  wait chance {truth.mean():.4f}; wait Brier "
                 f"{np.mean((truth.mean() - truth) ** 2):.4f}")
    waiting = [r for r in rows if r["real"].any()]
    for key, name in (("own", "in its own river"), ("passed", "let pass since its discard")):
        on_waits = np.mean([(r[key] & r["real"]).sum() / r["real"].sum() for r in waiting])
        off = np.mean([(r[key] & r["playing"] & ~r["real"]).sum()
                       / max((r["playing"] & ~r["real"]).sum(), 1) for r in waiting])
        lines.append(f"kinds {name}: {on_waits:.3f} of a ready seat's waits, "
                     f"{off:.3f} of its other kinds")
    lines.append("last discard explained by rules: " + ", ".join(
        f"{h} {np.mean([r['last_discard'][h] for r in rows]):.3f}" for h in ["real", *hands]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="How often the other seats are ready, and on "
                                "what, against the search's sampled hands.")
    p.add_argument("--deals", type=int, default=48)
    p.add_argument("--seed", type=int, default=8101)
    p.add_argument("--rules", default="mil")
    p.add_argument("--samples", type=int, default=64)
    p.add_argument("--hands", default="discards,shaped,safe")
    a = p.parse_args(argv)

    hands = [h for h in a.hands.split(",") if h]
    try:
        if a.deals < 4 or a.seed < 0 or a.samples < 2:
            raise ValueError("--deals must be >= 4, --seed >= 0 and --samples >= 2")
        unknown = [h for h in hands if h not in HAND_SAMPLING]
        if unknown or not hands:
            raise ValueError(f"--hands takes some of {', '.join(HAND_SAMPLING)}, "
                             f"got {a.hands!r}")
        rules = get_rules(a.rules)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    probe = _Probe(a.seed, rules.replace(deals_per_match=1), a.samples, 0.25, hands)
    cpu = real_state.play_seeing_the_table(probe, a.deals, a.seed, rules)
    head = (f"{a.rules}, seed {a.seed}, {a.deals} deals, {a.samples} samples per position "
            f"({cpu:.0f} CPU s)")
    print(summary(probe.rows, hands, head))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much the other seats' discards tell about their hidden hands (a diagnostic).

    python benchmarks/discard_evidence.py [--deals 64] [--seed 7701] [--rules mil] [--samples 64]

Four ``rules`` bots play; at a quarter of seat 0's own turns the search agent's sampler
(:func:`sichuan_agents.search.sampler.sample_states`, the default ``hands=discards``) draws
``--samples`` deals from seat 0's view. For every other seat still playing, the rules bot
itself is asked what it would have discarded

* **last**: from the seat's hand plus its last discard (the hand it held then, up to the
  public state, which is taken as it is now);
* **before**: from that hand plus its discard before the last, less the tile it drew in
  between (every tile of the 14 taken as the draw, equally likely),

and the evidence for a hand is the chance that the bot makes the discards seen: 0 or 1 for
**last**, a share for **before**. Printed: the mean evidence of the real hands (taken from
the engine state the arena holds, as ``benchmarks/search_oracle.py`` does: this script
cheats on purpose, no agent does) and of the sampled ones, and what weighting the samples
by their evidence does to the measure of the hand model: the tiles a sampled hand has in
common with the real one, plain and weighted.

A likelihood that the real hands score far above the sampled ones is information the
samples miss; a small gap means that a seat's discards, read with an exact model of how it
plays, say little about what it holds.
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

from sichuan_agents.search.rollout import choose_actions  # noqa: E402
from sichuan_agents.search.sampler import Known, sample_states  # noqa: E402
from sichuan_env.core.actions import DISCARD  # noqa: E402
from sichuan_env.core.rules import get_rules  # noqa: E402
from sichuan_env.core.state import TURN, State  # noqa: E402
from sichuan_env.core.vocab import SUIT_OF  # noqa: E402
from sichuan_env.seats.view import SeatView  # noqa: E402


def rules_discard(state: State, seat: int, hands: np.ndarray, undo: int) -> np.ndarray:
    """(B,) the kind the ``rules`` policy discards at every table of ``state`` if seat
    ``seat`` held ``hands`` (B, 27) at its own turn, its last ``undo`` discards taken back
    from its river."""
    b = state.batch_size
    s = State(*(x.copy() for x in state.arrays()), state.rules)
    s.hand[:, seat] = hands
    rows = np.arange(b)
    length = s.river_len[:, seat].astype(np.int64)
    for j in range(undo):
        kind = s.river[rows, seat, length - 1 - j].astype(np.int64)
        s.live_discards[rows, kind] = np.maximum(s.live_discards[rows, kind] - 1, 0)
        s.river[rows, seat, length - 1 - j] = -1
    s.river_len[:, seat] -= undo
    s.phase[:] = TURN
    s.current[:] = seat
    s.active[:] = seat
    s.drawn_tile[:] = -1
    s.after_pung[:] = False
    held = hands > 0
    void_held = (SUIT_OF[None, :] == s.void[:, seat, None]) & held
    strict = bool(state.rules.strict_void)
    allowed = np.where((void_held.any(1) & strict)[:, None], void_held, held)
    s.legal_action_mask[:] = False
    s.legal_action_mask[:, DISCARD:DISCARD + 27] = allowed
    return choose_actions(s, rows, "rules") - DISCARD


def evidence(state: State, known: Known) -> np.ndarray:
    """(B, 4, 2) per table and seat: the chance that ``rules`` makes the seat's last
    discard (column 0) and the one before it (column 1) from the hand the table gives it;
    NaN where the seat has no such discard or has won."""
    out = np.full((state.batch_size, 4, 2), np.nan)
    for a in known.others:
        n = int(known.river_len[a])
        if known.hu[a] or n == 0:
            continue
        last = int(known.river[a, n - 1])
        before_last = state.hand[:, a].astype(np.int16)
        before_last[:, last] += 1
        out[:, a, 0] = rules_discard(state, a, before_last.astype(np.int8), 1) == last
        if n < 2:
            continue
        prev = int(known.river[a, n - 2])
        hits = np.zeros(state.batch_size)
        for drawn in range(27):
            rows = np.flatnonzero(before_last[:, drawn] > 0)
            if rows.size == 0:
                continue
            earlier = before_last[rows].copy()
            earlier[:, drawn] -= 1
            earlier[:, prev] += 1
            if (earlier > 4).any():  # more copies than exist: that draw is impossible
                keep = (earlier <= 4).all(1)
                rows, earlier = rows[keep], earlier[keep]
            made = rules_discard(state.take(rows), a, earlier.astype(np.int8), 2) == prev
            hits[rows] += before_last[rows, drawn] * made
        out[:, a, 1] = hits / before_last.sum(1)
    return out


class _Probe(real_state.TurnProbe):
    """At a share of its own turns, compares the evidence of the real hands with that of
    sampled ones."""

    def probe(self, views: SeatView, masks: np.ndarray, i: int, real: State) -> None:
        known = Known(views, i)
        sampled = sample_states(views, i, masks[i], self.rules, self.samples, self.rng)
        common = np.minimum(sampled.hand, real.hand[:1]).sum(2).astype(np.float64)
        self.rows.append((evidence(real, known)[0], evidence(sampled, known), common,
                          np.asarray(known.others)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="How much the other seats' discards, read "
                                "with the rules bot as their model, tell about their hands.")
    p.add_argument("--deals", type=int, default=64)
    p.add_argument("--seed", type=int, default=7701)
    p.add_argument("--rules", default="mil")
    p.add_argument("--samples", type=int, default=64)
    a = p.parse_args(argv)

    try:
        if a.deals < 4 or a.seed < 0 or a.samples < 2:
            raise ValueError("--deals must be >= 4, --seed >= 0 and --samples >= 2")
        rules = get_rules(a.rules)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    probe = _Probe(a.seed, rules.replace(deals_per_match=1), a.samples, 0.25)
    cpu = real_state.play_seeing_the_table(probe, a.deals, a.seed, rules)
    print(summary(probe.rows, a, cpu))
    return 0


def summary(rows: list[Any], a: argparse.Namespace, cpu: float) -> str:
    """The printed table: evidence of real and sampled hands, tiles in common."""
    lines = [f"{a.rules}, seed {a.seed}, {a.deals} deals, {len(rows)} positions, "
             f"{a.samples} samples each ({cpu:.0f} CPU s)"]
    for col, name in enumerate(("last discard", "discard before it")):
        real = np.concatenate([ev[others, col] for ev, _, _, others in rows])
        samp = np.concatenate([s[:, others, col].mean(0) for _, s, _, others in rows])
        ok = ~np.isnan(real)
        lines.append(f"{name:18s} checks {int(ok.sum()):5d}: real hands {real[ok].mean():.3f}, "
                     f"sampled {samp[ok].mean():.3f}")
    plain, weighted = [], []
    for _, samp, common, others in rows:
        for a_ in others:
            w = np.nan_to_num(samp[:, a_, 0], nan=1.0) * np.nan_to_num(samp[:, a_, 1], nan=1.0)
            plain.append(common[:, a_].mean())
            weighted.append(np.average(common[:, a_], weights=w) if w.sum() > 0 else plain[-1])
    lines.append(f"tiles in common with the real hand: sampled {np.mean(plain):.2f}, "
                 f"weighted by the evidence {np.mean(weighted):.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

"""Valued decisions stored by what replays them, not by their features.

A shard of :mod:`sichuan_agents.training.search_teacher` (or of the rollout teacher) holds,
per sampled decision, the network's input planes: about 4.8 kB of float16 that the search's
values do not need and that must be made again whenever the features change. The deals
were played by the compiled rules bot from seeds, so a decision is fixed by three numbers:
the deal's seed, how many decisions that table had taken before it, and the seat to act.
A *compact* shard keeps those, the candidates and their values (the expensive part), the
rules bot's choice, the phase and the legal actions as 11 bytes of bits (the check that a
replay found the same decision); about 60 bytes a decision instead of 4.9 kB.

:func:`expand` replays the deals (one engine batch, the rules bot choosing every action)
and rebuilds the planes with today's :func:`~sichuan_agents.training.rollout_teacher.network_input`;
it refuses a shard whose decisions the replay does not find (another engine, another rule
preset), naming the first one that differs. ``distill.load_shards`` reads either kind.

    python -m sichuan_agents.training.decision_store compact runs/st/s1600.npz runs/st-c/s1600.npz
    python -m sichuan_agents.training.decision_store expand runs/st-c/s1600.npz runs/st/s1600.npz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from sichuan_agents.search.rollout import choose_actions
from sichuan_agents.training.rollout_teacher import network_input
from sichuan_agents.training.shards import write_atomic
from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.state import State
from sichuan_env.seats.view import seat_view

#: What a compact shard holds besides ``meta`` (kept as the full shard has it).
COMPACT_KEYS = ("deal_seed", "decision", "seat", "phase", "mask_bits", "candidates",
                "returns", "advice")
#: What :func:`expand` adds back.
FEATURE_KEYS = ("planes", "masks")
#: ``format`` of a compact shard: a version, raised when what replays a decision changes.
COMPACT_FORMAT = 1


class ReplayMismatchError(ValueError):
    """A stored decision that the replay of its deal does not reach."""


def is_compact(data: dict[str, np.ndarray] | np.lib.npyio.NpzFile) -> bool:
    """Whether a shard is compact (keys, no planes)."""
    return "deal_seed" in data and "planes" not in data


def compact(data: dict[str, np.ndarray], rules: str = "mil") -> dict[str, np.ndarray]:
    """The compact form of a full shard that records its decisions' keys (``deal_seed``,
    ``decision``, ``seat``): the features dropped, the legal actions packed into bits, the
    name of the rule preset its deals were played by (``rules``) kept."""
    missing = [k for k in ("deal_seed", "decision", "seat") if k not in data]
    if missing:
        raise ValueError(f"the shard has no {', '.join(missing)}: it was written before "
                         "decisions were stored with their keys; make it again")
    out = {k: np.asarray(data[k]) for k in COMPACT_KEYS if k != "mask_bits"}
    out["mask_bits"] = np.packbits(np.asarray(data["masks"], bool), axis=1)
    out["meta"] = np.asarray(data["meta"])
    if "prior" in data:  # the search's prior (candidate 0), where the teacher names it
        out["prior"] = np.asarray(data["prior"])
    out["format"] = np.array(COMPACT_FORMAT, np.int64)
    out["rules"] = np.array(get_rules(rules).preset)
    return out


def replay(deal_seeds: np.ndarray, decisions: np.ndarray, rules: Rules,
           tables: int = 256) -> State:
    """The tables at the stored decisions, one row per (``deal_seeds[i]``,
    ``decisions[i]``) in that order: each deal dealt from its seed and played by the
    compiled rules bot for ``decisions[i]`` decisions (the way the teachers play)."""
    deal_seeds = np.asarray(deal_seeds, np.int64)
    decisions = np.asarray(decisions, np.int64)
    if deal_seeds.shape != decisions.shape or deal_seeds.ndim != 1:
        raise ValueError("deal_seeds and decisions must be 1-D arrays of one length")
    if decisions.size and decisions.min() < 0:
        raise ValueError("a decision index is negative")
    if not deal_seeds.size:
        raise ValueError("no decisions to replay")
    seeds, which = np.unique(deal_seeds, return_inverse=True)
    parts: list[State] = []
    order: list[np.ndarray] = []  # the stored index of each row of ``parts``
    for lo in range(0, seeds.size, tables):
        batch = seeds[lo:lo + tables]
        wanted = np.flatnonzero((which >= lo) & (which < lo + batch.size))
        st = engine.reset(batch, rules)
        last = int(decisions[wanted].max())
        for step in range(last + 1):
            now = decisions[wanted] == step
            if now.any():
                here, rows = wanted[now], which[wanted[now]] - lo
                if st.done[rows].any():
                    i = here[np.flatnonzero(st.done[rows])[0]]
                    raise ReplayMismatchError(f"deal {deal_seeds[i]} ends before decision "
                                         f"{decisions[i]}")
                parts.append(st.take(rows))
                order.append(here)
            if step < last:
                live = np.flatnonzero(~st.done)
                acts = np.zeros(st.batch_size, np.int64)
                acts[live] = choose_actions(st, live, "rules")
                engine.step(st, acts, inplace=True)
    rows = np.argsort(np.concatenate(order), kind="stable")
    both = State(*(np.concatenate(f) for f in zip(*(s.arrays() for s in parts), strict=True)),
                 rules)
    return both.take(rows)


def expand(data: dict[str, np.ndarray], tables: int = 256) -> dict[str, np.ndarray]:
    """A full shard (``planes``, ``masks`` and the rest) rebuilt from a compact one by
    :func:`replay` under its rule preset; :class:`ReplayMismatchError` where a decision is
    not the one stored (its seat, phase, legal actions or the rules bot's choice
    differ)."""
    if not is_compact(data):
        raise ValueError("not a compact shard (it has planes, or no deal_seed)")
    fmt = int(data["format"]) if "format" in data else None
    if fmt != COMPACT_FORMAT:
        raise ValueError(f"compact shard format {fmt}, this version reads {COMPACT_FORMAT}")
    preset = get_rules(str(data["rules"]))
    st = replay(data["deal_seed"], data["decision"], preset, tables)
    masks = np.unpackbits(np.asarray(data["mask_bits"]), axis=1, count=N_ACTIONS).astype(bool)
    seats = np.asarray(data["seat"]).astype(np.intp)
    rows = np.arange(st.batch_size)
    advised = np.asarray(data["advice"]).astype(np.int64)
    bot = choose_actions(st, rows, "rules") if rows.size else advised
    checks = [("seat", st.current.astype(np.intp), seats),
              ("phase", st.phase, np.asarray(data["phase"])),
              ("legal actions", st.legal_action_mask, masks),
              ("rules bot's choice", bot, advised)]
    for what, got, stored in checks:
        bad = np.flatnonzero((got != stored).reshape(got.shape[0], -1).any(1))
        if bad.size:
            i = int(bad[0])
            raise ReplayMismatchError(
                f"decision {int(data['decision'][i])} of deal {int(data['deal_seed'][i])}: "
                f"the replay's {what} differ from the stored ones ({bad.size} of "
                f"{rows.size} decisions); another engine or rule preset made this shard")
    out = {k: np.asarray(data[k]) for k in COMPACT_KEYS if k != "mask_bits"}
    out["masks"] = masks
    out["planes"] = network_input(seat_view(st, seats, rows), preset, advised)
    for key in ("meta", "prior"):
        if key in data:
            out[key] = np.asarray(data[key])
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["compact", "expand"])
    p.add_argument("src", help="the shard to read (.npz)")
    p.add_argument("dst", help="the shard to write (.npz)")
    p.add_argument("--rules", default="mil",
                   help="compact: the rule preset the shard's deals were played by (mil)")
    a = p.parse_args(argv)
    prog = "decision_store"
    try:
        get_rules(a.rules)
        with np.load(a.src) as f:
            data = {k: f[k] for k in f.files}
        out = compact(data, a.rules) if a.command == "compact" else expand(data)
    except (OSError, ValueError, KeyError) as err:
        print(f"{prog}: {a.src}: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    write_atomic(a.dst, out)
    kb = Path(a.dst).stat().st_size / 1024
    print(f"{prog}: {a.command}: {out['returns'].shape[0]} decisions -> {a.dst} ({kb:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

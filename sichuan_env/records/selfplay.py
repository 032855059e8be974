"""Records of uniformly random legal play, from the batched engine.

::

    python -m sichuan_env.records.selfplay --deals 1000 --seed 1 --out games.jsonl \
        [--legal] [--rules mil|mahjongsoft] [--tables 64]

Deal ``i`` is dealt from its own engine seed (:func:`deal_seed`, that is
:func:`sichuan_env.core.seeding.selfplay_deal_seed`, stored in the record's
``seed``: ``Game.new(record["seed"], rules)`` deals it again), and its moves come from a
counter-based hash of that seed and the decision number. So the output depends only on
``--seed``, ``--deals``, ``--rules`` and ``--legal``: the same arguments give byte-identical
files whatever ``--tables`` is. ``--tables`` deals run side by side in one batch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.actions import ACTION_STRINGS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import GOLDEN, selfplay_deal_seed, splitmix64
from sichuan_env.records.record import RecordBuilder, split_entries, write_jsonl

_U = np.uint64
#: Engine seed of deal ``i`` of a self-play run with ``seed`` (a 63-bit integer).
deal_seed = selfplay_deal_seed


def random_choice(mask: np.ndarray, keys: np.ndarray, counter: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row, from a hash of (key, counter).
    Rows with no legal action get 0.

    Not the uniform chooser of the agents (:class:`~sichuan_env.seats.agent.RandomAgent`,
    :func:`sichuan_env.seats.driver.uniform_legal_actions`, :mod:`sichuan_env.envs.random_rounds`):
    those draw from one generator stream shared by the whole batch, so a deal's moves
    would depend on ``--tables`` and on the deals beside it. Hashing (the deal's key, its
    decision number) gives every deal its own moves, and the records written so far (the
    golden digest in tests/test_driver_golden.py) are these draws."""
    n = mask.sum(1)
    with np.errstate(over="ignore"):
        u = splitmix64(keys.astype(_U) ^ splitmix64(counter.astype(_U) * GOLDEN))
    r = (u % np.maximum(n, 1).astype(_U)).astype(np.int64)
    csum = np.cumsum(mask, axis=1)
    pick = (csum > r[:, None]).argmax(1)
    return np.where(n > 0, pick, 0)


def selfplay(deals: int, seed: int, rules: Rules | str | None = "mil", *, tables: int = 64,
             legal: bool = False) -> Iterator[dict[str, Any]]:
    """Yield ``deals`` records of random legal play, in deal order."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    rules = get_rules(rules)
    if rules.deals_per_match != 1:
        rules = rules.replace(deals_per_match=1)
    if deals <= 0:
        return
    T = max(1, min(int(tables), deals))
    seeds = [deal_seed(seed, i) for i in range(deals)]
    st = engine.reset(seeds[:T], rules)
    deal_of = np.arange(T)
    keys = np.array([splitmix64(np.array([s]))[0] for s in seeds[:T]], dtype=_U)
    counter = np.zeros(T, np.int64)
    builders: list[RecordBuilder | None] = [
        RecordBuilder(st, t, seed=seeds[t], legal=legal) for t in range(T)
    ]
    done_records: dict[int, dict[str, Any]] = {}
    next_deal = T
    emitted = 0
    while emitted < deals:
        mask = st.legal_action_mask.copy()  # the step below overwrites the state's
        live = ~st.done
        actions = random_choice(mask, keys, counter)
        counter += live
        ledger = engine.Ledger()
        st, _, done = engine.step(st, actions, inplace=True, ledger=ledger)
        for t, entries in split_entries(ledger.entries).items():
            b = builders[t]
            if b is None:
                continue
            legal_now = None
            if legal:
                legal_now = sorted(ACTION_STRINGS[a] for a in np.flatnonzero(mask[t]))
            b.feed(entries, legal_now)
        for t in np.flatnonzero(done & live).tolist():
            b = builders[t]
            if b is None:
                continue
            done_records[int(deal_of[t])] = b.record
            builders[t] = None
            if next_deal < deals:
                new = engine.reset([seeds[next_deal]], rules)
                st.put_rows([t], new)
                deal_of[t] = next_deal
                keys[t] = splitmix64(np.array([seeds[next_deal]]))[0]
                counter[t] = 0
                builders[t] = RecordBuilder(st, t, seed=seeds[next_deal], legal=legal)
                next_deal += 1
        while emitted in done_records:
            yield done_records.pop(emitted)
            emitted += 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sichuan_env.records.selfplay",
                                description="Write game records of uniformly random legal play.")
    p.add_argument("--deals", type=int, required=True, help="number of deals (records)")
    p.add_argument("--seed", type=int, required=True, help="run seed")
    p.add_argument("--out", required=True,
                   help="output JSONL file (missing folders are created)")
    p.add_argument("--legal", action="store_true", help="write the legal options of each event")
    p.add_argument("--rules", default="mil", choices=["mil", "mahjongsoft"])
    p.add_argument("--tables", type=int, default=64, help="deals played side by side")
    args = p.parse_args(argv)
    if args.deals < 0 or args.tables < 1:
        p.error("--deals must be >= 0 and --tables >= 1")
    if args.seed < 0:
        p.error(f"--seed must be a non-negative integer, got {args.seed}")
    out = Path(args.out)
    if out.is_dir():
        p.error(f"--out {args.out} is a folder; give a file name, e.g. {out / 'deals.jsonl'}")
    try:  # before the run: a bad path costs nothing
        out.parent.mkdir(parents=True, exist_ok=True)
        out.open("w").close()
    except OSError as err:
        print(f"error: cannot write --out {args.out}: {err.strerror or err}", file=sys.stderr)
        return 1
    try:
        n = write_jsonl(selfplay(args.deals, args.seed, args.rules, tables=args.tables,
                                 legal=args.legal), out)
    except OSError as err:
        print(f"error: writing {args.out} failed: {err.strerror or err}", file=sys.stderr)
        return 1
    print(f"wrote {n} records to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Seeded play of whole matches with the engine's ledger, for the golden-record test.

``play(preset, policy, deals_per_match, seeds)`` plays one batch of tables to the end of
their matches and returns the game records of every deal (built from the ledger with
:class:`~sichuan_env.records.record.RecordBuilder`) and a SHA-256 digest of every step's legal
masks, rewards and done flags. ``cd tests && PYTHONPATH=.. python -m support.golden_play
OUT.json`` writes the digests of :data:`CONFIGS` (the file stored in ``tests/data``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

import numpy as np

from sichuan_env.core import engine
from sichuan_env.core.actions import ACTION_STRINGS
from sichuan_env.core.rules import get_rules
from sichuan_env.records.record import RecordBuilder, split_entries

from support.policies import biased, hu_shy, uniform

POLICIES = {"uniform": uniform, "biased": biased, "hu_shy": hu_shy}
# (preset, policy, deals per match, first seed, tables)
CONFIGS = [
    (preset, policy, deals, 1000 * i, 12)
    for i, (preset, policy, deals) in enumerate(
        (p, q, d) for p in ("mil", "mahjongsoft") for q in POLICIES for d in (1, 3)
    )
]


def play(preset: str, policy: str, deals: int, seeds: list[int]) -> tuple[list[dict], str]:
    rules = get_rules(preset, deals_per_match=deals)
    st = engine.reset(seeds, rules)
    rng = np.random.default_rng(seeds[0])
    B = len(seeds)
    builders = [RecordBuilder(st, t, seed=seeds[t], legal=True) for t in range(B)]
    records: list[list[dict[str, Any]]] = [[] for _ in range(B)]
    digest = hashlib.sha256()
    pick = POLICIES[policy]
    while not st.done.all():
        mask = engine.legal_mask(st)
        actions = pick(st, mask, rng)
        ledger = engine.Ledger()
        st, rewards, done = engine.step(st, actions, ledger=ledger)
        digest.update(mask.tobytes())
        digest.update(np.asarray(actions, np.int64).tobytes())
        digest.update(np.asarray(rewards, np.float32).tobytes())
        digest.update(np.asarray(done, bool).tobytes())
        for t, entries in split_entries(ledger.entries).items():
            legal_now = sorted(ACTION_STRINGS[a] for a in np.flatnonzero(mask[t]))
            used = builders[t].feed(entries, legal_now)
            if builders[t].finished:
                records[t].append(builders[t].record)
                if used < len(entries) and entries[used][0] == "deal":
                    builders[t] = RecordBuilder(st, t, seed=seeds[t], legal=True)
                    builders[t].feed(entries[used + 1:], None)
    digest.update(np.ascontiguousarray(st.match_scores).tobytes())
    return [r for rs in records for r in rs], digest.hexdigest()


def record_digest(records: list[dict]) -> str:
    text = "\n".join(json.dumps(r, sort_keys=True) for r in records)
    return hashlib.sha256(text.encode()).hexdigest()


def main(out: str) -> None:
    result = {}
    for preset, policy, deals, seed0, tables in CONFIGS:
        recs, steps = play(preset, policy, deals, list(range(seed0, seed0 + tables)))
        result[f"{preset}/{policy}/{deals}"] = {
            "seed0": seed0, "tables": tables, "deals": len(recs),
            "records": record_digest(recs), "steps": steps,
        }
    with open(out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])

"""Search comparisons: the search agent's values of its candidates, as training data.

Four rules bots (the compiled copy, ``sichuan_agents.search.rollout``) play deals. At a sample of
the own-turn decisions with a choice (discards and kongs; a legal Hu is the bot's without
search) -- and, with ``--claim-prob`` and ``--void-prob``, of the claim answers (pung, kong
or pass), the turns offering a kong and the void choice -- the ``search`` agent with the
rules prior values its candidates from the seat's view alone: ``k`` deals of the hidden
tiles sampled, every candidate played out on each with ``rules`` play-outs. A sample stores
the decider's network input (as :mod:`sichuan_agents.training.rollout_teacher` builds it), its
mask, the candidates (column 0 the prior's choice: the bot's, or with ``--prior`` that of
``fitted`` or ``best``) and each candidate's *mean* points for the
seat over the ``k`` samples, in the rollout shards' format, so that
``sichuan_agents.training.distill`` fits a network to them. (The means are the points of the whole
deal: the same offset for every candidate of a sample, which the fit's centring removes.)

Where a rollout comparison is one play-out of the real table (unbiased, a standard
deviation of 3-6 points), a search comparison averages ``k`` play-outs of sampled tables:
far less noise, but valued on the sampler's guess of the hidden hands. Fitting a network
to the search's values is one step of expert iteration; held-out *rollout* shards tell,
without that bias, what the fitted choices win.

    python -m sichuan_agents.training.search_teacher --deals 200 --seed 1600 --out runs/st/s1600.npz
    python -m sichuan_agents.training.search_teacher --deals 100 --seed 1600 --shards 40 \
        --out runs/st --address auto     # 40 shards as Ray tasks over a cluster

``--shards N`` makes the shards of seeds ``--seed`` .. ``--seed + N - 1`` in the folder
``--out`` (``s{seed}.npz``) as Ray tasks (:mod:`sichuan_agents.training.shards`): over the cluster
of ``--address``, or ``--workers`` local cores; each written as it finishes, the finished
ones skipped when the command runs again.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from sichuan_agents.search.agent import PRIORS, SearchAgent
from sichuan_agents.search.rollout import choose_actions
from sichuan_agents.training.decision_store import compact
from sichuan_agents.training.rollout_teacher import (
    MAX_CANDIDATES,
    add_shard_args,
    deal_steps,
    network_input,
    run_shard_command,
)
from sichuan_env.core.actions import HU, KONG, PUNG
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import CLAIM, ROB, TURN, VOID, State
from sichuan_env.seats.view import seat_view

#: How a shard stores its samples (see :func:`generate`).
STORES = ("full", "compact")


def sample_chance(phase: np.ndarray, masks: np.ndarray, sample_prob: float,
                  claim_prob: float, void_prob: float) -> np.ndarray:
    """(N,) the chance that :func:`generate` samples each decision: an own turn with a
    choice and no legal Hu ``sample_prob`` (``claim_prob`` instead where a kong is legal,
    when ``claim_prob`` > 0), a claim answer with a choice and no legal Hu (pung, kong or
    pass: the rules prior declares a Hu without search) ``claim_prob``, the void choice
    ``void_prob``; 0 otherwise. With both 0, own turns only (the data of attempts 30-33)."""
    choice = masks.sum(1) > 1
    turn = (phase == TURN) & ~masks[:, HU] & choice
    prob = np.where(turn, sample_prob, 0.0)
    if claim_prob > 0:
        prob = np.where(turn & masks[:, KONG:PUNG].any(1), claim_prob, prob)
        prob = np.where(((phase == CLAIM) | (phase == ROB)) & ~masks[:, HU] & choice,
                        claim_prob, prob)
    if void_prob > 0:
        prob = np.where((phase == VOID) & choice, void_prob, prob)
    return prob


def generate(deals: int, seed: int, rules: str = "mil", sample_prob: float = 0.25,
             k: int = 128, tables: int = 64, log: Any = None, claim_prob: float = 0.0,
             void_prob: float = 0.0, store: str = "full", prior: str = "rules"
             ) -> dict[str, np.ndarray]:
    """Search comparisons from ``deals`` deals (seeds ``seed * 10**7 + i``) of four rules
    bots: each decision is sampled with its chance (:func:`sample_chance`) and valued by
    ``search?k=K&prior=PRIOR`` (the rules prior by default; its default candidates,
    sampling and play-outs; its random generator seeded by ``seed``): column 0 of the
    candidates is the prior's choice (``prior`` in the shard names it). Each sample also
    keeps what replays it: its deal's seed (``deal_seed``), the decisions its table took
    before it (``decision``) and the seat (``seat``). ``store="compact"``: no planes are
    made, the shard is :func:`sichuan_agents.training.decision_store.compact`'s form."""
    if store not in STORES:
        raise ValueError(f"store must be one of {', '.join(STORES)}, got {store!r}")
    preset = get_rules(rules)
    rng = np.random.default_rng(seed)
    agent = SearchAgent(seed=seed, k=k, rules=preset, prior=prior)
    planes, masks, cands, returns, advice, phases = [], [], [], [], [], []
    deal_seeds, decisions, seats_kept = [], [], []
    batch: State | None = None  # the batch of tables being played, and where it starts
    first_deal, taken = 0, np.zeros(0, np.int32)  # decisions each table has taken
    got: dict[int, tuple[list[int], np.ndarray]] = {}  # row -> candidates, mean points
    agent.on_values = lambda i, c, v: got.__setitem__(i, (c, v))
    started = time.time()

    def batch_done(done_deals: int) -> None:
        if log is not None:
            n = sum(len(a) for a in advice)
            log(f"{done_deals} deals, {n} samples, {time.time() - started:.0f} s")

    def rules_bot(st: State, live: np.ndarray) -> np.ndarray:
        return choose_actions(st, live, "rules")

    for st, live, acts in deal_steps(deals, seed, preset, tables, rules_bot, batch_done):
        if st is not batch:  # a new batch of tables (deal_steps plays each in place)
            first_deal += 0 if batch is None else batch.batch_size
            batch, taken = st, np.zeros(st.batch_size, np.int32)
        before = taken.copy()
        taken[live] += 1
        m = st.legal_action_mask[live]
        prob = sample_chance(st.phase[live], m, sample_prob, claim_prob, void_prob)
        pick = live[rng.random(live.size) < prob]
        if not pick.size:
            continue
        seats = st.current[pick].astype(np.intp)
        mk = st.legal_action_mask[pick]
        got.clear()
        agent.act_batch(seat_view(st, seats, pick), mk)
        rows = np.array(sorted(got), np.intp)
        if not rows.size:
            continue
        advised = acts[pick[rows]]
        if store == "full":
            planes.append(network_input(seat_view(st, seats[rows], pick[rows]), preset,
                                        advised))
        deal_seeds.append(seed * 10**7 + first_deal + pick[rows])
        decisions.append(before[pick[rows]])
        seats_kept.append(seats[rows].astype(np.int8))
        c = np.full((rows.size, MAX_CANDIDATES), -1, np.int16)
        r = np.full((rows.size, MAX_CANDIDATES), np.nan, np.float32)
        for j, i in enumerate(rows.tolist()):
            cand, val = got[i]
            n = min(len(cand), MAX_CANDIDATES)
            c[j, :n] = cand[:n]
            r[j, :n] = val[:n]
        masks.append(mk[rows])
        cands.append(c)
        returns.append(r)
        advice.append(advised.astype(np.int16))
        phases.append(st.phase[pick[rows]].copy())
    # meta as rollout shards have it (seed, deals, sampling chances x 1e6, discards); a
    # claim or void chance of 0 is written as 1e-6, so that distill.load_shards' weights
    # stay finite
    data = {
        "masks": np.concatenate(masks),
        "candidates": np.concatenate(cands), "returns": np.concatenate(returns),
        "advice": np.concatenate(advice), "phase": np.concatenate(phases),
        "deal_seed": np.concatenate(deal_seeds).astype(np.int64),
        "decision": np.concatenate(decisions).astype(np.int32),
        "seat": np.concatenate(seats_kept),
        "meta": np.array([seed, deals, int(sample_prob * 1e6), max(1, int(claim_prob * 1e6)),
                          max(1, int(void_prob * 1e6)), agent.top], np.int64),
    }
    data["prior"] = np.array(prior)
    if store == "compact":
        return compact(data, preset.preset)
    return {"planes": np.concatenate(planes), **data}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=200, help="deals per shard (200)")
    p.add_argument("--seed", type=int, default=1600,
                   help="the shard's seed; with --shards N the first of N seeds (1600)")
    p.add_argument("--rules", default="mil")
    p.add_argument("--sample-prob", type=float, default=0.25)
    p.add_argument("--claim-prob", type=float, default=0.0,
                   help="chance of sampling a claim answer (pung, kong, pass) or an own "
                        "turn offering a kong (0: none)")
    p.add_argument("--void-prob", type=float, default=0.0,
                   help="chance of sampling the void choice (0: none)")
    p.add_argument("--k", type=int, default=128, help="sampled deals per decision")
    p.add_argument("--prior", default="rules", choices=PRIORS,
                   help="the search's prior: candidate 0, what a candidate must beat (rules)")
    p.add_argument("--store", default="full", choices=STORES,
                   help="full: the network's input planes with each sample; compact: only "
                        "what replays the decision (about 60 bytes a sample; "
                        "decision_store expands it, distill reads it as it is)")
    add_shard_args(p)
    p.add_argument("--out", required=True,
                   help="the shard (.npz); with --shards, the folder of the shards")
    a = p.parse_args(argv)
    if a.deals < 1 or not 0 < a.sample_prob <= 1 or a.k < 2 or not (
            0 <= a.claim_prob <= 1 and 0 <= a.void_prob <= 1):
        print("search_teacher: --deals must be >= 1, --sample-prob in (0, 1], --claim-prob "
              "and --void-prob in [0, 1], --k >= 2", file=sys.stderr)
        return 2
    try:
        get_rules(a.rules)
    except ValueError as err:
        print(f"search_teacher: --rules: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    kwargs = {"deals": a.deals, "rules": a.rules, "sample_prob": a.sample_prob, "k": a.k,
              "claim_prob": a.claim_prob, "void_prob": a.void_prob, "store": a.store,
              "prior": a.prior}
    return run_shard_command("search_teacher", generate, kwargs, a)


if __name__ == "__main__":
    sys.exit(main())

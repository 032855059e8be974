"""Train a policy's action scores on rollout comparisons
(``sichuan_agents.training.rollout_teacher``).

Each sample holds a decision's network input, its legal mask, a few candidate actions
(column 0: the rules bot's choice) and each candidate's return from a play-out. The actor's
logits are fitted so that, among a sample's candidates, their differences equal the
differences of the returns in points (least squares on values centred per sample): the
minimiser is the expected return of each candidate given the decider's observation, so
acting on the largest logit chooses the candidate expected to score most -- one step of
policy improvement over the bot, the bot's own choice wherever nothing measurably beats it.
``margin`` points are taken off every candidate other than the bot's choice before the
fit, so that a deviation must be expected to win at least that much (``discard_margin``
for one discard over another, ``void_margin`` for another void suit: the noisiest). A
second term keeps the probability mass on the candidates (the actions never played out
stay below them).

Samples are split by shard (``--val`` shards held out): the held-out *gain* -- the mean
over held-out samples of the return of the candidate the network chooses minus the return
of the bot's choice, with a 95% CI -- is an unbiased estimate of what the deviations win
per sampled decision, since those returns played no part in the fit.

    python -m sichuan_agents.training.distill runs/rollouts/*.npz --init
    sichuan_agents/models/fitted_mil.zip \\
        --out runs/distilled.zip --epochs 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.training.decision_store import expand, is_compact
from sichuan_agents.training.rollout_teacher import sample_probability
from sichuan_env.core.actions import HU, KONG, PUNG, VOID_TILE
from sichuan_env.core.state import TURN, VOID


def load_shards(paths: list[str]) -> dict[str, np.ndarray]:
    """Concatenate rollout shards; ``shard`` numbers each sample's file. A compact shard
    (:mod:`sichuan_agents.training.decision_store`) is expanded: its deals replayed, its
    planes made."""
    parts: dict[str, list[np.ndarray]] = {}
    for j, p in enumerate(paths):
        with np.load(p) as f:
            d = expand(f) if is_compact(f) else {k: f[k] for k in f.files}
        n = d["returns"].shape[0]
        for k in ("planes", "masks", "candidates", "returns", "advice", "phase"):
            parts.setdefault(k, []).append(d[k])
        parts.setdefault("shard", []).append(np.full(n, j, np.int32))
        meta = d["meta"]
        prob = sample_probability(d["phase"], d["masks"], meta[2] / 1e6, meta[3] / 1e6,
                                  meta[4] / 1e6)
        # weight: how many decisions of play one sample stands for, per seat and deal
        parts.setdefault("weight", []).append((1.0 / prob / (4 * meta[1])).astype(
            np.float32))
    return {k: np.concatenate(v) for k, v in parts.items()}


def actor_logits(policy: Any, obs: Any) -> Any:
    """(N, 88) raw logits of an SB3 maskable actor-critic policy (no mask applied)."""
    extractor = getattr(policy, "pi_features_extractor", None) or policy.features_extractor
    feats = extractor(obs.float())  # Box planes: no preprocessing
    return policy.action_net(policy.mlp_extractor.forward_actor(feats))


DECISION_KINDS = ("void", "discard", "turn_kong", "turn_hu", "claim")


def decision_kind(phase: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(N,) index into :data:`DECISION_KINDS`: the void choice; an own turn with discards
    only; one offering a kong; one offering Hu (self-drawn); a claim (or robbing a kong)."""
    kind = np.full(phase.shape, 4, np.int8)
    kind[phase == VOID] = 0
    turn = phase == TURN
    kind[turn] = 1
    kind[turn & masks[:, KONG:PUNG].any(1)] = 2
    kind[turn & masks[:, HU]] = 3
    return kind


def chosen(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(N,) the legal action with the largest logit."""
    return np.where(masks, logits, -np.inf).argmax(1)


def held_out_gain(actions: np.ndarray, cand: np.ndarray, returns: np.ndarray,
                  weight: np.ndarray | None = None, shards: int = 1) -> dict[str, float]:
    """Gain of ``actions`` over the bot's choice (column 0) on samples whose chosen action
    was played out; the share of samples whose choice was not a candidate. With
    ``weight`` (decisions of play per seat and deal that a sample stands for, summed over
    ``shards`` shards), ``per_deal``: the estimated gain per deal of one seat playing so
    against the bots (samples not played out count as no gain)."""
    hit = cand == actions[:, None]
    known = hit.any(1)
    r = np.where(hit, returns, 0.0).sum(1)
    g_all = np.where(known, r - returns[:, 0], 0.0)
    g = g_all[known]
    sem = g.std(ddof=1) / np.sqrt(max(1, g.size - 1)) if g.size > 1 else 0.0
    out = {"gain": float(g.mean()) if g.size else 0.0, "ci95": 1.96 * float(sem),
           "deviate": float((actions != cand[:, 0]).mean()),
           "unknown": float(1.0 - known.mean()), "n": int(actions.size)}
    if weight is not None and g_all.size > 1:
        w = g_all * weight * g_all.size / shards  # per-sample contributions, mean = total
        out["per_deal"] = float(w.mean())
        out["per_deal_ci95"] = 1.96 * float(w.std(ddof=1) / np.sqrt(w.size))
    return out


def fit(model: Any, data: dict[str, np.ndarray], train: np.ndarray, val: np.ndarray, *,
        epochs: int = 3, lr: float = 1e-4, batch: int = 512, margin: float = 0.0,
        discard_margin: float | None = None, void_margin: float | None = None,
        mass_weight: float = 1.0, seed: int = 0, log: Any = print,
        after_epoch: Any = None, anchor: dict[str, np.ndarray] | None = None,
        anchor_weight: float = 1.0) -> list[dict[str, Any]]:
    """Fit the actor of ``model`` (a loaded MaskablePPO) in place; the held-out gain after
    each epoch (and before the first, epoch 0). ``after_epoch(epoch)`` is called after
    each epoch's evaluation (e.g. to save the model as it is then). ``anchor``: decisions
    (``planes``, ``masks``) with no comparisons, where the model's legal logits are held
    near the start model's (``anchor_weight`` times their mean squared change, on a batch
    of them per step): comparisons of some decision kinds only then leave the others'
    choices as they were."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    policy = model.policy
    policy.set_training_mode(True)
    extractor = getattr(policy, "pi_features_extractor", None) or policy.features_extractor
    params = (list(extractor.parameters()) + list(policy.mlp_extractor.policy_net.parameters())
              + list(policy.action_net.parameters()))
    opt = torch.optim.Adam(params, lr=lr)
    cand_all = data["candidates"].astype(np.int64)
    ret_all = data["returns"].astype(np.float32)
    other = (np.arange(cand_all.shape[1]) > 0)[None, :]
    both_discards = (cand_all < VOID_TILE) & (cand_all[:, :1] < VOID_TILE)
    m = np.where(both_discards, margin if discard_margin is None else discard_margin, margin)
    void_choice = (cand_all >= VOID_TILE) & (cand_all < KONG)  # set-aside tile or suit
    m = np.where(void_choice, margin if void_margin is None else void_margin, m)
    target_all = ret_all - m * other
    start_logits = None
    if anchor is not None:
        start_logits = anchor_targets(model, anchor)
    history = [dict(epoch=0, **evaluate(model, data, val))]
    log(f"epoch 0: {history[-1]}")
    for ep in range(1, epochs + 1):
        order = rng.permutation(train)
        losses = []
        t0 = time.time()
        for lo in range(0, order.size, batch):
            idx = np.sort(order[lo:lo + batch])
            obs = torch.as_tensor(data["planes"][idx].astype(np.float32))
            mask = torch.as_tensor(data["masks"][idx])
            cand = torch.as_tensor(cand_all[idx])
            have = cand >= 0
            tgt = torch.as_tensor(target_all[idx])
            logits = actor_logits(policy, obs)
            lc = torch.gather(logits, 1, cand.clamp(min=0))
            n = have.sum(1, keepdim=True).clamp(min=1)
            lc_c = lc - (lc * have).sum(1, keepdim=True) / n
            t = torch.where(have, tgt, torch.zeros_like(tgt))
            t_c = t - t.sum(1, keepdim=True) / n
            reg = (((lc_c - t_c) ** 2) * have).sum(1) / n.squeeze(1)
            masked = logits.masked_fill(~mask, -1e9)
            lse_all = torch.logsumexp(masked, 1)
            lse_c = torch.logsumexp(lc.masked_fill(~have, -1e9), 1)
            loss = reg.mean() + mass_weight * (lse_all - lse_c).mean()
            if start_logits is not None:
                a = np.sort(rng.choice(start_logits.shape[0], size=min(
                    batch, start_logits.shape[0]), replace=False))
                a_obs = torch.as_tensor(anchor["planes"][a].astype(np.float32))
                a_mask = torch.as_tensor(anchor["masks"][a])
                moved = (actor_logits(policy, a_obs) - torch.as_tensor(start_logits[a])) ** 2
                loss = loss + anchor_weight * (moved * a_mask).sum() / a_mask.sum().clamp(min=1)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            losses.append(loss.item())
        history.append(dict(epoch=ep, loss=float(np.mean(losses)), seconds=time.time() - t0,
                            **evaluate(model, data, val)))
        log(f"epoch {ep}: {history[-1]}")
        if after_epoch is not None:
            policy.set_training_mode(False)
            after_epoch(ep)
            policy.set_training_mode(True)
    policy.set_training_mode(False)
    return history


def anchor_targets(model: Any, anchor: dict[str, np.ndarray], batch: int = 4096
                   ) -> np.ndarray:
    """(N, 88) the model's logits on the anchor decisions, before the fit moves it."""
    import torch

    out = np.empty((anchor["masks"].shape[0], anchor["masks"].shape[1]), np.float32)
    with torch.no_grad():
        for lo in range(0, out.shape[0], batch):
            obs = torch.as_tensor(anchor["planes"][lo:lo + batch].astype(np.float32))
            out[lo:lo + obs.shape[0]] = actor_logits(model.policy, obs).numpy()
    return out


def evaluate(model: Any, data: dict[str, np.ndarray], rows: np.ndarray,
             batch: int = 4096, margins: tuple[float, ...] = (0.5, 1.0, 2.0)
             ) -> dict[str, Any]:
    """Held-out gain of the model's choices on samples ``rows``; ``at_margin``: the same
    if the bot's choice had ``m`` more points of logit (how a margin would act)."""
    import torch

    logits = np.empty((rows.size, data["masks"].shape[1]), np.float32)
    with torch.no_grad():
        for lo in range(0, rows.size, batch):
            r = rows[lo:lo + batch]
            logits[lo:lo + r.size] = actor_logits(
                model.policy, torch.as_tensor(data["planes"][r].astype(np.float32))).numpy()
    masks = data["masks"][rows]
    cand = data["candidates"][rows].astype(np.int64)
    ret = data["returns"][rows]
    w = data["weight"][rows] if "weight" in data else None
    shards = len(np.unique(data["shard"][rows])) if "shard" in data else 1
    out: dict[str, Any] = held_out_gain(chosen(logits, masks), cand, ret, w, shards)
    bonus = np.zeros_like(logits)
    bonus[np.arange(rows.size), cand[:, 0]] = 1.0
    kinds = decision_kind(data["phase"][rows], masks)
    acts = chosen(logits, masks)
    out["by_kind"] = {}
    for j, name in enumerate(DECISION_KINDS):
        r = np.flatnonzero(kinds == j)
        if r.size > 1:
            g = held_out_gain(acts[r], cand[r], ret[r], None if w is None else w[r], shards)
            out["by_kind"][name] = {k: round(v, 4) for k, v in g.items()
                                    if k in ("per_deal", "deviate", "n")}
    out["at_margin"] = {m: {k: round(v, 4) for k, v in held_out_gain(
        chosen(logits + m * bonus, masks), cand, ret, w, shards).items() if k != "n"}
        for m in margins}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("shards", nargs="+")
    p.add_argument("--init", default="sichuan_agents/models/fitted_mil.zip")
    p.add_argument("--out", required=True)
    p.add_argument("--val", type=int, default=2, help="shards held out (the last ones)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--margin", type=float, default=0.0)
    p.add_argument("--discard-margin", type=float, default=None,
                   help="the margin for one discard instead of another (default --margin)")
    p.add_argument("--void-margin", type=float, default=None,
                   help="the margin for another void suit (default --margin)")
    p.add_argument("--mass-weight", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--anchor", nargs="+", default=[],
                   help="shards whose decisions only hold the model's logits near the "
                        "start's (their comparisons unused)")
    p.add_argument("--anchor-weight", type=float, default=1.0)
    p.add_argument("--anchor-kinds", default=",".join(DECISION_KINDS),
                   help="the decision kinds of the anchor shards used (comma-separated; "
                        f"of {', '.join(DECISION_KINDS)})")
    p.add_argument("--save-each-epoch", action="store_true",
                   help="also save the model after every epoch as OUT_epN.zip")
    a = p.parse_args(argv)
    missing = [s for s in [*a.shards, *a.anchor] if not Path(s).exists()]
    if missing or not Path(a.init).exists():
        print(f"distill: no such file: {(missing or [a.init])[0]}", file=sys.stderr)
        return 2
    kinds = a.anchor_kinds.split(",")
    if set(kinds) - set(DECISION_KINDS):
        bad = sorted(set(kinds) - set(DECISION_KINDS))[0]
        print(f"distill: --anchor-kinds: unknown kind {bad!r}; known: "
              f"{', '.join(DECISION_KINDS)}", file=sys.stderr)
        return 2
    if not 0 < a.val < len(a.shards) or a.epochs < 0 or a.lr <= 0 or a.batch < 1 or \
            a.anchor_weight < 0:
        print("distill: --val must leave shards to train on (0 < val < shards), --epochs >= 0,"
              " --lr > 0, --batch >= 1, --anchor-weight >= 0", file=sys.stderr)
        return 2
    import torch

    from sichuan_agents.training.ppo_policy import load_model

    torch.set_num_threads(1)
    data = load_shards(sorted(a.shards))
    n_shards = len(a.shards)
    val = np.flatnonzero(data["shard"] >= n_shards - a.val)
    train = np.flatnonzero(data["shard"] < n_shards - a.val)
    print(f"{train.size} training samples, {val.size} held out", flush=True)
    anchor = None
    if a.anchor:
        anchor = load_shards(sorted(a.anchor))
        use = np.isin(decision_kind(anchor["phase"], anchor["masks"]),
                      [DECISION_KINDS.index(k) for k in kinds])
        anchor = {"planes": anchor["planes"][use], "masks": anchor["masks"][use]}
        print(f"{anchor['masks'].shape[0]} anchor decisions", flush=True)
    model = load_model(a.init, device="cpu")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save_epoch(ep: int) -> None:
        path = out.with_name(f"{out.stem}_ep{ep}.zip")
        model.save(path)
        print(f"wrote {path}", flush=True)

    fit(model, data, train, val, epochs=a.epochs, lr=a.lr, batch=a.batch, margin=a.margin,
        discard_margin=a.discard_margin, void_margin=a.void_margin,
        mass_weight=a.mass_weight, seed=a.seed, log=lambda s: print(s, flush=True),
        after_epoch=save_epoch if a.save_each_epoch else None, anchor=anchor,
        anchor_weight=a.anchor_weight)
    model.save(a.out)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

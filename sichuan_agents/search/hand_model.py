"""A network that guesses the other seats' hidden hands from one seat's view.

The search agent (:mod:`sichuan_agents.search.agent`) plays its candidates out on deals sampled from
what its seat sees. How those deals fill the other seats' hands decides how well the
play-outs see danger and speed: with the true hands in place of sampled ones the same
search scores far higher (docs/search.md). This module learns, from deals of four
``rules`` bots, where the unseen tiles are.

* :func:`hand_features` -- the input: the observation planes of the view
  (:func:`sichuan_env.seats.observation.planes_from_view`) plus, per other seat, when in its
  river each kind was first thrown (discard order, which the planes only keep for the
  last four discards).
* :class:`HandNet` -- an MLP: for each other seat (relative 1, 2, 3) a distribution over
  the 27 kinds of the tiles it holds (standing tiles and set-aside tile), zero where no
  copy is unseen, and the chance that its hand is ready (waits on a tile).
* :func:`collect` / :func:`train` / ``python -m sichuan_agents.search.hand_model`` -- self-play data
  (views and the true hands) and a cross-entropy fit; the file it writes holds the
  weights and the settings.
* :func:`copy_weights` -- what the sampler uses (``search?hands=model`` and
  ``hands=shaped``): per other seat and kind, the odds that one unseen copy is in that
  seat's hand; :meth:`HandNet.ready` -- the chance of a ready hand (``hands=shaped``).

Needs torch (the ``train`` extra); nothing here runs unless ``hands=model`` or
``hands=shaped`` is asked for.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.vocab import N_KINDS
from sichuan_env.seats.observation import N_CHANNELS, PLANES, planes_from_view
from sichuan_env.seats.view import SeatView

#: the shipped hand model (trained by ``python -m sichuan_agents.search.hand_model``, both presets)
SHIPPED = Path(__file__).resolve().parent.parent / "models" / "hands.pt"
#: extra input channels: per other seat, 1 - (position of its first discard of the kind)
#: / 30 where it threw the kind, else 0
ORDER_CHANNELS = 3
N_FEATURES = N_CHANNELS + ORDER_CHANNELS
VISIBLE = PLANES["visible"][0]  # the channel of the copies the viewer sees


def hand_features(view: SeatView, rules: Rules) -> np.ndarray:
    """(n, N_FEATURES, 27) float32 input of :class:`HandNet` for the rows of ``view``."""
    planes = planes_from_view(view, rules)
    n = planes.shape[0]
    order = np.zeros((n, ORDER_CHANNELS, N_KINDS), np.float32)
    for r in range(1, 4):
        river = np.asarray(view.river[:, r], np.int64)
        length = np.asarray(view.river_len[:, r], np.int64)
        for j in range(int(length.max(initial=0)) - 1, -1, -1):  # first discard wins
            rows = np.flatnonzero(length > j)
            order[rows, r - 1, river[rows, j]] = 1.0 - j / 30.0
    return np.concatenate([planes, order], axis=1)


def unseen_from_features(x: np.ndarray) -> np.ndarray:
    """(n, 27) copies of each kind the viewer cannot see (from the ``visible`` plane)."""
    return np.rint(4.0 * (1.0 - x[:, VISIBLE, :])).clip(0, 4)


def _torch():
    import torch

    return torch


#: outputs per other seat: 27 kind logits, then one logit of "the hand is ready"
OUTPUTS = N_KINDS + 1


def make_net(hidden: int = 256) -> Any:
    """The MLP: (n, N_FEATURES, 27) -> (n, 3, OUTPUTS) logits, one row per other seat."""
    nn = _torch().nn
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(N_FEATURES * N_KINDS, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, 3 * OUTPUTS), nn.Unflatten(1, (3, OUTPUTS)),
    )


class HandNet:
    """A trained :func:`make_net` with its settings; :meth:`probabilities` gives, per other
    seat, the share of its hidden tiles of each kind, :meth:`ready` the chance that its
    hand is ready."""

    def __init__(self, net: Any, settings: dict[str, Any]) -> None:
        self.net = net.eval()
        self.settings = settings

    @classmethod
    def load(cls, path: str | Path | None = None) -> HandNet:
        path = Path(path) if path is not None else SHIPPED
        if not path.exists():
            raise FileNotFoundError(f"hand model {path} is missing (train one with "
                                    "python -m sichuan_agents.search.hand_model)")
        torch = _torch()
        blob = torch.load(path, map_location="cpu", weights_only=True)
        settings = json.loads(blob["settings"])
        net = make_net(int(settings["hidden"]))
        net.load_state_dict(blob["weights"])
        return cls(net, settings)

    def save(self, path: str | Path) -> None:
        torch = _torch()
        torch.save({"weights": self.net.state_dict(), "settings": json.dumps(self.settings)},
                   path)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """(n, 3, 27): per other seat (relative 1..3), the share of its hidden tiles of each
        kind, 0 where the viewer sees every copy."""
        logits = self._logits(x)[:, :, :N_KINDS]
        unseen = unseen_from_features(x)
        logits = np.where(unseen[:, None, :] > 0, logits, -np.inf)
        logits -= logits.max(axis=2, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=2, keepdims=True)

    def ready(self, x: np.ndarray) -> np.ndarray:
        """(n, 3): per other seat (relative 1..3), the chance that its hand is ready."""
        return 1.0 / (1.0 + np.exp(-self._logits(x)[:, :, N_KINDS]))

    def _logits(self, x: np.ndarray) -> np.ndarray:
        torch = _torch()
        with torch.no_grad():
            return self.net(torch.as_tensor(x, dtype=torch.float32)).numpy().astype(np.float64)


_SHIPPED_MODEL: HandNet | None = None


def shipped_hand_model() -> HandNet:
    """The shipped hand model, loaded once per process."""
    global _SHIPPED_MODEL
    if _SHIPPED_MODEL is None:
        _SHIPPED_MODEL = HandNet.load()
    return _SHIPPED_MODEL


def copy_odds(shares: np.ndarray, sizes: np.ndarray, unseen: np.ndarray) -> np.ndarray:
    """Per kind, the odds ``q / (1 - q)`` that one unseen copy is in a hand, with ``q`` the
    predicted count (``shares`` x ``sizes`` hidden tiles) over the ``unseen`` copies
    (shapes broadcast: shares (..., 27), sizes (...), unseen (..., 27))."""
    q = shares * np.asarray(sizes, np.float64)[..., None] / np.maximum(unseen, 1)
    q = q.clip(1e-3, 0.98)
    return q / (1.0 - q)


def copy_weights(model: HandNet, view: SeatView, rules: Rules,
                 sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the sampler reads, for the rows of ``view``: (n, 3, 27) weights for its
    weighted draw -- per other seat (relative 1..3) and kind, the odds ``q / (1 - q)`` that
    one unseen copy is in its hand (:func:`copy_odds`, ``sizes[:, r]`` hidden tiles) -- and
    (n, 3) the chance of a ready hand."""
    x = hand_features(view, rules)
    odds = copy_odds(model.probabilities(x), sizes, unseen_from_features(x)[:, None, :])
    return odds, model.ready(x)


# ---------------------------------------------------------------------- training data
def collect(deals: int, seed: int, rules: str | Rules = "mil", prob: float = 0.2,
            tables: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deals of four ``rules`` bots: at every decision, with chance ``prob`` per table,
    each seat's features and the true hidden tiles (standing + set-aside) of the other three
    seats, relative order, and whether each of those hands is ready. Returns (float16
    (n, N_FEATURES, 27), int8 (n, 3, 27), bool (n, 3))."""
    from sichuan_agents.bots.rules_bot import RulesAgent
    from sichuan_env.core import engine
    from sichuan_env.core.state import DONE
    from sichuan_env.seats.view import seat_view

    rules = get_rules(rules).replace(deals_per_match=1)
    rng = np.random.default_rng(seed)
    bot = RulesAgent(seed)
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    rs: list[np.ndarray] = []
    done_deals = 0
    while done_deals < deals:
        b = min(tables, deals - done_deals)
        seeds = rng.integers(0, 2**62, b).tolist()
        st = engine.reset(seeds, rules)
        while not st.done.all():
            rows = np.flatnonzero(~st.done & (st.phase != DONE))
            seats = st.current[rows].astype(np.int64)
            view = seat_view(st, seats, rows)
            acts = np.zeros(st.batch_size, np.int64)
            acts[rows] = bot.act_batch(view, st.legal_action_mask[rows])
            # record: every seat of the chosen tables, not only the one to act
            pick = rows[rng.random(rows.size) < prob]
            if pick.size:
                r4 = np.repeat(pick, 4)
                s4 = np.tile(np.arange(4), pick.size)
                v = seat_view(st, s4, r4)
                xs.append(hand_features(v, rules).astype(np.float16))
                y = np.zeros((r4.size, 3, N_KINDS), np.int8)
                ready = np.zeros((r4.size, 3), bool)
                for r in range(1, 4):
                    other = (s4 + r) % 4
                    y[:, r - 1] = st.hand[r4, other]
                    ready[:, r - 1] = (st.waits[r4, other] != 0) & ~st.hu[r4, other]
                    sa = st.set_aside[r4, other]
                    has = sa >= 0
                    y[np.flatnonzero(has), r - 1, sa[has]] += 1
                ys.append(y)
                rs.append(ready)
            st, _, _ = engine.step(st, acts)
        done_deals += b
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(rs)


def train(x: np.ndarray, y: np.ndarray, ready: np.ndarray, *, hidden: int = 256,
          epochs: int = 4, lr: float = 1e-3, batch: int = 1024, val: float = 0.1,
          seed: int = 0, log: Any = print) -> tuple[HandNet, dict[str, float]]:
    """Fit :func:`make_net` by cross-entropy to the true shares of each seat's hidden
    tiles and to whether its hand is ready; the last ``val`` part is held out. Returns the
    model and held-out figures."""
    torch = _torch()
    torch.manual_seed(seed)
    n = x.shape[0]
    cut = int(n * (1 - val))
    net = make_net(hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    unseen = torch.as_tensor(unseen_from_features(x) > 0)
    X = torch.as_tensor(x)
    Y = torch.as_tensor(y.astype(np.float32))
    R = torch.as_tensor(ready.astype(np.float32))
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def loss_of(idx: Any) -> Any:
        out = net(X[idx].float())
        logits = out[:, :, :N_KINDS].masked_fill(~unseen[idx][:, None, :], -1e9)
        size = Y[idx].sum(2, keepdim=True).clamp(min=1)
        logp = torch.log_softmax(logits, dim=2)
        return -((Y[idx] / size) * logp).sum(2).mean() + bce(out[:, :, N_KINDS], R[idx])

    rng = np.random.default_rng(seed)
    for ep in range(epochs):
        net.train()
        order = rng.permutation(cut)
        total = 0.0
        for s in range(0, cut, batch):
            idx = torch.as_tensor(order[s:s + batch])
            loss = loss_of(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        net.eval()
        with torch.no_grad():
            held = float(loss_of(torch.arange(cut, n)))
        log(f"epoch {ep + 1}: train loss {total / cut:.4f}, held-out loss {held:.4f}")
    model = HandNet(net, {"hidden": hidden, "epochs": epochs, "lr": lr, "batch": batch,
                          "samples": int(cut), "held_out": int(n - cut), "seed": seed})
    p = model.ready(x[cut:].astype(np.float32))
    truth = ready[cut:]
    figures = {"held_out_loss": held, "ready_rate": float(truth.mean()),
               "ready_brier": float(((p - truth) ** 2).mean()),
               "ready_brier_constant": float(truth.var())}
    return model, figures | overlap(model, x[cut:], y[cut:], seed)


def overlap(model: HandNet, x: np.ndarray, y: np.ndarray, seed: int = 0) -> dict[str, float]:
    """Tiles a hand drawn for each other seat has in common with its true hand, on
    average: drawn by the model's shares, and evenly from the unseen copies (a baseline).
    Each seat draws its true number of tiles from the unseen copies alone (one seat at a
    time, without the others' draws), so the figure measures the shares themselves."""
    rng = np.random.default_rng(seed)
    x = x.astype(np.float32)
    p = model.probabilities(x)
    unseen = unseen_from_features(x)
    sizes = y.sum(2)
    common = {"model": 0.0, "uniform": 0.0}
    count = 0
    for i in range(x.shape[0]):
        pool = np.repeat(np.arange(N_KINDS), unseen[i].astype(int))
        if pool.size == 0:
            continue
        for r in range(3):
            m = int(sizes[i, r])
            if m == 0 or m > pool.size:
                continue
            w = copy_odds(p[i, r], m, unseen[i])[pool]
            for name, weight in (("model", w), ("uniform", np.ones(pool.size))):
                keys = np.log1p(-rng.random(pool.size)) / weight
                got = np.bincount(pool[np.argsort(-keys)[:m]], minlength=N_KINDS)
                common[name] += float(np.minimum(got, y[i, r]).sum())
            count += 1
    return {f"common_{k}": v / max(1, count) for k, v in common.items()} | {
        "hand_size": float(sizes[sizes > 0].mean()) if sizes.size else 0.0}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Train the hand model the search agent's "
                                "hands=model sampling reads (deals of four rules bots).")
    p.add_argument("--deals", type=int, default=4000, help="deals per preset")
    p.add_argument("--seed", type=int, default=6100)
    p.add_argument("--prob", type=float, default=0.2)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--out", default=str(SHIPPED))
    a = p.parse_args(argv)
    if a.deals < 1 or a.epochs < 1 or a.hidden < 1 or not 0 < a.prob <= 1:
        print("error: --deals, --epochs and --hidden must be >= 1, --prob in (0, 1]",
              file=sys.stderr)
        return 2
    started = time.time()
    xs, ys, rs = [], [], []
    for j, preset in enumerate(("mil", "mahjongsoft")):
        x, y, r = collect(a.deals, a.seed + j, preset, a.prob)
        print(f"{preset}: {x.shape[0]} positions from {a.deals} deals (seed {a.seed + j}), "
              f"{time.time() - started:.0f} s", flush=True)
        xs.append(x)
        ys.append(y)
        rs.append(r)
    x, y, r = np.concatenate(xs), np.concatenate(ys), np.concatenate(rs)
    perm = np.random.default_rng(a.seed).permutation(x.shape[0])
    model, figures = train(x[perm], y[perm], r[perm], hidden=a.hidden, epochs=a.epochs,
                           seed=a.seed)
    model.settings.update({"deals_per_preset": a.deals, "seeds": [a.seed, a.seed + 1],
                           "prob": a.prob, "figures": figures})
    model.save(a.out)
    print(f"held out: {figures['common_model']:.2f} tiles in common with the true hand "
          f"(uniform {figures['common_uniform']:.2f}) of {figures['hand_size']:.2f}; "
          f"ready: Brier {figures['ready_brier']:.4f} (a constant "
          f"{figures['ready_brier_constant']:.4f}); "
          f"wrote {a.out} ({time.time() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

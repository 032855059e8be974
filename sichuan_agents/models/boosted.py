"""The boosted agent: the fitted network, with its own-turn discards and kongs re-ranked by
gradient-boosted trees fitted to the search agent's values.

At every decision the shipped ``fitted`` network (:mod:`sichuan_agents.models.ppo`) chooses,
reading the
`rules` bot's choice as advice. At an own turn with a choice and no legal Hu where the
network agrees with the `rules` bot, the agent lists the search agent's candidates
(:func:`sichuan_agents.search.candidates.search_candidates`: the bot's choice, the legal kongs and
the
bot's next-best discards, at most four), and the trees (LightGBM, trained by
:mod:`sichuan_agents.training.boost`) predict for each candidate how many points per deal it is
worth over the bot's choice, from :mod:`sichuan_agents.models.candidate_features`. The candidate
with
the largest prediction is played when that exceeds ``margin`` points; otherwise the
network's choice. No play-out runs at play time: the search only made the training data.

Agent names: ``boosted`` (the shipped trees for the preset, with the shipped ``fitted``
network) and ``boosted:PATH`` (a trees file written by :mod:`sichuan_agents.training.boost`).

``over="best"`` stacks a second generation: the shipped ``best`` agent chooses, and at every
own turn with a choice and no legal Hu the trees re-rank the candidates of the search
with the ``best`` prior (column 0: ``best``'s choice), as
``search_teacher --prior best`` valued them. Trees fitted to such shards say so in their
metadata (``"prior": "best"``), and ``over`` defaults to it.
Needs the ``train`` extra (torch for the network, LightGBM for the trees).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_agents.models.candidate_features import candidate_features
from sichuan_agents.models.ppo import MODELS, PPOAgent
from sichuan_agents.search.candidates import search_candidates
from sichuan_env.core.actions import HU
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import TURN
from sichuan_env.seats.agent import BaseAgent, make_agent
from sichuan_env.seats.view import SeatView

#: Candidates per decision, as in the search agent's default (``top=4``) that made the data.
TOP = 4
#: What the trees re-rank: the fitted network's choice where it agrees with the rules bot
#: (``network``, the shipped trees), or the shipped ``best`` agent's choice (``best``).
OVER = ("network", "best")


def shipped_trees(rules: Any = None) -> Path:
    """The shipped trees file for the preset: ``sichuan_agents/models/boosted_<preset>.txt``."""
    return MODELS / f"boosted_{get_rules(rules or 'mil').preset}.txt"


def load_trees(path: str | Path) -> Any:
    """A LightGBM booster from a text file; FileNotFoundError / ValueError in one line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no trees file at {path}")
    try:
        import lightgbm
    except ImportError as e:  # the library or its OpenMP runtime (libgomp) is missing
        raise ImportError(f"the boosted agent needs LightGBM (the train extra): {e}") from e
    try:
        return lightgbm.Booster(model_file=str(path))
    except lightgbm.basic.LightGBMError as e:
        raise ValueError(f"{path} is not a LightGBM model file: {e}") from e


class BoostedAgent(BaseAgent):
    """The ``fitted`` network with own-turn candidates re-ranked by trees (module
    docstring). ``trees``: a trees file (default: the shipped one for ``rules``);
    ``network``: the fitted network's .zip (default: the shipped one); ``margin``: the
    predicted gain in points a candidate needs over the network's choice (>= 0);
    ``over``: what the trees re-rank (:data:`OVER`; default: the ``prior`` the trees'
    metadata names, ``best`` for trees fitted to ``--prior best`` shards, else
    ``network``)."""

    needs = "view"

    def __init__(self, trees: str | Path | None = None, rules: str | None = None,
                 margin: float = 0.0, network: str | Path | None = None,
                 over: str | None = None) -> None:
        if isinstance(margin, bool) or not isinstance(margin, (int, float)) or \
                not 0 <= margin < 100:
            raise ValueError(f"margin must be a number of points in 0..100, got {margin!r}")
        if over is not None and over not in OVER:
            raise ValueError(f"over must be one of {', '.join(OVER)}, got {over!r}")
        self.margin = float(margin)
        self.rules = get_rules(rules or "mil")
        path = Path(trees) if trees is not None else shipped_trees(self.rules)
        self.booster = load_trees(path)
        self.path = str(path)
        self.name = "boosted" if trees is None else f"boosted:{path}"
        if over is None:
            over = "best" if (self.metadata() or {}).get("prior") == "best" else "network"
        self.over = over
        self.base: BaseAgent | None = None
        if over == "best":  # by name: the module of ``best`` imports this one
            self.base = make_agent("best", preset=self.rules.preset)
        self.network = PPOAgent(network, kind="fitted", rules=self.rules.preset)
        if not isinstance(self.network.adviser, RulesAgent):
            raise ValueError("the boosted agent's network must read the rules bot's advice "
                             f"planes (its candidates are that bot's), got {self.network!r}")
        self.decisions = 0  # own-turn decisions the trees scored
        self.departures = 0  # of which the trees changed the network's choice

    def act_batch(self, views: SeatView, masks: np.ndarray) -> np.ndarray:
        if not isinstance(views, SeatView):
            raise TypeError(f"{type(self).__name__} reads seat views (needs = 'view'), got "
                            f"{type(views).__name__}")
        m = np.asarray(masks, bool)
        if m.shape[0] == 0:
            return np.zeros(0, np.int64)
        bot = self.network.adviser.act_batch(views, m)
        inputs = self.network.network_input(views, m, advice=bot)
        own = (views.phase == TURN) & ~m[:, HU] & (m.sum(1) > 1)
        if self.base is None:
            actions = self.network.act_on_input(inputs, m)
            ask = np.flatnonzero(own & (actions == bot))
        else:
            actions = np.asarray(self.base.act_batch(views, m), np.int64)
            ask = np.flatnonzero(own)
        if ask.size:
            sub = SeatView(*(f[ask] for f in views))
            cands = search_candidates(self.network.adviser, TOP, sub, m[ask], actions[ask],
                                      bot[ask])
            table = np.full((ask.size, TOP), -1, np.int64)
            for j, c in enumerate(cands):
                table[j, :len(c)] = c
            actions[ask] = self.choose(inputs[ask], table)
        return actions

    def choose(self, inputs: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """The candidate to play per row (column 0: the choice the trees re-rank, see
        ``over``): the best predicted gain over column 0 when it exceeds the margin."""
        feats, valid = candidate_features(inputs, candidates)
        gain = np.full(candidates.shape, -np.inf)
        gain[:, 0] = 0.0
        rest = valid.copy()
        rest[:, 0] = False
        if rest.any():
            gain[rest] = self.booster.predict(feats[rest], num_threads=1) - self.margin
        pick = gain.argmax(1)
        self.decisions += candidates.shape[0]
        self.departures += int((pick > 0).sum())
        return candidates[np.arange(candidates.shape[0]), pick]

    def metadata(self) -> dict[str, Any] | None:
        """The trees' metadata (the .json beside the file), when there is one."""
        meta = Path(self.path).with_suffix(".json")
        return json.loads(meta.read_text()) if meta.is_file() else None

    def __repr__(self) -> str:
        return f"BoostedAgent({self.path}, margin={self.margin}, over={self.over})"

"""The search agent: each decision played out on sampled deals, in one engine batch.

At a decision with a real choice the agent

1. lists *candidates*: the prior's choice first (``prior=rules``, the default: the rules
   bot, :class:`sichuan_agents.bots.rules_bot.RulesAgent`; ``prior=fitted``: the shipped
   rollout-fitted
   network, docs/models.md), then the rules bot's own choice, on an own turn the legal
   kongs and the rules bot's next-best discards (its order: lowest shanten, then its
   look-ahead worth or greedy's score), on the void choice one action per other suit, in a
   claim window every legal answer -- at most ``top`` in all;
2. samples ``k`` deals of the hidden tiles consistent with exactly what the seat sees
   (its :class:`~sichuan_env.seats.view.SeatView`; :mod:`sichuan_agents.search.sampler`);
3. applies every candidate on every sample and plays all ``k x candidates`` copies to
   the end of the deal with a compiled rollout policy (:mod:`sichuan_agents.search.rollout`), as
   one engine batch with no Python call per table or step;
4. compares every candidate with the prior's choice on the same samples (common random
   numbers: the candidates share the ``k`` samples and, the rollout policy being
   deterministic -- or, for ``random``, seeded per sample -- the same rollout
   randomness): ``d`` the per-sample difference of the seat's points, the candidate
   with the best ``mean(d) - z * se(d)`` is played when that is above 0, else the
   prior's choice. With ``z = 0`` this is the candidate with the best mean; with
   ``clip=C`` every ``d`` is first limited to ``[-C, C]``.

With the rules prior a legal Hu is always declared without search (self-drawn or on a
discard); the fitted prior decides Hu or pass itself, also without search. ``hu=search``
searches a Hu on another seat's tile (a discard, or a kong robbed) against the other
answers (the prior's choice, Hu for ``rules``, first); a self-drawn Hu is always taken.
Decisions with one legal action, or one candidate, cost no play-out.

Options (``search?k=256&top=4&rollout=rules``, the defaults): ``k`` samples per decision
(>= 1), ``top`` candidates at most (>= 1; 1 plays the prior), ``rollout`` the rollout
policy (``rules``, the rules bot compiled; ``greedy``, the greedy bot compiled; ``waits``,
a faster heuristic; or ``random``), ``z`` the standard errors by which a candidate must
beat the prior's choice (>= 0), ``clip`` a bound in points on each per-sample
difference before that comparison (default none), ``rollouts`` an upper bound on
play-outs per decision (``k`` is lowered to fit; default none), ``hands`` how the
other seats' hands are sampled (``discards``, the default: weighted by their rivers,
:mod:`sichuan_agents.search.sampler`; ``uniform``; or, with torch, ``model``, ``shaped`` and
``safe``), ``seed`` the sampler's generator, ``rules`` the rule preset being played (the
arena passes it), ``prior`` the prior (``rules``, ``fitted`` or ``best``; the last two load
torch and the model, ``best`` LightGBM too), ``hu`` a Hu on another seat's tile: ``declare``
(the default: the prior's choice, without search) or ``search`` (searched against passing
and the other answers), ``departures`` a decision where the prior's choice departs from
the rules bot's (Hu declared): ``search`` (the default: a candidate like any other) or
``play`` (played without search: with ``prior=fitted``, the network's own departures --
mostly Hu passed and kongs -- are kept, and the decisions where it agrees with ``rules``
are searched as with the rules prior), ``threads`` how many of numba's threads play the
play-outs (1, the default; the same choices on any number, the time per decision shorter
where cores are free).

Measure it against three ``rules`` bots in the duplicate arena, with its cost per decision::

    python -m sichuan_agents.search.agent --agent search --deals 800 --seed 7331 --rules mil
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_agents.search.candidates import search_candidates
from sichuan_agents.search.rollout import ROLLOUT_POLICIES, play_out
from sichuan_agents.search.sampler import HAND_SAMPLING, sample_states
from sichuan_env.core import engine
from sichuan_env.core.actions import HU
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.state import TURN, State
from sichuan_env.seats.agent import BaseAgent, agents_help, make_agent
from sichuan_env.seats.view import SeatView


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


#: What a Hu on another seat's tile gets: the prior's choice (``declare``) or a search.
HU_CHOICES = ("declare", "search")

#: Priors: ``rules`` (the rules bot), ``fitted`` (the shipped rollout-fitted network for
#: the preset, docs/models.md) or ``best`` (the strongest shipped agent for the preset,
#: :func:`sichuan_agents.models.best.best_agent`). The prior's choice is candidate 0 and the
#: default.
PRIORS = ("rules", "fitted", "best")
#: What becomes of a decision where the prior's choice departs from the rules bot's (Hu
#: declared): a candidate like any other (``search``) or played without search (``play``).
DEPARTURES = ("search", "play")


def pick_column(pts: np.ndarray, z: float, clip: float | None = None) -> int:
    """The column of ``pts`` (samples x candidates, column 0 the prior's choice) to play:
    the best lower bound ``mean(d) - z * se(d)`` of the paired differences ``d`` from
    column 0, when it is above 0; else column 0. With ``clip``, each difference is first
    limited to ``[-clip, clip]`` points, so that a few samples with a large swing (a big
    hand won or paid in one play-out) do not decide alone."""
    d = pts[:, 1:] - pts[:, :1]
    if clip is not None:
        d = np.clip(d, -clip, clip)
    k = pts.shape[0]
    se = d.std(0, ddof=1) / np.sqrt(k) if k > 1 else np.zeros(d.shape[1])
    low = d.mean(0) - z * se
    best = int(np.argmax(low))
    return best + 1 if low[best] > 0 else 0


def _cat(states: list[State]) -> State:
    return State(*(np.concatenate(f) for f in zip(*(s.arrays() for s in states),
                                                      strict=True)), states[0].rules)


class SearchAgent(BaseAgent):
    """Sampled-deal play-outs of the prior's top candidates (see the module docstring)."""

    name = "search"
    needs = "view"

    def __init__(self, seed: int | None = None, *, k: int = 256, top: int = 4,
                 rollout: str = "rules", rollouts: int | None = None, z: float = 1.0,
                 rules: str | Rules | None = "mil", hands: str = "discards",
                 prior: str = "rules", hu: str = "declare", departures: str = "search",
                 threads: int = 1, clip: float | None = None) -> None:
        self.k = _positive_int("k", k)
        self.top = _positive_int("top", top)
        if rollout not in ROLLOUT_POLICIES:
            raise ValueError(f"unknown rollout policy {rollout!r}; known: "
                             f"{', '.join(ROLLOUT_POLICIES)}")
        self.rollout = rollout
        if hands not in HAND_SAMPLING:
            raise ValueError(f"unknown hand sampling {hands!r}; known: "
                             f"{', '.join(HAND_SAMPLING)}")
        self.hands = hands
        self.hand_model: Any = None
        if hands in ("model", "shaped", "safe"):
            from sichuan_agents.search.hand_model import (
                shipped_hand_model,  # torch: loaded only for this
            )

            self.hand_model = shipped_hand_model()
        self.rollouts = None if rollouts is None else _positive_int("rollouts", rollouts)
        if isinstance(z, bool) or not isinstance(z, (int, float)) or not 0 <= z < 100:
            raise ValueError(f"z must be a number in 0..100, got {z!r}")
        self.z = float(z)
        if clip is not None and (isinstance(clip, bool) or not isinstance(clip, (int, float))
                                 or not 0 < clip < 1000):
            raise ValueError(f"clip must be a number of points in (0, 1000), got {clip!r}")
        self.clip = None if clip is None else float(clip)
        self.rules = get_rules(rules)
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        if prior not in PRIORS:
            raise ValueError(f"unknown prior {prior!r}; known: {', '.join(PRIORS)}")
        self.prior_name = prior
        if hu not in HU_CHOICES:
            raise ValueError(f"unknown hu choice {hu!r}; known: {', '.join(HU_CHOICES)}")
        self.hu = hu
        if departures not in DEPARTURES:
            raise ValueError(f"unknown departures choice {departures!r}; known: "
                             f"{', '.join(DEPARTURES)}")
        self.departures = departures
        self.threads = engine.check_threads(threads)
        self.bot = RulesAgent(seed)  # orders the candidates (and is the prior for "rules")
        self.prior: Any = self.bot
        if prior == "fitted":
            from sichuan_agents.models.ppo import PPOAgent  # torch: loaded only for this prior

            self.prior = PPOAgent(kind="fitted", rules=self.rules.preset)
        elif prior == "best":
            from sichuan_agents.models.best import best_agent  # torch (and LightGBM)

            self.prior = best_agent(self.rules.preset)
        self.decisions = 0  # decisions asked (rows of act_batch)
        self.searched = 0  # decisions that ran play-outs
        self.playouts = 0
        self.seconds = 0.0  # wall-clock time spent in act_batch
        #: called as ``on_values(row, candidates, mean_points)`` for every searched row
        #: of ``act_batch`` (the candidates' mean points for the seat over the samples;
        #: training data for a network, ``sichuan_agents.training.search_teacher``)
        self.on_values: Any = None
        self.cpu_seconds = 0.0  # CPU time of the process spent in act_batch

    # ------------------------------------------------------------------ candidates
    def candidates(self, view: SeatView, masks: np.ndarray, prior: np.ndarray,
                   bot: np.ndarray | None = None) -> list[list[int]]:
        """Per row, the candidate actions
        (:func:`sichuan_agents.search.candidates.search_candidates`)."""
        return search_candidates(self.bot, self.top, view, masks, prior, bot)

    # ------------------------------------------------------------------ decisions
    def act_batch(self, views: SeatView, masks: np.ndarray) -> np.ndarray:
        started = time.perf_counter()
        cpu = time.process_time()
        if not isinstance(views, SeatView):
            raise TypeError(f"{type(self).__name__} reads seat views (needs = 'view'), got "
                            f"{type(views).__name__}")
        masks = np.asarray(masks, bool)
        n = masks.shape[0]
        bot = self.bot.act_batch(views, masks)
        hu = masks[:, HU]
        bot_hu = np.where(hu, HU, bot)  # the rules prior always declares a legal Hu
        prior = bot_hu if self.prior is self.bot else self.prior.act_batch(views, masks)
        # (a model prior decides Hu or pass itself: it was fitted to play-outs of both)
        out = prior.copy()
        searched_hu = hu & (views.phase != TURN) if self.hu == "search" else False
        kept = (prior != bot_hu) if self.departures == "play" else False
        ask = np.flatnonzero((masks.sum(1) > 1) & (~hu | searched_hu) & ~kept)
        self.decisions += n
        if ask.size:
            cands = self.candidates(SeatView(*(f[ask] for f in views)), masks[ask], prior[ask],
                                    bot[ask])
            self._search(views, masks, ask, cands, out)
        self.seconds += time.perf_counter() - started
        self.cpu_seconds += time.process_time() - cpu
        return out

    def samples_for(self, n_candidates: int) -> int:
        """Samples per decision with ``n_candidates`` candidates (``k``, lowered to fit
        ``rollouts``)."""
        if self.rollouts is None:
            return self.k
        return max(1, min(self.k, self.rollouts // n_candidates))

    def _search(self, views: SeatView, masks: np.ndarray, ask: np.ndarray,
                cands: list[list[int]], out: np.ndarray) -> None:
        parts: list[State] = []
        firsts: list[np.ndarray] = []
        jobs: list[tuple[int, list[int], int, int]] = []  # row, candidates, samples, offset
        size = 0
        for i, cand in zip(ask.tolist(), cands, strict=True):
            if len(cand) < 2:
                continue
            k = self.samples_for(len(cand))
            st, cand = self.sample(views, i, masks[i], cand, k)
            if len(cand) < 2:
                continue
            c = len(cand)
            parts.append(st.take(np.repeat(np.arange(k), c)))
            firsts.append(np.tile(np.asarray(cand, np.int64), k))
            jobs.append((i, cand, k, size))
            size += k * c
        if not jobs:
            return
        batch = _cat(parts)
        scores = play_out(batch, np.concatenate(firsts), self.rollout, self.threads)
        for i, cand, k, off in jobs:
            me = int(views.seat[i])
            pts = scores[off:off + k * len(cand), me].reshape(k, len(cand)).astype(np.float64)
            out[i] = cand[self.pick(pts)]
            if self.on_values is not None:
                self.on_values(i, cand, pts.mean(0))
        self.searched += len(jobs)
        self.playouts += size

    def sample(self, views: SeatView, i: int, mask: np.ndarray, cand: list[int], k: int
               ) -> tuple[State, list[int]]:
        """``k`` sampled tables for row ``i`` of ``views`` (the agent's sampler and
        generator) and the candidates legal on all of them; each table's rollout key drawn
        from the generator after the samples (when two or more candidates are left)."""
        st = sample_states(views, i, mask, self.rules, k, self.rng, self.hands,
                           self.hand_model)
        legal = st.legal_action_mask[:, cand].all(0)
        cand = [a for a, ok in zip(cand, legal.tolist(), strict=True) if ok]
        if len(cand) >= 2:
            st.key[:] = self.rng.integers(0, 2**63, k, dtype=np.uint64)
        return st, cand

    def pick(self, pts: np.ndarray) -> int:
        """The column of ``pts`` to play (:func:`pick_column` with the agent's ``z`` and
        ``clip``)."""
        return pick_column(pts, self.z, self.clip)

    def reset(self) -> None:
        self.bot.reset()
        if self.prior is not self.bot:
            self.prior.reset()

    def __repr__(self) -> str:
        return (f"SearchAgent(k={self.k}, top={self.top}, rollout={self.rollout!r}, "
                f"rollouts={self.rollouts}, z={self.z}, clip={self.clip}, "
                f"hands={self.hands!r}, "
                f"rules={self.rules.preset!r}, prior={self.prior_name!r}, hu={self.hu!r}, "
                f"departures={self.departures!r}, "
                f"threads={self.threads}, seed={self.seed})")


def _report(spec: str, agent: Any, res: Any, cpu: float, seed: int, preset: str) -> None:
    d = res.pairwise(agent.name, "rules")
    print(f"{spec} - rules: {d['mean']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] "
          f"over {res.deals} deals ({d['units']} walls), seed {seed}, rules {preset}")
    per = agent.seconds / max(1, agent.decisions)
    searched = (f"{agent.seconds / agent.searched:.4f} s per searched decision"
                if agent.searched else "none searched")
    print(f"{agent.decisions} decisions ({agent.searched} searched, {agent.playouts} "
          f"play-outs): {per:.4f} s per decision, {searched} "
          f"({agent.cpu_seconds / max(1, agent.decisions):.4f} CPU s per decision); "
          f"{res.seconds:.0f} s wall, {cpu:.0f} s CPU")


def main(argv: list[str] | None = None) -> int:
    """One search agent against three ``rules`` bots (duplicate arena): the pairwise
    difference with its 95% CI, and the agent's time per decision; with ``--baseline``
    a second search agent on the same walls, and the difference of the two."""
    p = argparse.ArgumentParser(description="A search agent against three rules bots "
                                "(duplicate arena), with its time per decision.")
    p.add_argument("--agent", default="search",
                   help=agents_help("the agent to play (default search)"))
    p.add_argument("--baseline", default=None,
                   help="a second search agent spec played on the same walls; prints "
                        "agent - baseline per wall with its 95%% CI")
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rules", default="mil", help="rule preset: mil or mahjongsoft")
    p.add_argument("--tables", type=int, default=64)
    a = p.parse_args(argv)
    from sichuan_agents.arena import mean_ci, run_arena  # the arena imports every agent module
    from sichuan_agents.search.agent import (
        SearchAgent as Search,  # the class make_agent builds (this
    )
    # file may run as __main__, a module of its own)
    specs = [a.agent] + ([] if a.baseline is None else [a.baseline])
    runs = []
    try:
        if a.deals < 1 or a.tables < 1 or a.seed < 0:
            raise ValueError("--deals and --tables must be >= 1, --seed >= 0")
        rules = get_rules(a.rules)
        agents = [make_agent(spec, seed=a.seed, preset=rules.preset) for spec in specs]
        for spec, agent in zip(specs, agents, strict=True):
            if not isinstance(agent, Search):
                what = "--agent" if spec is a.agent else "--baseline"
                raise ValueError(f"{what} must be a search agent, got {spec!r}")
        for agent in agents:
            cpu = time.process_time()
            res = run_arena([agent, "rules", "rules", "rules"], deals=a.deals, seed=a.seed,
                            rules=rules, tables=a.tables)
            runs.append((agent, res, time.process_time() - cpu))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for spec, (agent, res, cpu) in zip(specs, runs, strict=True):
        _report(spec, agent, res, cpu, a.seed, rules.preset)
    if len(runs) == 2:
        (ag, ra, _), (bg, rb, _) = runs
        d = ((ra.unit_means(ag.name) - ra.unit_means("rules"))
             - (rb.unit_means(bg.name) - rb.unit_means("rules")))
        m, half, _ = mean_ci(d[~np.isnan(d)])
        print(f"{a.agent} - {a.baseline} (same walls): {m:+.3f} [{m - half:+.3f}, "
              f"{m + half:+.3f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())

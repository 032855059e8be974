"""Paired-deal rewards: every deal of the learner also played by a reference in its seat.

The environments (:class:`~sichuan_env.envs.vector.SichuanVecEnv`,
:class:`~sichuan_env.envs.gym_env.SichuanSingleEnv`, the RLlib envs) take ``reference=``: an
agent, or a spec for :func:`sichuan_env.seats.agent.make_agent` (``"rules"``, ``"greedy"``, a
frozen copy of the learner's own policy, ...). When a deal starts, the env copies the
table (wall, hidden tiles, every field of the state); that copy is played to the end with
the reference in the learner's seat and the env's own opponents in the other three.
The learner's per-step rewards stay its points paid and received, and at the deal's end
the reference's points on the copy are subtracted. So

* a deal's return is ``learner's points - reference's points`` on the same wall;
* the reference's result does not depend on the learner's actions, so the subtraction is
  a baseline: the expected policy gradient and the ranking of policies are unchanged,
  while the luck of the wall (who is dealt what) cancels wherever the learner plays like
  the reference;
* the dense per-step signal (a payment right after the move that caused it) is kept:
  subtracting the whole reference total at the end, rather than differences per step,
  needs no alignment of two deals that diverge after the first different choice.

Both players of a pair see the same deal: the copy is made before anyone moves. The
opponents in the reference's deal are the same agents (the same objects, called on the
copy), so deterministic opponents (``rules``, ``greedy``, a greedy policy) make the same
choices wherever the reference makes the learner's; a learner that plays exactly as the
reference gets 0 for every deal. Stochastic opponents draw for the reference's deal from
a stream of their own (the built-in random agent: a generator seeded from the env's seed,
or, in the compiled play-out, each table's own ``key`` stream), so their choices differ
between the two deals: still unbiased, with less variance removed.

When the reference and every opponent are built-in bots (``rules`` with its default
options, ``greedy``, the built-in random agent) the reference's deals are played in one
compiled loop (:func:`sichuan_agents.search.seat_playout.play_out_seats`); otherwise through
:func:`sichuan_env.seats.driver.play_until_learner`, batched. The copies wait until a deal that
needs its result ends, so they are played many at a time.

Not defined, and refused with a ``ValueError``: matches of several deals
(``rules.deals_per_match > 1``), agents that keep state per table (``takes_tables``, the
``exec:`` bots) as reference or opponent, and self-play (every seat a learner).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from sichuan_env.core.rules import Rules
from sichuan_env.core.seeding import agent_seed
from sichuan_env.core.state import State
from sichuan_env.seats.agent import RandomAgent, make_agent
from sichuan_env.seats.driver import (
    agent_label,
    builtin_random_rng,
    opponent_seats,
    play_until_learner,
)

__all__ = ["ReferencePlay", "PairedDeals", "check_reference_rules", "make_paired", "REFERENCE_SALT"]

#: Seed salt of the reference (and of the reference deals' own random opponents).
REFERENCE_SALT = 97


def check_reference_rules(rules: Rules) -> None:
    """``ValueError`` unless ``rules`` end a match after one deal (what paired deals need)."""
    if rules.deals_per_match != 1:
        raise ValueError("reference= (paired-deal rewards) needs rules with deals_per_match=1, "
                         f"got {rules.deals_per_match}")


def _check_agent(agent: Any, role: str) -> None:
    if not hasattr(agent, "act_batch"):
        raise ValueError(f"{role}: an agent has act_batch, got {agent!r}")
    if getattr(agent, "takes_tables", False):
        raise ValueError(f"{role} {agent_label(agent)} keeps state per table (takes_tables); "
                         "paired-deal rewards need agents that decide from their input alone")


class ReferencePlay:
    """Plays deal-start copies to the end with ``reference`` in the learner's seat and
    ``opponents`` (three agents, for the seats after the learner in turn order, as the
    envs take them) in the others (see the module docstring)."""

    def __init__(self, reference: Any, opponents: Sequence[Any], rules: Rules,
                 seed: int | None = None) -> None:
        check_reference_rules(rules)
        if len(opponents) != 3:
            raise ValueError(f"opponents: three agents, got {len(opponents)}")
        for a in opponents:
            _check_agent(a, "opponent")
        self.rules = rules
        self.opponents = list(opponents)
        self._seed = seed
        self._own_random = RandomAgent(agent_seed(seed, REFERENCE_SALT))
        self.reference: Any = None
        self.set_reference(reference)

    def reseed(self, seed: int | None) -> None:
        """Seed the reference deals' own random opponents (the envs call it on a seeded
        reset)."""
        self._seed = seed
        self._own_random = RandomAgent(agent_seed(seed, REFERENCE_SALT))

    def set_reference(self, reference: Any) -> None:
        """The agent (or spec for :func:`~sichuan_env.seats.agent.make_agent`) played in the
        learner's seat from now on."""
        if isinstance(reference, str):
            reference = make_agent(reference, seed=agent_seed(self._seed, REFERENCE_SALT + 1),
                                   preset=self.rules.preset)
        _check_agent(reference, "reference")
        self.reference = reference
        self._policies = self._compiled_policies()

    def _compiled_policies(self) -> list[str] | None:
        """The compiled policies of [reference, *opponents] when there is one for each.

        An agent class offers a compiled twin by naming, in its ``playout_module``
        attribute, a module with ``compiled_policy(agent) -> str | None`` and
        ``play_out_seats(state, policies)`` (the project's bots name
        :mod:`sichuan_agents.search.seat_playout`): this layer loads it by name, as agents
        are loaded by spec, and never imports the agents' package itself."""
        agents = [self.reference, *self.opponents]
        modules = {getattr(type(a), "playout_module", None) for a in agents} - {None}
        if len(modules) != 1:
            return None  # only built-in random agents, or bots of different makers
        self._playout = importlib.import_module(modules.pop())
        out = [self._playout.compiled_policy(a) for a in agents]
        return None if None in out else out

    @property
    def compiled(self) -> bool:
        """Whether the reference's deals are played in the compiled loop."""
        return self._policies is not None

    def play(self, state: State, seats: np.ndarray) -> np.ndarray:
        """(B,) float64: the points of seat ``seats[t]`` (the reference's) at the end of
        the deal of table ``t`` of ``state``, which is played to its end in place."""
        seats = np.asarray(seats, np.intp).reshape(-1)
        B = state.batch_size
        if seats.size != B:
            raise ValueError(f"expected {B} seats, got {seats.size}")
        if not B:
            return np.zeros(0)
        before = state.scores[np.arange(B), seats].astype(np.float64)
        if self._policies is not None:
            ref, opp = self._policies[0], self._policies[1:]
            pos = (np.arange(4)[None, :] - seats[:, None]) % 4 - 1  # -1: the learner's seat
            names = np.array([ref, *opp], dtype=object)[pos + 1]
            scores = self._playout.play_out_seats(state, names)
            return scores[np.arange(B), seats] - before
        opps = [self._own_random if builtin_random_rng(a) is not None else a
                for a in self.opponents]
        agents, seat_agent = opponent_seats(opps, seats)
        seat_agent = np.where(seat_agent < 0, 0, seat_agent + 1)
        paid = play_until_learner(state, seat_agent, [self.reference, *agents],
                                  table_label=lambda t: f"reference deal {t}")
        return paid[np.arange(B), seats]


class PairedDeals:
    """The reference's result of the current deal of each of ``n`` slots (tables or env
    slots): deal-start copies are kept by :meth:`start` and played, all waiting ones
    together, when :meth:`totals` needs one of them."""

    def __init__(self, player: ReferencePlay, n: int) -> None:
        self.player = player
        self._totals = np.full(n, np.nan)
        self._waiting: list[tuple[State, np.ndarray, np.ndarray]] = []

    def clear(self) -> None:
        """Forget every deal (the env was reset)."""
        self._waiting = []
        self._totals[:] = np.nan

    def start(self, batch: State, rows: np.ndarray, slots: np.ndarray,
              seats: np.ndarray) -> None:
        """Tables ``rows`` of ``batch`` (slots ``slots``, learner seats ``seats``) start a
        deal now: keep a copy of each."""
        rows = np.asarray(rows, np.intp).reshape(-1)
        if not rows.size:
            return
        slots = np.asarray(slots, np.intp).reshape(-1)
        self._totals[slots] = np.nan
        self._waiting.append((batch.take(rows), slots.copy(),
                              np.asarray(seats, np.intp).reshape(-1).copy()))

    def flush(self) -> None:
        """Play every waiting copy (one batch)."""
        if not self._waiting:
            return
        parts, self._waiting = self._waiting, []
        if len(parts) == 1:
            st, slots, seats = parts[0]
        else:
            st = State(*(np.concatenate(f) for f in zip(*(p[0].arrays() for p in parts),
                                                          strict=True)), parts[0][0].rules)
            slots = np.concatenate([p[1] for p in parts])
            seats = np.concatenate([p[2] for p in parts])
        self._totals[slots] = self.player.play(st, seats)

    def totals(self, slots: np.ndarray) -> np.ndarray:
        """The reference's points in the current deal of each of ``slots``."""
        slots = np.asarray(slots, np.intp)
        out = self._totals[slots]
        if np.isnan(out).any():
            self.flush()
            out = self._totals[slots]
            if np.isnan(out).any():
                raise RuntimeError("a deal ended that was never started for the reference")
        return out.copy()

    def set_reference(self, reference: Any) -> None:
        """Deals already started are played with the reference they started with; later
        ones with ``reference``."""
        self.flush()
        self.player.set_reference(reference)


def make_paired(reference: Any, opponents: Sequence[Any], rules: Rules, seed: int | None,
                n: int) -> PairedDeals | None:
    """A :class:`PairedDeals` of ``n`` slots, or None when ``reference`` is None."""
    if reference is None:
        return None
    return PairedDeals(ReferencePlay(reference, opponents, rules, seed), n)

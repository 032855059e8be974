"""Many tables as one stable-baselines3 ``VecEnv``, opponents played inside, batched.

>>> from sb3_contrib import MaskablePPO
>>> from sichuan_env.envs.vector import SichuanVecEnv
>>> venv = SichuanVecEnv(256, learner_seats=(0, 1, 2, 3), seed=0)
>>> model = MaskablePPO("MlpPolicy", venv, n_steps=64).learn(100_000)

Layout: ``num_envs = num_tables * len(learner_seats)`` slots, one table per slot, one
learner per table. Slot ``i`` plays table ``i`` from seat ``learner_seats[i // num_tables]``;
the other three seats of that table are played by ``opponents`` (so ``learner_seats=(0, 1,
2, 3)`` gives the learner every seat position, ``num_tables`` tables for each). Every slot is
a genuine single-agent stream: each step of a slot is one decision of its learner seat.

=================  ===========================================================================
item               value
=================  ===========================================================================
observation        ``Box((78, 27), float32)``: :func:`sichuan_env.seats.observation.encode` for the
                   slot's learner seat (planes documented there)
action             ``Discrete(88)``; ``action_masks()`` -> (num_envs, 88) bool, also reached by
                   ``env_method("action_masks")`` (what sb3-contrib's MaskablePPO calls)
reward             the learner seat's points since its previous decision: its own move, the
                   opponents' moves after it and, at the end, the wall-end settlement
done               the slot's match ended (one deal unless ``rules.deals_per_match > 1``); the
                   table starts a new match at once (auto-reset) and the returned observation
                   is the new match's first decision; ``infos[i]["terminal_observation"]``
                   holds the last one and ``infos[i]["episode"] = {"r", "l", "t"}`` the
                   return, number of learner decisions and wall time (SB3 Monitor format);
                   ``infos[i]["final_scores"]`` the match points of the four seats (absolute)
opponents          one agent (all opponent seats) or three (the seats after the learner,
                   counter-clockwise), objects or spec strings (``make_agent`` of
                   :mod:`sichuan_env.seats.agent`); default
                   :class:`~sichuan_env.seats.agent.RandomAgent`
                   (seeded). Their decisions are computed by ``act_batch`` on every table
                   whose current seat is an opponent, repeated until every table waits for
                   its learner
illegal action     a learner action outside the mask raises
                   :class:`~sichuan_env.core.engine.IllegalActionError` naming slot, seat, action
                   and
                   the legal ones (checked with the mask already computed: no extra cost)
seeding            ``seed`` (or ``seed()`` before ``reset()``) fixes every table's walls: table
                   ``i`` gets engine seed ``SeedSequence([seed, num_envs])``'s ``i``-th value
                   (:func:`sichuan_env.core.seeding.vector_table_seeds`; docs/seeding.md), so its
                   deals do not depend on how the tables are batched; the default random
                   opponents are seeded from ``seed`` too
reference          None (default), or an agent or spec (``"rules"``): paired-deal rewards
                   (:mod:`sichuan_env.envs.paired`). Each deal is also played from a copy made at
                   its start with the reference in the learner's seat; the rewards stay the
                   learner's points per step, and the done step's reward has the reference's
                   points subtracted, so an episode's return is learner minus reference on
                   the same wall; ``infos[i]["raw_points"]`` and ``["reference_points"]``
                   hold both totals. :meth:`SichuanVecEnv.set_reference` swaps the agent
                   (e.g. a frozen copy of the learner) for the deals that start later;
                   call :meth:`SichuanVecEnv.flush_references` before changing an opponent
=================  ===========================================================================

Speed: when every opponent is the built-in :class:`~sichuan_env.seats.agent.RandomAgent` (one
object, the default), the learners' moves and all the opponents' rounds of an engine
batch are played in compiled calls (:mod:`sichuan_env.envs.random_rounds`: the same draws,
moves and generator state as the general path; the call returns only when a match ends).
Otherwise the opponents play through :func:`sichuan_env.seats.driver.play_until_learner`: the
engine steps the whole batch in place (the legal masks are kept in the state); tables
waiting for their learner are held (marked finished for the duration of an opponents'
step) and, when more than ``driver.HOLD_LIMIT`` (256) wait, the others are copied into a
smaller batch, finished there and written back. More than ``SHARD_TABLES`` (1024)
tables are kept as several engine batches (stepped one after the other), which is faster
per table than one huge batch. A finished table starts its new match in place. The
observation array of a step is one returned earlier when nobody holds that one any more
(fresh memory of tens of MB costs its page faults on every step); an array the caller
keeps is never written again.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sichuan_env.seats.agent import Agent

try:  # the SB3 adapter needs the ``train`` extra; the rest of sichuan_env does not
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env.base_vec_env import (
        VecEnvIndices,
        VecEnvObs,
        VecEnvStepReturn,
    )
except ImportError as _err:  # pragma: no cover - exercised by a subprocess test
    raise ImportError(
        "sichuan_env.envs.vector (the stable-baselines3 VecEnv) needs stable-baselines3: "
        "pip install 'sichuan-env[train]'"
    ) from _err
from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import opponent_rng, vector_table_seeds
from sichuan_env.core.state import State
from sichuan_env.envs.gym_env import opponent_list
from sichuan_env.envs.paired import make_paired
from sichuan_env.envs.random_rounds import (
    ALL_WAITING,
    FINISHED,
    NO_LEGAL,
    RoundsRunner,
    UniformStream,
)
from sichuan_env.records.render import render_html, render_text
from sichuan_env.seats.driver import (
    HOLD_LIMIT,
    agent_input,
    builtin_random_rng,
    check_actions,
    opponent_seats,
    play_until_learner,
)
from sichuan_env.seats.observation import (
    OBS_SHAPE,
    OBS_VERSION,
    encode,
    fill_observations,
    observation_bounds,
)
from sichuan_env.seats.view import SeatView

SHARD_TABLES = 1024  # tables per engine batch: larger batches run slower per table (cache)


def _unheld(pool: list[np.ndarray], limit: int) -> np.ndarray | None:
    """The first array of ``pool`` with at most ``limit`` references (with ``limit``
    :data:`_UNHELD_REFS`: held by nobody but the pool), else None."""
    for buf in pool:
        if sys.getrefcount(buf) <= limit:
            return buf
    return None


def _refs_of_unheld() -> int:
    """The reference count :func:`_unheld` sees for an array only its pool holds (the
    pool, the loop variable, the call's argument: measured, not assumed)."""
    for buf in [np.empty(0)]:
        return sys.getrefcount(buf)
    raise AssertionError  # pragma: no cover


_UNHELD_REFS = _refs_of_unheld()


class SichuanVecEnv(VecEnv):
    """See the module docstring."""

    metadata = {"render_modes": ["human", "ansi"], "observation_version": OBS_VERSION}

    def __init__(
        self,
        num_tables: int,
        rules: Rules | str | None = None,
        learner_seats: Sequence[int] | int = (0,),
        opponents: Agent | str | Sequence[Agent | str] | None = None,
        seed: int | None = 0,
        render_mode: str | None = None,
        reference: Agent | str | None = None,
    ) -> None:
        if int(num_tables) < 1:
            raise ValueError(f"num_tables must be >= 1, got {num_tables}")
        if isinstance(learner_seats, int | np.integer):
            learner_seats = (int(learner_seats),)
        seats = tuple(int(s) for s in learner_seats)
        if not seats or any(s not in (0, 1, 2, 3) for s in seats) or len(set(seats)) != len(
            seats
        ):
            raise ValueError(f"learner_seats must be distinct seats 0..3, got {learner_seats}")
        self.rules = get_rules(rules)
        self.num_tables = int(num_tables)
        self.learner_seats = seats
        self.render_mode = render_mode
        self.opponents = opponent_list(opponents, seed, self.rules.preset)
        self._default_opponents = opponents is None
        n = self.num_tables * len(seats)
        self.learner = np.repeat(np.array(seats, np.int8), self.num_tables)  # (n,) seat/slot
        self._slots = np.arange(n)
        low, high = observation_bounds()
        super().__init__(n, spaces.Box(low, high, dtype=np.float32), spaces.Discrete(N_ACTIONS))
        self._base_seed = seed
        self._shard_size = size = SHARD_TABLES
        self._shards = [slice(a, min(a + size, n)) for a in range(0, n, size)]
        self._states: list[State] = []
        self._mask = np.zeros((n, N_ACTIONS), bool)
        self._acc = np.zeros(n, np.float64)  # learner points since its last decision
        self._final = np.zeros(n, np.float64)  # episode-final reward of slots done this step
        self._ep_ret = np.zeros(n, np.float64)
        self._ep_len = np.zeros(n, np.int64)
        self._ep_start = np.zeros(n, np.float64)
        self._actions: np.ndarray | None = None
        self._runners: list[RoundsRunner] = []
        self._seat_maps: dict[tuple, tuple[list, np.ndarray]] = {}  # opponent_seats per shard
        self._obs_pool: list[np.ndarray] = []  # observation arrays nobody else holds are reused
        self._draw_hint = n * N_ACTIONS * 4  # first block of the random opponents' draws
        self._t0 = time.perf_counter()
        self._paired = make_paired(reference, self.opponents, self.rules, seed, n)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> VecEnvObs:
        base = self._seeds[0] if self._seeds[0] is not None else self._base_seed
        if base is None:
            base = int(np.random.SeedSequence().entropy % (2**62))
        n = self.num_envs
        seeds = vector_table_seeds(base, n)
        self._states = [engine.reset(seeds[sl], self.rules) for sl in self._shards]
        self._runners = []
        if self._paired is not None:
            self._paired.clear()
            self._paired.player.reseed(base)
            for st, sl in zip(self._states, self._shards, strict=True):
                self._paired.start(st, np.arange(st.batch_size), self._slots[sl],
                                   self.learner[sl])
        if self._default_opponents:  # the default random opponents follow the seed
            self.opponents[0].rng = opponent_rng(base)
        self._reset_seeds()
        self._reset_options()
        self._acc[:] = 0
        self._ep_ret[:] = 0
        self._ep_len[:] = 0
        self._ep_start[:] = time.perf_counter()
        for a in {id(a): a for a in self.opponents}.values():
            if hasattr(a, "reset"):
                a.reset()
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        dones = np.zeros(n, bool)
        if not self._compiled_rounds(None, dones, infos):
            for k, sl in enumerate(self._shards):
                self._mask[sl] = self._run(self._states[k], self.learner[sl], self._slots[sl],
                                           dones, infos)
        self.reset_infos = [{} for _ in range(n)]
        return self._observe()

    def step_async(self, actions: np.ndarray) -> None:
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers 0..{N_ACTIONS - 1} (one per slot), "
                            f"got {a.dtype} {a.shape}")
        self._actions = a.astype(np.int64).reshape(-1)

    def step_wait(self) -> VecEnvStepReturn:
        if not self._states:
            raise RuntimeError("call reset() before step()")
        a = self._actions
        n = self.num_envs
        if a is None or a.shape != (n,):
            raise ValueError(f"expected {n} actions, got {None if a is None else a.shape}")
        self._actions = None
        check_actions(a, self._mask, self._slots, self.learner, who="the learner",
                      table_label=lambda t: f"slot {t}")
        self._ep_len += 1
        dones = np.zeros(n, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        if not self._compiled_rounds(a, dones, infos):
            for k, sl in enumerate(self._shards):
                st, L = self._states[k], self.learner[sl]
                _, r, _ = engine.step(st, a[sl], inplace=True)
                self._acc[sl] += r[np.arange(st.batch_size), L]
                self._mask[sl] = self._run(st, L, self._slots[sl], dones, infos)
        rewards = np.where(dones, self._final, self._acc).astype(np.float32)
        self._acc[~dones] = 0.0
        self._ep_ret[~dones] += rewards[~dones]
        return self._observe(), rewards, dones, infos

    def close(self) -> None:
        self._states = []

    @property
    def state(self) -> State | None:
        """The engine state of every table (slot ``i`` = table ``i``), for inspection.

        With more than ``SHARD_TABLES`` tables the env keeps several engine batches and
        this is a concatenated copy; changing it changes nothing."""
        if not self._states:
            return None
        if len(self._states) == 1:
            return self._states[0]
        arrays = zip(*(st.arrays() for st in self._states), strict=True)
        return State(*(np.concatenate(a) for a in arrays), self.rules)

    def _table(self, i: int) -> tuple[State, int]:
        if not self._states:
            raise RuntimeError("call reset() first")
        return self._states[i // self._shard_size], i % self._shard_size

    def learner_inputs(self, agent: Agent) -> np.ndarray | SeatView:
        """What ``agent`` needs (planes, a seat view or the placeholder; see
        :mod:`sichuan_env.seats.driver`) for the learner seat of every slot, in slot order: what
        a teacher bot reads to label the learner's decisions."""
        if not self._states:
            raise RuntimeError("call reset() first")
        parts = [agent_input(agent, st, self.learner[sl].astype(np.intp),
                             np.arange(st.batch_size))
                 for st, sl in zip(self._states, self._shards, strict=True)]
        if len(parts) == 1:
            return parts[0]
        if isinstance(parts[0], SeatView):
            return SeatView(*(np.concatenate(f) for f in zip(*parts, strict=True)))
        return np.concatenate(parts)

    def set_reference(self, reference: Agent | str) -> None:
        """Paired-deal rewards: the agent (or spec) that plays the learner's seat in the
        deals that start from now on (deals already started keep theirs); e.g. a frozen
        copy of the learner's policy, refreshed by the trainer. ``ValueError`` when the
        env was built without ``reference=``."""
        if self._paired is None:
            raise ValueError("this env has no paired-deal rewards (build it with reference=)")
        self._paired.set_reference(reference)

    def flush_references(self) -> None:
        """Play the reference deals waiting now (they are played in batches when a deal
        that needs one ends, with the opponents as they are then): call it before changing
        an opponent (a self-play snapshot refreshed), so that every deal's reference play
        meets the opponents its learner met. Nothing without ``reference=``."""
        if self._paired is not None:
            self._paired.flush()

    @property
    def reference(self) -> Agent | None:
        """The reference agent of the paired-deal rewards, or None."""
        return None if self._paired is None else self._paired.player.reference

    def action_masks(self) -> np.ndarray:
        """(num_envs, 88) bool: each slot's legal actions now."""
        return self._mask.copy()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Per-slot values for ``learner_seat`` and ``action_masks`` (a callable per slot);
        any other attribute of this object, repeated for each slot."""
        idx = list(self._get_indices(indices))
        if attr_name == "learner_seat":
            return [int(self.learner[i]) for i in idx]
        if attr_name == "action_masks":
            return [lambda i=i: self._mask[i].copy() for i in idx]
        if attr_name == "render_mode" and not hasattr(self, "render_mode"):
            return [None] * len(idx)
        value = getattr(self, attr_name)
        return [value] * len(idx)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Sets the attribute on this object (shared by every slot)."""
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs
    ) -> list[Any]:
        """``action_masks`` (per slot, what MaskablePPO calls) and ``render`` (text of each
        slot's table from its learner's view); any other method of this object is called
        once and its result repeated per slot."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return [self._mask[i] for i in idx]
        if method_name == "render":
            return [self.render_slot(i) for i in idx]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs

    def render(self, mode: str | None = None) -> str | None:  # type: ignore[override]
        """Text of slot 0's table (``"ansi"`` returns it, ``"human"`` prints it)."""
        mode = mode or self.render_mode
        if mode is None or not self._states:
            return None
        text = self.render_slot(0)
        if mode == "human":
            print(text)
            return None
        return text

    def render_slot(self, i: int, ascii: bool = False) -> str:
        """Text of slot ``i``'s table as its learner sees it."""
        st, t = self._table(i)
        return render_text(st, t, viewer=int(self.learner[i]), ascii=ascii)

    def _repr_html_(self) -> str:
        if not self._states:
            return "<i>SichuanVecEnv: not reset</i>"
        return render_html(self._states[0], 0, viewer=int(self.learner[0]))

    # ------------------------------------------------------------------ internals
    def _observe(self) -> np.ndarray:
        out = self._free_observation_array()
        for st, sl in zip(self._states, self._shards, strict=True):
            fill_observations(st, self.learner[sl].astype(np.intp), np.arange(st.batch_size),
                              out[sl])
        return out

    def _free_observation_array(self) -> np.ndarray:
        """A (num_envs, 78, 27) float32 array for the next observations (every row gets
        written): one returned earlier that nobody holds any more (no reference but the
        pool's: not the caller, not a view of it, not a tensor sharing its memory), else a
        new one. Fresh memory of tens of MB costs its page faults (zeroing) on every step."""
        buf = _unheld(self._obs_pool, _UNHELD_REFS)
        if buf is not None:
            return buf
        buf = np.empty((self.num_envs, *OBS_SHAPE), np.float32)
        if len(self._obs_pool) < 3:
            self._obs_pool.append(buf)
        return buf

    def _finish(self, st: State, rows: np.ndarray, seats: np.ndarray, sl: np.ndarray,
                dones: np.ndarray, infos: list[dict[str, Any]]) -> None:
        """Tables ``rows`` of ``st`` (slots ``sl``, learner seats ``seats``) finished their
        match: record the terminal observation and episode, then start a new match on
        them."""
        term = encode(st, seats, rows)
        now = time.perf_counter()
        final = self._acc[sl].copy()
        scores = st.match_scores[rows].tolist()
        if self._paired is not None:
            ref = self._paired.totals(sl)
            raw = self._ep_ret[sl] + final
            final -= ref
        for j, s in enumerate(sl.tolist()):
            infos[s]["terminal_observation"] = term[j]
            infos[s]["final_scores"] = scores[j]
            if self._paired is not None:
                infos[s]["raw_points"] = float(raw[j])
                infos[s]["reference_points"] = float(ref[j])
            infos[s]["episode"] = {
                "r": float(self._ep_ret[s] + final[j]),
                "l": int(self._ep_len[s]),
                "t": round(now - self._t0, 6),
            }
        self._final[sl] = final
        dones[sl] = True
        self._acc[sl] = 0.0
        self._ep_ret[sl] = 0.0
        self._ep_len[sl] = 0
        self._new_matches(st, rows)
        if self._paired is not None:
            self._paired.start(st, rows, sl, seats)

    @staticmethod
    def _new_matches(st: State, rows: np.ndarray) -> None:
        engine.new_matches(st, rows)  # in place: what engine.reset_done does to each

    def _compiled_rounds(self, actions: np.ndarray | None, dones: np.ndarray,
                         infos: list[dict[str, Any]]) -> bool:
        """When every opponent is the built-in random agent: the learners' moves
        ``actions`` (None: none, after a reset) and then the opponents' rounds of every
        engine batch, each in compiled calls (:mod:`sichuan_env.envs.random_rounds`: the same
        draws and moves as :meth:`_run`). Returns False (doing nothing) otherwise."""
        opps = self.opponents
        rng = builtin_random_rng(opps[0]) if opps[0] is opps[1] is opps[2] else None
        if rng is None:
            return False
        if len(self._runners) != len(self._states):
            self._runners = [RoundsRunner(st) for st in self._states]
        stream = UniformStream(rng, self._draw_hint)
        try:
            for k, sl in enumerate(self._shards):
                st, runner = self._states[k], self._runners[k]
                L, slots = self.learner[sl], self._slots[sl]
                first = None if actions is None else actions[sl]
                while True:
                    status, detail = runner.run(stream, L, self._acc[sl], first)
                    first = None
                    if status == ALL_WAITING:
                        break
                    if status == FINISHED:
                        done = np.flatnonzero(st.done)
                        self._finish(st, done, L[done], slots[done], dones, infos)
                    elif status == NO_LEGAL:
                        raise ValueError(f"slot {int(slots[detail])}: the seat to act has no "
                                         "legal action")
                    else:  # pragma: no cover - sized for the rules
                        raise RuntimeError("engine step log overflow (or automatic moves "
                                           "that did not settle)")
                self._mask[sl] = st.legal_action_mask
        finally:
            stream.close()
        self._draw_hint = stream.used + stream.used // 8 + 64 * N_ACTIONS
        return True

    def _run(self, st: State, L: np.ndarray, slots: np.ndarray, dones: np.ndarray,
             infos: list[dict[str, Any]]) -> np.ndarray:
        """Play opponents on ``st`` (tables = ``slots``, learner seats ``L``) until every
        table waits for its learner (:func:`sichuan_env.seats.driver.play_until_learner`, a
        finished table recorded and restarted before each round); returns the legal masks
        then."""
        key = (*map(id, self.opponents), L.tobytes())
        seats = self._seat_maps.get(key)
        if seats is None:  # the opponents of each table's seats, kept while they stay
            if len(self._seat_maps) >= len(self._shards):
                self._seat_maps.clear()
            seats = self._seat_maps[key] = opponent_seats(self.opponents, L)
        agents, seat_agent = seats
        paid = np.zeros((st.batch_size, 4), np.float64)

        def finished(batch: State, rows: np.ndarray, tables: np.ndarray) -> None:
            self._acc[slots[tables]] += paid[tables, L[tables]]
            paid[tables] = 0.0
            self._finish(batch, rows, L[tables], slots[tables], dones, infos)

        play_until_learner(st, seat_agent, agents, rewards=paid, finished=finished,
                           hold_limit=HOLD_LIMIT, table_label=lambda t: f"slot {int(slots[t])}")
        self._acc[slots] += paid[np.arange(st.batch_size), L]
        return st.legal_action_mask

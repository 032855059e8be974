"""Ray RLlib (new API stack) environments over the batched engine.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``); nothing else in ``sichuan_env``
imports this module or Ray.

>>> from sichuan_env.envs.rllib import SichuanMultiAgentEnv, SichuanEnvRunner
>>> env = SichuanMultiAgentEnv({"rules": "mil"})          # one table, RLlib MultiAgentEnv
>>> obs, infos = env.reset(seed=0)                         # {"player_0": {...}}

Layout: **one RLlib episode per table and match**, with the four seats as the agents
``player_0`` .. ``player_3`` (as in the AEC env). Many tables per env runner are stepped in
one engine batch by :class:`SichuanVectorEnv`, a ``VectorMultiAgentEnv`` whose sub-env ``i``
is table ``i``; :class:`SichuanEnvRunner` is RLlib's ``MultiAgentEnvRunner`` building that
batched env instead of a loop over one-table envs (``config.env_runners(env_runner_cls=
SichuanEnvRunner, num_envs_per_env_runner=TABLES)``). RLlib's episodes, GAE and metrics
then see ordinary four-agent turn-based episodes, while the engine, the opponents' moves
and the observation planes run batched over all the runner's tables.

=================  ===========================================================================
item               value
=================  ===========================================================================
agents             the seats played by RLlib modules: all four (self-play, ``opponents``
                   None: map them to one shared module with ``policy_mapping_fn``), or one
                   learner seat per table (``learner_seats``, given to tables in turn) with
                   the three other seats played inside the env, batched, by ``opponents``
observation        ``Dict(observations=Box((78 + K, 27), float32), action_mask=Box(0, 1,
                   (88,), float32))`` for the seat to decide only (turn-based):
                   :func:`sichuan_env.seats.observation.encode` for that seat, followed by the K
                   planes of ``features`` (a callable ``(N, 78, 27) -> (N, K, 27)`` computed
                   from the observation alone, e.g.
                   ``sichuan_agents.training.features.analysis_planes``;
                   default none, K = 0)
action             ``Discrete(88)``; the mask marks the legal ones
reward             every step, the points each agent seat paid (negative) and received in
                   that step (in bot mode, bot moves included); a seat is listed when it
                   paid or received points or gets an observation (0.0), an absent seat got
                   nothing. The rewards of a self-play step sum to the step's payments (zero
                   except the flower-pig penalty). RLlib adds the rewards of a seat that does
                   not act to its next decision
termination        ``__all__`` when the table's match ends (one deal unless
                   ``rules.deals_per_match > 1``), with a last observation for every agent
                   seat; no truncation
illegal action     ``illegal="raise"``: :class:`~sichuan_env.core.engine.IllegalActionError`
                   (nothing changes). ``"random_legal"`` (default; what RLlib's environment
                   pre-check needs, since it feeds unmasked random actions): a uniformly
                   random legal action is played instead and ``infos[agent]
                   ["illegal_action"]`` holds the action given. ``"penalty"``: the same, and
                   the seat is also charged ``illegal_penalty`` points (paid to nobody, so
                   that step's rewards no longer sum to the payments). A masked policy never
                   chooses an illegal action, so training is unaffected
seeding            one-table env: ``reset(seed=s)`` deals the wall of engine seed ``s`` (as
                   the AEC env and ``engine.reset([s])``); a later ``reset()`` starts the
                   table's next match (``engine.reset_done``). Vector env: ``reset(seed=s)``
                   gives table ``i`` engine seed ``s + i`` (RLlib's rule for vector sub-envs:
                   sub-env ``i`` gets ``seed + i``), and a finished table starts its next
                   match at the following step (``next_step`` autoreset), so table ``i``
                   plays exactly the deals of the one-table env seeded ``s + i``.
                   :class:`SichuanEnvRunner` seeds runner ``w`` with ``seed + w * tables``
                   so runners never share walls
=================  ===========================================================================

Env config keys (``config.environment(env_config={...})`` or the constructors' ``config``):
``rules`` (``"mil"``), ``learner_seats`` (``(0, 1, 2, 3)``), ``opponents`` (None: self-play;
an agent, a list of three agents for the seats after the learner, or a zero-argument
callable returning one of those, built once per env runner - use a callable for bots that
should not be pickled - or agent specs for :func:`sichuan_env.seats.agent.make_agent`, one or
three comma-separated, e.g. ``"greedy"``), ``features`` (None), ``illegal`` (``"random_legal"``),
``illegal_penalty`` (1.0), ``seed`` (the one-table env's first deal when ``reset()`` gets
no seed), ``reference`` (None; an agent or spec: paired-deal rewards,
:mod:`sichuan_env.envs.paired`:
each deal is also played from a copy made at its start with the reference in the learner
seat, and the step that ends the deal has the reference's points subtracted from the learner
seat's reward, ``infos[agent]["reference_points"]`` holding them; learner-seat mode only,
self-play raises ``ValueError``; ``tables.set_reference`` swaps the agent for later deals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numba
import numpy as np
from ray.rllib.callbacks.utils import make_callback
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
from ray.rllib.utils.metrics import (
    NUM_AGENT_STEPS_SAMPLED,
    NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES,
    NUM_EPISODES_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED,
    NUM_MODULE_STEPS_SAMPLED_LIFETIME,
)
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import State
from sichuan_env.envs.paired import PairedDeals, make_paired
from sichuan_env.seats.driver import check_actions, legal_in, opponent_seats, play_until_learner
from sichuan_env.seats.observation import OBS_SHAPE, encode, observation_bounds

AGENT_IDS = ("player_0", "player_1", "player_2", "player_3")
ILLEGAL_MODES = ("raise", "random_legal", "penalty")
_SEAT = {a: s for s, a in enumerate(AGENT_IDS)}
_MAX_BOT_MOVES = 10_000


def _opponents(spec: Any, seed: int | None = None, preset: str | None = None) -> list | None:
    """None, or three agents (for the seats after the learner) from the config value;
    agents given by spec strings get the rule ``preset`` being played."""
    if spec is None:
        return None
    if isinstance(spec, str):  # agent specs for sichuan_env.seats.agent.make_agent
        from sichuan_env.seats.agent import seat_agents

        built = seat_agents([n.strip() for n in spec.split(",") if n.strip()], seed, preset)
        spec = [built.agents[k] for k in built.seat_agent]
    if callable(spec) and not hasattr(spec, "act_batch"):
        spec = spec()
    if hasattr(spec, "act_batch"):
        return [spec] * 3
    opp = list(spec)
    if len(opp) == 1:
        opp = opp * 3
    if len(opp) != 3 or not all(hasattr(a, "act_batch") for a in opp):
        raise ValueError("opponents must be an agent or three agents (objects with act_batch)")
    return opp


class TableBatch:
    """Many tables in one engine batch, turned into per-table RLlib dicts.

    The stepping logic shared by :class:`SichuanMultiAgentEnv` (one table) and
    :class:`SichuanVectorEnv` (many); see the module docstring for the conventions.
    """

    def __init__(self, num_tables: int, config: dict[str, Any] | None = None) -> None:
        config = dict(config or {})
        known = {"rules", "learner_seats", "opponents", "features", "illegal",
                 "illegal_penalty", "seed", "num_features", "reference"}
        unknown = set(config) - known
        if unknown:
            raise ValueError(f"unknown env config keys {sorted(unknown)}; known: {sorted(known)}")
        if int(num_tables) < 1:
            raise ValueError(f"num_tables must be >= 1, got {num_tables}")
        self.num_tables = int(num_tables)
        self.rules = get_rules(config.get("rules"))
        self.illegal = config.get("illegal", "random_legal")
        if self.illegal not in ILLEGAL_MODES:
            raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {self.illegal!r}")
        self.illegal_penalty = float(config.get("illegal_penalty", 1.0))
        self.features: Callable[[np.ndarray], np.ndarray] | None = config.get("features")
        self.opponents = _opponents(config.get("opponents"), config.get("seed"),
                                    self.rules.preset)
        seats = config.get("learner_seats", (0, 1, 2, 3))
        seats = (int(seats),) if isinstance(seats, int | np.integer) else tuple(
            int(s) for s in seats)
        if not seats or any(s not in range(4) for s in seats) or len(set(seats)) != len(seats):
            raise ValueError(f"learner_seats must be distinct seats 0..3, got {seats}")
        self.learner_seats = seats
        n = self.num_tables
        # agent_seat[t, s]: seat s of table t is played by RLlib (else by a bot)
        if self.opponents is None:
            self.learner = np.full(n, -1, np.intp)
            self.agent_seat = np.ones((n, 4), bool)
        else:
            self.learner = np.array([seats[t % len(seats)] for t in range(n)], np.intp)
            self.agent_seat = np.zeros((n, 4), bool)
            self.agent_seat[np.arange(n), self.learner] = True
            # the bots of each table's seats (-1: the RLlib seat)
            self._bots, self._seat_bot = opponent_seats(self.opponents, self.learner)
        self.num_extra_planes = int(config.get("num_features", 0) or 0)
        if self.features is not None and not self.num_extra_planes:
            probe = self.features(np.zeros((1, *OBS_SHAPE), np.float32))
            self.num_extra_planes = int(probe.shape[1])
        low, high = observation_bounds()
        if self.num_extra_planes:
            k = self.num_extra_planes
            low = np.concatenate([low, np.zeros((k, 27), np.float32)])
            high = np.concatenate([high, np.ones((k, 27), np.float32)])
        self.observation_space = gym.spaces.Dict({
            "observations": gym.spaces.Box(low, high, dtype=np.float32),
            "action_mask": gym.spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32),
        })
        self.action_space = gym.spaces.Discrete(N_ACTIONS)
        self.state: State | None = None
        self.mask = np.zeros((n, N_ACTIONS), bool)
        self.rng = np.random.default_rng(config.get("seed"))
        self.illegal_count = 0
        self.paired: PairedDeals | None = None
        if config.get("reference") is not None:
            if self.opponents is None:
                raise ValueError("reference (paired-deal rewards) needs one learner seat per "
                                 "table ('opponents' given); self-play is not supported")
            self.paired = make_paired(config["reference"], self.opponents, self.rules,
                                      config.get("seed"), n)

    # ------------------------------------------------------------------ reset
    def reset_tables(self, seeds: np.ndarray) -> None:
        """Deal every table from its engine seed and play bot seats up to an agent."""
        self.state = engine.reset(np.asarray(seeds, np.int64), self.rules)
        for a in {id(a): a for a in self.opponents or ()}.values():
            if hasattr(a, "reset"):
                a.reset()
        if self.paired is not None:
            rows = np.arange(self.num_tables)
            self.paired.clear()
            self.paired.player.reseed(int(np.asarray(seeds).reshape(-1)[0]))
            self.paired.start(self.state, rows, rows, self.learner)
        rewards = np.zeros((self.num_tables, 4), np.float64)
        self.mask = self._play_bots(np.arange(self.num_tables), rewards)

    def next_match(self, rows: np.ndarray, rewards: np.ndarray) -> None:
        """Tables ``rows`` (finished) start their next match; bots play up to an agent."""
        st = self.state
        st.put_rows(rows, engine.reset_done(st.take(rows)))
        if self.paired is not None:
            self.paired.start(st, rows, rows, self.learner[rows])
        self.mask[rows] = self._play_bots(rows, rewards)

    # ------------------------------------------------------------------ step
    def apply(self, rows: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
              infos: list[dict[str, Any]]) -> None:
        """Play ``actions`` on tables ``rows`` (live, waiting for an agent) for their current
        seat, then the bots up to the next agent decision; points go to ``rewards``
        (num_tables, 4)."""
        if not rows.size:
            return
        st = self.state
        actions = np.asarray(actions, np.int64)
        ok = legal_in(actions, self.mask[rows])
        if not ok.all():
            bad = np.flatnonzero(~ok)
            if self.illegal == "raise":  # the driver's one check and message
                check_actions(actions, self.mask[rows], rows, st.current[rows], who="RLlib")
            actions = actions.copy()
            for j in bad.tolist():
                t = int(rows[j])
                seat = int(st.current[t])
                infos[t].setdefault(AGENT_IDS[seat], {})["illegal_action"] = int(actions[j])
                actions[j] = int(self.rng.choice(np.flatnonzero(self.mask[t])))
                if self.illegal == "penalty":
                    rewards[t, seat] -= self.illegal_penalty
            self.illegal_count += bad.size
        full = rows.size == self.num_tables
        sub = st if full else st.take(rows)
        _, r, _ = engine.step(sub, actions, inplace=True)
        rewards[rows] += r
        if not full:
            st.put_rows(rows, sub)
        self.mask[rows] = self._play_bots(rows, rewards)
        if self.paired is not None:
            self.pair_ends(rows[st.done[rows]], rewards, infos)

    def pair_ends(self, rows: np.ndarray, rewards: np.ndarray,
                  infos: list[dict[str, Any]] | None) -> np.ndarray:
        """Paired-deal rewards: tables ``rows`` ended their deal; the reference's points on
        them are subtracted from the learner seats' ``rewards`` (and put into
        ``infos[t][agent]["reference_points"]``); returns those points."""
        if self.paired is None or not rows.size:
            return np.zeros(rows.size)
        ref = self.paired.totals(rows)
        seats = self.learner[rows]
        rewards[rows, seats] -= ref
        if infos is not None:
            for t, s, v in zip(rows.tolist(), seats.tolist(), ref.tolist(), strict=True):
                infos[t].setdefault(AGENT_IDS[s], {})["reference_points"] = v
        return ref

    def set_reference(self, reference: Any) -> None:
        """The agent (or spec) of the reference deals that start from now on."""
        if self.paired is None:
            raise ValueError("this env has no paired-deal rewards (env config 'reference')")
        self.paired.set_reference(reference)

    def _play_bots(self, rows: np.ndarray, rewards: np.ndarray) -> np.ndarray:
        """Bots move on tables ``rows`` until each is finished or waits for an agent seat
        (:func:`sichuan_env.seats.driver.play_until_learner`, on a copy of those tables when they
        are not all; their points go to ``rewards``); returns their legal masks then."""
        if self.opponents is None:  # self-play: every seat is an agent's
            return self.state.legal_action_mask[rows]
        if rows.size == self.num_tables:
            play_until_learner(self.state, self._seat_bot, self._bots, rewards=rewards,
                               max_moves=_MAX_BOT_MOVES)
            return self.state.legal_action_mask.copy()
        sub, paid = self.state.take(rows), rewards[rows]
        play_until_learner(sub, self._seat_bot[rows], self._bots, rewards=paid,
                           table_label=lambda t: f"table {int(rows[t])}",
                           max_moves=_MAX_BOT_MOVES)
        self.state.put_rows(rows, sub)
        rewards[rows] = paid
        return sub.legal_action_mask.copy()

    # ------------------------------------------------------------------ outputs
    def observe(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """(n, 78 + K, 27) observations of ``seats`` at tables ``rows``."""
        planes = encode(self.state, seats, rows)
        if self.features is not None and rows.size:
            planes = np.concatenate([planes, self.features(planes)], axis=1)
        return planes

    def outputs(self, rows: np.ndarray, rewards: np.ndarray, with_rewards: bool = True):
        """Per-table RLlib dicts for tables ``rows``: observations (the seat to decide, or
        every agent seat of a finished table), rewards of the agent seats, terminations."""
        st = self.state
        done = st.done[rows]
        ask_rows = rows[~done]
        fin_rows = rows[done]
        seats = st.current[ask_rows].astype(np.intp)
        fin_pairs = [(t, s) for t in fin_rows.tolist() for s in np.flatnonzero(
            self.agent_seat[t]).tolist()]
        all_rows = np.concatenate([ask_rows, np.array([p[0] for p in fin_pairs], np.intp)])
        all_seats = np.concatenate([seats, np.array([p[1] for p in fin_pairs], np.intp)])
        planes = self.observe(all_rows, all_seats)
        masks = np.zeros((all_rows.size, N_ACTIONS), np.float32)
        masks[: ask_rows.size] = self.mask[ask_rows]
        obs: dict[int, dict[str, Any]] = {int(t): {} for t in rows.tolist()}
        for j, (t, s) in enumerate(zip(all_rows.tolist(), all_seats.tolist(), strict=True)):
            obs[t][AGENT_IDS[s]] = {"observations": planes[j], "action_mask": masks[j]}
        rew: dict[int, dict[str, float]] = {}
        term: dict[int, dict[str, bool]] = {}
        done_of = dict(zip(rows.tolist(), done.tolist(), strict=True))
        if with_rewards:
            paid = (rewards[rows] != 0) & self.agent_seat[rows]
            for t, seats_paid in zip(rows.tolist(), paid.tolist(), strict=True):
                r = {a: 0.0 for a in obs[t]}  # RLlib needs one for an agent it observes
                for s, p in enumerate(seats_paid):
                    if p:
                        r[AGENT_IDS[s]] = float(rewards[t, s])
                rew[t] = r
        for t in rows.tolist():
            term[t] = {"__all__": done_of[t]}
        return obs, rew, term


class SichuanMultiAgentEnv(MultiAgentEnv):
    """One table as an RLlib ``MultiAgentEnv`` (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.tables = TableBatch(1, config)
        self.possible_agents = list(AGENT_IDS)
        self.agents = [a for s, a in enumerate(AGENT_IDS) if self.tables.agent_seat[0, s]]
        self.observation_spaces = {a: self.tables.observation_space for a in AGENT_IDS}
        self.action_spaces = {a: self.tables.action_space for a in AGENT_IDS}
        self._seed = (config or {}).get("seed")
        self._rows = np.zeros(1, np.intp)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        tb = self.tables
        if seed is not None or tb.state is None:
            s = seed if seed is not None else self._seed
            if s is None:
                s = int(np.random.SeedSequence().entropy % (2**62))
            tb.rng = np.random.default_rng([int(s), 3])
            tb.reset_tables(np.array([int(s)]))
        else:
            tb.next_match(self._rows, np.zeros((1, 4)))
        obs, _, _ = tb.outputs(self._rows, None, with_rewards=False)
        return obs[0], {}

    def step(self, action_dict: dict[str, Any]):
        tb = self.tables
        if tb.state is None:
            raise RuntimeError("call reset() before step()")
        if tb.state.done[0]:
            raise RuntimeError("the match is over: call reset()")
        rewards = np.zeros((1, 4), np.float64)
        infos: list[dict[str, Any]] = [{}]
        action = _table_action(action_dict, int(tb.state.current[0]), 0)
        tb.apply(self._rows, np.array([action]), rewards, infos)
        obs, rew, term = tb.outputs(self._rows, rewards)
        return obs[0], rew[0], dict(term[0]), {"__all__": False}, infos[0]

    def render(self) -> None:
        return None


def _table_action(action_dict: dict[str, Any], seat: int, table: int) -> int:
    agent = AGENT_IDS[seat]
    if agent not in action_dict or len(action_dict) != 1:
        raise ValueError(f"table {table}: expected one action for {agent} (the seat to "
                         f"decide), got {sorted(action_dict)}")
    return int(action_dict[agent])


class _TableView(MultiAgentEnv):
    """What RLlib reads from a sub-env of :class:`SichuanVectorEnv`: spaces and agent ids."""

    def __init__(self, tables: TableBatch) -> None:
        super().__init__()
        self.possible_agents = list(AGENT_IDS)
        self.agents = list(AGENT_IDS)
        self.observation_spaces = {a: tables.observation_space for a in AGENT_IDS}
        self.action_spaces = {a: tables.action_space for a in AGENT_IDS}


class SichuanVectorEnv(VectorMultiAgentEnv):
    """``num_tables`` tables as RLlib's vectorised multi-agent env, stepped batched.

    Sub-env ``i`` is table ``i``; inputs and outputs are lists of per-table dicts, as
    RLlib's ``SyncVectorMultiAgentEnv`` (``next_step`` autoreset: a table whose match ended
    starts its next one at the following ``step``, which returns its reset observation).
    """

    metadata = {"autoreset_mode": "next_step"}

    def __init__(self, num_tables: int, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.num_envs = int(num_tables)
        self.tables = TableBatch(self.num_envs, config)
        # per-table views RLlib reads the spaces and agent ids from
        self.envs = [_TableView(self.tables)] * self.num_envs
        spaces = {a: self.tables.observation_space for a in AGENT_IDS}
        self.single_observation_spaces = spaces
        self.single_action_spaces = {a: self.tables.action_space for a in AGENT_IDS}
        self.single_observation_space = gym.spaces.Dict(spaces)
        self.single_action_space = gym.spaces.Dict(self.single_action_spaces)
        self._all = np.arange(self.num_envs)
        self._autoreset = np.zeros(self.num_envs, bool)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**62))
        self.tables.rng = np.random.default_rng([int(seed), 3])
        self.tables.reset_tables(int(seed) + self._all)
        self._autoreset[:] = False
        obs, _, _ = self.tables.outputs(self._all, None, with_rewards=False)
        return [obs[t] for t in range(self.num_envs)], [{} for _ in range(self.num_envs)]

    def step(self, actions: Sequence[dict[str, Any]]):
        tb = self.tables
        if tb.state is None:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        if len(actions) != n:
            raise ValueError(f"expected {n} action dicts (one per table), got {len(actions)}")
        rewards = np.zeros((n, 4), np.float64)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        restart = np.flatnonzero(self._autoreset)
        live = np.flatnonzero(~self._autoreset)
        current = tb.state.current
        acts = np.array([_table_action(actions[t], int(current[t]), t) for t in live.tolist()],
                        np.int64)
        tb.apply(live, acts, rewards, infos)
        if restart.size:
            tb.next_match(restart, np.zeros((n, 4)))
        obs, rew, term = tb.outputs(self._all, rewards)
        for t in restart.tolist():  # RLlib ignores these for a reset table
            rew[t] = {}
        self._autoreset = tb.state.done.copy()
        trunc = [{"__all__": False} for _ in range(n)]
        return ([obs[t] for t in range(n)], [rew[t] for t in range(n)],
                [term[t] for t in range(n)], trunc, infos)

    def render(self) -> None:
        return None


def limit_numba_threads(cpus: float) -> None:
    """Run the calling thread's numba kernels on at most ``cpus`` threads (at least one).
    numba's default is every core of the machine: N env runners, each running the parallel
    kernels on all of them, would oversubscribe the cores N times over."""
    numba.set_num_threads(max(1, min(int(cpus), numba.config.NUMBA_NUM_THREADS)))


def use_workqueue_threads() -> None:
    """Make numba's parallel kernels in this process use its ``workqueue`` threading layer,
    unless one was chosen (``NUMBA_THREADING_LAYER``) or a parallel kernel has run already.
    numba's default picks OpenMP where libgomp is found, and OpenMP's idle threads keep
    spinning after each parallel region: in an env runner that also runs torch they took
    three quarters of the process's CPU (sampling measured 3.5 to 4 times slower). The
    workqueue layer does not spin; it may not be entered from two threads at once, which
    an env runner (one sampling thread per process) never does."""
    if numba.config.THREADING_LAYER == "default":  # no effect once the threads are started
        numba.config.THREADING_LAYER = "workqueue"


class SichuanEnvRunner(MultiAgentEnvRunner):
    """RLlib's ``MultiAgentEnvRunner`` with one :class:`SichuanVectorEnv` of
    ``num_envs_per_env_runner`` tables (stepped batched) instead of a loop over one-table
    envs. RLlib's environment pre-check, when enabled, runs on a one-table env with
    ``illegal="random_legal"``. Runner ``w`` deals tables ``seed + w * tables + i``.

    The step counters RLlib logs per table and step (env, agent and module steps, episodes)
    are added up in plain counters and logged once per ``sample()`` call, with the same
    totals: with many tables the per-step metric calls cost ~15% of sampling."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._pending_steps: dict[str, Any] = {"env": 0, "episodes": 0, "agents": {}}
        if kwargs.get("worker_index"):  # a remote runner, before any kernel runs
            use_workqueue_threads()
        super().__init__(*args, **kwargs)
        if self.config.seed is not None:
            self._seed = int(self.config.seed + (self.worker_index or 0) * max(1, self.num_envs)
                             + 1_000_000 * bool(self.config.in_evaluation))

    def sample(self, **kwargs: Any) -> Any:
        if self.worker_index:  # a remote runner: a process of its own, with its own CPUs
            limit_numba_threads(self.config.num_cpus_per_env_runner)
        try:
            return super().sample(**kwargs)
        finally:
            self._flush_step_metrics()

    def _increase_sampled_metrics(self, num_steps: int, next_obs: Any, episode: Any) -> int:
        pending = self._pending_steps
        pending["env"] += num_steps
        if episode.is_done:
            pending["episodes"] += 1
        agents = pending["agents"]
        for aid in next_obs:
            key = (str(aid), episode.module_for(aid))
            agents[key] = agents.get(key, 0) + 1
        return num_steps

    def _flush_step_metrics(self) -> None:
        pending, log = self._pending_steps, self.metrics.log_value
        if pending["env"]:
            log(NUM_ENV_STEPS_SAMPLED, pending["env"], reduce="sum")
            log(NUM_ENV_STEPS_SAMPLED_LIFETIME, pending["env"], reduce="lifetime_sum",
                with_throughput=True)
        if pending["episodes"]:
            log(NUM_EPISODES, pending["episodes"], reduce="sum")
            log(NUM_EPISODES_LIFETIME, pending["episodes"], reduce="lifetime_sum")
        modules: dict[Any, int] = {}
        for (aid, mid), n in pending["agents"].items():
            log((NUM_AGENT_STEPS_SAMPLED, aid), n, reduce="sum")
            log((NUM_AGENT_STEPS_SAMPLED_LIFETIME, aid), n, reduce="lifetime_sum")
            modules[mid] = modules.get(mid, 0) + n
        for mid, n in modules.items():
            log((NUM_MODULE_STEPS_SAMPLED, mid), n, reduce="sum")
            log((NUM_MODULE_STEPS_SAMPLED_LIFETIME, mid), n, reduce="lifetime_sum")
        self._pending_steps = {"env": 0, "episodes": 0, "agents": {}}

    def make_env(self) -> None:
        if self.env is not None:
            self.env.close()
        env_ctx = self.config.env_config
        if not isinstance(env_ctx, EnvContext):
            env_ctx = EnvContext(env_ctx, worker_index=self.worker_index,
                                 num_workers=self.config.num_env_runners,
                                 remote=self.config.remote_worker_envs)
        config = dict(env_ctx)
        if not self.config.disable_env_checking:
            check_multiagent_environments(
                SichuanMultiAgentEnv({**config, "illegal": "random_legal"}))
        self.env = SichuanVectorEnv(self.config.num_envs_per_env_runner, config)
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
        make_callback(
            "on_environment_created",
            callbacks_objects=self._callbacks,
            callbacks_functions=self.config.callbacks_on_environment_created,
            kwargs=dict(env_runner=self, metrics_logger=self.metrics, env=self.env,
                        env_context=env_ctx),
        )

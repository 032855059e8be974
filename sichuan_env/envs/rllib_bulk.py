"""A bulk-sampling RLlib env runner for the learner-seat mode (one learner seat per table,
three bots played inside the env): the game stays batched from the engine to the episodes.

:class:`BulkEnvRunner` is a :class:`sichuan_env.envs.rllib.SichuanEnvRunner` (same env, same
seeds, same config keys) whose ``sample()`` does not go through RLlib's per-step, per-table
loop of connectors and ``MultiAgentEpisode.add_env_step`` calls. Per step, for all the
runner's tables at once: one RLModule forward pass (``forward_exploration``; the action is
drawn from the module's action distribution over the masked logits, so only legal actions;
rows with a single legal action skip the pass, their distribution is known),
the learner's actions stepped in place, then one pass of the bots until every table waits
for its learner again (a table that finishes meanwhile is recorded and starts its next
match, played up to its learner in the same pass; against the built-in random bots the
pass is :mod:`sichuan_env.envs.random_rounds`' compiled rounds, else
:func:`sichuan_env.seats.driver.play_until_learner`), and the next observations written into
preallocated ``(T + 1, N, ...)`` arrays.
At the end of the call the arrays become RLlib episodes in bulk: one
``SingleAgentEpisode`` per table and episode chunk, built from whole arrays, carrying the
agent id of the learner seat (``player_k``), its module id (the config's
``policy_mapping_fn``) and the columns PPO's and APPO's learners read (observations with
the masks, actions, rewards, ``action_logp``, ``action_dist_inputs``).

=================  ===========================================================================
item               value
=================  ===========================================================================
steps              ``sample()`` steps every table ``ceil(num_timesteps / tables)`` times
                   (RLlib passes ``rollout_fragment_length x tables``); every step is one
                   learner decision at every table (a finished table starts its next match
                   in the same step, so no step is spent on an autoreset)
episodes           one per table and match, as with
:class:`~sichuan_env.envs.rllib.SichuanEnvRunner`:
                   a match that is not over at the end of ``sample()`` is returned as a chunk
                   (not done) and continues in the next call under the same episode id, with
                   ``t_started`` counting on; the chunk's last observation is the next
                   chunk's first. ``multi_agent_episode_id`` is the chunk's own key
                   (``id-t_started``), so chunks of one match never merge in a learner batch
rewards            the points the learner seat was paid and received in each step, bots'
                   moves included; what bots' moves paid before the learner's first decision
                   of a match (a bot's kong) is added to its first step, so a match's return
                   is the learner seat's points (:class:`~sichuan_env.envs.rllib.SichuanVectorEnv`
                   drops those). With the env config's ``reference`` (paired-deal rewards,
                   :mod:`sichuan_env.envs.paired`) the step that ends a match also has the
                   reference's points on that deal subtracted
final obs          the learner seat's observation of the finished table, mask all zero
metrics            env, agent and module steps, episodes, and the finished matches' returns
                   and lengths (env steps = learner decisions), as RLlib's runners log them
whole episodes     ``sample(num_episodes=...)`` (evaluation) runs RLlib's own loop of the
                   parent class; the next bulk call deals fresh tables
=================  ===========================================================================

Self-play (``opponents`` None: all four seats RLlib agents) is not handled: building the
runner then raises ``ValueError``; use :class:`~sichuan_env.envs.rllib.SichuanEnvRunner`.
"""

from __future__ import annotations

import gc
import math
import time
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import (
    EPISODE_AGENT_RETURN_MEAN,
    EPISODE_AGENT_STEPS,
    EPISODE_DURATION_SEC_MEAN,
    EPISODE_LEN_MAX,
    EPISODE_LEN_MEAN,
    EPISODE_LEN_MIN,
    EPISODE_MODULE_RETURN_MEAN,
    EPISODE_RETURN_MAX,
    EPISODE_RETURN_MEAN,
    EPISODE_RETURN_MIN,
    WEIGHTS_SEQ_NO,
)

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.envs.random_rounds import (
    ALL_WAITING,
    FINISHED,
    NO_LEGAL,
    RoundsRunner,
    UniformStream,
)
from sichuan_env.envs.rllib import _MAX_BOT_MOVES, AGENT_IDS, SichuanEnvRunner
from sichuan_env.seats.driver import builtin_random_rng, check_actions, legal_in, play_until_learner
from sichuan_env.seats.observation import OBS_SHAPE, encode, fill_observations


def _freeze_heap() -> None:
    """Collect the garbage, then leave every object alive now (Ray, torch, the module:
    hundreds of thousands) out of Python's later collections (``gc.freeze``): a full
    collection otherwise scans them all, about 0.3 CPU-seconds that land in one
    ``sample()`` call of a few tenths of a second every twenty or so."""
    gc.collect()
    gc.freeze()


def _weight_cast_cache() -> torch.autocast:
    """A context in which a network computing under ``torch.autocast`` (``--precision
    bf16``) casts its weights once, not at every forward pass: torch keeps the cast
    weights until the outermost autocast context ends, and this one (disabled: it
    changes no arithmetic) is outermost for a whole ``sample()`` call, during which the
    weights do not change. The results are those without it."""
    return torch.autocast("cpu", enabled=False)


def _sample_categorical(logits: torch.Tensor) -> torch.Tensor:
    """(n, 1) int64: one action per row drawn from the categorical distribution of the
    (n, 88) ``logits`` by inverting its cumulative probabilities at a uniform of torch's
    generator in (0, 1]; an action of probability 0 (masked) is never drawn. The same
    distribution as ``torch.multinomial`` of the probabilities (RLlib's
    ``TorchCategorical.sample``) at a fraction of its cost for small batches."""
    cum = torch.softmax(logits, 1).cumsum(1)
    u = 1.0 - torch.rand(logits.shape[0], 1)
    return (cum < u * cum[:, -1:]).sum(1, keepdim=True)


class BulkEnvRunner(SichuanEnvRunner):
    """RLlib env runner that samples all its tables in bulk (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._bulk: dict[str, Any] | None = None
        self._dealt = False  # the runner's seed deals the first tables only
        super().__init__(*args, **kwargs)
        if self.worker_index:  # a remote runner: the process is the runner's own
            _freeze_heap()

    def make_env(self) -> None:
        super().make_env()
        tb = self.env.tables
        if tb.opponents is None:
            raise ValueError("BulkEnvRunner plays one learner seat per table against bots "
                             "(env config 'opponents'); for self-play use SichuanEnvRunner")
        agents = [AGENT_IDS[s] for s in tb.learner.tolist()]
        fn = self.config.policy_mapping_fn
        modules = {a: fn(a, None, worker=self) for a in set(agents)}
        self._agent_of = agents
        self._module_of = [modules[a] for a in agents]
        mids = set(self._module_of)  # rows of each module; one module: all, as a slice
        self._module_rows = ({mids.pop(): slice(None)} if len(mids) == 1 else {
            m: np.flatnonzero(np.array([x == m for x in self._module_of])) for m in mids})
        self._bulk = None
        n = tb.num_tables
        self._rows = np.arange(n)
        self._learner8 = tb.learner.astype(np.int8)
        self._paid = np.zeros((n, 4), np.float64)
        self._planes: np.ndarray | None = None
        self._rounds: RoundsRunner | None = None  # the compiled rounds of random bots
        self._draw_hint = 64 * N_ACTIONS

    # ------------------------------------------------------------------ tables
    def _bulk_reset(self) -> None:
        """Deal every table (runner seed as SichuanVectorEnv.reset) and start new episodes."""
        tb = self.env.tables
        n = self.num_envs
        seed = None if self._dealt else self._seed
        self._dealt = True
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**62))
        tb.rng = np.random.default_rng([int(seed), 3])
        tb.reset_tables(int(seed) + np.arange(n))
        rows = np.arange(n)
        obs, mask = self._observe(rows)
        now = time.time()
        self._bulk = {
            "obs": obs, "mask": mask,
            "id": [uuid.uuid4().hex for _ in range(n)],
            "t": np.zeros(n, np.int64),  # steps of the current match so far
            "ret": np.zeros(n, np.float64),  # its return so far
            "pre": tb.state.scores[rows, tb.learner].astype(np.float64),  # paid before step 0
            "start": np.full(n, now),
        }

    def _observe(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Observations and float masks of the learner seats at tables ``rows``."""
        tb = self.env.tables
        obs = tb.observe(rows, tb.learner[rows])
        return obs, tb.mask[rows].astype(np.float32)

    def _observe_into(self, obs: np.ndarray, mask: np.ndarray) -> None:
        """The learner seats' observations (planes, then the features' planes) and float
        masks at every table, written into ``obs`` (n, C, 27) and ``mask`` (n, 88)."""
        tb = self.env.tables
        st = tb.state
        planes = self._planes
        if planes is None:
            planes = self._planes = np.empty((tb.num_tables, *OBS_SHAPE), np.float32)
        fill_observations(st, tb.learner, self._rows, planes)
        obs[:, :OBS_SHAPE[0]] = planes
        if tb.features is not None:
            obs[:, OBS_SHAPE[0]:] = tb.features(planes)
        np.copyto(tb.mask, st.legal_action_mask)
        mask[:] = tb.mask

    # ------------------------------------------------------------------ sampling
    def _sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None,
                explore: bool, random_actions: bool = False,
                force_reset: bool = False) -> list[SingleAgentEpisode]:
        if num_timesteps is None:  # whole episodes: RLlib's loop, then fresh tables
            self._bulk = None
            self._needs_initial_reset = True
            return super()._sample(num_episodes=num_episodes, explore=explore,
                                   random_actions=random_actions)
        if force_reset or self._bulk is None:
            self._bulk_reset()
        bulk = self._bulk
        n = self.num_envs
        steps = max(1, -(-int(num_timesteps) // n))
        obs = np.empty((steps + 1, *bulk["obs"].shape), np.float32)
        mask = np.empty((steps + 1, n, N_ACTIONS), np.float32)
        actions = np.empty((steps, n), np.int64)
        logp = np.empty((steps, n), np.float32)
        dist_in = np.empty((steps, n, N_ACTIONS), np.float32)
        rewards = np.empty((steps, n), np.float32)
        done = np.zeros((steps, n), bool)
        final: dict[tuple[int, int], np.ndarray] = {}  # (step, table) -> last observation
        obs[0], mask[0] = bulk["obs"], bulk["mask"]
        modules = [self.module[mid] for mid in self._module_rows]
        training = [mod.training for mod in modules]
        for mod in modules:
            mod.eval()
        try:
            with _weight_cast_cache():
                self._step(steps, obs, mask, actions, logp, dist_in, rewards, done, final,
                           explore, random_actions)
        finally:
            for mod, was in zip(modules, training, strict=True):
                mod.train(was)
        bulk["obs"], bulk["mask"] = obs[steps].copy(), mask[steps].copy()
        return self._episodes(obs, mask, actions, logp, dist_in, rewards, done, final)

    def _step(self, steps, obs, mask, actions, logp, dist_in, rewards, done, final,
              explore, random_actions) -> None:
        """Play ``steps`` learner decisions at every table into the step arrays.

        One pass of the bots per step: after the learner's actions the bots move until
        every table waits for its learner again; a table that finishes meanwhile is
        recorded (its step's reward, ``done``, the final observation) and starts its next
        match in the same pass, whose points before the learner's first decision
        (``pre``) go to that decision's reward."""
        tb, bulk = self.env.tables, self._bulk
        n = self.num_envs
        first = bulk["t"] == 0  # the table's next step is its match's first
        pre = bulk["pre"]
        acc = np.zeros(n, np.float64)  # the learner's points in the current step
        restarted = np.zeros(n, bool)  # tables that started a new match in this step
        ends: list[tuple[int, np.ndarray, np.ndarray]] = []  # (step, tables, their planes)
        for t in range(steps):
            for mid, mrows in self._module_rows.items():
                a, lp, di = self._act(mid, obs[t, mrows], mask[t, mrows], explore,
                                      random_actions)
                actions[t, mrows], logp[t, mrows], dist_in[t, mrows] = a, lp, di
            acc[:] = 0.0
            if first.any():  # what bots paid before the learner's first decision
                acc[first] = pre[first]
                first[:] = False
            restarted[:] = False

            def finish(fin: np.ndarray, t: int = t) -> None:
                """Tables ``fin`` finished their match: record, then deal the next."""
                again = restarted[fin]  # finished again before a learner decision:
                ended = fin[~again]     # that match has no step; its points are dropped
                if tb.paired is not None:  # paired-deal rewards: minus the reference's
                    acc[fin] -= tb.paired.totals(fin)
                if ended.size:
                    rewards[t, ended] = acc[ended]
                    done[t, ended] = True
                    ends.append((t, ended, encode(tb.state, tb.learner[ended], ended)))
                acc[fin] = 0.0
                restarted[fin] = True
                engine.new_matches(tb.state, fin)
                if tb.paired is not None:
                    tb.paired.start(tb.state, fin, fin, tb.learner[fin])

            self._play(actions[t], acc, finish)
            live = ~restarted
            rewards[t, live] = acc[live]
            pre[restarted] = acc[restarted]
            first |= restarted
            self._observe_into(obs[t + 1], mask[t + 1])
        if ends:  # the final observations: their feature planes in one call
            planes = np.concatenate([p for _, _, p in ends])
            if tb.features is not None:
                planes = np.concatenate([planes, tb.features(planes)], axis=1)
            j = 0
            for t, ended, _ in ends:
                for i in ended.tolist():
                    final[(t, i)] = planes[j]
                    j += 1

    def _play(self, actions: np.ndarray, acc: np.ndarray,
              finish: Callable[[np.ndarray], None]) -> None:
        """The learner's ``actions`` at every table, then the bots until every table waits
        for its learner; the learner seats' points go to ``acc``, tables that finish meanwhile
        to ``finish`` (which starts their next match, played on in the same pass)."""
        tb = self.env.tables
        st = tb.state
        ok = legal_in(actions, tb.mask)
        if not ok.all():  # the masked distributions never give one: a bug, as RLlib's
            check_actions(actions, tb.mask, self._rows, st.current, who="RLlib")
        learner = tb.learner
        rng = self._random_rng()
        if rng is not None:  # every bot the built-in random agent: compiled rounds
            runner = self._rounds
            if runner is None or runner.state is not st:
                runner = self._rounds = RoundsRunner(st)
            stream = UniformStream(rng, self._draw_hint)
            try:
                first_actions: np.ndarray | None = actions
                while True:
                    status, detail = runner.run(stream, self._learner8, acc, first_actions)
                    first_actions = None
                    if status == ALL_WAITING:
                        break
                    if status == FINISHED:
                        finish(np.flatnonzero(st.done))
                    elif status == NO_LEGAL:
                        raise ValueError(f"table {detail}: the seat to act has no legal "
                                         "action")
                    else:  # pragma: no cover - sized for the rules
                        raise RuntimeError("engine step log overflow")
            finally:
                stream.close()
            self._draw_hint = stream.used + stream.used // 8 + 64 * N_ACTIONS
            return
        _, r, _ = engine.step(st, actions, inplace=True)
        acc += r[self._rows, learner]
        paid = self._paid
        paid[:] = 0.0

        def finished(batch: Any, rows: np.ndarray, tables: np.ndarray) -> None:
            acc[tables] += paid[tables, learner[tables]]
            paid[tables] = 0.0
            finish(tables)

        play_until_learner(st, tb._seat_bot, tb._bots, rewards=paid, finished=finished,
                           max_moves=_MAX_BOT_MOVES)
        acc += paid[self._rows, learner]

    def _random_rng(self) -> np.random.Generator | None:
        """The generator of the bots when all three are one built-in random agent."""
        bots = self.env.tables._bots
        return builtin_random_rng(bots[0]) if len(bots) == 1 else None

    def _act(self, mid: Any, obs: np.ndarray, mask: np.ndarray, explore: bool,
             random_actions: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Actions, their log-probabilities and the distribution inputs of module ``mid``
        for a batch of observations: one forward pass (the module is in eval mode) over the
        rows with a choice. A row with one legal action gets it with log-probability 0 and
        the masked logits 0 / -1e8: the distribution the module's masked logits give
        there too, so the forward pass is skipped. The module's categorical distribution
        (RLlib's ``TorchCategorical``) is sampled by :func:`_sample_categorical`, the most
        likely action without exploration; another distribution class through its own
        calls."""
        module = self.module[mid]
        m = torch.from_numpy(mask)
        logits = torch.where(m > 0, 0.0, -1e8)
        choice = np.flatnonzero(mask.sum(1) > 1) if not random_actions else None
        if choice is not None and choice.size:
            sub = torch.from_numpy(choice)
            batch = {Columns.OBS: {"observations": torch.from_numpy(obs[choice]),
                                   "action_mask": m[sub]}}
            with torch.no_grad():  # RLlib's forward_exploration less its per-call eval()
                out = (module._forward_exploration(batch) if explore
                       else module._forward_inference(batch))
            logits[sub] = out[Columns.ACTION_DIST_INPUTS].float()
        cls = (module.get_exploration_action_dist_cls() if explore or random_actions
               else module.get_inference_action_dist_cls())
        if cls is not TorchCategorical:  # another distribution: RLlib's own calls
            dist = cls.from_logits(logits)
            act = dist.sample() if explore or random_actions else \
                dist.to_deterministic().sample()
            return act.numpy(), dist.logp(act).numpy(), logits.numpy()
        logp_all = torch.log_softmax(logits, 1)
        if explore or random_actions:
            act = _sample_categorical(logits)
        else:
            act = logits.argmax(1, keepdim=True)
        return (act.squeeze(1).numpy(), logp_all.gather(1, act).squeeze(1).numpy(),
                logits.numpy())

    # ------------------------------------------------------------------ episodes
    def _episodes(self, obs, mask, actions, logp, dist_in, rewards, done,
                  final) -> list[SingleAgentEpisode]:
        """Episode chunks from the step arrays; updates the per-table episode state and
        the metrics."""
        bulk = self._bulk
        steps, n = actions.shape
        space = self.env.tables.observation_space
        act_space = self.env.tables.action_space
        seq = self._weights_seq_no
        out: list[SingleAgentEpisode] = []
        ended: list[tuple[int, float, float, Any, Any]] = []
        now = time.time()
        pending = self._pending_steps
        pending["env"] += steps * n
        for i in range(n):
            agent, mid = self._agent_of[i], self._module_of[i]
            key = (agent, mid)
            pending["agents"][key] = pending["agents"].get(key, 0) + steps
            ends = np.flatnonzero(done[:, i]).tolist()
            start = 0
            for end in [*ends, steps - 1]:
                if end < start:  # the match ended on the call's last step
                    break
                finished = done[end, i]
                sl = slice(start, end + 1)
                last_obs = final[(end, i)] if finished else obs[end + 1, i]
                last_mask = np.zeros(N_ACTIONS, np.float32) if finished else mask[end + 1, i]
                length = end + 1 - start
                t0 = int(bulk["t"][i])
                ep_id = bulk["id"][i]
                ep = SingleAgentEpisode(
                    id_=ep_id,
                    observations=InfiniteLookbackBuffer(
                        {"observations": np.concatenate([obs[sl, i], last_obs[None]]),
                         "action_mask": np.concatenate([mask[sl, i], last_mask[None]])}),
                    observation_space=space,
                    infos=[{}] * (length + 1),
                    actions=InfiniteLookbackBuffer(actions[sl, i].copy()),
                    action_space=act_space,
                    rewards=InfiniteLookbackBuffer(rewards[sl, i].copy()),
                    terminated=bool(finished),
                    extra_model_outputs={
                        Columns.ACTION_LOGP: InfiniteLookbackBuffer(logp[sl, i].copy()),
                        Columns.ACTION_DIST_INPUTS: InfiniteLookbackBuffer(
                            dist_in[sl, i].copy()),
                        WEIGHTS_SEQ_NO: InfiniteLookbackBuffer(np.full(length, seq)),
                    },
                    t_started=t0,  # the spaces: set on the buffers by the episode
                    len_lookback_buffer=0,
                    agent_id=agent,
                    module_id=mid,
                    multi_agent_episode_id=f"{ep_id}-{t0}",
                )
                ep.custom_data["table"] = i
                out.append(ep)
                ret = float(bulk["ret"][i] + rewards[sl, i].sum(dtype=np.float64))
                if finished:
                    ended.append((t0 + length, ret, now - bulk["start"][i], agent, mid))
                    bulk["id"][i] = uuid.uuid4().hex
                    bulk["t"][i] = 0
                    bulk["ret"][i] = 0.0
                    bulk["start"][i] = now
                else:
                    bulk["t"][i] = t0 + length
                    bulk["ret"][i] = ret
                start = end + 1
        pending["episodes"] += len(ended)
        self._log_ended(ended)
        return out

    def _log_ended(self, ended: list[tuple[int, float, float, Any, Any]]) -> None:
        """The finished matches' lengths, returns and durations, under the keys and windows
        of RLlib's ``_log_episode_metrics`` (one ``log_value`` per value: cheaper than its
        three ``log_dict`` calls per episode). A windowed series keeps only its last
        ``window`` values, so of each key only the last ``window`` values are logged."""
        win = max(1, math.ceil(self.config.metrics_num_episodes_for_smoothing
                               / (self.config.num_env_runners or 1)))
        series: dict[Any, tuple[str | None, list[float]]] = {}
        for length, ret, sec, agent, mid in ended:
            for key, value, reduce in (
                    (EPISODE_LEN_MEAN, length, None), (EPISODE_RETURN_MEAN, ret, None),
                    (EPISODE_DURATION_SEC_MEAN, sec, None),
                    ((EPISODE_AGENT_RETURN_MEAN, str(agent)), ret, None),
                    ((EPISODE_AGENT_STEPS, str(agent)), length, None),
                    ((EPISODE_MODULE_RETURN_MEAN, mid), ret, None),
                    (EPISODE_LEN_MIN, length, "min"), (EPISODE_RETURN_MIN, ret, "min"),
                    (EPISODE_LEN_MAX, length, "max"), (EPISODE_RETURN_MAX, ret, "max")):
                series.setdefault(key, (reduce, []))[1].append(value)
        log = self.metrics.log_value
        for key, (reduce, values) in series.items():
            for value in values[-win:]:
                log(key, value, reduce=reduce, window=win)

"""A bulk-sampling RLlib env runner for the learner-seat mode (one learner seat per table,
three bots played inside the env): the game stays batched from the engine to the episodes.

:class:`BulkEnvRunner` is a :class:`sichuan_env.rllib.SichuanEnvRunner` (same env, same
seeds, same config keys) whose ``sample()`` does not go through RLlib's per-step, per-table
loop of connectors and ``MultiAgentEpisode.add_env_step`` calls. Per step, for all the
runner's tables at once: one RLModule forward pass (``forward_exploration``; the action is
drawn from the module's action distribution over the masked logits, so only legal actions;
rows with a single legal action skip the pass, their distribution is known),
one :meth:`~sichuan_env.rllib.TableBatch.apply` (the learner's actions, then the bots
batched), and the next observations written into preallocated ``(T + 1, N, ...)`` arrays.
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
episodes           one per table and match, as with :class:`~sichuan_env.rllib.SichuanEnvRunner`:
                   a match that is not over at the end of ``sample()`` is returned as a chunk
                   (not done) and continues in the next call under the same episode id, with
                   ``t_started`` counting on; the chunk's last observation is the next
                   chunk's first. ``multi_agent_episode_id`` is the chunk's own key
                   (``id-t_started``), so chunks of one match never merge in a learner batch
rewards            the points the learner seat was paid and received in each step, bots'
                   moves included; what bots' moves paid before the learner's first decision
                   of a match (a bot's kong) is added to its first step, so a match's return
                   is the learner seat's points (:class:`~sichuan_env.rllib.SichuanVectorEnv`
                   drops those)
final obs          the learner seat's observation of the finished table, mask all zero
metrics            env, agent and module steps, episodes, and the finished matches' returns
                   and lengths (env steps = learner decisions), as RLlib's runners log them
whole episodes     ``sample(num_episodes=...)`` (evaluation) runs RLlib's own loop of the
                   parent class; the next bulk call deals fresh tables
=================  ===========================================================================

Self-play (``opponents`` None: all four seats RLlib agents) is not handled: building the
runner then raises ``ValueError``; use :class:`~sichuan_env.rllib.SichuanEnvRunner`.
"""

from __future__ import annotations

import math
import time
import uuid
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
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

from sichuan_env.actions import N_ACTIONS
from sichuan_env.rllib import AGENT_IDS, SichuanEnvRunner


class BulkEnvRunner(SichuanEnvRunner):
    """RLlib env runner that samples all its tables in bulk (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._bulk: dict[str, Any] | None = None
        self._dealt = False  # the runner's seed deals the first tables only
        super().__init__(*args, **kwargs)

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
            self._step(steps, obs, mask, actions, logp, dist_in, rewards, done, final,
                       explore, random_actions)
        finally:
            for mod, was in zip(modules, training, strict=True):
                mod.train(was)
        bulk["obs"], bulk["mask"] = obs[steps].copy(), mask[steps].copy()
        return self._episodes(obs, mask, actions, logp, dist_in, rewards, done, final)

    def _step(self, steps, obs, mask, actions, logp, dist_in, rewards, done, final,
              explore, random_actions) -> None:
        """Play ``steps`` learner decisions at every table into the step arrays."""
        tb, bulk = self.env.tables, self._bulk
        n = self.num_envs
        rows = np.arange(n)
        learner = tb.learner
        first = bulk["t"] == 0
        pre = bulk["pre"]
        paid = np.zeros((n, 4), np.float64)
        infos: list[dict[str, Any]] = [{} for _ in range(n)]
        for t in range(steps):
            for mid, mrows in self._module_rows.items():
                a, lp, di = self._act(mid, obs[t, mrows], mask[t, mrows], explore,
                                      random_actions)
                actions[t, mrows], logp[t, mrows], dist_in[t, mrows] = a, lp, di
            paid[:] = 0.0
            tb.apply(rows, actions[t], paid, infos)
            r = paid[rows, learner]
            if first.any():  # what bots paid before the learner's first decision
                r[first] += pre[first]
                first[:] = False
            rewards[t] = r
            fin = np.flatnonzero(tb.state.done)
            if fin.size:
                done[t, fin] = True
                last = tb.observe(fin, learner[fin])
                for j, i in enumerate(fin.tolist()):
                    final[(t, i)] = last[j]
                tb.next_match(fin, np.zeros((n, 4)))
                pre[fin] = tb.state.scores[fin, learner[fin]]
                first[fin] = True
            obs[t + 1], mask[t + 1] = self._observe(rows)

    def _act(self, mid: Any, obs: np.ndarray, mask: np.ndarray, explore: bool,
             random_actions: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Actions, their log-probabilities and the distribution inputs of module ``mid``
        for a batch of observations: one forward pass (the module is in eval mode) over the
        rows with a choice. A row with one legal action gets it with log-probability 0 and
        the masked logits 0 / -1e8: the distribution the module's masked logits give
        there too, so the forward pass is skipped."""
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
        if explore or random_actions:
            dist = module.get_exploration_action_dist_cls().from_logits(logits)
            act = dist.sample()
        else:
            dist = module.get_inference_action_dist_cls().from_logits(logits)
            act = dist.to_deterministic().sample()
        return act.numpy(), dist.logp(act).numpy(), logits.numpy()

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
                         "action_mask": np.concatenate([mask[sl, i], last_mask[None]])},
                        space=space),
                    observation_space=space,
                    infos=[{}] * (length + 1),
                    actions=InfiniteLookbackBuffer(actions[sl, i].copy(), space=act_space),
                    action_space=act_space,
                    rewards=InfiniteLookbackBuffer(rewards[sl, i].copy()),
                    terminated=bool(finished),
                    extra_model_outputs={
                        Columns.ACTION_LOGP: InfiniteLookbackBuffer(logp[sl, i].copy()),
                        Columns.ACTION_DIST_INPUTS: InfiniteLookbackBuffer(
                            dist_in[sl, i].copy()),
                        WEIGHTS_SEQ_NO: InfiniteLookbackBuffer(np.full(length, seq)),
                    },
                    t_started=t0,
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
        three ``log_dict`` calls per episode)."""
        win = max(1, math.ceil(self.config.metrics_num_episodes_for_smoothing
                               / (self.config.num_env_runners or 1)))
        log = self.metrics.log_value
        for length, ret, sec, agent, mid in ended:
            for key, value in ((EPISODE_LEN_MEAN, length), (EPISODE_RETURN_MEAN, ret),
                               (EPISODE_DURATION_SEC_MEAN, sec),
                               ((EPISODE_AGENT_RETURN_MEAN, str(agent)), ret),
                               ((EPISODE_AGENT_STEPS, str(agent)), length),
                               ((EPISODE_MODULE_RETURN_MEAN, mid), ret)):
                log(key, value, window=win)
            log(EPISODE_LEN_MIN, length, reduce="min", window=win)
            log(EPISODE_RETURN_MIN, ret, reduce="min", window=win)
            log(EPISODE_LEN_MAX, length, reduce="max", window=win)
            log(EPISODE_RETURN_MAX, ret, reduce="max", window=win)

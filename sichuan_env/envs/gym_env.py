"""Single-agent Gymnasium environment: one learner seat, three opponents inside.

>>> from sichuan_env.envs.gym_env import SichuanSingleEnv
>>> e = SichuanSingleEnv(learner_seat="random")
>>> obs, info = e.reset(seed=0)
>>> obs, reward, terminated, truncated, info = e.step(int(info["action_mask"].argmax()))

=================  ===========================================================================
item               value
=================  ===========================================================================
steps              the learner's decisions only (forbidden-suit choice, own turn, claims);
                   opponents act in between through ``agent.act(obs, mask)``
learner_seat       0..3, or ``"random"`` (a new seat, drawn from ``np_random``, each reset)
opponents          one agent for the three other seats or a list of three, for the seats
                   after the learner counter-clockwise (learner + 1, + 2, + 3); default
                   :class:`~sichuan_env.seats.agent.RandomAgent`, reseeded by ``reset(seed=...)``;
                   agents may be given by spec string (``"greedy"``, ``"pkg.mod:Bot"``);
                   they play through :func:`sichuan_env.seats.driver.play_until_learner`
observation        ``Box((78, 27), float32)``: :func:`sichuan_env.seats.observation.encode` for the
                   learner (planes documented there)
action             ``Discrete(88)`` (:mod:`sichuan_env.core.actions`); ``action_masks()`` -> (88,)
                   bool for sb3-contrib's MaskablePPO; also ``info["action_mask"]``
reward             the learner's points paid/received since its previous decision (its own
                   move, the opponents' moves after it, and the end-of-deal settlement)
terminated         the match ended (one deal unless ``rules.deals_per_match > 1``); the
                   learner may have won earlier: the deal is then played out by the opponents
                   within that step, so refunds still reach the learner
truncated          never
illegal action     ``illegal_action="terminate"`` (default, PettingZoo's classic-game convention
                   and what ``check_env``'s unmasked random actions need): the episode ends
                   with reward ``illegal_reward`` (default -1) and ``info["illegal_action"]``;
                   ``"raise"``: :class:`~sichuan_env.core.engine.IllegalActionError`, nothing
                   changes
reference          None (default), or an agent or spec (``"rules"``): paired-deal rewards
                   (:mod:`sichuan_env.envs.paired`): the deal is also played from a copy made at
                   its start with the reference in the learner's seat, and the terminating
                   step's reward has the reference's points subtracted (the per-step points
                   stay); ``info["raw_points"]`` and ``info["reference_points"]`` then hold
                   both totals. ``set_reference`` swaps the agent for later deals
=================  ===========================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.engine import IllegalActionError
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import drawn_seed, opponent_rng
from sichuan_env.core.state import State
from sichuan_env.envs.paired import ReferencePlay
from sichuan_env.records.render import render_html, render_text
from sichuan_env.seats.agent import Agent, seat_agents
from sichuan_env.seats.driver import check_action, opponent_seats, play_until_learner
from sichuan_env.seats.observation import OBS_VERSION, SeatEncoder, observation_bounds

_ROW = np.zeros(1, np.intp)  # the one table


def opponent_list(
    opponents: Agent | str | Sequence[Agent | str] | None, seed: int | None = None,
    preset: str | None = None,
) -> list:
    """Three agents from one agent, a list of three, or None (one random agent for all
    three). An agent may be given by its spec string (:func:`sichuan_env.seats.agent.make_agent`:
    a name such as ``"greedy"`` or an import path such as ``"mypkg.bots:MyBot"``); equal
    specs in one list are one agent, built by :func:`sichuan_env.seats.agent.seat_agents` (seeds
    :func:`sichuan_env.core.seeding.agent_seed` of ``seed``, the rule ``preset`` for agents that
    ask for ``rules``)."""
    if opponents is None:
        opp: list = ["random"] * 3
    elif isinstance(opponents, Sequence) and not isinstance(opponents, str):
        opp = list(opponents)
        if len(opp) == 1:
            opp = opp * 3
        if len(opp) != 3:
            raise ValueError(f"opponents: one agent or a list of three, got {len(opp)}")
    else:
        opp = [opponents] * 3
    built = seat_agents(opp, seed, preset)
    return [built.agents[k] for k in built.seat_agent]


class SichuanSingleEnv(gym.Env):
    """See the module docstring."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 2,
                "observation_version": OBS_VERSION}

    def __init__(
        self,
        rules: Rules | str | None = None,
        learner_seat: int | str = 0,
        opponents: Agent | str | Sequence[Agent | str] | None = None,
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        reference: Agent | str | None = None,
    ) -> None:
        if illegal_action not in ("terminate", "raise"):
            raise ValueError(
                f"illegal_action must be 'terminate' or 'raise', got {illegal_action!r}"
            )
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self._over = True
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} not supported")
        if learner_seat != "random" and learner_seat not in (0, 1, 2, 3):
            raise ValueError(f"learner_seat must be 0..3 or 'random', got {learner_seat!r}")
        self.rules = get_rules(rules)
        self.learner_seat_option = learner_seat
        self.opponents = opponent_list(opponents, preset=self.rules.preset)
        self._default_opponents = opponents is None
        self.render_mode = render_mode
        low, high = observation_bounds()
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.seat = 0 if learner_seat == "random" else int(learner_seat)
        self.state: State | None = None
        self._mask = np.zeros(N_ACTIONS, bool)
        self._action = np.zeros(1, np.int64)  # one move, as the engine takes it
        self._encoder: SeatEncoder | None = None  # the learner's observations of state
        self._seats_key: tuple = ()  # (seat, opponents' ids) that _seat_agent was built for
        self._agents: list = []
        self._seat_agent = np.full((1, 4), -1, np.intp)
        self._paired = (None if reference is None else
                        ReferencePlay(reference, self.opponents, self.rules))
        self._start: State | None = None  # the deal at its start, for the reference
        self._raw = 0.0  # the learner's points in this deal so far

    # ------------------------------------------------------------------ API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        if self.learner_seat_option == "random":
            self.seat = int(self.np_random.integers(4))
        deal_seed = drawn_seed(self.np_random)
        if self._default_opponents and seed is not None:  # default opponents follow the seed
            self.opponents[0].rng = opponent_rng(seed)
        dealer = int((options or {}).get("dealer", 0))
        self.state = engine.reset([deal_seed], self.rules, dealer=dealer)
        if self._paired is not None:
            if seed is not None:
                self._paired.reseed(seed)
            self._start = self.state.copy()
        self._raw = 0.0
        for a in self.opponents:
            if hasattr(a, "reset"):
                a.reset()
        self._over = False
        self._raw, done_ = self._play_opponents()
        info = self._info()
        if done_:  # the match ended before the learner's first decision
            self._over = True
            info.update(self._paired_end(0.0))
        return self._obs(), info

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        st = self.state
        if st is None:
            raise RuntimeError("call reset() first")
        if self._over:
            raise RuntimeError("the episode is over: call reset()")
        try:
            a = check_action(action, self._mask, f"learner (seat {self.seat})")
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self._over = True
            self._mask = np.zeros(N_ACTIONS, bool)
            info = self._info()
            info["illegal_action"] = int(action)
            return self._obs(), self.illegal_reward, True, False, info
        self._action[0] = a
        st, r, _ = engine.step(st, self._action, inplace=True)
        reward = float(r[0, self.seat])
        more, done_ = self._play_opponents()
        reward += more
        self._raw += reward
        self._over = done_
        if self.render_mode == "human":
            self.render()
        info = self._info()
        if done_:
            end = self._paired_end(reward)
            reward = end.get("reward", reward)
            info.update({k: v for k, v in end.items() if k != "reward"})
        return self._obs(), reward, bool(done_), False, info

    def set_reference(self, reference: Agent | str) -> None:
        """Paired-deal rewards: the agent (or spec) in the learner's seat of the reference
        deals that start from now on. ``ValueError`` when built without ``reference=``."""
        if self._paired is None:
            raise ValueError("this env has no paired-deal rewards (build it with reference=)")
        self._paired.set_reference(reference)

    @property
    def reference(self) -> Agent | None:
        """The reference agent of the paired-deal rewards, or None."""
        return None if self._paired is None else self._paired.reference

    def _paired_end(self, reward: float) -> dict[str, Any]:
        """At the deal's end: the reference's deal played; the last step's paired reward
        and the two totals (nothing without a reference)."""
        if self._paired is None or self._start is None:
            return {}
        ref = float(self._paired.play(self._start, np.array([self.seat]))[0])
        self._start = None
        return {"reward": reward - ref, "raw_points": self._raw, "reference_points": ref}

    def action_masks(self) -> np.ndarray:
        """(88,) bool: the learner's legal actions now (all False once terminated)."""
        return self._mask.copy()

    def render(self) -> str | None:
        if self.render_mode is None or self.state is None:
            return None
        text = render_text(self.state, 0, viewer=self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _repr_html_(self) -> str:
        if self.state is None:
            return "<i>SichuanSingleEnv: not reset</i>"
        return render_html(self.state, 0, viewer=self.seat)

    # ------------------------------------------------------------------ internals
    def _play_opponents(self) -> tuple[float, bool]:
        """Let opponents act until the learner decides or the match ends; returns the
        learner's points meanwhile and whether the match ended."""
        st = self.state
        assert st is not None
        key = (self.seat, *map(id, self.opponents))
        if self._seats_key != key:  # seat -> opponent, for the driver
            self._seats_key = key
            self._agents, self._seat_agent = opponent_seats(self.opponents, [self.seat])
        paid = play_until_learner(st, self._seat_agent, self._agents, rows=_ROW)
        reward = float(paid[0, self.seat])
        if st.done[0]:
            self._mask = np.zeros(N_ACTIONS, bool)
            return reward, True
        self._mask = st.legal_action_mask[0].copy()
        return reward, False

    def _obs(self) -> np.ndarray:
        st = self.state
        assert st is not None
        encoder = self._encoder
        if encoder is None or encoder.state is not st:
            self._encoder = encoder = SeatEncoder(st)
        return encoder.encode(self.seat)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._mask.copy(), "seat": self.seat}

"""The AEC env's ``raw_env`` as it was before the one-table speed work (commit 55fd586:
infos and rewards dicts built eagerly at every step, a new engine State at
every reset, PettingZoo's own ``last()``), kept as a reference for the differential test
in ``test_aec_checked.py``: the faster env must behave exactly like it."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import drawn_seed
from sichuan_env.core.state import State
from sichuan_env.envs.aec import AGENTS, ENV_NAME, ILLEGAL_REWARD
from sichuan_env.records.render import render_html, render_text
from sichuan_env.seats.driver import check_action
from sichuan_env.seats.observation import (
    OBS_VERSION,
    SeatEncoder,
    encode_oracle,
    observation_bounds,
)


def reference_stack(rules: Rules | str | None = None) -> AECEnv:
    """The old ``raw_env`` in PettingZoo's three wrappers (what ``env()`` stands for)."""
    e: AECEnv = raw_env(rules=rules)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=ILLEGAL_REWARD)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class raw_env(AECEnv, EzPickle):  # noqa: N801 - PettingZoo's naming convention
    """The unwrapped AEC environment; see the module docstring."""

    metadata = {
        "render_modes": ["human", "ansi"],
        "name": ENV_NAME,
        "is_parallelizable": False,
        "render_fps": 2,
        "observation_version": OBS_VERSION,
    }

    def __init__(
        self, rules: Rules | str | None = None, render_mode: str | None = None
    ) -> None:
        EzPickle.__init__(self, rules=rules, render_mode=render_mode)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r} not supported; use one of "
                f"{self.metadata['render_modes']} or None"
            )
        self.rules = get_rules(rules)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.agent_name_mapping = {a: i for i, a in enumerate(AGENTS)}
        low, high = observation_bounds()
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in AGENTS}
        low, high = observation_bounds(oracle=True)
        self.state_space = spaces.Box(low, high, dtype=np.float32)
        self._rng = np.random.default_rng()
        self.state_: State | None = None
        self._mask8 = np.zeros(N_ACTIONS, np.int8)  # the selected agent's legal actions
        self._zero_mask = np.zeros(N_ACTIONS, np.int8)
        self._action = np.zeros(1, np.int64)  # the step's action, as the engine takes it
        self._encoder: SeatEncoder | None = None  # observations of state_

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            deal_seed = int(seed)
        else:
            deal_seed = drawn_seed(self._rng)
        dealer = int((options or {}).get("dealer", 0))
        self.state_ = engine.reset([deal_seed], self.rules, dealer=dealer)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self._after_change()

    def _after_change(self) -> None:
        st = self.state_
        assert st is not None
        # the stored bool mask viewed as 0/1 bytes: one copy gives the int8 mask
        self._mask8 = mask8 = st.legal_action_mask[0].view(np.int8).copy()
        selected = AGENTS[st.current[0]]
        self.agent_selection = selected
        zero = self._zero_mask
        infos = {a: {"legal_moves": [], "action_mask": zero} for a in AGENTS}
        if not st.done[0]:
            infos[selected] = {"legal_moves": mask8.nonzero()[0].tolist(), "action_mask": mask8}
        self.infos = infos

    def selected_mask(self) -> np.ndarray:
        """(88,) int8: the legal actions of ``agent_selection`` (what its observation's
        ``action_mask`` holds; all zeros once the game is over). Do not modify it."""
        return self._mask8 if not self.state_.done[0] else self._zero_mask

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        st = self.state_
        assert st is not None
        a = check_action(action, self._mask8, agent)  # raises before anything changes
        self._cumulative_rewards[agent] = 0.0
        self._action[0] = a
        st, rewards, done = engine.step(st, self._action, inplace=True)
        self.state_ = st
        self.rewards = rewards_now = dict(zip(AGENTS, rewards[0].tolist(), strict=True))
        cumulative = self._cumulative_rewards
        for name, points in rewards_now.items():
            cumulative[name] += points
        if done[0]:
            self.terminations = dict.fromkeys(AGENTS, True)
        self._after_change()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------------ reading
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        st = self.state_
        assert st is not None, "call reset() first"
        seat = self.agent_name_mapping[agent]
        encoder = self._encoder
        if encoder is None or encoder.state is not st:
            self._encoder = encoder = SeatEncoder(st)
        obs = encoder.encode(seat)
        if agent == self.agent_selection and not st.done[0]:
            return {"observation": obs, "action_mask": self._mask8.copy()}
        return {"observation": obs, "action_mask": np.zeros(N_ACTIONS, np.int8)}

    @property
    def engine_state(self) -> State:
        """The engine state (batch size 1)."""
        assert self.state_ is not None, "call reset() first"
        return self.state_

    def state(self) -> np.ndarray:
        """PettingZoo's global state (for centralised critics): the oracle planes of
        :func:`sichuan_env.seats.observation.encode_oracle` seen from seat 0, (88, 27) float32."""
        assert self.state_ is not None, "call reset() first"
        return encode_oracle(self.state_, 0)[0]

    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        if self.state_ is None:
            return None
        text = render_text(self.state_, 0)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _repr_html_(self) -> str:
        if self.state_ is None:
            return "<i>sichuan_mahjong: not reset</i>"
        return render_html(self.state_, 0)

    def close(self) -> None:
        pass

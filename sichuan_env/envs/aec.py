"""PettingZoo AEC environment: a thin translation onto the batched engine (batch size 1).

>>> from sichuan_env import env
>>> e = env(render_mode="ansi")
>>> e.reset(seed=0)
>>> for agent in e.agent_iter():
...     obs, reward, termination, truncation, info = e.last()
...     action = None if termination or truncation else e.action_space(agent).sample(
...         obs["action_mask"])
...     e.step(action)

=====================  ==========================================================================
item                   value
=====================  ==========================================================================
agents                 ``player_0`` .. ``player_3`` = seats 0..3 (seat 0 deals the first deal)
agent_selection        the seat that decides now (the engine's ``state.current``): the forbidden
                       suit choices (seats 0..3 in turn), one's own turn, and the claim windows
                       (every seat with a legal claim, counter-clockwise from the discarder;
                       earlier answers are hidden). Seats that have declared Hu are never
                       selected but stay in ``agents`` (they can still receive refunds).
observation_space      ``Dict(observation=Box((78, 27), float32), action_mask=Box(0, 1, (88,),
                       int8))``; the planes are documented in :mod:`sichuan_env.seats.observation`,
                       rotated so the observing agent is relative seat 0. The mask is all zeros
                       for an agent that is not selected.
action_space           ``Discrete(88)`` (layout in :mod:`sichuan_env.core.actions`)
rewards                points paid (negative) and received (positive) by every seat during the
                       last step (Hu and kong payments, refunds, wall-end settlement); they are
                       accumulated in ``_cumulative_rewards`` until the agent acts, as PettingZoo
                       specifies, so ``last()`` returns everything since the agent's last move.
termination            every agent terminates together when the match ends (one deal unless
                       ``rules.deals_per_match > 1``); there is no truncation.
infos                  ``{"legal_moves": [...]}`` (action ids) for the selected agent,
                       ``{"legal_moves": []}`` for the others; ``"action_mask"`` too.
illegal actions        ``raw_env`` raises :class:`~sichuan_env.core.engine.IllegalActionError` for
an
                       integer outside the mask and ``TypeError`` for anything but a Python or
                       numpy integer (``None``, ``"void s"``, ``2.5``), and changes nothing.
                       ``env()`` wraps it like PettingZoo's classic games
                       (``TerminateIllegalWrapper(illegal_reward=-1)``,
                       ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``, done in one
                       layer, :class:`CheckedEnv`): the offending agent gets -1, every agent
                       terminates, and a warning is logged.
render modes           ``"ansi"`` returns the text of :func:`sichuan_env.records.render.render_text`
                       (everything shown); ``"human"`` prints it. ``_repr_html_`` for notebooks.
state()                the global state for centralised critics: ``encode_oracle`` from seat 0,
                       ``state_space = Box((88, 27), float32)``; the engine state itself is
                       ``unwrapped.engine_state``
seeding                ``reset(seed=s)`` deals the wall of engine seed ``s`` (the same wall as
                       ``engine.reset([s])``); later ``reset()`` calls draw new walls from a
                       generator seeded by ``s``. ``reset(options={"dealer": k})`` deals from k.
=====================  ==========================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from sichuan_env.core import engine
from sichuan_env.core.actions import N_ACTIONS
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.seeding import drawn_seed
from sichuan_env.core.state import State
from sichuan_env.records.render import render_html, render_text
from sichuan_env.seats.driver import check_action
from sichuan_env.seats.observation import (
    OBS_VERSION,
    SeatEncoder,
    encode_oracle,
    observation_bounds,
)

AGENTS = tuple(f"player_{i}" for i in range(4))
_NO_POINTS = [0.0, 0.0, 0.0, 0.0]  # a step's rewards when nobody paid
ENV_NAME = "sichuan_mahjong_v0"


ILLEGAL_REWARD = -1.0


def env(rules: Rules | str | None = None, render_mode: str | None = None) -> AECEnv:
    """The wrapped AEC environment (illegal move: -1 and the game ends; order enforced):
    :class:`CheckedEnv` around :class:`raw_env`."""
    return CheckedEnv(raw_env(rules=rules, render_mode=render_mode))


def reference_env(rules: Rules | str | None = None, render_mode: str | None = None) -> AECEnv:
    """:func:`env` built from PettingZoo's own three wrappers (slower; the tests check
    that :class:`CheckedEnv` behaves exactly like it)."""
    e: AECEnv = raw_env(rules=rules, render_mode=render_mode)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=ILLEGAL_REWARD)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


def _before_reset(name: str) -> property:
    """A property reading ``name`` of the unwrapped env, refused before ``reset()``
    (OrderEnforcingWrapper's rule)."""

    def get(self: CheckedEnv) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    return property(get, doc=f"The unwrapped env's ``{name}`` (after reset).")


class CheckedEnv(wrappers.OrderEnforcingWrapper):
    """What :func:`env` returns: PettingZoo's ``TerminateIllegalWrapper(illegal_reward=-1)``,
    ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper`` as one layer.

    The same checks and outcomes as the three nested wrappers (:func:`reference_env`):
    attributes and calls refused before ``reset()``, ``agent_iter`` demanding a ``step``
    per agent, an ``AssertionError`` for an action outside ``Discrete(88)`` (or ``None``
    for a live agent), and an illegal action ending the game with -1 for its agent and a
    logged warning. It reads the unwrapped env's attributes directly instead of through
    three ``__getattr__`` layers, and the selected agent's legal mask from the env
    instead of from a saved observation (the same mask: nothing changes between them).
    """

    def __init__(self, env: raw_env) -> None:
        super().__init__(env)
        self._raw = env.unwrapped
        self._terminated = False  # the game was ended by an illegal move

    agents = _before_reset("agents")
    agent_selection = _before_reset("agent_selection")
    rewards = _before_reset("rewards")
    terminations = _before_reset("terminations")
    truncations = _before_reset("truncations")
    infos = _before_reset("infos")

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self._raw._cumulative_rewards

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._terminated = False
        super().reset(seed=seed, options=options)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self._raw.last(observe)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        raw = self._raw
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        in_space = (type(action) is int and 0 <= action < N_ACTIONS) or raw.action_spaces[
            agent].contains(action)
        assert (action is None and dead) or in_space, "action is not in action space"
        if dead:
            if self._terminated:
                raw._was_dead_step(action)
            else:
                raw.step(action)
        elif not raw._mask8[action]:  # live agent: the game is not over
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.truncations, 0)
            raw.rewards[agent] = float(ILLEGAL_REWARD)
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._terminated = True
        else:  # in the space and legal: checked here once
            raw._apply(agent, int(action))

    def __str__(self) -> str:
        return str(self.env)


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
        self._stepper: engine.InPlaceStepper | None = None  # steps of state_
        self._rows: tuple[Any, ...] | None = None  # (state_, its mask row as int8, current, done)
        self._over = False  # state_.done[0], read after each change
        self._infos: dict[str, dict[str, Any]] | None = None  # built when first read
        self._info_selected: tuple[str, dict[str, Any]] | None = None  # last()'s, kept
        self._to_move = AGENTS[0]  # the engine's seat to act (agent_selection may move on
        # to terminated agents after an illegal move; the legal moves stay this seat's)

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
        if self.state_ is None:
            self.state_ = engine.reset([deal_seed], self.rules, dealer=dealer)
        else:  # the same State object: the engine's and the encoder's bags stay valid
            engine.redeal(self.state_, [deal_seed], dealer=dealer)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self._after_change()

    def _after_change(self) -> None:
        st = self.state_
        assert st is not None
        rows = self._rows
        if rows is None or rows[0] is not st:
            # the stored bool mask viewed as 0/1 bytes: one copy gives the int8 mask
            self._rows = rows = (st, st.legal_action_mask[0].view(np.int8), st.current,
                                 st.done)
        self._mask8 = rows[1].copy()
        self.agent_selection = self._to_move = AGENTS[rows[2].item(0)]
        self._over = rows[3].item(0)  # the match is over
        self._infos = None  # built from the new state when read
        self._info_selected = None

    def _info(self, agent: str) -> dict[str, Any]:
        """``infos[agent]`` without building the other agents' entries (the same dict
        object ``infos`` then holds)."""
        if self._infos is not None:
            return self._infos[agent]
        kept = self._info_selected
        if kept is not None and kept[0] == agent:
            return kept[1]
        if agent == self._to_move and not self._over:
            mask8 = self._mask8
            info = {"legal_moves": mask8.nonzero()[0].tolist(), "action_mask": mask8}
        else:
            info = {"legal_moves": [], "action_mask": self._zero_mask}
        self._info_selected = (agent, info)
        return info

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        """PettingZoo's ``infos``: ``{"legal_moves": [...], "action_mask": mask}`` per
        agent (see the module docstring); built from the state when first read."""
        infos = self._infos
        if infos is None:
            infos = {a: self._info(a) if a == self._to_move else
                     {"legal_moves": [], "action_mask": self._zero_mask} for a in AGENTS}
            self._infos = infos
        return infos

    @infos.setter
    def infos(self, value: dict[str, dict[str, Any]]) -> None:
        self._infos = value

    def selected_mask(self) -> np.ndarray:
        """(88,) int8: the legal actions of ``agent_selection`` (what its observation's
        ``action_mask`` holds; all zeros once the game is over). Do not modify it."""
        return self._mask8 if not self._over else self._zero_mask

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.state_ is not None
        self._apply(agent, check_action(action, self._mask8, agent))  # raises first

    def _apply(self, agent: str, a: int) -> None:
        """Step the selected ``agent``'s legal action ``a`` (an int, already checked)."""
        self._cumulative_rewards[agent] = 0.0
        self._action[0] = a
        stepper = self._stepper
        if stepper is None or stepper.state is not self.state_:
            self._stepper = stepper = engine.InPlaceStepper(self.state_)
        rewards, done = stepper(self._action)
        points = rewards[0].tolist()
        if points == _NO_POINTS:  # most steps: nothing to add up
            self.rewards = dict.fromkeys(AGENTS, 0.0)
        else:
            self.rewards = dict(zip(AGENTS, points, strict=True))
            cumulative = self._cumulative_rewards
            for name, p in zip(AGENTS, points, strict=True):
                cumulative[name] += p
        if done[0]:
            self.terminations = dict.fromkeys(AGENTS, True)
        self._after_change()
        if self.render_mode == "human":
            self.render()

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``, reading only the selected agent's info."""
        agent = self.agent_selection
        assert agent is not None
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self._info(agent))

    # ------------------------------------------------------------------ reading
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        st = self.state_
        assert st is not None, "call reset() first"
        seat = self.agent_name_mapping[agent]
        encoder = self._encoder
        if encoder is None or encoder.state is not st:
            self._encoder = encoder = SeatEncoder(st)
        obs = encoder.encode(seat)
        if agent == self.agent_selection and not self._over:
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

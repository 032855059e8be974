"""The one agent interface shared by the environments, the bots and the arena.

An agent maps observations and legal-action masks to actions:

==============================================  =============================================
method                                          shapes
==============================================  =============================================
``act(observation, mask) -> int``               one decision: observation ``(C, 27)`` float32
                                                (see :mod:`sichuan_env.observation`), mask
                                                ``(88,)`` bool/int8
``act_batch(observations, masks) -> actions``   ``(N, C, 27)``, ``(N, 88)`` -> ``(N,)`` int64
==============================================  =============================================

Every returned action must be legal (``mask[action]`` true); :func:`validate_agent`
checks an agent over whole deals. Actions follow :mod:`sichuan_env.actions`.

``needs_observation`` (default True): an agent that only looks at the masks (such as
:class:`RandomAgent`) sets it False, and the environments then pass a placeholder
``(N, 0)`` float32 array instead of encoding observations (it saves most of the work of
an opponent step). Bots should derive from :class:`BaseAgent` and implement only
``act_batch``; the batched form is what the vectorised environments call.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from sichuan_env import engine
from sichuan_env.actions import N_ACTIONS, action_to_str
from sichuan_env.engine import IllegalActionError
from sichuan_env.observation import encode
from sichuan_env.rules import Rules, get_rules

__all__ = [
    "Agent", "BaseAgent", "RandomAgent", "validate_agent", "NO_OBSERVATION", "needs_observation",
]


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act`` and ``act_batch`` (see the module docstring)."""

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int: ...

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray: ...


def NO_OBSERVATION(n: int) -> np.ndarray:  # noqa: N802 - reads as a constant
    """The placeholder passed to agents whose ``needs_observation`` is False: (n, 0)."""
    return np.zeros((n, 0), np.float32)


def needs_observation(agent: object) -> bool:
    """Whether the environments must encode observations for ``agent``."""
    return bool(getattr(agent, "needs_observation", True))


class BaseAgent:
    """Base class: implement :meth:`act_batch`; :meth:`act` calls it with a batch of one."""

    needs_observation: bool = True

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """One action for one observation ``(C, 27)`` and mask ``(88,)``."""
        obs = np.asarray(observation)
        return int(self.act_batch(obs[None], np.asarray(mask)[None])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(N,) int64 actions for observations ``(N, C, 27)`` and masks ``(N, 88)``."""
        raise NotImplementedError

    def reset(self) -> None:
        """Called by environments at the start of a new deal (optional hook)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(BaseAgent):
    """Uniform over the legal actions, batched (no loop over rows).

    ``seed`` fixes the agent's own generator, so a game with the same walls and the same
    seeds replays exactly.
    """

    needs_observation = False

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        m = np.asarray(masks).astype(bool, copy=False)
        if m.ndim != 2 or m.shape[1] != N_ACTIONS:
            raise ValueError(f"masks must have shape (N, {N_ACTIONS}), got {m.shape}")
        if m.shape[0] and not m.any(1).all():
            raise ValueError(f"row {int(np.argmin(m.any(1)))} of the masks has no legal action")
        u = self.rng.random(m.shape, dtype=np.float32)
        u[~m] = -1.0
        return u.argmax(1).astype(np.int64)

    def __repr__(self) -> str:
        return f"RandomAgent(seed={self.seed})"


def validate_agent(
    agent: Agent,
    n_deals: int = 8,
    seed: int = 0,
    rules: Rules | str | None = None,
    max_steps: int = 100_000,
) -> None:
    """Play ``n_deals`` deals (one table each, all four seats played by ``agent``, batched)
    and raise :class:`~sichuan_env.engine.IllegalActionError` at the first illegal action,
    or ``ValueError`` when ``act_batch`` returns the wrong shape."""
    rules = get_rules(rules)
    st = engine.reset(np.arange(seed, seed + n_deals), rules)
    use_obs = needs_observation(agent)
    for _ in range(max_steps):
        live = np.flatnonzero(~st.done)
        if not live.size:
            return
        mask = st.legal_action_mask
        seats = st.current[live].astype(np.intp)
        obs = encode(st, seats, live) if use_obs else NO_OBSERVATION(live.size)
        acts = np.asarray(agent.act_batch(obs, mask[live]))
        if acts.shape != (live.size,):
            raise ValueError(f"act_batch returned shape {acts.shape}, expected ({live.size},)")
        acts = acts.astype(np.int64)
        ok = (acts >= 0) & (acts < N_ACTIONS)
        ok[ok] = mask[live[ok], acts[ok]]
        if not ok.all():
            i = int(np.argmin(ok))
            a = int(acts[i])
            t = int(live[i])
            name = action_to_str(a) if 0 <= a < N_ACTIONS else "out of range"
            legal = sorted(action_to_str(x) for x in np.flatnonzero(mask[t]))
            raise IllegalActionError(
                f"{agent!r} chose illegal action {a} ({name}) at table {t} (seed {seed + t}), "
                f"seat {int(st.current[t])}, phase {int(st.phase[t])}; legal: {legal}"
            )
        full = np.zeros(st.batch_size, np.int64)
        full[live] = acts
        st, _, _ = engine.step(st, full, inplace=True)
    raise RuntimeError(f"deals did not finish within {max_steps} steps")

"""A trained MaskablePPO model as an agent for the arena, the environments and the
terminal play (``--opponents ppo:path/to/model.zip``).

Models trained with the adviser's planes (:mod:`agents.training.advice`) read a seat view instead of
planes: the agent then builds the planes itself (for the rules its model was trained
under), the analysis planes and the adviser's choice, exactly as the training env did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.training.features import N_FEATURE_PLANES, augment
from sichuan_env.agent import BaseAgent
from sichuan_env.observation import N_CHANNELS, planes_from_view
from sichuan_env.rules import get_rules
from sichuan_env.view import SeatView

#: The model shipped with the package: what the agent name ``ppo`` (no path) plays. How it
#: was made, and its measured strength, are in ``ppo_mil.json`` next to it.
SHIPPED_MODEL = Path(__file__).resolve().parent / "models" / "ppo_mil.zip"


def shipped_model(rules: Any = None) -> Path:
    """The shipped model for a rule preset: ``models/ppo_<preset>.zip`` when the package
    has one, else :data:`SHIPPED_MODEL` (trained under MIL)."""
    if rules is None:
        return SHIPPED_MODEL
    own = SHIPPED_MODEL.with_name(f"ppo_{get_rules(rules).preset}.zip")
    return own if own.exists() else SHIPPED_MODEL


class PPOAgent(BaseAgent):
    """Chooses with a MaskablePPO policy; illegal actions are masked out.

    ``model`` is a loaded ``sb3_contrib.MaskablePPO`` or a path to its ``.zip``; by default
    the model shipped with the package for the preset ``rules`` (:func:`shipped_model`).
    ``deterministic`` picks the most likely action (the default for evaluation).
    ``rules``: the preset whose scales the planes use, for a model that reads a seat view
    (one trained with advice planes; default: the preset it was trained under when the
    model says so, else "mil"); ``adviser``: the bot giving the advice ("rules").
    """

    def __init__(self, model: Any = None, deterministic: bool = True, device: str = "cpu",
                 rules: str | None = None, adviser: str = "rules") -> None:
        shipped = model is None
        if shipped:
            model = shipped_model(rules)
            if model == SHIPPED_MODEL:
                rules = None  # the MIL model reads its planes as it was trained
            if not model.exists():
                raise FileNotFoundError(f"the shipped PPO model is missing: no file {model} "
                                        "(reinstall the package, or give ppo:PATH)")
        if isinstance(model, str | Path):
            path = Path(model)
            if not path.exists() and not path.with_suffix(".zip").exists():
                raise FileNotFoundError(f"no saved PPO model at {path}")
            from agents.training.ppo_policy import load_model

            model = load_model(path, device=device)
            self.path: str | None = str(path)
        else:
            self.path = None
        self.model = model
        self.deterministic = deterministic
        self.name = "ppo" if shipped or not self.path else f"ppo:{self.path}"
        self.adviser = None
        # channels the actor reads; a model with an oracle critic has more after them
        self.acting_planes = int(getattr(model.policy, "policy_planes",
                                         model.observation_space.shape[0]))
        if _advised(self.acting_planes):
            from agents.training.advice import make_adviser

            self.needs = "view"
            self.adviser = make_adviser(adviser)
            self.rules = get_rules(rules or getattr(model, "sichuan_rules", None) or "mil")

    def advised_input(self, view: SeatView, masks: np.ndarray) -> np.ndarray:
        """Planes + analysis planes + the adviser's choice, from seat views."""
        from agents.training.advice import advice_planes

        planes = augment(planes_from_view(view, self.rules))
        return np.concatenate([planes, advice_planes(self.adviser.act_batch(view, masks))],
                              axis=1)

    def act_batch(self, observations: np.ndarray | SeatView, masks: np.ndarray) -> np.ndarray:
        m = np.asarray(masks).astype(bool, copy=False)
        if m.shape[0] == 0:
            return np.zeros(0, np.int64)
        if self.adviser is not None:
            if not isinstance(observations, SeatView):
                raise TypeError(f"{self!r} reads seat views (needs = 'view'): its model was "
                                "trained with advice planes; pass sichuan_env.view.seat_view")
            obs = self.advised_input(observations, m)
        else:
            obs = np.asarray(observations, dtype=np.float32)
        want = self.model.observation_space.shape
        if obs.shape[1] + N_FEATURE_PLANES == self.acting_planes:
            obs = augment(obs)  # the model was trained with the analysis planes
        if obs.shape[1] == self.acting_planes < want[0]:  # the critic's hidden planes:
            pad = np.zeros((obs.shape[0], want[0] - obs.shape[1], *want[1:]), np.float32)
            obs = np.concatenate([obs, pad], axis=1)  # the actor does not read them
        if obs.shape[1:] != want:
            raise ValueError(
                f"the PPO model expects observations of shape {want}, got {obs.shape[1:]}"
                " (was it trained on another observation version?)"
            )
        actions, _ = self.model.predict(obs, action_masks=m, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(-1)

    def __repr__(self) -> str:
        return f"PPOAgent({self.path or 'in-memory model'})"


def _advised(acting_planes: int) -> bool:
    """Whether a policy reading this many channels reads the advice planes."""
    from agents.training.advice import N_ADVICE_PLANES

    return acting_planes == N_CHANNELS + N_FEATURE_PLANES + N_ADVICE_PLANES


class SnapshotAgent(BaseAgent):
    """A frozen copy of a policy for self-play; :meth:`update` copies the latest weights."""

    def __init__(self, model: Any, deterministic: bool = False) -> None:
        import copy

        self.policy = copy.deepcopy(model.policy)
        self.policy.set_training_mode(False)
        self.deterministic = deterministic

    def update(self, model: Any) -> None:
        self.policy.load_state_dict(model.policy.state_dict())

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if len(observations) == 0:
            return np.zeros(0, np.int64)
        obs = np.asarray(observations, np.float32)
        if obs.shape[1:] != self.policy.observation_space.shape:
            obs = augment(obs)
        actions, _ = self.policy.predict(
            obs, deterministic=self.deterministic,
            action_masks=np.asarray(masks, bool),
        )
        return np.asarray(actions, dtype=np.int64).reshape(-1)

    def __repr__(self) -> str:
        return "SnapshotAgent()"

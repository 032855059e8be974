"""A trained MaskablePPO model as an agent for the arena, the environments and the
terminal play (``--opponents ppo:path/to/model.zip``).

Models trained with the adviser's planes (:mod:`sichuan_agents.training.advice`) read a seat view
instead of
planes: the agent then builds the planes itself (for the rules its model was trained
under), the analysis planes and the adviser's choice, exactly as the training env did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.training.features import augment
from sichuan_env.core.rules import get_rules
from sichuan_env.seats.agent import BaseAgent
from sichuan_env.seats.view import SeatView

#: Where the shipped models live: ``<kind>_<preset>.zip`` with its metadata (how it was
#: made, what it measured, its input layout) in ``<kind>_<preset>.json``; docs/models.md has
#: their model cards.
MODELS = Path(__file__).resolve().parent  # the shipped files lie beside this module
#: How a shipped model was made, by agent name: ``fitted``, the actor fitted to rollout
#: comparisons (sichuan_agents.training.distill, repeated by sichuan_agents.training.improve);
# ``ppo``, a
#: fitted model changed by PPO updates (sichuan_agents.training.finetune).
KINDS = ("fitted", "ppo")


def shipped_model(rules: Any = None, kind: str = "ppo") -> Path:
    """The shipped model of ``kind`` (``fitted`` or ``ppo``) for a rule preset:
    ``models/<kind>_<preset>.zip`` when the package has one, else the MIL one."""
    if kind not in KINDS:
        raise ValueError(f"no shipped model kind {kind!r}; kinds: {', '.join(KINDS)}")
    mil = MODELS / f"{kind}_mil.zip"
    if rules is None:
        return mil
    own = MODELS / f"{kind}_{get_rules(rules).preset}.zip"
    return own if own.exists() else mil


def read_metadata(path: Path) -> dict[str, Any] | None:
    """The metadata ``.json`` next to a model file, or None when there is none."""
    meta = Path(path).with_suffix(".json")
    if not meta.is_file():
        return None
    try:
        return json.loads(meta.read_text())
    except ValueError:
        return None


def shipped_rows(rules: Any = "mil") -> list[str]:
    """One short line per shipped model for the preset: its name and its measured ladder
    rows against ``rules`` and ``greedy`` (from its metadata), e.g.
    ``"fitted +0.149 vs rules, +0.389 vs greedy (20000 deals, seed 20261129)"``."""
    preset = get_rules(rules).preset
    lines = []
    for kind in (*KINDS, "boosted"):
        path = MODELS / f"{kind}_{preset}{'.txt' if kind == 'boosted' else '.zip'}"
        meta = read_metadata(path) if path.exists() else None
        if not meta:
            continue
        res = meta.get("results", {})
        parts, deals, seed = [], None, res.get("seed")
        for bot in ("rules", "greedy"):
            row = res.get(f"{preset}/{kind}-{bot}")
            if row:
                parts.append(f"{row['diff']:+.3f} vs {bot}")
                deals, seed = row["deals"], row.get("seed", seed)
        if parts:
            lines.append(f"{kind} {', '.join(parts)} ({deals} deals, seed {seed})")
    return lines


class PPOAgent(BaseAgent):
    """Chooses with a MaskablePPO policy; illegal actions are masked out.

    ``model`` is a loaded ``sb3_contrib.MaskablePPO`` or a path to its ``.zip``; by default
    the model of ``kind`` shipped with the package for the preset ``rules``
    (:func:`shipped_model`; agent names ``ppo`` and ``fitted``). ``deterministic`` picks the
    most likely action (the default for evaluation). The network's input layout (which
    planes it reads: :mod:`sichuan_agents.training.layout`) comes with the model or its metadata.
    ``rules``: the preset whose scales the planes use, for a model that reads a seat view
    (one trained with advice planes; default: the preset it was trained under when the
    model says so, else "mil"); ``adviser``: the bot giving the advice (default: the one the
    model was trained with, "rules").
    """

    def __init__(self, model: Any = None, deterministic: bool = True, device: str = "cpu",
                 rules: str | None = None, adviser: str | None = None,
                 kind: str = "ppo") -> None:
        from sichuan_agents.training.layout import acting_channels, input_layout

        shipped = model is None
        meta = None
        if shipped:
            model = shipped_model(rules, kind)
            if model.name == f"{kind}_mil.zip":
                rules = None  # the MIL model reads its planes as it was trained
            if not model.exists():
                raise FileNotFoundError(f"the shipped {kind} model is missing: no file {model} "
                                        f"(reinstall the package, or give {kind}:PATH)")
        if isinstance(model, str | Path):
            path = Path(model)
            if not path.exists() and not path.with_suffix(".zip").exists():
                raise FileNotFoundError(f"no saved PPO model at {path}")
            from sichuan_agents.training.ppo_policy import load_model

            meta = read_metadata(path)
            model = load_model(path, device=device)
            self.path: str | None = str(path)
        else:
            self.path = None
        self.model = model
        self.deterministic = deterministic
        self.kind = kind
        self.name = kind if shipped or not self.path else f"{kind}:{self.path}"
        self.layout = input_layout(model, meta)
        self.adviser = None
        # channels the actor reads; a model with an oracle critic has more after them
        self.acting_planes = acting_channels(self.layout)
        if self.layout["advice"]:
            from sichuan_agents.training.advice import make_adviser

            self.needs = "view"
            self.adviser = make_adviser(adviser or self.layout.get("adviser") or "rules")
            self.rules = get_rules(rules or getattr(model, "sichuan_rules", None) or "mil")

    def advised_input(self, view: SeatView, masks: np.ndarray,
                      advice: np.ndarray | None = None) -> np.ndarray:
        """Planes + analysis planes + the adviser's choice (``advice``: that choice,
        computed here when not given), from seat views."""
        from sichuan_agents.training.advice import advised_planes

        if advice is None:
            advice = self.adviser.act_batch(view, masks)
        return advised_planes(view, self.rules, advice)

    def network_input(self, observations: np.ndarray | SeatView, masks: np.ndarray,
                      advice: np.ndarray | None = None) -> np.ndarray:
        """The actor's input for a batch: the planes its layout reads (analysis and advice
        planes added as the model was trained), the critic's hidden planes zero."""
        m = np.asarray(masks).astype(bool, copy=False)
        if self.adviser is not None:
            if not isinstance(observations, SeatView):
                raise TypeError(f"{self!r} reads seat views (needs = 'view'): its model was "
                                "trained with advice planes; pass sichuan_env.seats.view.seat_view")
            obs = self.advised_input(observations, m, advice)
        else:
            obs = np.asarray(observations, dtype=np.float32)
        want = self.model.observation_space.shape
        if self.layout["analysis"] and obs.shape[1] == self.layout["planes"]:
            obs = augment(obs)  # the model was trained with the analysis planes
        if obs.shape[1] == self.acting_planes < want[0]:  # the critic's hidden planes:
            pad = np.zeros((obs.shape[0], want[0] - obs.shape[1], *want[1:]), np.float32)
            obs = np.concatenate([obs, pad], axis=1)  # the actor does not read them
        if obs.shape[1:] != want:
            raise ValueError(
                f"the PPO model expects observations of shape {want}, got {obs.shape[1:]}"
                " (was it trained on another observation version?)"
            )
        return obs

    def act_on_input(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The network's actions for inputs made by :meth:`network_input`."""
        actions, _ = self.model.predict(obs, action_masks=np.asarray(masks, bool),
                                        deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(-1)

    def act_batch(self, observations: np.ndarray | SeatView, masks: np.ndarray) -> np.ndarray:
        m = np.asarray(masks).astype(bool, copy=False)
        if m.shape[0] == 0:
            return np.zeros(0, np.int64)
        return self.act_on_input(self.network_input(observations, m), m)

    def __repr__(self) -> str:
        return f"PPOAgent({self.path or 'in-memory model'})"


def fitted_agent(model: Any = None, deterministic: bool = True, device: str = "cpu",
                 rules: str | None = None, adviser: str | None = None) -> PPOAgent:
    """The agent name ``fitted``: a :class:`PPOAgent` playing the shipped model fitted to
    rollout comparisons for the preset (or ``fitted:PATH``, a model made so)."""
    return PPOAgent(model, deterministic, device, rules, adviser, kind="fitted")


class SnapshotAgent(BaseAgent):
    """A frozen copy of a policy for self-play; :meth:`update` copies the latest weights."""

    def __init__(self, model: Any, deterministic: bool = False) -> None:
        import copy

        from sichuan_agents.training.layout import input_layout

        self.layout = input_layout(model)
        self.policy = copy.deepcopy(model.policy)
        self.policy.set_training_mode(False)
        self.deterministic = deterministic

    def update(self, model: Any) -> None:
        self.policy.load_state_dict(model.policy.state_dict())

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if len(observations) == 0:
            return np.zeros(0, np.int64)
        obs = np.asarray(observations, np.float32)
        if self.layout["analysis"] and obs.shape[1] == self.layout["planes"]:
            obs = augment(obs)
        actions, _ = self.policy.predict(
            obs, deterministic=self.deterministic,
            action_masks=np.asarray(masks, bool),
        )
        return np.asarray(actions, dtype=np.int64).reshape(-1)

    def __repr__(self) -> str:
        return "SnapshotAgent()"

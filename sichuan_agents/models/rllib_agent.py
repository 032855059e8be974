"""A policy trained with ``train.py --backend rllib`` as an agent (``rllib:PATH``) for the
arena, the environments and the terminal play.

``PATH`` is a run folder (``OUT``, holding ``policy.pt``), a ``policy.pt`` file, or an RLlib
checkpoint folder (``OUT/checkpoint``, ``OUT/checkpoints/...``; loading one needs Ray).
``policy.pt`` holds the network's configuration, its input layout
(:mod:`sichuan_agents.training.layout`) and weights (:func:`save_policy`) and loads with torch
alone; a file written without a layout, and a checkpoint folder, are read with
:func:`sichuan_agents.training.layout.inferred_layout`. Observations without the analysis planes are
augmented when the layout has them (:func:`sichuan_agents.training.features.augment`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from sichuan_agents.training.features import augment
from sichuan_agents.training.layout import check_layout, inferred_layout
from sichuan_agents.training.rllib_net import TilePlanesNet
from sichuan_env.seats.agent import BaseAgent

POLICY_FILE = "policy.pt"
POLICY_FORMAT = "sichuan-rllib-policy/1"
MODULE_ID = "learner"


def save_policy(net: TilePlanesNet, path: str | Path, layout: dict[str, Any]) -> None:
    """Write the network's configuration, its input ``layout`` (checked against the
    network) and weights (CPU tensors) to ``path``."""
    layout = check_layout(layout, net.config["n_planes"])
    state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    torch.save({"format": POLICY_FORMAT, "config": net.config, "input": layout,
                "state_dict": state}, path)


def net_layout(net: TilePlanesNet) -> dict[str, Any]:
    """The layout of a network saved without one (:func:`inferred_layout`)."""
    n = int(net.config["n_planes"])
    return inferred_layout(n, n)


def load_policy(path: str | Path) -> tuple[TilePlanesNet, dict[str, Any]]:
    """The network of a run folder, ``policy.pt`` file or RLlib checkpoint folder, and its
    input layout (saved with it, else :func:`net_layout`)."""
    p = Path(path)
    if p.is_dir() and (p / POLICY_FILE).is_file():
        p = p / POLICY_FILE
    if p.is_file():
        data = torch.load(p, map_location="cpu", weights_only=True)
        if not isinstance(data, dict) or data.get("format") != POLICY_FORMAT:
            raise ValueError(f"{p} is not a policy written by train.py --backend rllib")
        net = TilePlanesNet(**data["config"])
        net.load_state_dict(data["state_dict"])
        saved = data.get("input")
        layout = net_layout(net) if saved is None else check_layout(saved,
                                                                     net.config["n_planes"])
        return net, layout
    return (net := load_net(p)), net_layout(net)


def load_net(path: str | Path) -> TilePlanesNet:
    """The network of a run folder, ``policy.pt`` file or RLlib checkpoint folder."""
    p = Path(path)
    if p.is_file() or (p / POLICY_FILE).is_file():
        return load_policy(p)[0]
    module_dir = p / "learner_group" / "learner" / "rl_module" / MODULE_ID
    if module_dir.is_dir():
        from ray.rllib.core.rl_module.rl_module import RLModule

        net = RLModule.from_checkpoint(str(module_dir)).net.cpu()
        net.features_extractor.autocast_dtype = None  # acts in float32 (--precision bf16)
        return net
    raise FileNotFoundError(f"no RLlib policy at {path} (expected a run folder with "
                            f"{POLICY_FILE}, a {POLICY_FILE} file or an RLlib checkpoint)")


class RLlibAgent(BaseAgent):
    """Chooses with a :class:`~sichuan_agents.training.rllib_net.TilePlanesNet`: the most likely
    legal
    action (``deterministic``, the default) or a sample from the masked policy. A network
    given as an object reads ``layout`` (default :func:`net_layout`)."""

    def __init__(self, policy: str | Path | TilePlanesNet, deterministic: bool = True,
                 seed: int | None = None, layout: dict[str, Any] | None = None) -> None:
        self.path = None if isinstance(policy, TilePlanesNet) else str(policy)
        if isinstance(policy, TilePlanesNet):
            self.net = policy
            self.layout = net_layout(policy) if layout is None else check_layout(
                layout, policy.config["n_planes"])
        else:
            self.net, self.layout = load_policy(policy)
        self.net.eval()
        self.deterministic = deterministic
        self.generator = torch.Generator().manual_seed(0 if seed is None else int(seed))
        self.name = f"rllib:{self.path}" if self.path else "rllib"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, np.float32)
        if obs.shape[0] == 0:
            return np.zeros(0, np.int64)
        want = self.net.config["n_planes"]
        if self.layout["analysis"] and obs.shape[1] == self.layout["planes"]:
            obs = augment(obs)
        if obs.shape[1:] != (want, 27):
            raise ValueError(f"the policy expects observations of shape ({want}, 27), got "
                             f"{tuple(np.asarray(observations).shape[1:])}")
        device = next(self.net.parameters()).device
        with torch.no_grad():
            x = torch.as_tensor(obs, device=device)
            m = torch.as_tensor(np.asarray(masks, np.float32), device=device)
            logits = self.net.logits(self.net.features(x), m)
            if self.deterministic:
                acts = logits.argmax(1)
            else:
                probs = torch.softmax(logits, 1).cpu()
                acts = torch.multinomial(probs, 1, generator=self.generator).squeeze(1)
        return acts.cpu().numpy().astype(np.int64)

    def __repr__(self) -> str:
        return f"RLlibAgent({self.path or 'in-memory network'})"


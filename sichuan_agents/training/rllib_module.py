"""An action-masking torch RLModule (RLlib new API stack) with the SB3 PPO network.

Reads the env's dict observation (``observations`` planes, ``action_mask``) from
:mod:`sichuan_env.envs.rllib`; the network is
:class:`sichuan_agents.training.rllib_net.TilePlanesNet` (the
layers of the SB3 policy, so weights move both ways: :func:`load_sb3_weights`,
:func:`sichuan_agents.training.rllib_net.to_sb3_state`). Illegal actions get logit -1e8, so PPO's
sampled
and greedy actions are always legal. ``model_config``: ``features_dim`` (256),
``channels`` (64, :data:`sichuan_agents.training.ppo_policy.CHANNELS`; ``train.py --channels``
sets it), ``hidden`` (128), ``precision`` (``fp32``; ``bf16``: the extractor computes in
bfloat16 in the learner and the env runners, see
:func:`sichuan_agents.training.ppo_policy.network_precision`).

:class:`TilePlanesAPPOModule` is the same module with the target network APPO's loss
reads (a lagged copy of the network, kept in the learner only: the env runners' inference
copies leave it out).
"""

from __future__ import annotations

from typing import Any

from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.utils import make_target_network
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI
from ray.rllib.core.rl_module.apis.target_network_api import (
    TARGET_NETWORK_ACTION_DIST_INPUTS,
    TargetNetworkAPI,
)
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule

from sichuan_agents.training.ppo_policy import CHANNELS, PRECISIONS
from sichuan_agents.training.rllib_net import TilePlanesNet, from_sb3_state

MODEL_DEFAULTS = {"features_dim": 256, "channels": CHANNELS, "hidden": 128,
                  "precision": "fp32"}


class TilePlanesRLModule(TorchRLModule, ValueFunctionAPI):
    """Masked categorical policy and value over the tile planes (see the module doc)."""

    def setup(self) -> None:
        cfg = {**MODEL_DEFAULTS, **(self.model_config or {})}
        planes = self.observation_space["observations"]
        self.net = TilePlanesNet(int(planes.shape[0]), cfg["features_dim"], cfg["channels"],
                                 cfg["hidden"])
        self.net.features_extractor.autocast_dtype = PRECISIONS[cfg["precision"]]

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        feats = self.net.features(obs["observations"])
        return {Columns.ACTION_DIST_INPUTS: self.net.logits(feats, obs["action_mask"])}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        feats = self.net.features(obs["observations"])
        return {Columns.ACTION_DIST_INPUTS: self.net.logits(feats, obs["action_mask"]),
                Columns.EMBEDDINGS: feats}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None:
            embeddings = self.net.features(batch[Columns.OBS]["observations"])
        return self.net.values(embeddings)


class TilePlanesAPPOModule(TilePlanesRLModule, TargetNetworkAPI, InferenceOnlyAPI):
    """:class:`TilePlanesRLModule` with APPO's target network (``_old_net``, a copy of
    ``net`` that the learner moves towards it; not in the env runners' copies)."""

    def make_target_networks(self) -> None:
        self._old_net = make_target_network(self.net)

    def get_target_network_pairs(self) -> list[tuple[Any, Any]]:
        return [(self.net, self._old_net)]

    def forward_target(self, batch: dict[str, Any]) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        feats = self._old_net.features(obs["observations"])
        return {TARGET_NETWORK_ACTION_DIST_INPUTS: self._old_net.logits(feats,
                                                                         obs["action_mask"])}

    def get_non_inference_attributes(self) -> list[str]:
        return ["_old_net"]


def module_spec(model_config: dict[str, Any] | None = None,
                algo: str = "ppo") -> RLModuleSpec:
    """The RLModuleSpec of :class:`TilePlanesRLModule` (``algo="appo"``:
    :class:`TilePlanesAPPOModule`); spaces come from the env."""
    cls = TilePlanesAPPOModule if algo == "appo" else TilePlanesRLModule
    return RLModuleSpec(module_class=cls,
                        model_config={**MODEL_DEFAULTS, **(model_config or {})})


def load_sb3_weights(module: TilePlanesRLModule, policy: Any) -> None:
    """Copy an SB3 MaskablePPO policy's weights into ``module`` (same shapes needed)."""
    module.net.load_state_dict(from_sb3_state(policy.state_dict()))

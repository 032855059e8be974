"""MaskablePPO with a KL penalty to a frozen reference policy and a critic-only phase.

When PPO starts from a strong policy, its early advantages come from a critic that has not
learnt the new policy's values yet, and unconstrained updates mostly undo what the start
knew. Two standard remedies, both here:

* **critic warm-up**: with ``critic_only`` set, an update trains the value function alone
  (the weights the actor's output depends on get no gradient, a shared extractor
  included), so rollouts keep coming from the start policy
  until the critic has caught up (:mod:`sichuan_agents.training.finetune` stops the phase when
  the explained variance stops rising);
* **KL to the start**: with ``kl_coef > 0`` the loss gains ``kl_coef * KL(pi || ref)``,
  the mean over the minibatch of the KL divergence of the current policy from
  ``reference`` (a frozen copy of the start policy) over the legal actions of each
  decision, so the policy moves only where the advantages keep paying for the move.

:class:`KLMaskablePPO` replaces MaskablePPO's update step with one that adds these two;
collection, GAE and saving are MaskablePPO's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import explained_variance
from torch.nn import functional


def masked_log_probs(policy: Any, obs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """(N, A) log-probabilities of a maskable policy's actions; illegal actions get -inf."""
    dist = policy.get_distribution(obs, action_masks=masks.cpu().numpy())
    logits = dist.distribution.logits
    return torch.where(masks, torch.log_softmax(logits, dim=1),
                       torch.full_like(logits, -torch.inf))


def kl_to_reference(policy: Any, reference: Any, obs: torch.Tensor,
                    masks: torch.Tensor) -> torch.Tensor:
    """(N,) ``KL(policy || reference)`` per decision over its legal actions (``masks``);
    differentiable in ``policy``, ``reference`` is read without gradients."""
    masks = masks.bool()
    logp = masked_log_probs(policy, obs, masks)
    with torch.no_grad():
        logq = masked_log_probs(reference, obs, masks)
    p = logp.exp()
    terms = torch.where(masks, p * (logp - logq), torch.zeros_like(logp))
    return terms.sum(1)


def actor_parameters(policy: Any) -> list[Any]:
    """The weights that shape the actor's output (with a shared extractor, that too)."""
    mods = [policy.action_net, policy.mlp_extractor.policy_net, policy.pi_features_extractor]
    return [p for m in mods for p in m.parameters()]


def frozen_copy(policy: Any) -> Any:
    """A copy of ``policy`` in evaluation mode whose weights never train."""
    ref = type(policy)(**policy._get_constructor_parameters())
    ref.load_state_dict(policy.state_dict())
    ref.set_training_mode(False)
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref


class KLMaskablePPO(MaskablePPO):
    """MaskablePPO whose update adds ``kl_coef * KL(pi || reference)`` and can train the
    critic alone (``critic_only``). Set :attr:`reference` with :meth:`freeze_reference`
    (a frozen copy of the current policy) before learning with ``kl_coef > 0``. The
    attributes are plain: save/load keep ``kl_coef`` and ``critic_only``; the reference
    is not saved (``reference`` is excluded) and must be frozen again after loading."""

    kl_coef: float = 0.0
    critic_only: bool = False
    reference: Any = None
    last_stats: dict[str, float] = {}

    def freeze_reference(self) -> None:
        """Take the current policy as the reference of the KL penalty."""
        self.reference = frozen_copy(self.policy)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "reference"]

    def train(self) -> None:
        if self.kl_coef > 0 and self.reference is None and not self.critic_only:
            raise RuntimeError("KLMaskablePPO: kl_coef > 0 needs a reference policy "
                               "(call freeze_reference() first)")
        policy = self.policy
        policy.set_training_mode(True)
        self._update_learning_rate(policy.optimizer)
        clip = float(self.clip_range(self._current_progress_remaining))
        seen: dict[str, list[float]] = {k: [] for k in (
            "policy_loss", "value_loss", "entropy", "kl_ref", "approx_kl", "clip_fraction")}
        for _ in range(self.n_epochs):
            for batch in self.rollout_buffer.get(self.batch_size):
                actions = batch.actions.long().flatten()
                values, log_prob, entropy = policy.evaluate_actions(
                    batch.observations, actions, action_masks=batch.action_masks)
                value_loss = functional.mse_loss(batch.returns, values.flatten())
                seen["value_loss"].append(value_loss.item())
                if self.critic_only:
                    loss = self.vf_coef * value_loss
                else:
                    adv = batch.advantages
                    if self.normalize_advantage and adv.numel() > 1:
                        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    ratio = torch.exp(log_prob - batch.old_log_prob)
                    surrogate = torch.min(adv * ratio,
                                          adv * torch.clamp(ratio, 1 - clip, 1 + clip))
                    policy_loss = -surrogate.mean()
                    ent = entropy.mean() if entropy is not None else -log_prob.mean()
                    loss = policy_loss - self.ent_coef * ent + self.vf_coef * value_loss
                    if self.kl_coef > 0:
                        kl = kl_to_reference(policy, self.reference, batch.observations,
                                             batch.action_masks.bool()).mean()
                        loss = loss + self.kl_coef * kl
                        seen["kl_ref"].append(kl.item())
                    with torch.no_grad():
                        log_ratio = log_prob - batch.old_log_prob
                        seen["approx_kl"].append(
                            float(((log_ratio.exp() - 1) - log_ratio).mean()))
                        seen["clip_fraction"].append(
                            float(((ratio - 1).abs() > clip).float().mean()))
                    seen["policy_loss"].append(policy_loss.item())
                    seen["entropy"].append(ent.item())
                policy.optimizer.zero_grad()
                loss.backward()
                if self.critic_only:  # a shared extractor must not move either
                    for p in actor_parameters(policy):
                        p.grad = None
                torch.nn.utils.clip_grad_norm_(policy.parameters(), self.max_grad_norm)
                policy.optimizer.step()
            self._n_updates += 1
        ev = explained_variance(self.rollout_buffer.values.flatten(),
                                self.rollout_buffer.returns.flatten())
        stats = {k: float(np.mean(v)) for k, v in seen.items() if v}
        stats["explained_variance"] = float(ev)
        self.last_stats = stats
        for k, v in stats.items():
            self.logger.record(f"train/{k}", v)
        self.logger.record("train/critic_only", int(self.critic_only))

"""KL-penalised MaskablePPO (sichuan_agents/training/kl_ppo.py): the penalty is the KL divergence
from the frozen start policy over legal actions, it pulls the policy back to that start,
and the critic-only phase leaves the actor alone."""

import numpy as np
import pytest
import torch

from sichuan_agents.training.features import AnalysisVecEnv
from sichuan_agents.training.kl_ppo import KLMaskablePPO, kl_to_reference
from sichuan_agents.training.ppo_policy import policy_kwargs
from sichuan_env.envs.vector import SichuanVecEnv


def small_model(**kw):
    env = AnalysisVecEnv(SichuanVecEnv(2, opponents="random", seed=3))
    model = KLMaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1,
                          policy_kwargs=policy_kwargs(features_dim=32, channels=8),
                          seed=1, device="cpu", **kw)
    return model


def buffer_batch(model):
    model.learn(16 * model.env.num_envs)  # fills the rollout buffer (one update)
    data = next(model.rollout_buffer.get(None))
    return data.observations, data.action_masks.bool()


def perturb(policy, scale=0.5, seed=0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        w = policy.action_net.weight
        w.add_(scale * torch.randn(w.shape, generator=g))


def actor_logits(policy, obs):
    with torch.no_grad():
        feats = policy.extract_features(obs, policy.pi_features_extractor)
        return policy.action_net(policy.mlp_extractor.forward_actor(feats)).clone()


def test_kl_is_zero_at_the_start_and_matches_the_masked_softmax_after_a_change():
    model = small_model()
    obs, masks = buffer_batch(model)
    model.freeze_reference()
    kl0 = kl_to_reference(model.policy, model.reference, obs, masks)
    assert torch.allclose(kl0, torch.zeros_like(kl0), atol=1e-6)
    perturb(model.policy)
    kl = kl_to_reference(model.policy, model.reference, obs, masks).detach().numpy()
    with torch.no_grad():
        def logits(policy):
            feats = policy.extract_features(obs, policy.pi_features_extractor)
            return policy.action_net(policy.mlp_extractor.forward_actor(feats)).numpy()

        want = []
        for lp, lq, m in zip(logits(model.policy), logits(model.reference), masks.numpy(),
                             strict=True):
            p = np.exp(lp[m] - lp[m].max())
            p /= p.sum()
            q = np.exp(lq[m] - lq[m].max())
            q /= q.sum()
            want.append(float((p * np.log(p / q)).sum()))
    assert (kl >= -1e-6).all() and kl.max() > 1e-3
    assert np.allclose(kl, want, atol=1e-4)


def test_the_penalty_pulls_the_policy_back_to_the_frozen_start_which_never_trains():
    model = small_model(learning_rate=3e-3, ent_coef=0.0)
    obs, masks = buffer_batch(model)
    model.freeze_reference()
    ref_before = [p.clone() for p in model.reference.parameters()]
    perturb(model.policy, scale=1.0)
    before = kl_to_reference(model.policy, model.reference, obs, masks).mean().item()
    model.kl_coef = 20.0
    model.n_epochs = 8
    model.train()
    after = kl_to_reference(model.policy, model.reference, obs, masks).mean().item()
    assert after < 0.7 * before, (before, after)
    assert model.last_stats["kl_ref"] > 0
    for a, b in zip(ref_before, model.reference.parameters(), strict=True):
        assert torch.equal(a, b)


def test_kl_without_a_reference_is_an_error_and_critic_only_leaves_the_actor():
    model = small_model(learning_rate=1e-3)
    obs, masks = buffer_batch(model)
    model.kl_coef = 0.1
    with pytest.raises(RuntimeError, match="freeze_reference"):
        model.train()
    model.critic_only = True
    actor = actor_logits(model.policy, obs)
    critic = [p.detach().clone() for p in model.policy.value_net.parameters()]
    model.train()
    assert torch.equal(actor, actor_logits(model.policy, obs))  # shared extractor included
    assert any(not torch.equal(a, b) for a, b in zip(
        critic, model.policy.value_net.parameters(), strict=True))
    assert "explained_variance" in model.last_stats and "kl_ref" not in model.last_stats

"""The oracle critic (sichuan_agents/oracle_critic.py,
sichuan_agents.training.ppo_policy.OracleCriticPolicy): the
critic reads the hidden planes, the actor never does, and a saved model acts from the
seat's own observation."""

import numpy as np
import pytest
import torch

from sichuan_agents.training.advice import AdviceVecEnv, make_adviser
from sichuan_agents.training.features import AnalysisVecEnv
from sichuan_agents.training.oracle_critic import N_HIDDEN_PLANES, OracleVecEnv
from sichuan_env.envs.vector import SichuanVecEnv
from sichuan_env.seats.observation import N_CHANNELS, encode_oracle


def _env(tables=4, seats=(0, 3), seed=2):
    base = SichuanVecEnv(tables, learner_seats=seats, opponents="greedy", seed=seed)
    inner = AdviceVecEnv(AnalysisVecEnv(base), make_adviser("rules"))
    return base, inner, OracleVecEnv(inner)


def test_hidden_planes_follow_the_inner_observation_and_match_the_oracle_encoder():
    base, inner, env = _env()
    obs = env.reset()
    assert obs.shape[1] == inner.observation_space.shape[0] + N_HIDDEN_PLANES
    assert env.policy_planes == inner.observation_space.shape[0]
    rng = np.random.default_rng(3)
    for _ in range(30):
        oracle = encode_oracle(base.state, base.learner.astype(np.intp))
        assert np.array_equal(obs[:, env.policy_planes:], oracle[:, N_CHANNELS:])
        assert np.array_equal(obs[:, :N_CHANNELS], oracle[:, :N_CHANNELS])
        assert obs[:, env.policy_planes:].any(), "the other hands are never all empty"
        masks = env.action_masks()
        u = rng.random(masks.shape)
        u[~masks] = -1
        obs, _, dones, infos = env.step(u.argmax(1))
        for d, info in zip(dones, infos, strict=True):
            if d:
                assert not info["terminal_observation"][env.policy_planes:].any()


@pytest.fixture(scope="module")
def oracle_model():
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.ppo_policy import OracleCriticPolicy, policy_kwargs

    _, _, env = _env(tables=2, seats=(0,))
    model = MaskablePPO(OracleCriticPolicy, env, n_steps=8, batch_size=8, device="cpu",
                        seed=0, policy_kwargs=policy_kwargs(features_dim=32, channels=8,
                                                            policy_planes=env.policy_planes))
    model.sichuan_rules = "mil"
    return model, env


def test_actor_ignores_the_hidden_planes_and_the_critic_reads_them(oracle_model):
    model, env = oracle_model
    policy = model.policy
    obs = torch.as_tensor(env.reset())
    noisy = obs.clone()
    noisy[:, env.policy_planes:] = torch.rand_like(noisy[:, env.policy_planes:])
    masks = env.action_masks()
    with torch.no_grad():
        p1 = policy.get_distribution(obs, action_masks=masks).distribution.probs
        p2 = policy.get_distribution(noisy, action_masks=masks).distribution.probs
        v1 = policy.predict_values(obs)
        v2 = policy.predict_values(noisy)
    assert torch.equal(p1, p2)
    assert not torch.allclose(v1, v2)
    assert policy.pi_features_extractor is not policy.vf_features_extractor
    assert policy.pi_features_extractor.planes == env.policy_planes
    assert policy.vf_features_extractor.planes == env.observation_space.shape[0]


def test_saved_oracle_model_loads_and_acts_from_the_seat_view(oracle_model, tmp_path):
    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_env.seats.agent import validate_agent

    model, env = oracle_model
    model.save(tmp_path / "m.zip")
    agent = PPOAgent(tmp_path / "m.zip")
    assert agent.needs == "view" and agent.acting_planes == env.policy_planes
    assert type(agent.model.policy).__name__ == "OracleCriticPolicy"
    validate_agent(agent, n_deals=2, seed=1)
    # the loaded actor chooses as the in-memory one on the same inputs
    same = PPOAgent(model)
    base = env.unwrapped
    env.reset()
    view = base.learner_inputs(same)
    masks = env.action_masks()
    assert np.array_equal(agent.act_batch(view, masks), same.act_batch(view, masks))


@pytest.mark.slow
def test_export_drops_the_optimizer_state_and_keeps_every_choice(oracle_model, tmp_path):
    import subprocess
    import sys

    from sichuan_agents.training.export_model import export

    model, _ = oracle_model
    model.learn(16)  # Adam has moments to drop only after an update
    model.save(tmp_path / "full.zip")
    size = export(tmp_path / "full.zip", tmp_path / "small.zip", check_deals=3)
    assert size == (tmp_path / "small.zip").stat().st_size
    assert size < 0.8 * (tmp_path / "full.zip").stat().st_size
    proc = subprocess.run([sys.executable, "-m", "sichuan_agents.training.export_model",
                           str(tmp_path / "no.zip"), str(tmp_path / "out.zip")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.strip() == f"error: no file {tmp_path / 'no.zip'}"
    assert not (tmp_path / "out.zip").exists()

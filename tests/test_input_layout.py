"""Input layouts (sichuan_agents/training/layout.py): saved with a model, read back by the agent,
checked against the network, and inferred in one place for files saved without one."""

import pytest

from sichuan_agents.training.layout import (
    acting_channels,
    check_layout,
    inferred_layout,
    input_layout,
    make_layout,
)


def test_made_layouts_add_up_and_the_old_inference_gives_the_same():
    for analysis, adviser, oracle in [(False, None, False), (True, None, False),
                                      (True, "rules", False), (True, "rules", True)]:
        lay = make_layout(analysis, adviser, oracle)
        total = sum(lay[k] for k in ("planes", "analysis", "advice", "oracle"))
        assert check_layout(lay, total) == lay
        assert inferred_layout(total, acting_channels(lay)) == lay


def test_a_wrong_layout_is_a_one_line_error():
    lay = make_layout(True, "rules", True)
    with pytest.raises(ValueError, match="adds up to 99 channels but its network reads 89"):
        check_layout(lay, 89)
    with pytest.raises(ValueError, match="channel counts"):
        check_layout({"planes": 78}, 78)


def test_a_saved_layout_travels_with_the_model_and_wins_over_inference(tmp_path):
    from sb3_contrib import MaskablePPO

    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.ppo_policy import load_model, policy_kwargs
    from sichuan_env.envs.vector import SichuanVecEnv

    env = AnalysisVecEnv(SichuanVecEnv(1, opponents="random", seed=0))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=8, device="cpu",
                        policy_kwargs=policy_kwargs(features_dim=16, channels=4))
    model.sichuan_input = make_layout(analysis=True)
    model.save(tmp_path / "m.zip")
    loaded = load_model(tmp_path / "m.zip", device="cpu")
    assert input_layout(loaded) == make_layout(analysis=True)
    assert PPOAgent(tmp_path / "m.zip").layout == make_layout(analysis=True)
    # metadata is read when the model has none; a saved layout that does not fit is refused
    del loaded.sichuan_input
    assert input_layout(loaded, {"input": make_layout(analysis=True)})["analysis"] == 4
    loaded.sichuan_input = make_layout(analysis=False)
    with pytest.raises(ValueError, match="adds up to 78"):
        input_layout(loaded)


def test_a_snapshot_reads_the_layout_and_adds_the_analysis_planes_itself():
    import numpy as np
    from sb3_contrib import MaskablePPO

    from sichuan_agents.models.ppo import SnapshotAgent
    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.ppo_policy import policy_kwargs
    from sichuan_env.core import engine
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.seats.observation import encode

    env = AnalysisVecEnv(SichuanVecEnv(1, opponents="random", seed=0))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=8, device="cpu",
                        policy_kwargs=policy_kwargs(features_dim=16, channels=4))
    model.sichuan_input = make_layout(analysis=True)
    snap = SnapshotAgent(model, deterministic=True)
    assert snap.layout == make_layout(analysis=True)
    st = engine.reset([1, 2])
    masks = engine.legal_mask(st)
    raw = encode(st, st.current.astype(np.intp))
    acts = snap.act_batch(raw, masks)
    assert masks[np.arange(2), acts].all()


def test_rllib_policy_file_carries_its_layout(tmp_path):
    """``policy.pt`` saves the layout and the agent reads it; a file without one (written
    before layouts were saved) gets the inferred one; the agent augments bare observation
    planes only because its layout has the analysis planes."""
    import numpy as np
    import torch

    from sichuan_agents.models.rllib_agent import RLlibAgent, load_policy, save_policy
    from sichuan_agents.training.features import augment
    from sichuan_agents.training.rllib_net import TilePlanesNet
    from sichuan_env.core import engine
    from sichuan_env.seats.observation import encode

    torch.manual_seed(0)
    net = TilePlanesNet(82, features_dim=16, channels=8, hidden=16)
    save_policy(net, tmp_path / "policy.pt", make_layout(analysis=True))
    assert load_policy(tmp_path / "policy.pt")[1] == make_layout(analysis=True)
    with pytest.raises(ValueError, match="adds up to 78 channels but its network reads 82"):
        save_policy(net, tmp_path / "bad.pt", make_layout(analysis=False))
    old = torch.load(tmp_path / "policy.pt", weights_only=True)
    del old["input"]
    torch.save(old, tmp_path / "old.pt")
    st = engine.reset([3])
    obs, mask = encode(st, st.current), st.legal_action_mask
    for path in ("policy.pt", "old.pt"):
        agent = RLlibAgent(tmp_path / path)
        assert agent.layout == make_layout(analysis=True)
        a = agent.act_batch(obs, mask)
        np.testing.assert_array_equal(a, agent.act_batch(augment(obs), mask))
        assert mask[0, a[0]]
    bare = RLlibAgent(TilePlanesNet(78, features_dim=16, channels=8, hidden=16))
    assert bare.layout == make_layout(analysis=False)
    with pytest.raises(ValueError, match=r"expects observations of shape \(78, 27\)"):
        bare.act_batch(augment(obs), mask)

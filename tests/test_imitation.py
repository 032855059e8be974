"""The imitation warm start moves a fresh PPO policy towards its teacher's choices."""

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")


def _agreement(model, obs: np.ndarray, masks: np.ndarray, labels: np.ndarray) -> float:
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    return float((actions == labels).mean())


@pytest.mark.slow
def test_imitation_learns_the_teachers_choices():
    import torch
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.imitation import imitate
    from sichuan_agents.training.ppo_policy import policy_kwargs
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.seats.agent import RandomAgent, make_agent

    torch.manual_seed(0)
    torch.set_num_threads(1)
    teacher = make_agent("greedy")

    def make_env(seed: int):
        return AnalysisVecEnv(SichuanVecEnv(16, learner_seats=(0, 1, 2, 3),
                                            opponents=RandomAgent(seed), seed=seed))

    # held-out states (another seed) labelled by the teacher
    probe = make_env(99)
    obs = probe.reset()
    rng = np.random.default_rng(0)
    rows, masks_l, labels_l = [], [], []
    for _ in range(10):
        m = probe.action_masks()
        rows.append(obs)
        masks_l.append(m)
        labels_l.append(teacher.act_batch(probe.learner_inputs(teacher), m))
        pick = (np.cumsum(m, 1) > (rng.random(len(m)) * m.sum(1))[:, None]).argmax(1)
        obs, _, _, _ = probe.step(pick)
    p_obs, p_masks = np.concatenate(rows), np.concatenate(masks_l)
    labels = np.concatenate(labels_l)

    env = make_env(0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64,
                        policy_kwargs=policy_kwargs(), seed=0, device="cpu")
    before = _agreement(model, p_obs, p_masks, labels)
    seen = []
    stats = imitate(model, env, teacher, 16384, chunk=32, epochs=8, batch_size=256,
                    log=seen.append)
    after = _agreement(model, p_obs, p_masks, labels)
    assert stats.steps >= 16384 and len(seen) == stats.steps // (32 * env.num_envs)
    assert after >= before + 0.15, (before, after)  # measured: 0.411 -> 0.644
    assert after >= 0.55, after
    print(f"agreement with the teacher on held-out states: {before:.3f} -> {after:.3f}")
    assert seen[-1].cross_entropy < seen[0].cross_entropy


@pytest.mark.slow
def test_a_view_teacher_gets_the_learner_seats_views():
    """A teacher with ``needs = "view"`` is given the seat view of every slot's learner
    (through the driver), and its labels are checked against the masks."""
    import torch
    from sb3_contrib import MaskablePPO

    from sichuan_agents.training.features import AnalysisVecEnv
    from sichuan_agents.training.imitation import imitate
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.seats.agent import BaseAgent
    from sichuan_env.seats.view import SeatView

    class ViewTeacher(BaseAgent):
        needs = "view"

        def __init__(self):
            self.seats = []

        def act_batch(self, views, masks):
            assert isinstance(views, SeatView) and views.hand.shape == (len(masks), 27)
            self.seats.append(np.asarray(views.seat).copy())
            return np.asarray(masks).argmax(1)

    torch.manual_seed(0)
    env = AnalysisVecEnv(SichuanVecEnv(2, learner_seats=(1, 3), seed=0))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, seed=0, device="cpu")
    teacher = ViewTeacher()
    stats = imitate(model, env, teacher, 16, chunk=4, epochs=1, batch_size=16)
    assert stats.steps == 16 and len(teacher.seats) == 4
    for seats in teacher.seats:
        assert seats.tolist() == [1, 1, 3, 3]

    class IllegalTeacher(ViewTeacher):
        def act_batch(self, views, masks):
            return np.full(len(masks), 87)

    with pytest.raises(ValueError, match=r"teacher .* chose illegal action 87 \(pass\) at "
                                         r"slot 0, seat 1"):
        imitate(model, env, IllegalTeacher(), 8, chunk=4, epochs=1, batch_size=16)

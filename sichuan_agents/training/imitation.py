"""Warm start for PPO: imitate a rule bot before reinforcement learning (DAgger style).

A policy learned from scratch spends millions of steps discovering tile efficiency and
when to claim; a rule bot already knows both. :func:`imitate` trains the MaskablePPO
policy on the teacher's choices:

* the learner slots of the VecEnv are played, chunk after chunk, by the student (the
  policy being trained) with probability ``student_share`` and by the teacher otherwise
  -- so the student learns on the states it reaches itself, not only the teacher's
  (DAgger) -- and every decision is labelled with the teacher's action;
* after each chunk the policy takes a few minibatch passes of masked cross-entropy
  towards the labels, and the value head is regressed on the chunk's discounted returns
  (bootstrapped with its own estimate where the chunk ends), so that PPO afterwards
  starts from a value function that matches the policy.

Only the learner's own observation is used (the teacher reads the same planes, or the
learner seat's view when it declares ``needs = "view"``), so nothing hidden leaks into the
student.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from sichuan_env.seats.driver import agent_needs, check_actions
from sichuan_env.seats.observation import N_CHANNELS

#: learner steps of every VecEnv slot per chunk: :func:`imitate` labels and learns whole
#: chunks of ``CHUNK * num_envs`` decisions
CHUNK = 32


@dataclass
class ImitationStats:
    steps: int  # learner decisions labelled
    seconds: float
    agreement: float  # share of the last chunk's decisions where the student's most
    #                   likely action was the teacher's
    cross_entropy: float  # mean over the last chunk's minibatches
    value_loss: float


def imitate(
    model: Any,
    env: Any,
    teacher: Any,
    steps: int,
    *,
    chunk: int = CHUNK,
    student_share: float = 0.5,
    epochs: int = 8,
    batch_size: int = 512,
    lr: float = 1e-3,
    vf_coef: float = 0.5,
    seed: int = 0,
    log: Any = None,
) -> ImitationStats:
    """Train ``model.policy`` (a MaskablePPO policy) to choose as ``teacher`` on ``env``
    (the VecEnv the model trains on) for ``steps`` learner decisions, rounded up to whole
    chunks of ``chunk * env.num_envs``."""
    import torch

    policy = model.policy
    policy.set_training_mode(True)
    device = policy.device
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    gamma = float(model.gamma)
    n = env.num_envs
    obs = env.reset()
    slots = np.arange(n)
    seats = np.asarray(env.get_attr("learner_seat"), np.intp)
    done_steps = 0
    t0 = time.perf_counter()
    stats = ImitationStats(0, 0.0, 0.0, 0.0, 0.0)
    while done_steps < steps:
        obs_buf, mask_buf, label_buf, rew_buf, done_buf = [], [], [], [], []
        for _ in range(chunk):
            masks = env.action_masks()
            # the teacher reads the learner's planes, or what else it needs, of every slot
            inputs = (obs[:, :N_CHANNELS] if agent_needs(teacher) == "planes"
                      else env.learner_inputs(teacher))
            labels = check_actions(teacher.act_batch(inputs, masks), masks, slots,
                                   seats, who=f"teacher {teacher!r}",
                                   table_label=lambda t: f"slot {t}")
            actions = labels
            if student_share > 0:
                own, _ = model.predict(obs, action_masks=masks, deterministic=False)
                actions = np.where(rng.random(n) < student_share, own, labels)
            obs_buf.append(obs)
            mask_buf.append(masks)
            label_buf.append(labels)
            obs, rewards, dones, _ = env.step(actions)
            rew_buf.append(rewards)
            done_buf.append(dones)
        done_steps += chunk * n
        # discounted returns of the chunk, bootstrapped with the value of the last state
        with torch.no_grad():
            ret = policy.predict_values(torch.as_tensor(obs, device=device)).cpu().numpy()[:, 0]
        returns = np.empty((chunk, n), np.float32)
        for t in range(chunk - 1, -1, -1):
            ret = rew_buf[t] + gamma * ret * (~done_buf[t])
            returns[t] = ret
        o = torch.as_tensor(np.concatenate(obs_buf), device=device)
        m = np.concatenate(mask_buf)
        y = torch.as_tensor(np.concatenate(label_buf), device=device)
        g = torch.as_tensor(returns.reshape(-1), device=device)
        ce_sum = vl_sum = 0.0
        batches = 0
        for _ in range(epochs):
            order = rng.permutation(len(y))
            for s in range(0, len(y), batch_size):
                idx = order[s : s + batch_size]
                values, log_prob, _ = policy.evaluate_actions(o[idx], y[idx],
                                                              action_masks=m[idx])
                ce = -log_prob.mean()
                vl = torch.nn.functional.mse_loss(values.flatten(), g[idx])
                opt.zero_grad()
                (ce + vf_coef * vl).backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
                opt.step()
                ce_sum += float(ce.detach())
                vl_sum += float(vl.detach())
                batches += 1
        with torch.no_grad():
            probs = policy.get_distribution(o, action_masks=m).distribution.probs
            agree = float((probs.argmax(1) == y).float().mean())
        stats = ImitationStats(done_steps, time.perf_counter() - t0, agree,
                               ce_sum / batches, vl_sum / batches)
        if log is not None:
            log(stats)
    return stats

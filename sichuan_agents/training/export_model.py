"""Make a trained model small enough to ship: keep the weights, drop the optimizer's state
and the last rollout.

    python -m sichuan_agents.training.export_model \
        runs/ft/checkpoints/ppo_131072.zip sichuan_agents/models/ppo_mil.zip

A MaskablePPO checkpoint carries Adam's two moment estimates for every weight (twice the
size of the network). Acting needs none of it; the exported file holds the same policy
with a fresh optimizer (so it still loads with ``MaskablePPO.load`` and can be trained on),
and :class:`sichuan_agents.models.ppo.PPOAgent` chooses exactly as with the checkpoint (checked
here before
writing).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def export(src: str | Path, dst: str | Path, check_deals: int = 8) -> int:
    """Write ``src`` without optimizer state to ``dst``; returns the new size in bytes.
    Plays ``check_deals`` deals with both files and raises if any choice differs."""
    import torch

    from sichuan_agents.models.ppo import PPOAgent
    from sichuan_agents.training.ppo_policy import load_model
    from sichuan_env.core import engine
    from sichuan_env.seats.driver import agent_input, play_step

    model = load_model(src, device="cpu")
    policy = model.policy
    policy.optimizer = type(policy.optimizer)(policy.parameters(), **policy.optimizer_kwargs,
                                              lr=float(model.lr_schedule(1.0)))
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    # the last rollout's observations and episode statistics are not part of the policy
    model.save(str(dst), exclude=["_last_obs", "_last_original_obs", "_last_episode_starts",
                                  "ep_info_buffer", "ep_success_buffer"])
    # the exported policy must choose as the original one, decision by decision
    a, b = PPOAgent(str(src)), PPOAgent(str(dst))
    st = engine.reset(np.arange(check_deals) + 12345)
    with torch.no_grad():
        while not st.done.all():
            rows = np.flatnonzero(~st.done)
            x = agent_input(b, st, st.current[rows].astype(np.intp), rows)
            masks = st.legal_action_mask[rows].copy()
            mine = b.act_batch(x, masks)
            theirs, _ = play_step(st, rows, [a])
            if not np.array_equal(mine, theirs):
                raise RuntimeError("the exported model chooses differently from the original")
    return dst.stat().st_size


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("src", help="a MaskablePPO .zip (a train.py checkpoint or model)")
    p.add_argument("dst", help="where to write the exported .zip")
    args = p.parse_args(argv)
    if not Path(args.src).exists():
        print(f"error: no file {args.src}", file=sys.stderr)
        return 2
    size = export(args.src, args.dst)
    print(f"wrote {args.dst} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

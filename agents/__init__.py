"""Agents for sichuan-env: one act/act_batch interface, rule bots, PPO, the arena."""

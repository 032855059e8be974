"""``import sichuan_env`` registers both AEC envs in PettingZoo's registry (1.27+).

``pettingzoo.make("aec", sichuan_env.AEC_ENV_ID, **kw)`` is ``sichuan_env.env(**kw)`` and the
raw id is ``sichuan_env.raw_env(**kw)``: same classes, same keyword arguments, the same deal
for the same seed. The slow test runs PettingZoo's SB3 action-masking recipe (a wrapper that
shows one agent's flat observation and mask to SB3, ``ActionMasker``, ``MaskablePPO``) on the
registered env for a few thousand steps, saves the model, loads it and plays it.
"""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest

import sichuan_env
from sichuan_env.envs.aec import CheckedEnv, raw_env


def _first_legal_deal(env: pettingzoo.AECEnv, seed: int) -> tuple[list[int], dict[str, float]]:
    """Play the first legal action everywhere; the actions and the final rewards."""
    env.reset(seed=seed)
    actions: list[int] = []
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        a = int(np.flatnonzero(obs["action_mask"])[0])
        actions.append(a)
        env.step(a)
    return actions, totals


def test_both_ids_are_registered_on_import() -> None:
    from pettingzoo.env_registry.registration import aec_registry

    assert sichuan_env.AEC_ENV_ID == "sichuan_env/Sichuan-v0"
    assert aec_registry[sichuan_env.AEC_ENV_ID].entry_point == "sichuan_env.envs.aec:env"
    assert aec_registry[sichuan_env.AEC_RAW_ENV_ID].entry_point == "sichuan_env.envs.aec:raw_env"
    assert aec_registry[sichuan_env.AEC_ENV_ID].namespace == "sichuan_env"


def test_make_takes_the_keywords_of_env_and_raw_env() -> None:
    made = pettingzoo.make("aec", sichuan_env.AEC_ENV_ID, rules="mahjongsoft",
                           render_mode="ansi")
    assert isinstance(made, CheckedEnv)
    made.reset(seed=3)
    assert made.unwrapped.rules.preset == "mahjongsoft"
    assert "hand" in made.render()
    raw = pettingzoo.make("aec", sichuan_env.AEC_RAW_ENV_ID, rules="mil")
    assert type(raw) is raw_env
    with pytest.raises(TypeError):
        pettingzoo.make("aec", sichuan_env.AEC_ENV_ID, no_such_option=1)


@pytest.mark.parametrize("env_id", ["sichuan_env/Sichuan-v0", "sichuan_env/SichuanRaw-v0"])
def test_made_env_plays_the_same_deal_as_the_function(env_id: str) -> None:
    direct = sichuan_env.env() if env_id.endswith("Sichuan-v0") else sichuan_env.raw_env()
    made = pettingzoo.make("aec", env_id)
    for seed in (0, 11):
        assert _first_legal_deal(made, seed) == _first_legal_deal(direct, seed)


@pytest.mark.slow
def test_pettingzoos_sb3_action_mask_recipe_trains_and_evaluates(tmp_path) -> None:
    import gymnasium
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
        """One shared policy for every seat: SB3 sees the acting agent's planes."""

        def reset(self, seed=None, options=None):
            super().reset(seed, options)
            agent = self.possible_agents[0]
            self.observation_space = super().observation_space(agent)["observation"]
            self.action_space = super().action_space(agent)
            return self.observe(self.agent_selection), {}

        def step(self, action):
            super().step(action)
            return super().last()

        def observe(self, agent):
            return super().observe(agent)["observation"]

        def action_mask(self):
            return super().observe(self.agent_selection)["action_mask"]

    env = SB3ActionMaskWrapper(pettingzoo.make("aec", sichuan_env.AEC_ENV_ID))
    env.reset(seed=0)
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=512, batch_size=128,
                        seed=0, device="cpu", verbose=0)
    model.learn(total_timesteps=3072)
    assert model.num_timesteps >= 3072
    path = tmp_path / "sichuan_maskable_ppo"
    model.save(path)

    loaded = MaskablePPO.load(path, device="cpu")
    play = pettingzoo.make("aec", sichuan_env.AEC_ENV_ID)
    model_seat = play.possible_agents[0]
    totals = dict.fromkeys(play.possible_agents, 0.0)
    decisions = 0
    for deal in range(3):
        play.reset(seed=100 + deal)
        rng = np.random.default_rng(deal)
        for agent in play.agent_iter():
            obs, reward, term, trunc, _ = play.last()
            totals[agent] += reward
            if term or trunc:
                play.step(None)
                continue
            mask = obs["action_mask"]
            if agent == model_seat:
                action = int(loaded.predict(obs["observation"], action_masks=mask,
                                            deterministic=True)[0])
                decisions += 1
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            assert mask[action], "the model chose an action its mask forbids"
            play.step(action)
    assert decisions > 0
    # points move between seats: the four totals sum to zero over whole deals
    assert abs(sum(totals.values())) < 1e-6

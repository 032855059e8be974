"""``import sichuan_env`` registers the single-agent env with Gymnasium.

``gymnasium.make(sichuan_env.GYM_ENV_ID, **kwargs)`` builds a
:class:`~sichuan_env.envs.gym_env.SichuanSingleEnv` with those keyword arguments, plays the same
deal as the class built directly, and the registration itself imports no environment
module.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import sichuan_env
from sichuan_env.envs.gym_env import SichuanSingleEnv


def _play(env: gymnasium.Env, seed: int) -> tuple[list[float], list[int], np.ndarray]:
    """Play the first legal action at every decision; the rewards, actions and last
    observation."""
    obs, info = env.reset(seed=seed)
    rewards, actions = [], []
    while True:
        a = int(np.flatnonzero(info["action_mask"])[0])
        actions.append(a)
        obs, r, term, trunc, info = env.step(a)
        rewards.append(r)
        if term or trunc:
            return rewards, actions, obs


def test_the_id_is_registered_under_the_package_namespace() -> None:
    assert sichuan_env.GYM_ENV_ID == "sichuan_env/Sichuan-v0"
    spec = gymnasium.spec(sichuan_env.GYM_ENV_ID)
    assert spec.namespace == "sichuan_env"
    assert spec.entry_point == "sichuan_env.envs.gym_env:SichuanSingleEnv"


def test_make_builds_the_single_agent_env_with_the_keywords() -> None:
    env = gymnasium.make(sichuan_env.GYM_ENV_ID, rules="mahjongsoft", learner_seat=2,
                         opponents="greedy", render_mode="ansi")
    inner = env.unwrapped
    assert isinstance(inner, SichuanSingleEnv)
    assert inner.rules.preset == "mahjongsoft" and inner.seat == 2
    assert type(inner.opponents[0]).__name__ == "GreedyAgent"
    assert env.action_space == gymnasium.spaces.Discrete(88)
    assert env.observation_space.shape == (78, 27)
    env.reset(seed=5)
    assert "hand" in env.render()
    assert env.get_wrapper_attr("action_masks")().shape == (88,)


def test_made_env_plays_the_same_deal_as_the_class() -> None:
    made = gymnasium.make(sichuan_env.GYM_ENV_ID)  # default random opponents follow the seed
    direct = SichuanSingleEnv()
    r1, a1, o1 = _play(made, seed=11)
    r2, a2, o2 = _play(direct, seed=11)
    assert a1 == a2 and r1 == r2
    np.testing.assert_array_equal(o1, o2)


def test_made_env_passes_gymnasiums_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    check_env(gymnasium.make(sichuan_env.GYM_ENV_ID).unwrapped, skip_render_check=True)


def test_a_bad_keyword_is_refused_by_the_env() -> None:
    with pytest.raises(ValueError, match="learner_seat"):
        gymnasium.make(sichuan_env.GYM_ENV_ID, learner_seat=7)


def test_registration_imports_no_environment_module() -> None:
    script = textwrap.dedent("""
        import sys
        import gymnasium
        import sichuan_env
        assert sichuan_env.GYM_ENV_ID in gymnasium.registry
        heavy = [m for m in ("sichuan_env.envs.gym_env", "sichuan_env.core.engine",
        "sichuan_env.envs.aec",
                             "numba") if m in sys.modules]
        assert heavy == [], heavy
        import importlib
        importlib.reload(sichuan_env)  # registering again is not an error
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=False, cwd=Path(__file__).resolve().parent.parent)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr

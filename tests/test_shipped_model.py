"""The PPO model shipped with the package: the name `ppo` with no path plays it everywhere
an agent is named, on CPU, without the RLlib extra; its metadata says how it was made."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.ppo import SHIPPED_MODEL, PPOAgent

ROOT = Path(__file__).resolve().parent.parent
META = SHIPPED_MODEL.with_suffix(".json")


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_model_is_small_and_its_metadata_describes_it(preset):
    from agents.ppo import shipped_model

    model = shipped_model(preset)
    assert model.name == f"ppo_{preset}.zip", f"the package ships agents/models/ppo_{preset}.zip"
    assert model.stat().st_size < 6_000_000
    meta = json.loads(model.with_suffix(".json").read_text())
    for key in ("command", "seed", "commit", "settings", "rules", "steps", "sha256",
                "results"):
        assert key in meta, key
    assert meta["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert meta["rules"] == preset
    from agents.training.ppo_policy import load_model

    assert load_model(model, device="cpu").sichuan_rules == preset


def test_ppo_by_name_is_the_shipped_model_and_plays_legally():
    from sichuan_env.agent import make_agent, validate_agent

    agent = make_agent("ppo")
    assert isinstance(agent, PPOAgent) and agent.name == "ppo"
    assert agent.path == str(SHIPPED_MODEL)
    assert next(agent.model.policy.parameters()).device.type == "cpu"
    validate_agent(agent, n_deals=2, seed=3)
    validate_agent(agent, n_deals=2, seed=3, rules="mahjongsoft")


@pytest.mark.slow
def test_shipped_model_loads_without_ray_and_plays_the_arena_and_the_single_env():
    code = (
        "import sys; sys.modules['ray'] = None\n"  # the RLlib extra is not needed
        "from agents.arena import run_arena\n"
        "res = run_arena(['ppo', 'rules', 'rules', 'rules'], deals=8, duplicate=True, seed=1,"
        " progress=False)\n"
        "assert res.deals == 8, res.deals\n"
        "from sichuan_env.gym_env import SichuanSingleEnv\n"
        "import numpy as np\n"
        "env = SichuanSingleEnv(opponents='ppo')\n"
        "obs, info = env.reset(seed=0)\n"
        "for _ in range(300):\n"
        "    a = int(np.flatnonzero(env.action_masks())[0])\n"
        "    obs, r, term, trunc, info = env.step(a)\n"
        "    if term or trunc: break\n"
        "assert term or trunc\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")


@pytest.mark.slow
def test_terminal_play_against_the_shipped_model():
    proc = subprocess.run([sys.executable, "-m", "sichuan_env.play", "--opponents", "ppo",
                           "--auto-first", "--seed", "4"], capture_output=True, text=True,
                          cwd=ROOT, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_missing_shipped_model_is_a_clear_error(monkeypatch, tmp_path):
    import agents.ppo as ppo

    monkeypatch.setattr(ppo, "SHIPPED_MODEL", tmp_path / "gone.zip")
    with pytest.raises(FileNotFoundError, match="shipped PPO model is missing"):
        ppo.PPOAgent()


def test_shipped_model_is_deterministic():
    from sichuan_env import engine
    from sichuan_env.driver import agent_input

    a, b = PPOAgent(), PPOAgent()
    st = engine.reset(np.arange(16) + 77)
    rows = np.arange(16)
    x = agent_input(a, st, st.current.astype(np.intp), rows)
    m = st.legal_action_mask
    assert np.array_equal(a.act_batch(x, m), b.act_batch(x, m))


@pytest.mark.slow
def test_arena_workers_with_a_network_seat_finish_and_agree_with_one_worker():
    """Workers of a process that loaded torch are spawned, not forked (a forked child of a
    process whose torch thread pool has started can hang)."""
    code = (
        "from agents.arena import run_arena\n"
        "import numpy as np\n"
        "one = run_arena(['ppo', 'greedy', 'greedy', 'greedy'], deals=16, seed=3)\n"
        "two = run_arena(['ppo', 'greedy', 'greedy', 'greedy'], deals=16, seed=3, workers=2)\n"
        "assert two.workers == 2\n"
        "assert np.array_equal(one.points, two.points)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("ok")


def test_each_preset_plays_its_own_shipped_model_or_the_mil_one(monkeypatch, tmp_path):
    import shutil

    import agents.ppo as ppo

    mil = tmp_path / "ppo_mil.zip"
    shutil.copy(SHIPPED_MODEL, mil)
    monkeypatch.setattr(ppo, "SHIPPED_MODEL", mil)
    assert ppo.shipped_model() == mil and ppo.shipped_model("mil") == mil
    assert ppo.shipped_model("mahjongsoft") == mil  # no model of its own: the MIL one
    agent = ppo.PPOAgent(rules="mahjongsoft")
    assert agent.path == str(mil) and agent.rules.preset == "mil"  # read as trained
    own = tmp_path / "ppo_mahjongsoft.zip"
    shutil.copy(SHIPPED_MODEL, own)
    assert ppo.shipped_model("mahjongsoft") == own
    agent = ppo.PPOAgent(rules="mahjongsoft")
    assert agent.path == str(own) and agent.rules.preset == "mahjongsoft"
    assert agent.name == "ppo"

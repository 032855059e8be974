"""The models shipped with the package: the names `fitted` (fitted to rollout
comparisons), `ppo` (that model changed by PPO updates) and `best` with no path play them
everywhere an agent is named, on CPU, without the RLlib extra; their metadata says how
each was made and which planes it reads."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sichuan_agents.models.best import BEST
from sichuan_agents.models.ppo import KINDS, MODELS, PPOAgent

ROOT = Path(__file__).resolve().parent.parent
FITTED = MODELS / "fitted_mil.zip"
SHIPPED = [("fitted", "mil"), ("fitted", "mahjongsoft"), ("ppo", "mil")]


@pytest.mark.parametrize(("kind", "preset"), SHIPPED)
def test_model_is_small_and_its_metadata_describes_it(kind, preset):
    from sichuan_agents.models.ppo import shipped_model

    model = shipped_model(preset, kind)
    assert model.name == f"{kind}_{preset}.zip", f"the package ships {kind}_{preset}.zip"
    assert model.stat().st_size < 6_000_000
    meta = json.loads(model.with_suffix(".json").read_text())
    for key in ("command", "seed", "commit", "settings", "rules", "steps", "sha256",
                "results"):
        assert key in meta, key
    assert meta["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert meta["rules"] == preset and meta["name"] == kind
    from sichuan_agents.training.layout import inferred_layout, input_layout
    from sichuan_agents.training.ppo_policy import load_model

    loaded = load_model(model, device="cpu")
    assert loaded.sichuan_rules == preset
    # the layout comes with the model or its metadata, and agrees with the old inference
    layout = input_layout(loaded, meta)
    assert getattr(loaded, "sichuan_input", None) is not None or "input" in meta
    channels = loaded.observation_space.shape[0]
    assert layout == inferred_layout(channels, loaded.policy.policy_planes)


def test_the_ppo_model_was_changed_by_ppo_from_a_fitted_one():
    """`ppo` names a model whose play PPO updates changed: its metadata names the fitted
    model it started from (by sha256: a fitted file shipped before, kept in the fitted
    card's chain of ``previous_model`` entries, each the base of the one above it) and its
    PPO decisions, and its weights differ from the fitted model shipped now."""
    import torch

    from sichuan_agents.training.ppo_policy import load_model

    meta = json.loads((MODELS / "ppo_mil.json").read_text())
    fitted = json.loads(FITTED.with_suffix(".json").read_text())
    assert fitted["base_model"]["sha256"] == fitted["previous_model"]["sha256"]
    history, card = [], fitted
    while "previous_model" in card:
        card = card["previous_model"]
        history.append(card["sha256"])
    assert meta["start"]["sha256"] in history
    assert meta["start"]["sha256"] != fitted["sha256"]
    assert meta["settings"]["ppo_decisions"] > 0
    a = load_model(MODELS / "ppo_mil.zip", device="cpu").policy.action_net.weight
    b = load_model(FITTED, device="cpu").policy.action_net.weight
    assert not torch.equal(a, b)


def test_best_is_the_strongest_shipped_agent_by_its_measured_rows():
    """``best`` cites its model's own ladder row, and no other shipped model for the preset
    was measured clearly better (its CI's lower end above that figure)."""
    from sichuan_env.seats.agent import make_agent

    for preset, (kind, source) in BEST.items():
        rows = {}
        for k in (*KINDS, "boosted"):
            path = MODELS / f"{k}_{preset}.json"
            if path.exists():
                row = json.loads(path.read_text())["results"].get(f"{preset}/{k}-rules")
                if row:
                    rows[k] = row
        best = rows[kind]
        assert f"{kind} - rules {best['diff']:+.3f}" in source
        assert f"seed {best['seed']}" in source
        for k, row in rows.items():
            assert row["ci95"][0] <= best["diff"], (k, row)
        agent = make_agent("best", preset=preset)
        suffix = ".txt" if kind == "boosted" else ".zip"
        assert agent.name == kind and agent.path == str(MODELS / f"{kind}_{preset}{suffix}")


@pytest.mark.parametrize("kind", KINDS)
def test_names_play_their_shipped_models_legally(kind):
    from sichuan_env.seats.agent import make_agent, validate_agent

    agent = make_agent(kind)
    assert isinstance(agent, PPOAgent) and agent.name == kind
    assert agent.path == str(MODELS / f"{kind}_mil.zip")
    assert next(agent.model.policy.parameters()).device.type == "cpu"
    validate_agent(agent, n_deals=2, seed=3)
    validate_agent(agent, n_deals=2, seed=3, rules="mahjongsoft")


@pytest.mark.slow
def test_shipped_model_loads_without_ray_and_plays_the_arena_and_the_single_env():
    code = (
        "import sys; sys.modules['ray'] = None\n"  # the RLlib extra is not needed
        "from sichuan_agents.arena import run_arena\n"
        "res = run_arena(['ppo', 'rules', 'rules', 'rules'], deals=8, duplicate=True, seed=1,"
        " progress=False)\n"
        "assert res.deals == 8, res.deals\n"
        "from sichuan_env.envs.gym_env import SichuanSingleEnv\n"
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
    import sichuan_agents.models.ppo as ppo

    monkeypatch.setattr(ppo, "MODELS", tmp_path)
    with pytest.raises(FileNotFoundError, match="shipped ppo model is missing"):
        ppo.PPOAgent()
    with pytest.raises(FileNotFoundError, match="shipped fitted model is missing"):
        ppo.fitted_agent()


def test_shipped_model_is_deterministic():
    from sichuan_env.core import engine
    from sichuan_env.seats.driver import agent_input

    a, b = PPOAgent(kind="fitted"), PPOAgent(kind="fitted")
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
        "from sichuan_agents.arena import run_arena\n"
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

    import sichuan_agents.models.ppo as ppo

    monkeypatch.setattr(ppo, "MODELS", tmp_path)
    mil = tmp_path / "fitted_mil.zip"
    shutil.copy(FITTED, mil)
    shutil.copy(FITTED.with_suffix(".json"), mil.with_suffix(".json"))
    assert ppo.shipped_model(kind="fitted") == mil and ppo.shipped_model("mil", "fitted") == mil
    assert ppo.shipped_model("mahjongsoft", "fitted") == mil  # none of its own: the MIL one
    agent = ppo.fitted_agent(rules="mahjongsoft")
    assert agent.path == str(mil) and agent.rules.preset == "mil"  # read as trained
    own = tmp_path / "fitted_mahjongsoft.zip"
    shutil.copy(FITTED, own)
    assert ppo.shipped_model("mahjongsoft", "fitted") == own
    agent = ppo.fitted_agent(rules="mahjongsoft")
    assert agent.path == str(own) and agent.rules.preset == "mahjongsoft"
    assert agent.name == "fitted"
    with pytest.raises(ValueError, match="no shipped model kind"):
        ppo.shipped_model("mil", "imitated")

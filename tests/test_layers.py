"""The layers: sichuan_env never imports the agents package, and its core works without
the ``train`` extra (torch, stable-baselines3)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import statement in a file, relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = "sichuan_env" + ("." + base if base else "")
            out += [(node.lineno, base)]
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            out.append((node.lineno, str(node.args[0].value)))
    return out


def test_sichuan_env_never_imports_agents():
    files = sorted((ROOT / "sichuan_env").rglob("*.py"))
    assert len(files) > 10
    bad = [f"{f.relative_to(ROOT)}:{line}: {mod}" for f in files
           for line, mod in _imported_modules(f)
           if mod == "agents" or mod.startswith("agents.")]
    assert not bad, "sichuan_env imports the agents package:\n" + "\n".join(bad)


def test_the_import_check_sees_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import agents.greedy\nfrom agents import base\n"
                 "def g():\n    from agents.registry import make_agent\n"
                 "import importlib\nimportlib.import_module('agents.ppo')\n")
    mods = [m for _, m in _imported_modules(f)]
    assert {"agents.greedy", "agents", "agents.registry", "agents.ppo"} <= set(mods)


BLOCKED = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "agents")

CORE_SCRIPT = textwrap.dedent(f"""
    import importlib.abc, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {BLOCKED!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
            return None

    sys.meta_path.insert(0, Block())
    import numpy as np
    import sichuan_env
    from sichuan_env import aec, engine, gym_env
    from sichuan_env.agent import make_agent, validate_agent
    from sichuan_env.game import Game

    env = sichuan_env.env()
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for step, agent in enumerate(env.agent_iter()):
        obs, reward, term, trunc, info = env.last()
        if term or trunc or step >= 60:
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    single = gym_env.SichuanSingleEnv(opponents="random")
    obs, info = single.reset(seed=3)
    for _ in range(20):
        obs, r, term, trunc, info = single.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term:
            break
    st = engine.reset([1, 2, 3])
    st, rewards, done = engine.step(st, engine.legal_mask(st).argmax(1))
    validate_agent(make_agent("random", seed=1), n_deals=2)
    g = Game.new(seed=4)
    g.play(g.legal()[0])
    for name in {BLOCKED!r}:
        assert name not in sys.modules, name
    try:
        import sichuan_env.vector
    except ImportError as err:
        assert "sichuan-env[train]" in str(err), err
    else:
        raise AssertionError("sichuan_env.vector imported without stable-baselines3")
    try:
        make_agent("greedy")
    except ValueError as err:
        print("greedy:", err)
    print("core ok")
""")


def test_core_works_without_train_extra_and_agents():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", CORE_SCRIPT], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "core ok" in res.stdout
    # the bots are a separate layer: with agents/ missing a name that needs it says so
    assert "greedy: agent 'greedy': no module named 'agents'" in res.stdout

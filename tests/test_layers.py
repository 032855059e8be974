"""The layers: sichuan_env never imports the agents package, and its core works without
the ``train`` extra (torch, stable-baselines3)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
    f.write_text("import agents.bots.greedy\nfrom agents import base\n"
                 "def g():\n    from agents.registry import make_agent\n"
                 "import importlib\nimportlib.import_module('agents.models.ppo')\n")
    mods = [m for _, m in _imported_modules(f)]
    assert {"agents.bots.greedy", "agents", "agents.registry", "agents.models.ppo"} <= set(mods)


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


@pytest.mark.slow
def test_core_works_without_train_extra_and_agents():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", CORE_SCRIPT], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "core ok" in res.stdout
    # the bots are a separate layer: with agents/ missing a name that needs it says so
    assert "greedy: agent 'greedy': no module named 'agents'" in res.stdout


# ----------------------------------------------------------------------------- layers
# The layers of README.md "Architecture", lowest first. A module may import modules of
# its own layer and of the layers below it, never above. Every module of sichuan_env,
# agents and agents.training must be listed here (a new module is placed on purpose, not
# by accident). sichuan_env modules are named without the package, the others in full.
LAYERS: list[tuple[str, set[str]]] = [
    ("tiles/rules", {"vocab", "tiles", "rules", "actions", "seeding"}),
    ("tables/hands", {"tables", "jit", "hands", "hand_kernels"}),
    ("state/engine/view", {"state", "engine_kernels", "engine", "random_rounds",
                           "view", "public_log", "render", "svg", "records", "game",
                           "viewer"}),
    ("observation/driver", {"observation", "driver", "agent", "protocol", "bot_process",
                            "exec_agent"}),
    ("envs", {"__init__", "aec", "gym_env", "vector", "rllib", "rllib_bulk", "selfplay",
              "play", "web", "bot_server"}),
    ("bots", {"agents", "agents.bots", "agents.models", "agents.search",
              "agents.bots.greedy", "agents.bots.rules_bot", "agents.search.candidates"}),
    ("networks/planes", {"agents.training", "agents.training.features",
                         "agents.training.advice", "agents.training.oracle_critic",
                         "agents.training.ppo_policy", "agents.training.rllib_net",
                         "agents.training.rllib_module", "agents.training.layout",
                         "agents.training.kl_ppo", "agents.training.hardware",
                         "agents.models.candidate_features"}),
    ("model agents", {"agents.models.ppo", "agents.models.rllib_agent", "agents.search.sampler",
                      "agents.search.rollout", "agents.search.hand_model", "agents.models.boosted",
                      "agents.models.best"}),
    ("arena/ladder", {"agents.arena", "agents.ladder", "agents.search.agent", "agents.review",
                      "agents.tournament", "agents.distributed", "agents.training.cluster"}),
    ("training pipelines", {"agents.training.imitation", "agents.training.rollout_teacher",
                            "agents.training.distill", "agents.training.export_model",
                            "agents.training.shards", "agents.training.finetune",
                            "agents.training.improve", "agents.training.search_teacher",
                            "agents.training.rllib_train", "agents.training.boost"}),
    ("train.py", {"train"}),
]
N_SICHUAN_ENV_LAYERS = 5


def _layer_of(module: str) -> int | None:
    """Layer index of a module name (``sichuan_env.x``, ``agents.x.y``, ``train``, or
    something imported from one of them), None outside the project, -1 in no layer."""
    parts = module.split(".")
    if module == "sichuan_env":
        return None  # ``from sichuan_env import x``: x is checked on its own line entry
    if parts[0] == "sichuan_env":
        names = [parts[1]]
    elif parts[0] in ("agents", "train"):
        names = [".".join(parts[:n]) for n in range(len(parts), 0, -1)]  # longest first
    else:
        return None  # numpy, numba, gymnasium, ...: outside the project
    for name in names:
        for i, (_, members) in enumerate(LAYERS):
            if name in members:
                return i
    return -1


def _module_name(path: Path) -> str:
    """``agents/training/x.py`` -> ``agents.training.x``; a package's ``__init__`` -> the
    package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer_violations(path: Path, own: int) -> list[str]:
    out = []
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    for line, mod in _imported_modules(path):
        layer = _layer_of(mod)
        if layer is None:
            continue
        if layer == -1:
            out.append(f"{shown}:{line}: {mod} is in no layer")
        elif layer > own:
            out.append(f"{shown}:{line}: {LAYERS[own][0]} imports {mod} "
                       f"({LAYERS[layer][0]})")
    return out


def test_every_sichuan_env_module_has_a_layer():
    listed = set().union(*(m for _, m in LAYERS[:N_SICHUAN_ENV_LAYERS]))
    package = ROOT / "sichuan_env"
    present = ({f.stem for f in package.glob("*.py")}
               | {d.name for d in package.iterdir() if (d / "__init__.py").exists()})
    assert present == listed, (f"not placed in a layer: {sorted(present - listed)}; "
                               f"listed but missing: {sorted(listed - present)}")


def test_every_agents_module_has_a_layer():
    listed = set().union(*(m for _, m in LAYERS[N_SICHUAN_ENV_LAYERS:-1]))
    present = {_module_name(f) for f in (ROOT / "agents").rglob("*.py")}
    assert present == listed, (f"not placed in a layer: {sorted(present - listed)}; "
                               f"listed but missing: {sorted(listed - present)}")


def test_layers_import_only_downward():
    bad = []
    for f in sorted((ROOT / "sichuan_env").glob("*.py")):
        bad += _layer_violations(f, _layer_of(f"sichuan_env.{f.stem}"))
    for f in sorted((ROOT / "agents").rglob("*.py")):
        bad += _layer_violations(f, _layer_of(_module_name(f)))
    bad += _layer_violations(ROOT / "train.py", _layer_of("train"))
    assert not bad, "imports against the layers of README.md:\n" + "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """Every import loop of ``graph`` (module -> the modules it imports), as text."""
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    cycles.append(" -> ".join([*path, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return cycles


def test_the_cycle_check_finds_loops():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        "a -> b -> c -> a", "b -> c -> a -> b", "c -> a -> b -> c"]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    """No two project modules import each other, directly or around a loop (imports
    inside functions count)."""
    files = ([*sorted((ROOT / "sichuan_env").glob("*.py")),
              *sorted((ROOT / "agents").rglob("*.py")), ROOT / "train.py"])
    names = {_module_name(f): f for f in files}
    graph = {}
    for name, f in names.items():
        deps = set()
        for _, mod in _imported_modules(f):
            parts = mod.split(".")
            for n in range(len(parts), 0, -1):  # the longest prefix that is a module
                cand = ".".join(parts[:n])
                if cand in names and cand != name:
                    deps.add(cand)
                    break
        graph[name] = deps
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles)[:10])


def test_the_layer_check_catches_an_upward_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from sichuan_env import vector\nimport numpy\nfrom sichuan_env.tiles import "
                 "N_KINDS\nimport train\nfrom sichuan_env import nosuchmodule\n")
    bad = _layer_violations(f, _layer_of("sichuan_env.driver"))
    assert sum("observation/driver imports sichuan_env.vector (envs)" in b
               for b in bad) == 1
    assert sum("train (train.py)" in b for b in bad) == 1
    assert sum("nosuchmodule is in no layer" in b for b in bad) == 1
    assert not any("tiles" in b or "numpy" in b for b in bad)


def test_readme_architecture_lists_the_layers():
    text = (ROOT / "README.md").read_text()
    assert "## Architecture" in text
    section = text.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    for name, members in LAYERS:
        assert f"| {name} |" in section, name
        packages = {"agents", "agents.bots", "agents.models", "agents.search", "agents.training"}
        for m in members - packages - {"__init__", "train"}:
            last = m.rpartition(".")[2]
            assert f"`{m}`" in section or (m.startswith("agents.") and f"`{last}`" in section
                                            ), f"README Architecture does not place `{m}`"


def test_the_agents_layers_catch_an_upward_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from agents.training.imitation import imitate\n"
                 "from agents.training.features import augment\nimport agents.arena\n")
    bad = _layer_violations(f, _layer_of("agents.models.ppo"))
    assert bad == ["m.py:1: model agents imports agents.training.imitation "
                   "(training pipelines)",
                   "m.py:1: model agents imports agents.training.imitation.imitate "
                   "(training pipelines)",
                   "m.py:3: model agents imports agents.arena (arena/ladder)"]

"""The layers: sichuan_env never imports sichuan_agents, its core works without the
``train`` extra (torch, stable-baselines3), every module sits on a floor of README.md's
Architecture table and imports only its own floor and those below."""

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
           if mod.split(".")[0] in ("sichuan_agents", "agents")]
    assert not bad, "sichuan_env imports the agents package:\n" + "\n".join(bad)


def test_the_import_check_sees_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import sichuan_agents.bots.greedy\nfrom sichuan_agents import base\n"
                 "def g():\n    from sichuan_agents.registry import make_agent\n"
                 "import importlib\nimportlib.import_module('sichuan_agents.models.ppo')\n")
    mods = [m for _, m in _imported_modules(f)]
    assert {"sichuan_agents.bots.greedy", "sichuan_agents", "sichuan_agents.registry",
            "sichuan_agents.models.ppo"} <= set(mods)


BLOCKED = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "sichuan_agents")

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
    from sichuan_env.envs import aec, gym_env
    from sichuan_env.core import engine
    from sichuan_env.seats.agent import make_agent, validate_agent
    from sichuan_env.records.game import Game

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
        import sichuan_env.envs.vector
    except ImportError as err:
        assert "sichuan-env[train]" in str(err), err
    else:
        raise AssertionError("sichuan_env.envs.vector imported without stable-baselines3")
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
    # the bots are a separate layer: with sichuan_agents missing a name that needs it says so
    assert "greedy: agent 'greedy': no module named 'sichuan_agents'" in res.stdout


# ----------------------------------------------------------------------------- layers
# The floors of README.md "Architecture", lowest first. A module may import modules of its
# own floor and of the floors below it, never above. Every module of sichuan_env and
# sichuan_agents is listed here by its full name (a new module is placed on purpose, not by
# accident); a package's ``__init__`` is the package's name.
_CORE = "sichuan_env.core"
_AG = "sichuan_agents"
_TR = "sichuan_agents.training"
LAYERS: list[tuple[str, set[str]]] = [
    ("core: tiles/rules", {_CORE, *(f"{_CORE}.{m}" for m in (
        "vocab", "tiles", "rules", "actions", "seeding"))}),
    ("core: tables/hands", {f"{_CORE}.{m}" for m in ("tables", "jit", "hands", "hand_kernels")}),
    ("core: state/engine", {f"{_CORE}.{m}" for m in ("state", "engine_kernels", "engine")}),
    ("seats", {"sichuan_env.seats", *(f"sichuan_env.seats.{m}" for m in (
        "view", "observation", "driver", "agent", "protocol", "exec_agent", "bot_process",
        "bot_server"))}),
    ("records", {"sichuan_env.records", *(f"sichuan_env.records.{m}" for m in (
        "record", "game", "public_log", "render", "svg", "viewer", "selfplay"))}),
    ("envs", {"sichuan_env", "sichuan_env.envs", *(f"sichuan_env.envs.{m}" for m in (
        "aec", "gym_env", "vector", "rllib", "rllib_bulk", "random_rounds", "paired"))}),
    ("play", {"sichuan_env.play", "sichuan_env.play.__main__", "sichuan_env.play.terminal",
              "sichuan_env.play.web", *(f"sichuan_env.play.web.{m}" for m in (
                  "app", "bot_spec", "bots", "cli", "guard", "memory", "review", "server",
                  "store", "table", "workers"))}),
    ("bots", {_AG, f"{_AG}.bots", f"{_AG}.models", f"{_AG}.search", f"{_AG}.bots.greedy",
              f"{_AG}.bots.rules_bot", f"{_AG}.search.candidates"}),
    ("networks/planes", {_TR, f"{_AG}.models.candidate_features", *(f"{_TR}.{m}" for m in (
        "features", "advice", "oracle_critic", "ppo_policy", "rllib_net", "rllib_module",
        "layout", "kl_ppo", "hardware"))}),
    ("model agents", {f"{_AG}.models.ppo", f"{_AG}.models.rllib_agent", f"{_AG}.models.boosted",
                      f"{_AG}.models.best", f"{_AG}.search.sampler", f"{_AG}.search.rollout",
                      f"{_AG}.search.hand_model", f"{_AG}.search.seat_playout"}),
    ("arena/ladder", {f"{_AG}.arena", f"{_AG}.ladder", f"{_AG}.review", f"{_AG}.tournament",
                      f"{_AG}.distributed", f"{_AG}.search.agent", f"{_TR}.cluster"}),
    ("training pipelines", {f"{_TR}.{m}" for m in (
        "imitation", "rollout_teacher", "distill", "export_model", "shards", "finetune",
        "improve", "search_teacher", "decision_store", "rllib_train", "boost")}),
    ("train", {f"{_AG}.train", f"{_TR}.curve"}),
]
N_SICHUAN_ENV_LAYERS = 7
ALL_LISTED = set().union(*(members for _, members in LAYERS))
# each room of sichuan_env: the floors its modules sit on
ROOM_FLOORS = {"core": {0, 1, 2}, "seats": {3}, "records": {4}, "envs": {5}, "play": {6}}


def _layer_of(module: str) -> int | None:
    """Floor of a module name or of a name imported from one (the longest listed prefix);
    None outside the project (and for ``sichuan_env`` itself as the source of a
    ``from sichuan_env import x``: x is checked on its own line entry), -1 in no floor."""
    parts = module.split(".")
    if module == "sichuan_env" or parts[0] not in ("sichuan_env", "sichuan_agents"):
        return None  # numpy, numba, gymnasium, ...: outside the project
    shortest = 2 if parts[0] == "sichuan_env" else 1  # the facade is no room's prefix
    for n in range(len(parts), shortest - 1, -1):
        name = ".".join(parts[:n])
        for i, (_, members) in enumerate(LAYERS):
            if name in members:
                return i
    return -1


def _own_layer(module: str) -> int:
    """The floor a module itself is listed on."""
    return next(i for i, (_, members) in enumerate(LAYERS) if module in members)


def _module_name(path: Path) -> str:
    """``sichuan_agents/training/x.py`` -> ``sichuan_agents.training.x``; a package's
    ``__init__`` -> the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _project_files() -> list[Path]:
    return [*sorted((ROOT / "sichuan_env").rglob("*.py")),
            *sorted((ROOT / "sichuan_agents").rglob("*.py"))]


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


def test_every_module_has_a_layer():
    present = {_module_name(f) for f in _project_files()}
    assert present == ALL_LISTED, (f"not placed in a layer: {sorted(present - ALL_LISTED)}; "
                                   f"listed but missing: {sorted(ALL_LISTED - present)}")


def test_each_room_holds_its_own_floors():
    """sichuan_env/ is its rooms and the package's __init__, nothing else at the top; each
    room's modules sit on that room's floors."""
    top = {p.name for p in (ROOT / "sichuan_env").iterdir() if p.name != "__pycache__"}
    assert top == {"__init__.py", *ROOM_FLOORS}, sorted(top)
    for room, floors in ROOM_FLOORS.items():
        for f in sorted((ROOT / "sichuan_env" / room).rglob("*.py")):
            assert _own_layer(_module_name(f)) in floors, f"{f.relative_to(ROOT)} is off {room}"


def test_layers_import_only_downward():
    bad = []
    for f in _project_files():
        bad += _layer_violations(f, _own_layer(_module_name(f)))
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
    inside functions count; a package's ``__init__`` is not a dependency of its modules)."""
    names = {_module_name(f): f for f in _project_files()}
    graph = {}
    for name, f in names.items():
        deps = set()
        for _, mod in _imported_modules(f):
            parts = mod.split(".")
            for n in range(len(parts), 1, -1):  # the longest prefix that is a module
                cand = ".".join(parts[:n])
                if cand in names and cand != name:
                    deps.add(cand)
                    break
        graph[name] = deps
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles)[:10])


def test_the_layer_check_catches_an_upward_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from sichuan_env.envs import vector\nimport numpy\n"
                 "from sichuan_env.core.tiles import N_KINDS\nimport sichuan_agents.train\n"
                 "from sichuan_env.core import nosuchmodule\n")
    bad = _layer_violations(f, _layer_of("sichuan_env.seats.driver"))
    assert sum("seats imports sichuan_env.envs.vector (envs)" in b for b in bad) == 1
    assert sum("sichuan_agents.train (train)" in b for b in bad) == 1
    assert sum("nosuchmodule" in b for b in bad) == 0  # a name of core: core's floor
    assert not any("tiles" in b or "numpy" in b for b in bad)
    assert _layer_of("sichuan_env.nosuchroom.x") == -1


def test_readme_architecture_lists_the_layers():
    text = (ROOT / "README.md").read_text()
    assert "## Architecture" in text
    section = text.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    for name, members in LAYERS:
        assert f"| {name} |" in section, name
        for m in members:
            if (ROOT / Path(*m.split("."))).is_dir():
                continue  # a package: its modules are placed one by one
            last = m.rpartition(".")[2]
            assert f"`{m}`" in section or f"`{last}`" in section, (
                f"README Architecture does not place `{m}`")


def test_the_agents_layers_catch_an_upward_import(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from sichuan_agents.training.imitation import imitate\n"
                 "from sichuan_agents.training.features import augment\n"
                 "import sichuan_agents.arena\n")
    bad = _layer_violations(f, _layer_of("sichuan_agents.models.ppo"))
    assert bad == ["m.py:1: model agents imports sichuan_agents.training.imitation "
                   "(training pipelines)",
                   "m.py:1: model agents imports sichuan_agents.training.imitation.imitate "
                   "(training pipelines)",
                   "m.py:3: model agents imports sichuan_agents.arena (arena/ladder)"]

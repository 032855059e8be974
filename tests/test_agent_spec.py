"""Agents by name, import path, file path, entry point and keyword arguments
(sichuan_env.seats.agent.make_agent), and the protocol checks that guard them."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.seats.agent import (
    BUILTIN_AGENTS,
    ENTRY_POINT_GROUP,
    AgentSpecError,
    BaseAgent,
    RandomAgent,
    known_agents,
    make_agent,
    parse_spec,
    validate_agent,
)

DATA = Path(__file__).resolve().parent / "data"
MYBOT = f"{DATA / 'mybot.py'}:MyBot"


def test_builtin_names_and_seed():
    from sichuan_agents.bots.greedy import GreedyAgent
    from sichuan_agents.bots.rules_bot import RulesAgent

    assert isinstance(make_agent("greedy"), GreedyAgent)
    assert isinstance(make_agent("RULES"), RulesAgent)
    a, b = make_agent("random", seed=7), make_agent("random", seed=7)
    assert isinstance(a, RandomAgent) and a.seed == 7
    mask = engine.legal_mask(engine.reset([3] * 16))
    assert np.array_equal(a.act_batch(None, mask), b.act_batch(None, mask))


def test_keyword_arguments_are_typed_and_override():
    assert parse_spec("x.y:Z?depth=2&w=0.5&on=true&off=False&none=none&name=abc") == (
        "x.y:Z", {"depth": 2, "w": 0.5, "on": True, "off": False, "none": None, "name": "abc"})
    r = make_agent("rules?pass_hu=false&pung_margin=2.5")
    assert r.pass_hu is False and r.pung_margin == 2.5
    # explicit keyword arguments win over the spec's
    assert make_agent("rules?pass_hu=false", pass_hu=True).pass_hu is True
    for bad in ("greedy?depth", "greedy?=1", "greedy?a=1&a=2", "?a=1", "greedy?1x=2"):
        with pytest.raises(AgentSpecError):
            parse_spec(bad)


def test_import_path_and_file_path():
    bot = make_agent(MYBOT)
    assert type(bot).__name__ == "MyBot" and bot.prefer == "high"
    assert make_agent(MYBOT + "?prefer=low").prefer == "low"
    # a relative file path and a module import path reach the same kind of agent
    rel = make_agent("tests/data/mybot.py:MyBot") if Path("tests/data/mybot.py").exists() \
        else bot
    assert type(rel).__name__ == "MyBot"
    sys.path.insert(0, str(DATA))
    try:
        mod_bot = make_agent("mybot:MyBot?prefer=low")
    finally:
        sys.path.remove(str(DATA))
    assert type(mod_bot).__name__ == "MyBot" and mod_bot.prefer == "low"
    # a class from an installed module, with the seed passed because it accepts one
    assert make_agent("sichuan_env.seats.agent:RandomAgent", seed=5).seed == 5


def test_an_edited_file_is_loaded_again(tmp_path):
    f = tmp_path / "edited.py"
    body = ("from sichuan_env.seats.agent import RandomAgent\n"
            "class Bot(RandomAgent):\n    VERSION = {}\n")
    f.write_text(body.format(1))
    first = make_agent(f"{f}:Bot")
    assert type(make_agent(f"{f}:Bot")) is type(first)  # unchanged: the same class
    f.write_text(body.format(22))  # another size, so the change is seen whatever the clock
    assert make_agent(f"{f}:Bot").VERSION == 22


def test_agent_object_and_factory():
    objects = DATA / "objects.py"
    bot = make_agent(f"{objects}:BOT")
    from_factory = make_agent(f"{objects}:make_bot?prefer=low")
    assert type(bot).__name__ == "FirstLegal" and bot.prefer == "high"
    assert type(from_factory).__name__ == "FirstLegal" and from_factory.prefer == "low"
    with pytest.raises(AgentSpecError, match="an agent object, not a class"):
        make_agent(f"{objects}:BOT?prefer=low")


@pytest.mark.parametrize("spec, words", [
    ("nope", ["unknown agent 'nope'", "greedy", "ppo[:PATH]", "rllib:PATH", "random",
              "rules", "package.module:ClassName"]),
    ("rllib", ["needs an argument", "rllib:PATH"]),
    ("ppo:/nonexistent/model.zip", ["PPOAgent", "FileNotFoundError", "/nonexistent"]),
    ("no_such_pkg.bots:Bot", ["no module named 'no_such_pkg'"]),
    ("tests/no_such_file.py:Bot", ["no file tests/no_such_file.py"]),
    (f"{DATA / 'mybot.py'}:Missing", ["has no attribute 'Missing'"]),
    (f"{DATA / 'mybot.py'}:NoActBatch", ["NoActBatch lacks act_batch"]),
    (f"{DATA / 'mybot.py'}:Illegal", ["failed validation", "IllegalActionError",
                                      "illegal action 0 (discard 1m)"]),
    (f"{DATA / 'mybot.py'}:MyBot?prefer=middle", ["MyBot(prefer='middle') failed",
                                                  "prefer must be"]),
    (f"{DATA / 'broken.py'}:Bot", ["importing", "broken.py failed", "ZeroDivisionError"]),
    ("greedy?bogus=1", ["GreedyAgent(bogus=1) failed", "unexpected keyword"]),
    ("mybot", ["unknown agent 'mybot'"]),
    ("sichuan_agents.bots.greedy:", ["no attribute after ':'"]),
])
def test_bad_specs_give_one_clear_line(spec, words):
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec)
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)
    assert isinstance(info.value, ValueError)


def test_known_agents_lists_builtins():
    names = known_agents()
    assert {"random", "greedy", "rules", "ppo[:PATH]", "fitted[:PATH]", "best",
            "rllib:PATH"} <= set(names)
    assert names == sorted(names)


def test_entry_points_register_names(tmp_path, monkeypatch):
    """A distribution on sys.path with an entry point in the group is found by name, and
    its target is imported only when asked for."""
    pkg = tmp_path / "ep_bots_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        import numpy as np
        from sichuan_env.seats.agent import BaseAgent

        class Lowest(BaseAgent):
            needs = "nothing"
            def __init__(self, offset=0, seed=None):
                self.offset, self.seed = offset, seed
            def act(self, observation, mask):
                return int(np.flatnonzero(mask)[0])
        """))
    dist = tmp_path / "ep_bots-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-bots\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nlowest = ep_bots_pkg:Lowest\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "lowest" in known_agents()
    bot = make_agent("lowest?offset=3", seed=11)
    assert type(bot).__name__ == "Lowest" and bot.offset == 3 and bot.seed == 11
    # a name registered outside the project is validated: a broken target is reported
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nlowest = ep_bots_pkg:Missing\n")
    with pytest.raises(AgentSpecError, match="entry point ep_bots_pkg:Missing"):
        make_agent("lowest")


def test_builtin_table_matches_pyproject_entry_points():
    tomllib = pytest.importorskip("tomllib")

    root = Path(__file__).resolve().parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text())
    assert data["project"]["entry-points"][ENTRY_POINT_GROUP] == BUILTIN_AGENTS


def test_base_agent_act_or_act_batch():
    class OnlyAct(BaseAgent):
        needs = "nothing"

        def act(self, observation, mask):
            return int(np.flatnonzero(mask)[-1])

    class OnlyBatch(BaseAgent):
        needs = "nothing"

        def act_batch(self, observations, masks):
            return np.asarray(masks).argmax(1)

    st = engine.reset(np.arange(6))
    mask = engine.legal_mask(st)
    a = OnlyAct().act_batch(np.zeros((6, 0)), mask)
    assert a.dtype == np.int64 and (a == [np.flatnonzero(m)[-1] for m in mask]).all()
    assert OnlyBatch().act(np.zeros(0), mask[2]) == int(mask[2].argmax())
    validate_agent(OnlyAct(), n_deals=2)
    validate_agent(OnlyBatch(), n_deals=2)
    with pytest.raises(NotImplementedError, match="neither act nor act_batch"):
        BaseAgent().act_batch(np.zeros((6, 0)), mask)


def test_validate_agent_checks_act_and_types():
    class BadAct(BaseAgent):
        """act_batch is legal but act returns a float."""

        needs = "nothing"

        def act(self, observation, mask):
            return float(np.flatnonzero(mask)[0])

        def act_batch(self, observations, masks):
            return np.asarray(masks).argmax(1)

    class FloatBatch(BaseAgent):
        needs = "nothing"

        def act_batch(self, observations, masks):
            return np.asarray(masks).argmax(1).astype(float)

    with pytest.raises(ValueError, match="act returned"):
        validate_agent(BadAct(), n_deals=1)
    with pytest.raises(ValueError, match="float64 actions"):
        validate_agent(FloatBatch(), n_deals=1)
    with pytest.raises(TypeError, match="lacks act_batch"):
        validate_agent(object.__new__(type("X", (), {"act": lambda s, o, m: 0})), n_deals=1)


def test_every_place_that_names_agents_takes_import_paths(monkeypatch, capsys):
    """The single-agent env, the VecEnv, terminal play and train.py's --opponents all go
    through the one resolver."""
    import io

    from sichuan_env.envs.gym_env import SichuanSingleEnv
    from sichuan_env.envs.vector import SichuanVecEnv
    from sichuan_env.play.terminal import play

    env = SichuanSingleEnv(opponents=MYBOT + "?prefer=low")
    assert [type(a).__name__ for a in env.opponents] == ["MyBot"] * 3
    assert env.opponents[0] is env.opponents[2] and env.opponents[0].prefer == "low"
    obs, info = env.reset(seed=1)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    venv = SichuanVecEnv(2, opponents=[MYBOT, "random", "greedy"], seed=3)
    assert [type(a).__name__ for a in venv.opponents] == ["MyBot", "RandomAgent", "GreedyAgent"]
    venv.reset()
    venv.step(venv.action_masks().argmax(1))
    with pytest.raises(AgentSpecError, match="unknown agent 'nobody'"):
        SichuanSingleEnv(opponents="nobody")
    out = io.StringIO()
    scores = play([MYBOT], seed=2, auto_first=True, stdout=out)
    assert len(scores) == 4 and "deal over" in out.getvalue()

    from sichuan_agents import train

    opp = train.make_opponents(f"{MYBOT},random,rules", seed=0)
    assert [type(a).__name__ for a in opp] == ["MyBot", "RandomAgent", "RulesAgent"]
    with pytest.raises(SystemExit) as info:
        train.make_opponents("no_pkg.x:Bot", seed=0)
    assert info.value.code == 2
    assert capsys.readouterr().err.startswith("error: agent 'no_pkg.x:Bot': no module named")


class _TakesRules(BaseAgent):
    def __init__(self, seed=None, rules=None):
        self.seed, self.rules = seed, rules

    def act_batch(self, observations, masks):
        return masks.argmax(1)


class _TakesAnything(BaseAgent):
    def __init__(self, seed=None, **kwargs):
        self.kwargs = kwargs

    def act_batch(self, observations, masks):
        return masks.argmax(1)


def test_preset_reaches_only_constructors_that_name_rules(monkeypatch):
    import types

    mod = types.ModuleType("preset_probe")
    mod.TakesRules, mod.TakesAnything = _TakesRules, _TakesAnything
    monkeypatch.setitem(sys.modules, "preset_probe", mod)
    assert make_agent("preset_probe:TakesRules", preset="mahjongsoft",
                      validate=False).rules == "mahjongsoft"
    assert make_agent("preset_probe:TakesRules", validate=False).rules is None
    # the spec's own value wins over the preset
    assert make_agent("preset_probe:TakesRules?rules=mil", preset="mahjongsoft",
                      validate=False).rules == "mil"
    # **kwargs alone does not ask for it
    assert make_agent("preset_probe:TakesAnything", preset="mahjongsoft",
                      validate=False).kwargs == {}


def test_arena_and_envs_tell_agents_their_preset(monkeypatch):
    import types

    from sichuan_agents.arena import run_arena
    from sichuan_env.envs.gym_env import SichuanSingleEnv
    from sichuan_env.envs.vector import SichuanVecEnv

    made = []

    class Probe(_TakesRules):
        def __init__(self, seed=None, rules=None):
            super().__init__(seed, rules)
            made.append(rules)

    mod = types.ModuleType("preset_probe2")
    mod.Probe = Probe
    monkeypatch.setitem(sys.modules, "preset_probe2", mod)
    run_arena(["preset_probe2:Probe", "random", "random", "random"], deals=4, seed=1,
              rules="mahjongsoft")
    SichuanSingleEnv(opponents="preset_probe2:Probe", rules="mahjongsoft")
    SichuanVecEnv(2, opponents="preset_probe2:Probe", rules="mil")
    assert made[-3:] == ["mahjongsoft", "mahjongsoft", "mil"]

"""Every command that takes agents lists, in its ``--help``, every registered agent name and
every spec form, from the registry itself (``sichuan_env.seats.agent.agents_help``): a name added
to the registry appears in every such help without any other edit."""

from __future__ import annotations

import contextlib
import importlib
import io

import pytest

from sichuan_env.seats import agent as agent_module

#: (module with ``main(argv)``, the arguments before ``--help``)
COMMANDS = [
    ("sichuan_agents.arena", []),
    ("sichuan_agents.ladder", []),
    ("sichuan_agents.tournament", []),
    ("sichuan_agents.review", []),
    ("sichuan_env.seats.bot_server", []),
    ("sichuan_agents.search.agent", []),
    ("sichuan_env.play.terminal", []),
    ("sichuan_env.play.terminal", ["--web"]),
    ("sichuan_agents.train", []),
    ("sichuan_agents.training.finetune", []),
    ("sichuan_agents.training.rollout_teacher", []),
]


def _help(module: str, before: list[str]) -> str:
    main = importlib.import_module(module).main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main([*before, "--help"])
    assert stop.value.code == 0
    return " ".join(out.getvalue().split())  # argparse wraps lines at spaces


@pytest.mark.parametrize(("module", "before"), COMMANDS, ids=lambda c: str(c))
def test_help_lists_every_registered_agent_and_spec_form(module: str, before: list[str]) -> None:
    text = _help(module, before)
    for name in agent_module.known_agents():
        assert name in text, f"{module} --help does not list {name}"
    for form in agent_module.SPEC_FORMS:
        assert " ".join(form.split()) in text, f"{module} --help does not show {form!r}"
    for shipped in ("fitted", "boosted", "best", "search", "rules", "greedy", "random"):
        assert shipped in text


def test_a_newly_registered_name_appears_in_every_help(monkeypatch) -> None:
    monkeypatch.setitem(agent_module.BUILTIN_AGENTS, "zzz_new_bot",
                        "sichuan_agents.bots.greedy:GreedyAgent")
    for module, before in COMMANDS:
        assert "zzz_new_bot" in _help(module, before), module

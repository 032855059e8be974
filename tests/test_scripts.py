"""The console scripts of pyproject's [project.scripts]: each names an importable ``main``
that takes an argument list, answers ``--help`` and returns an int exit status."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_the_commands_are_all_there():
    assert set(SCRIPTS) == {"sichuan-arena", "sichuan-ladder", "sichuan-play",
                            "sichuan-viewer", "sichuan-review", "sichuan-records",
                            "sichuan-selfplay", "sichuan-train", "sichuan-tournament",
                            "sichuan-bot-server"}


def test_top_level_modules_are_packaged():
    """A script's module is in one of the packages setuptools installs (there are no
    top-level modules)."""
    from setuptools import find_packages

    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = set(find_packages(str(ROOT), include=tool["packages"]["find"]["include"]))
    assert "py-modules" not in tool
    for target in SCRIPTS.values():
        module = target.split(":")[0]
        assert module.rpartition(".")[0] in packages, target


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_main_answers_help_and_returns_int(name, capsys):
    module_name, _, attr = SCRIPTS[name].partition(":")
    main = getattr(importlib.import_module(module_name), attr)
    sig = inspect.signature(main)
    assert sig.return_annotation in (int, "int"), f"{name}: main must return an int"
    assert list(sig.parameters)[:1] == ["argv"], f"{name}: main(argv) takes the arguments"
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["sichuan-records", "sichuan-viewer"])
def test_script_main_returns_its_status(name, tmp_path, capsys):
    """A run that fails on its input returns a nonzero int (no exception, no exit)."""
    module_name, _, attr = SCRIPTS[name].partition(":")
    main = getattr(importlib.import_module(module_name), attr)
    missing = str(tmp_path / "missing.jsonl")
    args = ["check", missing] if name == "sichuan-records" else [missing, "--out",
                                                        str(tmp_path / "x.html")]
    code = main(args)
    assert isinstance(code, int) and code != 0

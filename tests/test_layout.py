"""README.md's Layout table names every module of sichuan_env/ and sichuan_agents/ (one row
each), and nothing that does not exist; pyproject installs exactly those two packages."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(str(p.parent.relative_to(ROOT)) for top in ("sichuan_env", "sichuan_agents")
                  for p in (ROOT / top).rglob("__init__.py"))


def layout_rows(text: str) -> list[str]:
    """The paths in the first column of the README's Layout table. A row may name several;
    a bare file name after the first path is in that path's folder."""
    heading = re.search(r"^(#+) Layout$", text, re.M)
    if heading is None:
        return []
    level = len(heading.group(1))
    rest = text[heading.end():]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    section = rest[:end.start()] if end else rest
    rows = []
    for line in section.splitlines():
        cells = line.split("|")
        if line.startswith("| `") and len(cells) > 2:
            names = re.findall(r"`([^`]+)`", cells[1])
            folder = names[0].rpartition("/")[0] if names else ""
            rows += [n if "/" in n or not folder else f"{folder}/{n}" for n in names]
    return rows


def modules() -> set[str]:
    return {f"{p}/{f.name}" for p in PACKAGES for f in (ROOT / p).glob("*.py")}


def test_every_module_has_one_row():
    rows = layout_rows((ROOT / "README.md").read_text())
    missing = sorted(modules() - set(rows))
    assert not missing, f"README Layout lacks: {missing}"
    twice = sorted({r for r in rows if rows.count(r) > 1})
    assert not twice, f"README Layout names twice: {twice}"


def test_every_row_exists():
    rows = layout_rows((ROOT / "README.md").read_text())
    gone = [r for r in rows if not (ROOT / r).exists()]
    assert not gone, f"README Layout names what does not exist: {gone}"


def test_the_check_reads_the_table():
    text = ("# x\n\n## Layout\n\n| path | job |\n|---|---|\n| `a/b.py` | one |\n"
            "| `c/d.py`, `e.py` | two, `not/this.py` |\nnot a row `d.py`\n\n## Next\n"
            "| `e.py` | other section |\n")
    assert layout_rows(text) == ["a/b.py", "c/d.py", "c/e.py"]


def test_pyproject_installs_the_two_packages_whole():
    """``pip install`` builds exactly the packages that exist: setuptools' search with the
    pyproject's patterns finds every folder with an ``__init__.py`` under sichuan_env/ and
    sichuan_agents/, and nothing else at the top (no ``tests``, ``benchmarks``, ``train``)."""
    import tomllib
    from setuptools import find_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = set(find_packages(str(ROOT), include=config["packages"]["find"]["include"]))
    present = {str(p.parent.relative_to(ROOT)).replace("/", ".")
               for top in ("sichuan_env", "sichuan_agents")
               for p in (ROOT / top).rglob("__init__.py")}
    assert found == present
    assert {name.split(".")[0] for name in found} == {"sichuan_env", "sichuan_agents"}
    assert "py-modules" not in config

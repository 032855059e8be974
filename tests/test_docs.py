"""The manual stays honest: its commands run, its numbers hold, it keeps no diary.

* Every code block of README.md, docs/environments.md and docs/rules.md that is marked
  runnable (an HTML comment ``<!-- runnable -->`` on the line before the fence;
  ``<!-- runnable slow -->`` for a long one; ``<!-- runnable file=NAME -->`` for a file
  that the other blocks use) runs without error, each in a fresh folder holding the
  document's ``file=`` blocks, with this checkout first on the import path.
* README.md and docs/ hold no diary words ("session", "this machine", "engineer") and no
  commit hashes, except in CHANGELOG.md and the "History" section of docs/training.md.
* The README keeps its shape (at most 250 lines, its sections in order, ``bash .ci/run``
  as the test command); the worked example of docs/rules.md is what the hand evaluator
  says; LICENSE, CITATION.cff and pyproject agree.

Each checker is first tried on a small example, so that it cannot pass by finding nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNNABLE_DOCS = ("README.md", "docs/environments.md", "docs/rules.md")

_MARK = re.compile(r"^<!--\s*runnable\b(?P<opts>[^>]*)-->\s*$")
_FENCE_OPEN = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
BLOCK_TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    """One runnable code block of a Markdown document."""

    doc: str
    line: int  # 1-based line of the fence
    lang: str  # "python" or "bash"
    code: str
    slow: bool
    file: str | None  # write the block to this file instead of running it alone

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def runnable_blocks(text: str, doc: str = "") -> list[Block]:
    """The blocks of ``text`` marked runnable, in order. A marker not followed by a
    python or bash fence, or an unknown option, is an error (a typo must not hide a
    block)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    for i, line in enumerate(lines):
        m = _MARK.match(line.strip())
        if not m:
            continue
        opts = m.group("opts").split()
        slow = "slow" in opts
        files = [o.split("=", 1)[1] for o in opts if o.startswith("file=")]
        unknown = [o for o in opts if o != "slow" and not o.startswith("file=")]
        if unknown:
            raise ValueError(f"{doc}:{i + 1}: unknown runnable option(s) {unknown}")
        f = _FENCE_OPEN.match(lines[i + 1]) if i + 1 < len(lines) else None
        if not f or f.group("lang") not in ("python", "bash"):
            raise ValueError(f"{doc}:{i + 1}: a runnable mark must precede a python or bash "
                             "code block")
        fence = f.group("fence")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == fence), None)
        if end is None:
            raise ValueError(f"{doc}:{i + 2}: code block never closed")
        blocks.append(Block(doc, i + 2, f.group("lang"), "\n".join(lines[i + 2:end]) + "\n",
                            slow, files[0] if files else None))
    return blocks


def _doc_blocks() -> list[Block]:
    out: list[Block] = []
    for doc in RUNNABLE_DOCS:
        out += runnable_blocks((ROOT / doc).read_text(encoding="utf-8"), doc)
    return out


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    env["MPLBACKEND"] = "Agg"
    return env


def run_block(block: Block, blocks: list[Block], folder: Path) -> subprocess.CompletedProcess:
    """Run one block in ``folder`` after writing the ``file=`` blocks of its document; a
    ``file=`` block itself is run as a script (it must at least import cleanly)."""
    for b in blocks:
        if b.doc == block.doc and b.file:
            (folder / b.file).write_text(b.code, encoding="utf-8")
    if block.file:
        cmd = [sys.executable, block.file]
    elif block.lang == "python":
        (folder / "_block.py").write_text(block.code, encoding="utf-8")
        cmd = [sys.executable, "_block.py"]
    else:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    return subprocess.run(cmd, cwd=folder, env=_env(), capture_output=True, text=True,
                          timeout=BLOCK_TIMEOUT_S, check=False)


_ALL_BLOCKS = _doc_blocks()


# ----------------------------------------------------------------------------- runnable blocks


def test_runnable_marks_are_found_and_checked(tmp_path: Path) -> None:
    text = "\n".join([
        "# Example", "<!-- runnable -->", "```python", "print(1 + 1)", "```", "",
        "```bash", "not marked: never run", "```",
        "<!-- runnable slow -->", "```bash", "echo slow", "```",
        "<!-- runnable file=helper.py -->", "```python", "X = 3", "```",
        "<!-- runnable -->", "```bash", "python -c 'import helper; assert helper.X == 3'",
        "false", "```",
    ])
    blocks = runnable_blocks(text, "ex.md")
    assert [(b.line, b.lang, b.slow, b.file) for b in blocks] == [
        (3, "python", False, None), (11, "bash", True, None), (15, "python", False, "helper.py"),
        (19, "bash", False, None)]
    assert run_block(blocks[0], blocks, tmp_path).stdout == "2\n"
    failed = run_block(blocks[3], blocks, tmp_path)  # helper.py found, then `false` fails
    assert failed.returncode != 0 and "Error" not in failed.stderr
    for bad in ("<!-- runnable fast -->\n```bash\necho\n```",
                "<!-- runnable -->\n\n```bash\necho\n```",
                "<!-- runnable -->\n```json\n{}\n```",
                "<!-- runnable -->\n```bash\necho"):
        with pytest.raises(ValueError, match="ex.md"):
            runnable_blocks(bad, "ex.md")


def test_the_readme_marks_its_examples_runnable() -> None:
    readme = [b for b in _ALL_BLOCKS if b.doc == "README.md"]
    code = "\n".join(b.code for b in readme)
    for needed in ("hands.shanten", "agent_iter", "class MyBot", "agents.arena",
                   "sichuan_env.viewer"):
        assert needed in code, needed
    assert any(not b.slow and not b.file for b in readme)


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, id=b.id, marks=[pytest.mark.slow] if b.slow else [])
     for b in _ALL_BLOCKS],
)
def test_runnable_block_runs(block: Block, tmp_path: Path) -> None:
    out = run_block(block, _ALL_BLOCKS, tmp_path)
    assert out.returncode == 0, (
        f"{block.id} failed (exit {out.returncode}):\n{block.code}\n--- stdout\n"
        f"{out.stdout[-3000:]}\n--- stderr\n{out.stderr[-3000:]}")


# ----------------------------------------------------------------------------- no diary


_DIARY = re.compile(r"\bsessions?\b|\bthis machine\b|\bengineers?\b", re.IGNORECASE)
_HEX = re.compile(r"(?<![\w./#-])[0-9a-f]{7,40}(?![\w-])")


def diary_problems(text: str, name: str) -> list[str]:
    """Lines of ``text`` with a diary word or something that looks like a commit hash
    (7-40 lower-case hex digits with at least one letter and one digit)."""
    problems = []
    fence_free = text
    for lineno, line in enumerate(fence_free.splitlines(), 1):
        for m in _DIARY.finditer(line):
            problems.append(f"{name}:{lineno}: {m.group(0)!r}: {line.strip()}")
        for m in _HEX.finditer(line):
            word = m.group(0)
            if re.search(r"[a-f]", word) and re.search(r"\d", word):
                problems.append(f"{name}:{lineno}: {word!r} looks like a commit hash")
    return problems


def _manual_texts() -> list[tuple[str, str]]:
    """README.md and every Markdown file under docs/, docs/training.md without its
    History section (the dated record, where commit names belong)."""
    out = [("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))]
    for path in sorted((ROOT / "docs").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if name == "docs/training.md":
            assert "\n## History\n" in text, "docs/training.md lost its History section"
            text = text.split("\n## History\n")[0]
        out.append((name, text))
    return out


def test_diary_checker_finds_words_and_hashes() -> None:
    text = "\n".join([
        "Measured in this session on this machine by another engineer.",
        "Fixed in 0a9a26f and in 1d64f1c8e0.",
        "Seeds 20261129 and 1000000, a 7.8 MB table, 0x1f, sessionless, ab12",
        "deadbeef is a word, not a hash; `docs/x.md#a1b2c3d` is a link",
    ])
    found = diary_problems(text, "t.md")
    assert [p.split(": ")[1] for p in found] == [
        "'session'", "'this machine'", "'engineer'", "'0a9a26f' looks like a commit hash",
        "'1d64f1c8e0' looks like a commit hash"], found


def test_the_manual_keeps_no_diary() -> None:
    texts = _manual_texts()
    assert {"README.md", "docs/environments.md", "docs/performance.md"} <= {n for n, _ in texts}
    problems = [p for name, text in texts for p in diary_problems(text, name)]
    assert problems == [], "\n".join(problems)


# ----------------------------------------------------------------------------- the README


README_SECTIONS = [
    "Install", "Quick start", "Environments", "Bots and benchmarking your own",
    "Records and the replay viewer", "Play", "Training and scaling out", "Performance",
    "Development", "Licence and citation",
]


def test_readme_shape() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    sections = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert sections == README_SECTIONS
    dev = text.split("\n## Development\n")[1].split("\n## ")[0]
    assert "### Architecture" in dev and "### Layout" in dev
    # the test command: CI runs .ci/run, and the README names it
    assert "bash .ci/run" in text
    assert (ROOT / ".ci" / "run").is_file()
    # CPU-only torch comes from PyTorch's own index, not from PyPI
    assert "--index-url https://download.pytorch.org/whl/cpu" in text


# ----------------------------------------------------------------------------- the rule book


def test_rules_worked_example_matches_the_hand_evaluator() -> None:
    from sichuan_env import hands
    from sichuan_env.rules import get_rules

    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    example = text.split("**A worked example.**")[1].split("```python")[0]
    flat = " ".join(example.split())
    assert "holds `1p 2p 3p 4p 5p 6p 8p 8p 9p 9p`" in flat and "pung of 7p" in flat
    standing, melds, void = "123456p8899p", [("pung", "7p")], "m"
    assert hands.waits(standing, melds, void=void) == ["8p", "9p"]
    assert "it waits on 8p or 9p" in flat
    for preset in ("mil", "mahjongsoft"):
        rules = get_rules(preset)
        on_discard = hands.score(standing, melds, "8p", void, rules=rules)
        self_drawn = hands.score(standing, melds, "9p", void, self_drawn=True, rules=rules)
        assert on_discard.fans == self_drawn.fans == {"Full Flush": 2}
        assert on_discard.value == self_drawn.value == 4
        per_payer = self_drawn.value + rules.self_draw_bonus
        assert per_payer == 5 and 3 * per_payer == 15
    assert "**Full Flush** (2 fans)" in flat and "**4 points**" in flat
    assert "**5 points from each seat not yet won**" in flat and "15 points" in flat


# ----------------------------------------------------------------------------- licence, citation


def test_licence_citation_and_pyproject_agree() -> None:
    import sichuan_env

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and project["license"] == {"text": "MIT"}
    assert "the sichuan-env authors" in licence and "agents/models" in licence
    assert "numba engine" in project["description"] and "numpy engine" not in project[
        "description"]
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    fields = dict(re.findall(r"^([\w-]+):\s*\"?([^\"\n]*)\"?\s*$", cff, re.MULTILINE))
    assert fields["cff-version"] == "1.2.0" and fields["license"] == "MIT"
    assert fields["version"] == project["version"] == sichuan_env.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog and f"## [{project['version']}]" in changelog

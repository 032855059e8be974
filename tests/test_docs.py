"""The manual stays honest: its commands run, its numbers hold, it keeps no diary.

* Every code block of README.md, docs/environments.md and docs/rules.md that is marked
  runnable (an HTML comment ``<!-- runnable -->`` on the line before the fence;
  ``<!-- runnable slow -->`` for a long one; ``<!-- runnable file=NAME -->`` for a file
  that the other blocks use) runs without error, each in a fresh folder holding the
  document's ``file=`` blocks, with this checkout first on the import path and the
  interpreter running the tests as ``python`` (a venv's interpreter run without activating
  the venv still runs the blocks with itself, not with another ``python`` on PATH).
* README.md and docs/ hold no diary words ("session", "this machine", "engineer");
  commit hashes only in the record, docs/history/ (and CHANGELOG.md).
* Every page of docs/ outside docs/history/ is a manual: it says what is, and the dated
  record of how it came to be lives in docs/history/. A manual page holds no dated entry
  (a heading with a date, a heading or list item or table row opening with "Attempt N",
  "Round N", "Run N", "Try N", "Trial N" or "Experiment N", a table numbering attempts in
  a "#" column, a "History" or "Experiment log" heading, or any ISO date such as
  2026-11-26 outside code blocks), and stays within a length a reader gets through in one
  sitting: MANUAL_MAX_LINES (300) lines and MANUAL_MAX_CHARS (24,000) characters. Why
  these: at about 80 characters a line, 300 lines is ten screens, roughly ten minutes of
  reading, the longest a page can be and still be read top to bottom before use; the
  pages that grew into lab notebooks ran from 368 to 1,125 lines, and every manual page
  fits well inside it now (the longest, environments.md, 266 lines). The character limit
  keeps the line limit from being met with ever wider table rows. docs/rules.md is the
  exception, with RULE_BOOK_MAX_LINES (600) and RULE_BOOK_MAX_CHARS (40,000): it is the
  rule book, one numbered section per part of the game, cited by section number from the
  tests and the engine, so it cannot be split without breaking those citations, and it
  grows only when the game gains a rule, never with experiments (526 lines now).
* Machines are named by what they are (CPU model, cores) where a figure is given, never
  by a letter ("machine C") that the reader would have to look up elsewhere: no
  "machine X" with a single capital letter in README.md or anywhere in docs/.
* The four pages whose history moved out (search, performance, training, ladder) each
  link to their record in docs/history/.
* The README keeps its shape (at most 260 lines, its sections in order, ``bash .ci/run``
  as the test command); the worked example of docs/rules.md is what the hand evaluator
  says; LICENSE, CITATION.cff and pyproject agree.

Each checker is first tried on a small example, so that it cannot pass by finding nothing.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
import tempfile
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


@functools.lru_cache(maxsize=1)
def _python_shims() -> Path:
    """A folder whose ``python`` and ``python3`` run the interpreter running the tests.

    Scripts that ``exec`` it, not links: a venv's interpreter finds its venv from the path
    it is started by, which a link in another folder would change."""
    folder = Path(tempfile.mkdtemp(prefix="sichuan-docs-python-"))
    for name in ("python", "python3"):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n',
                        encoding="utf-8")
        shim.chmod(0o755)
    return folder


def _env() -> dict[str, str]:
    """The blocks' environment: this checkout first on the import path; ``python`` on PATH
    is the interpreter running the tests, and its folder (a venv's console scripts) next."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    env["PATH"] = os.pathsep.join([str(_python_shims()), str(Path(sys.executable).parent),
                                   env.get("PATH", "")]).rstrip(os.pathsep)
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


def test_blocks_run_with_the_interpreter_running_the_tests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another ``python`` first on PATH (a venv's interpreter started without activating
    the venv) does not run the blocks: the one running the tests does, with its prefix."""
    other = tmp_path / "other-bin"
    other.mkdir()
    for name in ("python", "python3"):
        (other / name).write_text("#!/bin/sh\necho 'another python' >&2\nexit 3\n",
                                  encoding="utf-8")
        (other / name).chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(other), os.environ.get("PATH", "")]))
    assert subprocess.run(["python", "-c", "pass"], check=False).returncode == 3
    text = "\n".join(["<!-- runnable -->", "```bash",
                      "python -c 'import sys; print(sys.executable); print(sys.prefix)'",
                      "python3 -c 'import sys; print(sys.prefix)'", "```"])
    blocks = runnable_blocks(text, "ex.md")
    out = run_block(blocks[0], blocks, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [sys.executable, sys.prefix, sys.prefix]


def test_the_readme_marks_its_examples_runnable() -> None:
    readme = [b for b in _ALL_BLOCKS if b.doc == "README.md"]
    code = "\n".join(b.code for b in readme)
    for needed in ("hands.shanten", "agent_iter", "class MyBot", "sichuan_agents.arena",
                   "sichuan_env.records.viewer"):
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


def diary_problems(text: str, name: str, hashes: bool = True) -> list[str]:
    """Lines of ``text`` with a diary word or (``hashes``) something that looks like a
    commit hash (7-40 lower-case hex digits with at least one letter and one digit)."""
    problems = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in _DIARY.finditer(line):
            problems.append(f"{name}:{lineno}: {m.group(0)!r}: {line.strip()}")
        for m in _HEX.finditer(line) if hashes else ():
            word = m.group(0)
            if re.search(r"[a-f]", word) and re.search(r"\d", word):
                problems.append(f"{name}:{lineno}: {word!r} looks like a commit hash")
    return problems


HISTORY = "docs/history/"


def _doc_texts() -> list[tuple[str, str]]:
    """README.md and every Markdown file under docs/ (the record in docs/history/ too)."""
    out = [("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))]
    for path in sorted((ROOT / "docs").rglob("*.md")):
        out.append((path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")))
    return out


def _manual_pages() -> list[tuple[str, str]]:
    """The pages of docs/ outside the record, docs/history/."""
    return [(n, t) for n, t in _doc_texts() if n.startswith("docs/") and
            not n.startswith(HISTORY)]


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
    assert [p.split(": ")[1] for p in diary_problems(text, "t.md", hashes=False)] == [
        "'session'", "'this machine'", "'engineer'"]


def test_the_manual_keeps_no_diary() -> None:
    texts = _doc_texts()
    names = {n for n, _ in texts}
    assert {"README.md", "docs/environments.md", "docs/performance.md",
            "docs/history/training.md"} <= names
    problems = [p for name, text in texts
                for p in diary_problems(text, name, hashes=not name.startswith(HISTORY))]
    assert problems == [], "\n".join(problems)


# ----------------------------------------------------------------------- a manual, not a record


MANUAL_MAX_LINES = 300
MANUAL_MAX_CHARS = 24_000
RULE_BOOK = "docs/rules.md"
RULE_BOOK_MAX_LINES = 600
RULE_BOOK_MAX_CHARS = 40_000
MOVED_HISTORY = ("search.md", "performance.md", "training.md", "ladder.md")

_CODE_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_ISO_DATE = re.compile(r"\b\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b")
_ENTRY_WORD = r"(?:attempts?|rounds?|runs?|tries|try|trials?|experiments?)"
# a heading, a list item or a table row that opens with "Attempt 33", "Round 20", ...
_NUMBERED_ENTRY = re.compile(
    rf"^\s*(?:#{{1,6}}\s+|[*+-]\s+|\d+[.)]\s+|\|\s*)(?:\*\*)?{_ENTRY_WORD}\s+#?\d+",
    re.IGNORECASE)
_RECORD_HEADING = re.compile(r"^\s*#{1,6}\s+(?:history\b|experiment log\b|attempts\b)",
                             re.IGNORECASE)
_NUMBERED_TABLE = re.compile(r"^\s*\|\s*(?:#|no\.|attempt)\s*\|", re.IGNORECASE)
_MACHINE_LETTER = re.compile(r"\b[Mm]achines? [A-Z]\b(?![\w-])")


def record_problems(text: str, name: str) -> list[str]:
    """Lines of ``text`` (code blocks blanked out, line numbers kept) that make it a
    record rather than a manual: a dated heading, an entry numbered as an attempt, a
    table numbering attempts, a History or Experiment log heading, an ISO date."""
    blank = _CODE_FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    problems = []
    for lineno, line in enumerate(blank.splitlines(), 1):
        why = None
        if line.lstrip().startswith("#") and _ISO_DATE.search(line):
            why = "a dated heading"
        elif _NUMBERED_ENTRY.match(line):
            why = "an entry numbered as an attempt"
        elif _NUMBERED_TABLE.match(line):
            why = "a table numbering attempts"
        elif _RECORD_HEADING.match(line):
            why = "a heading of the record"
        elif _ISO_DATE.search(line):
            why = "a date"
        if why:
            problems.append(f"{name}:{lineno}: {why}: {line.strip()[:100]}")
    return problems


def length_problems(text: str, name: str) -> list[str]:
    """Too long for a manual page (the rule book has its own, larger limits)."""
    lines, chars = len(text.splitlines()), len(text)
    max_lines, max_chars = ((RULE_BOOK_MAX_LINES, RULE_BOOK_MAX_CHARS) if name == RULE_BOOK
                            else (MANUAL_MAX_LINES, MANUAL_MAX_CHARS))
    out = []
    if lines > max_lines:
        out.append(f"{name}: {lines} lines, more than {max_lines}")
    if chars > max_chars:
        out.append(f"{name}: {chars} characters, more than {max_chars}")
    return out


def machine_letter_problems(text: str, name: str) -> list[str]:
    """Machines named by a letter ("machine C") instead of what they are."""
    return [f"{name}:{lineno}: {m.group(0)!r}: {line.strip()[:100]}"
            for lineno, line in enumerate(text.splitlines(), 1)
            for m in _MACHINE_LETTER.finditer(line)]


def test_record_checker_finds_dated_entries() -> None:
    text = "\n".join([
        "# Training",                                             # 1
        "### 2026-11-25: a policy that starts where rules is",    # 2
        "## Attempt 33: trees",                                   # 3
        "* Round 20: the second MIL round",                       # 4
        "1. Try 2 with more samples",                             # 5
        "| Run 4 | 0.5 |",                                         # 6
        "| # | recipe | result |",                                # 7
        "## History",                                             # 8
        "### Attempts from the fitted policy",                    # 9
        "The default until 2026-11-26 made 4 passes.",            # 10
        "```",                                                    # 11
        "python train.py  # 2026-11-26: attempt 7",               # 12
        "```",                                                    # 13
        "Seeds 20261129 and 1000; the fit of attempt 30 (history/training.md).",
        "| 1 table | 174,556 decisions |",
        "## Rounds of a match",
        "* **Runs**: 2 per core",
        "- round 3 of the ladder: 400 deals",
    ])
    found = [(p.split(":")[1], p.split(": ")[1]) for p in record_problems(text, "t.md")]
    assert found == [
        ("2", "a dated heading"), ("3", "an entry numbered as an attempt"),
        ("4", "an entry numbered as an attempt"), ("5", "an entry numbered as an attempt"),
        ("6", "an entry numbered as an attempt"), ("7", "a table numbering attempts"),
        ("8", "a heading of the record"), ("9", "a heading of the record"),
        ("10", "a date"), ("18", "an entry numbered as an attempt")], found


def test_length_and_machine_letter_checkers() -> None:
    short, long_ = "line\n" * MANUAL_MAX_LINES, "line\n" * (MANUAL_MAX_LINES + 1)
    assert length_problems(short, "docs/x.md") == []
    assert length_problems(long_, "docs/x.md") == [
        f"docs/x.md: {MANUAL_MAX_LINES + 1} lines, more than {MANUAL_MAX_LINES}"]
    assert length_problems(long_, RULE_BOOK) == []
    wide = "x" * (MANUAL_MAX_CHARS + 1)
    assert length_problems(wide, "docs/x.md") == [
        f"docs/x.md: {MANUAL_MAX_CHARS + 1} characters, more than {MANUAL_MAX_CHARS}"]
    text = ("On machine C, two cores; machines D and F; Machine E's GPU.\n"
            "A machine A-grade; the machine; machines; machine learning; 2-core AMD EPYC\n")
    assert [p.split(": ")[1] for p in machine_letter_problems(text, "t.md")] == [
        "'machine C'", "'machines D'", "'Machine E'"]


def test_every_manual_page_is_a_manual() -> None:
    pages = _manual_pages()
    names = {n for n, _ in pages}
    assert {"docs/rules.md", "docs/search.md", "docs/training.md"} <= names
    assert not any(n.startswith(HISTORY) for n in names)
    problems = [p for name, text in pages
                for p in record_problems(text, name) + length_problems(text, name)]
    assert problems == [], "\n".join(problems)


def test_machines_are_named_by_what_they_are() -> None:
    problems = [p for name, text in _doc_texts() for p in machine_letter_problems(text, name)]
    assert problems == [], "\n".join(problems)


def test_pages_link_to_their_record() -> None:
    for page in MOVED_HISTORY:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert f"](history/{page}" in text, f"docs/{page} does not link to history/{page}"
        assert (ROOT / HISTORY / page).is_file()


# ----------------------------------------------------------------------------- the README


README_SECTIONS = [
    "Install", "Quick start", "Environments", "Bots and benchmarking your own",
    "Records and the replay viewer", "Play", "Training and scaling out", "Performance",
    "Development", "Licence and citation",
]


def test_readme_shape() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    # 260 lines: about eight screens, each section one screen at most (the protocol and
    # the review each added a few lines; what grows beyond goes to docs/)
    assert len(text.splitlines()) <= 260
    sections = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert sections == README_SECTIONS
    dev = text.split("\n## Development\n")[1].split("\n## ")[0]
    assert "### Architecture" in dev and "### Layout" in dev
    # the test command: CI runs .ci/run, and the README names it
    assert "bash .ci/run" in text
    assert (ROOT / ".ci" / "run").is_file()
    # one set-up script for the README's lines and CI: the README's first line and .ci/run
    # both run it, and it only ever adds PyTorch's index (--extra-index-url), so that a
    # machine that reaches PyPI or a mirror alone still installs
    assert "bash scripts/install.sh train && python train.py" in text
    assert "bash scripts/install.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    script = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    assert "--extra-index-url" in script and "--index-url " not in script


# ----------------------------------------------------------------------------- the rule book


def test_rules_worked_example_matches_the_hand_evaluator() -> None:
    from sichuan_env.core import hands
    from sichuan_env.core.rules import get_rules

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
    assert "the sichuan-env authors" in licence and "sichuan_agents/models" in licence
    assert "numba engine" in project["description"] and "numpy engine" not in project[
        "description"]
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    fields = dict(re.findall(r"^([\w-]+):\s*\"?([^\"\n]*)\"?\s*$", cff, re.MULTILINE))
    assert fields["cff-version"] == "1.2.0" and fields["license"] == "MIT"
    assert fields["version"] == project["version"] == sichuan_env.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog and f"## [{project['version']}]" in changelog

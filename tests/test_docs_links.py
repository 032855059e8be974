"""The documentation stands on its own: every relative link resolves, nothing points outside.

* Every relative link in a Markdown file of the repository (README.md, docs/*.md, any other
  tracked ``*.md``) and in the markdown cells of the notebooks names an existing file or
  folder inside the repository; a ``#anchor`` into a Markdown file (or into the same file)
  names one of its headings (GitHub's heading ids).
* No tracked text file mentions the reference folder that sits beside the checkout.

The checker is tested on a small example with broken links, so that it cannot pass by
finding nothing.
"""

from __future__ import annotations

import json
import re
import subprocess
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
# spelled in two pieces so that this file does not mention it itself
OUTSIDE_REFERENCES = (".." + "/shared", "/work" + "/shared")

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _strip_code(text: str) -> str:
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def markdown_links(text: str) -> list[str]:
    """Link targets of Markdown text (inline links, images, reference definitions), outside
    code blocks and inline code."""
    text = _strip_code(text)
    return [m.group(1) for m in _INLINE_LINK.finditer(text)] + [
        m.group(1) for m in _REFERENCE_DEF.finditer(text)
    ]


def heading_ids(text: str) -> set[str]:
    """The ids GitHub gives the headings of Markdown text: lower case, punctuation dropped,
    spaces to hyphens, ``-1``, ``-2``, ... on repeats."""
    ids: set[str] = set()
    seen: dict[str, int] = {}
    for m in _HEADING.finditer(_FENCE.sub("", text)):
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2))  # a link: its text
        title = title.replace("`", "").strip().lower()
        kept = "".join(
            ch for ch in title
            if ch in " -_" or unicodedata.category(ch)[0] in "LN"
        )
        slug = kept.replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def notebook_markdown(path: Path) -> str:
    """The markdown cells of a notebook, joined."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in nb.get("cells", []) if c.get("cell_type") == "markdown"]
    return "\n\n".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells
    )


def broken_links(path: Path, root: Path) -> list[str]:
    """Problems with the relative links of one Markdown file or notebook, as
    ``"file: target: why"`` lines (empty when every link resolves)."""
    text = notebook_markdown(path) if path.suffix == ".ipynb" else path.read_text("utf-8")
    problems = []
    root = root.resolve()
    for target in markdown_links(text):
        if not target or _SCHEME.match(target) or target.startswith("//"):
            continue  # a web address, not a file of the repository
        file_part, _, anchor = target.partition("#")
        where = f"{path.relative_to(root)}: {target}"
        if file_part:
            dest = (path.parent / unquote(file_part)).resolve()
            if dest != root and root not in dest.parents:
                problems.append(f"{where}: points outside the repository")
                continue
            if not dest.exists():
                problems.append(f"{where}: no such file")
                continue
        else:
            dest = path
        if (anchor and dest.is_file() and dest.suffix == ".md"
                and unquote(anchor).lower() not in heading_ids(dest.read_text("utf-8"))):
            problems.append(f"{where}: no heading #{anchor} in {dest.name}")
    return problems


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / p for p in out.decode("utf-8").split("\0") if p]


def _documents() -> list[Path]:
    return [p for p in _tracked_files()
            if p.suffix in (".md", ".ipynb") and p.is_file()]


# ----------------------------------------------------------------------------- the checker


def test_checker_finds_broken_links_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text(
        "# The rules\n\n## 12. Fine points\n\n## Fine points\n\n## Fine points\n",
        encoding="utf-8")
    (tmp_path / "a.md").write_text(
        "\n".join([
            "# Top",
            "[fine](docs/b.md) [anchor](docs/b.md#12-fine-points) [again](docs/b.md#fine-points)",
            "[dup](docs/b.md#fine-points-1) [self](#top) [web](https://example.org/x.md)",
            "![missing image](docs/none.png)",
            "[gone](docs/missing.md) and [bad anchor](docs/b.md#13-nothing)",
            "[outside](../elsewhere.md) [self-bad](#nowhere)",
            "`[in code](nothing.md)`",
            "```",
            "[in a block](nothing.md)",
            "```",
            "[ref]: docs/also-missing.md",
        ]),
        encoding="utf-8",
    )
    problems = broken_links(tmp_path / "a.md", tmp_path)
    targets = sorted(p.split(": ")[1] for p in problems)
    assert targets == sorted([
        "docs/none.png", "docs/missing.md", "docs/b.md#13-nothing", "../elsewhere.md",
        "#nowhere", "docs/also-missing.md",
    ]), problems


def test_checker_reads_notebook_markdown_cells(tmp_path: Path) -> None:
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["see [rules](../docs/rules.md)\n",
                                             "and [x](missing.md)"]},
        {"cell_type": "code", "source": ["# [not a link](nothing.md)"], "outputs": []},
    ]}
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rules.md").write_text("# Rules\n", encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / "n.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert [p.split(": ")[1] for p in broken_links(path, tmp_path)] == ["missing.md"]


def test_heading_ids_follow_github() -> None:
    text = "# The rules of `sichuan-env`\n## 12. Fine points\n## Fine points\n## Fine points\n"
    assert heading_ids(text) == {"the-rules-of-sichuan-env", "12-fine-points", "fine-points",
                                 "fine-points-1"}


# ----------------------------------------------------------------------------- the repository


def test_documents_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _documents()}
    assert {"README.md", "docs/rules.md", "docs/record_format.md", "docs/glossary.md"} <= names
    assert any(n.endswith(".ipynb") for n in names)


def test_every_relative_link_resolves() -> None:
    problems = [p for path in _documents() for p in broken_links(path, ROOT)]
    assert problems == [], "\n".join(problems)


def test_no_tracked_file_points_to_the_reference_folder_outside() -> None:
    offenders = []
    for path in _tracked_files():
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if any(ref in line for ref in OUTSIDE_REFERENCES):
                offenders.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert offenders == [], "\n".join(offenders)

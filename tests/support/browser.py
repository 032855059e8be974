"""Headless Chromium for the browser tests, driven by Playwright for Python.

Debian's ``chromium`` package (``/usr/bin/chromium``) or the binary named by
``SICHUAN_CHROMIUM``; Playwright's own browser download is never used. Without Playwright
or a Chromium the :func:`browser` fixture skips and says why. Screenshots go to
:data:`ARTIFACTS` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium() -> str | None:
    """Path of the Chromium binary to drive, or None."""
    for path in (os.environ.get("SICHUAN_CHROMIUM"), shutil.which("chromium"),
                 "/usr/bin/chromium", shutil.which("chromium-browser")):
        if path and Path(path).is_file():
            return path
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A launched headless Chromium for one test module (skips without one)."""
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="Playwright for Python is not installed (pip install -e '.[viewer]')")
    exe = chromium()
    if exe is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set SICHUAN_CHROMIUM)")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()

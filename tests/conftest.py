"""Shared test setup. The helpers live in the package ``tests/support`` and are imported
as ``support.NAME``; ``tests/`` is put on the import path here so that this holds in any
pytest import mode. Tests that take more than ~20 s (subprocesses, training, a browser)
carry ``@pytest.mark.slow``: ``pytest -m "not slow"`` is the quick run, CI runs all."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

from support.browser import browser  # noqa: E402, F401  (the browser tests' fixture)

"""The web server's reviewer, each part held for a moment first, so that a test polling the
review's progress sees every intermediate count however busy the machine is (the parts
and their result are the real reviewer's)."""

from __future__ import annotations

import time
from typing import Any

from sichuan_agents.review import review_part as _review_part

PAUSE = 0.6  # seconds before each part: three polls of the progress test


def review_part(*args: Any, **kwargs: Any) -> Any:
    time.sleep(PAUSE)
    return _review_part(*args, **kwargs)

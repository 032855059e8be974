"""A bot file that fails on import (for the error-message tests)."""

RATIO = 1 / 0

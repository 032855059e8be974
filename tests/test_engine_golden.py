"""Records, legal masks and rewards of seeded play stay byte-identical to the stored ones
(``tests/data/engine_golden.json``, written by ``tests/support/golden_play.py`` with the engine of
an earlier release): any change to the rules' outcome shows up here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.golden_play import CONFIGS, play, record_digest

GOLDEN = json.loads((Path(__file__).parent / "data" / "engine_golden.json").read_text())


@pytest.mark.parametrize("preset,policy,deals,seed0,tables", CONFIGS)
def test_records_masks_and_rewards_match_the_golden_file(preset, policy, deals, seed0, tables):
    want = GOLDEN[f"{preset}/{policy}/{deals}"]
    recs, steps = play(preset, policy, deals, list(range(seed0, seed0 + tables)))
    assert len(recs) == want["deals"]
    assert record_digest(recs) == want["records"]
    assert steps == want["steps"]

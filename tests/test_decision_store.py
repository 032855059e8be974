"""Compact search-valued decisions (sichuan_agents/training/decision_store.py): a decision
stored as its deal's seed, its index and its seat replays to exactly the planes, masks and
rules-bot choice the full shard stored; a key that does not replay is refused by name."""

import subprocess
import sys

import numpy as np
import pytest

from sichuan_agents.training.decision_store import (
    ReplayMismatchError,
    compact,
    expand,
    is_compact,
    replay,
)
from sichuan_agents.training.distill import load_shards
from sichuan_agents.training.search_teacher import generate
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import CLAIM, TURN, VOID


@pytest.fixture(scope="module", params=["mil", "mahjongsoft"])
def shard(request):
    # three deals two tables at a time (two batches), every decision kind sampled
    data = generate(deals=3, seed=11, rules=request.param, sample_prob=0.3, k=3, tables=2,
                    claim_prob=1.0, void_prob=1.0)
    return request.param, data


def test_every_kind_of_decision_is_keyed_by_deal_index_and_seat(shard):
    preset, data = shard
    assert set(data["phase"].tolist()) >= {VOID, TURN, CLAIM}
    assert set((data["deal_seed"] - 11 * 10**7).tolist()) == {0, 1, 2}
    assert (data["decision"] >= 0).all()
    # the void choices are each table's first four decisions, one per seat
    void = data["phase"] == VOID
    assert (data["decision"][void] < 4).all()


def test_a_compact_shard_expands_to_the_full_shard_exactly(shard):
    preset, data = shard
    small = compact(data, preset)
    assert is_compact(small) and not is_compact(data)
    assert "planes" not in small and str(small["rules"]) == preset
    full_bytes = sum(v.nbytes for v in data.values())
    small_bytes = sum(v.nbytes for v in small.values())
    assert small_bytes * 40 < full_bytes, (small_bytes, full_bytes)
    again = expand(small)
    assert set(again) == set(data)
    for key in data:
        np.testing.assert_array_equal(again[key], data[key], err_msg=key)


def test_the_teacher_writes_the_compact_form_of_what_it_would_have_stored(shard):
    preset, data = shard
    small = generate(deals=3, seed=11, rules=preset, sample_prob=0.3, k=3, tables=2,
                     claim_prob=1.0, void_prob=1.0, store="compact")
    want = compact(data, preset)
    assert set(small) == set(want)
    for key in want:
        np.testing.assert_array_equal(small[key], want[key], err_msg=key)


def test_replay_returns_the_stored_decisions_in_their_order(shard):
    preset, data = shard
    order = np.random.default_rng(0).permutation(data["deal_seed"].size)
    st = replay(data["deal_seed"][order], data["decision"][order], get_rules(preset),
                tables=1)
    np.testing.assert_array_equal(st.current, data["seat"][order])
    np.testing.assert_array_equal(st.legal_action_mask, data["masks"][order])


def test_a_key_that_does_not_replay_is_refused_with_the_decision_named(shard):
    preset, data = shard
    small = compact(data, preset)
    moved = dict(small, decision=small["decision"] + 1)
    with pytest.raises(ReplayMismatchError, match="decision .* of deal .*differ"):
        expand(moved)
    other = dict(small, rules=np.array("mahjongsoft" if preset == "mil" else "mil"))
    with pytest.raises(ReplayMismatchError):
        expand(other)
    past_end = dict(small, decision=np.full_like(small["decision"], 5000))
    with pytest.raises(ReplayMismatchError, match="ends before decision 5000"):
        expand(past_end)
    with pytest.raises(ValueError, match="format"):
        expand(dict(small, format=np.array(99)))
    with pytest.raises(ValueError, match="no deal_seed"):
        compact({k: v for k, v in data.items() if k != "deal_seed"})


def test_distill_reads_a_compact_shard_as_the_full_one(shard, tmp_path):
    preset, data = shard
    full, small = tmp_path / "full.npz", tmp_path / "small.npz"
    np.savez_compressed(full, **data)
    np.savez_compressed(small, **compact(data, preset))
    a, b = load_shards([str(full)]), load_shards([str(small)])
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_the_command_compacts_expands_and_refuses_bad_input_in_one_line(shard, tmp_path):
    preset, data = shard
    src, mid, dst = tmp_path / "s.npz", tmp_path / "c.npz", tmp_path / "e.npz"
    np.savez_compressed(src, **data)
    cmd = [sys.executable, "-m", "sichuan_agents.training.decision_store"]
    ok = subprocess.run([*cmd, "compact", str(src), str(mid), "--rules", preset],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    ok = subprocess.run([*cmd, "expand", str(mid), str(dst)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    with np.load(dst) as f:
        np.testing.assert_array_equal(f["planes"], data["planes"])
    for args in (["expand", str(src), str(dst)], ["compact", str(tmp_path / "no.npz"),
                                                  str(dst)]):
        bad = subprocess.run([*cmd, *args], capture_output=True, text=True)
        assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert "Traceback" not in bad.stderr


def test_replay_of_nothing_is_an_error():
    with pytest.raises(ValueError, match="no decisions"):
        replay(np.zeros(0, np.int64), np.zeros(0, np.int64), get_rules("mil"))

"""Tests written for mutants of the rule code that the other tests missed
(``benchmarks/mutation.py``, docs/testing.md). Each test states the rule it checks and
names the mutants it was written for; it checks the rule, not the mutant."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.rules import get_rules

from support.policies import biased, hu_shy

ROOT = Path(__file__).resolve().parents[1]


def _play_with_info(preset: str, seeds: range, policy_seed: int):
    """Seeded biased play to the end of every match; yields (info, ledger) per step."""
    st = engine.reset(list(seeds), get_rules(preset, deals_per_match=2))
    rng = np.random.default_rng(policy_seed)
    i = 0
    while not st.done.all():
        pick = biased if i % 4 else hu_shy
        actions = pick(st, st.legal_action_mask, rng)
        i += 1
        ledger = engine.Ledger()
        st, _, _, info = engine.step(st, actions, ledger=ledger, info=True)
        yield info, ledger


def test_step_info_wins_events_and_ends_equal_the_ledger():
    """Rule of the step report: ``StepInfo`` (what RL code reads) and the ledger (what
    records are built from) describe the same step -- every event, every win with its
    tile, payer, all ten fans, value and event, every deal end with its next dealer.
    Written for ``engine_kernels.fill_step_info:remove#34`` (the next dealer not copied)
    and ``:const#50`` (only nine fans copied: Under the Sea lost), and any other field
    left out of the copy."""
    fans_seen = np.zeros(10, np.int64)
    ends = 0
    for preset, seeds in (("mil", range(900, 960)), ("mahjongsoft", range(960, 1020))):
        for info, ledger in _play_with_info(preset, seeds, 7):
            events: dict[int, list] = {}
            wins: dict[int, list] = {}
            for e in ledger.entries:
                if e[0] == "event":
                    events.setdefault(e[1], []).append((e[2], e[3], e[4]))
                elif e[0] == "win":
                    _, t, seat, tile, frm, fans, value, event = e
                    wins.setdefault(t, []).append((seat, tile, frm, list(fans), value, event))
                    fans_seen += np.asarray(fans) > 0
                elif e[0] == "end":
                    _, t, reason, nxt = e
                    assert (info.end_reason[t], info.next_dealer[t]) == (reason, nxt)
                    ends += 1
            for t in range(len(info.n_events)):
                n = int(info.n_events[t])
                got = [(int(info.event_seat[t, j]), int(info.event_action[t, j]),
                        bool(info.event_auto[t, j])) for j in range(n)]
                assert got == events.get(t, []), f"table {t}"
                got_wins = sorted(
                    (s, int(info.win_tile[t, s]), int(info.win_from[t, s]),
                     info.win_fans[t, s].tolist(), int(info.win_value[t, s]),
                     int(info.win_event[t, s]))
                    for s in range(4) if info.win[t, s])
                assert got_wins == sorted(wins.get(t, [])), f"table {t}"
    # the comparison covers the last fan column and all but the rarest fans (Seven Pairs
    # and Robbing the Kong may not occur in this play)
    assert ends > 0 and fans_seen[9] > 0 and (fans_seen > 0).sum() >= 8, fans_seen


_BOUNDS_PLAY = """
import numpy as np
from sichuan_env.core import engine, hands
from sichuan_env.core.rules import get_rules
from support.policies import biased, uniform
for preset in ("mil", "mahjongsoft"):
    st = engine.reset(list(range(300, 340)), get_rules(preset, deals_per_match=2))
    rng = np.random.default_rng(3)
    i = 0
    while not st.done.all():
        pick = biased if i % 3 else uniform
        st, _, _, info = engine.step(st, pick(st, st.legal_action_mask, rng), info=True,
                                     ledger=engine.Ledger())
        i += 1
rng = np.random.default_rng(4)
for size, n_melds in ((14, 0), (13, 0), (10, 1), (4, 3)):
    counts = np.zeros((300, 27), np.int8)
    meld = np.zeros((300, 27), np.int8)
    for row, mrow in zip(counts, meld):
        tiles = rng.permutation(108) // 4
        np.add.at(row, tiles[:size], 1)
        for k in [k for k in tiles[size:] if row[k] == 0][:n_melds]:
            mrow[k] = 1 + rng.integers(2)
    void = rng.integers(-1, 3, 300).astype(np.int8)
    hands.batch_is_complete(counts, (meld > 0).sum(1).astype(np.int8), void)
    hands.batch_wait_mask(counts, meld, void)
    hands.batch_shanten(counts, meld, void)
    hands.batch_theoretical_max(counts, meld, void, 3)
print("ok")
"""


@pytest.mark.slow
def test_kernels_stay_inside_their_arrays(tmp_path):
    """Rule of the compiled code: no kernel reads or writes outside an array. numba does
    not check bounds unless asked, so a scratch array one too short (as in
    ``engine_kernels._settle_wall:const#16``, a 26-long array of melds) passes every
    other test. Seeded play of both presets and the hand functions, with numba's bounds
    checking on, in a fresh cache (about a minute of compiling)."""
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", SICHUAN_ENV_CACHE=str(tmp_path),
               PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), str(ROOT)]))
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-c", _BOUNDS_PLAY], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=1200)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_a_neighbours_meld_is_not_counted_as_the_seats_own():
    """§5 (seven pairs: a hand of seven pairs with no meld) read from the hands: the legal
    actions recomputed from the state (``engine.legal_mask``, which counts the seat's melds
    afresh instead of reading the cached waits) equal the stored ones, Hu included, when
    the next seat holds a pung of the first kind, 1m (written for
    ``engine_kernels._n_melds:const#3``, a count that ran one kind past the seat's own)."""
    from support.trace_helpers import act, start

    g = start({0: "1m 22m 44m 66m 88m 22p 44p 5p", 1: "11m 3m 5m 7m 123s 456s 78s"},
              "9s 9s 5p", {0: "void s", 1: "void p"}, filler_suits="ps")
    act(g, 0, "discard 1m")
    act(g, 1, "pung", phase="claim")
    act(g, 1, "discard 3m")
    act(g, 2, "discard 9s")
    act(g, 3, "discard 9s")
    assert g.current_seat == 0 and "hu" in g.legal()  # 22m44m66m88m22p44p55p: seven pairs
    st = g.state
    assert st.meld[0, 1].nonzero()[0].tolist() == [0] and not st.meld[0, 0].any()
    np.testing.assert_array_equal(engine.legal_mask(st), st.legal_action_mask)

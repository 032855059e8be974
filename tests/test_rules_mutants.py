"""Tests written for mutants of the rule code that the other tests missed
(``benchmarks/mutation.py``, docs/testing.md). Each test states the rule it checks and
names the mutants it was written for; it checks the rule, not the mutant."""

from __future__ import annotations

import numpy as np

from sichuan_env import engine
from sichuan_env.rules import get_rules

from support.policies import biased, hu_shy


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
    Written for ``engine_kernels.fill_step_info:const#50`` (only nine fans copied: the
    Under the Sea fan lost), and any other field left out of the copy."""
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

"""StepInfo: the step's wins, payments and forced moves agree with the state change, the
rewards and the ledger; a table's StepInfo does not depend on its batch."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.actions import DISCARD, HU, VOID_TILE
from sichuan_env.core.rules import get_rules
from sichuan_env.core.state import CLAIM, END_WALL, ROB, TURN

from support.policies import biased, hu_shy, uniform


def _check_step(prev, st, actions, rewards, info, ledger) -> dict[str, int]:
    seen = {"win": 0, "self_drawn": 0, "auto": 0, "settled": 0, "pay": 0, "pig": 0}
    B = prev.batch_size
    for t in range(B):
        if prev.done[t]:
            assert info.n_events[t] == 0 and info.n_payments[t] == 0
            continue
        # events: the decision first, then forced discards of set-aside tiles
        n = int(info.n_events[t])
        assert n >= 1 and info.event_seat[t, 0] == prev.current[t]
        assert info.event_action[t, 0] == actions[t] and not info.event_auto[t, 0]
        for j in range(1, n):
            assert info.event_auto[t, j] and DISCARD <= info.event_action[t, j] < VOID_TILE
            seen["auto"] += 1
        # payments add up to the rewards
        k = int(info.n_payments[t])
        got = np.zeros(4, np.int64)
        for j in range(k):
            p = int(info.pay_points[t, j])
            assert p > 0
            got[info.pay_from[t, j]] -= p
            if info.pay_to[t, j] >= 0:
                got[info.pay_to[t, j]] += p
            assert -1 <= info.pay_event[t, j] < n
            # the event a payment follows: the step's decision when its cause made it, the
            # latest event for the wall-end settlement, none (-1) for an answer given in an
            # earlier step of the claim window
            cause = int(info.pay_cause[t, j])
            want = n - 1 if cause < 0 else (0 if cause == prev.current[t] else -1)
            assert info.pay_event[t, j] == want, f"table {t} payment {j}"
            seen["pay"] += 1
        assert np.array_equal(got, rewards[t].astype(np.int64)), f"table {t}"
        # wins: seats that won in this step, with the value the state offered or scored
        for s in range(4):
            if not info.win[t, s]:
                continue
            seen["win"] += 1
            if info.win_from[t, s] < 0:
                seen["self_drawn"] += 1
                assert prev.phase[t] == TURN and actions[t] == HU and prev.current[t] == s
            else:
                assert prev.phase[t] in (CLAIM, ROB)
                assert info.win_from[t, s] == prev.active[t]
                assert info.win_value[t, s] == prev.claim_value[t, s]
                assert info.win_tile[t, s] == prev.claim_tile[t]
            assert info.win_value[t, s] == 2 ** min(int(info.win_fans[t, s].sum()),
                                                    prev.rules.fan_cap)
            # the winner's own decision of this step, or an answer of an earlier step
            assert info.win_event[t, s] == (0 if s == prev.current[t] else -1), f"table {t}"
        if not info.new_deal[t]:
            won_now = st.hu[t] & ~prev.hu[t]
            assert np.array_equal(won_now, info.win[t]), f"table {t}"
        if info.settled[t]:
            seen["settled"] += 1
            assert info.end_reason[t] == END_WALL
            assert not (info.flower_pig[t] & info.ready[t]).any()
            # each seat's settlement payments follow from its bits (rules section 8)
            paid = [(int(info.pay_from[t, j]), int(info.pay_to[t, j]),
                     engine.PAY_REASONS[info.pay_reason[t, j]])
                    for j in range(int(info.n_payments[t]))]
            for s in range(4):
                if any(f == s and why == "flower_pig" for f, _, why in paid):
                    assert info.flower_pig[t, s], f"table {t}: seat {s} paid as a pig"
                    seen["pig"] += 1
                if any(to == s and why == "ready" for _, to, why in paid):
                    assert info.ready[t, s], f"table {t}: seat {s} paid as ready"
            if not info.new_deal[t]:  # the deal's last hands: who holds its void suit
                void_tiles = [st.hand[t, s, 9 * st.void[t, s]:9 * st.void[t, s] + 9].sum()
                              for s in range(4)]
                pigs = [not st.hu[t, s] and (st.set_aside[t, s] >= 0 or void_tiles[s] > 0)
                        for s in range(4)]
                assert info.flower_pig[t].tolist() == pigs, f"table {t}"
    # the ledger carries the same payments, in the same order
    pays = [e for e in ledger.entries if e[0] == "pay"]
    want = [(t, int(info.pay_from[t, j]), int(info.pay_to[t, j]), int(info.pay_points[t, j]),
             engine.PAY_REASONS[info.pay_reason[t, j]], int(info.pay_event[t, j]),
             int(info.pay_cause[t, j]))
            for t in range(B) for j in range(int(info.n_payments[t]))]
    assert [e[1:] for e in pays] == want
    return seen


@pytest.mark.parametrize("preset", ["mil", "mahjongsoft"])
def test_step_info_agrees_with_state_rewards_and_ledger(preset):
    rules = get_rules(preset, deals_per_match=2)
    st = engine.reset(np.arange(40) + 500, rules)
    rng = np.random.default_rng(5)
    totals: dict[str, int] = {}
    policies = [biased, hu_shy, uniform]
    i = 0
    while not st.done.all():
        actions = policies[i % 3](st, st.legal_action_mask, rng)
        i += 1
        ledger = engine.Ledger()
        prev = st
        st, rewards, done, info = engine.step(st, actions, ledger=ledger, info=True)
        for key, v in _check_step(prev, st, actions, rewards, info, ledger).items():
            totals[key] = totals.get(key, 0) + v
    assert min(totals.values()) > 0, totals


def test_step_info_of_a_table_does_not_depend_on_the_batch():
    rules = get_rules("mil")
    alone = engine.reset([77], rules)
    batch = engine.reset([76, 77, 78], rules)
    rng = np.random.default_rng(0)
    while not alone.done[0]:
        a = biased(alone, alone.legal_action_mask, rng)
        b = uniform(batch, batch.legal_action_mask, rng)
        b[1] = a[0]
        alone, _, _, i1 = engine.step(alone, a, info=True)
        batch, _, _, i2 = engine.step(batch, b, info=True)
        for name, x, y in zip(engine.StepInfo._fields, i1, i2, strict=True):
            assert np.array_equal(x[0], y[1]), name

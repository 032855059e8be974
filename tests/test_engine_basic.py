"""Quick engine checks; the exhaustive ones are in test_engine_invariants / traces."""

import numpy as np
import pytest

from sichuan_env.core import engine
from sichuan_env.core.state import TURN, VOID
from sichuan_env.records.game import Game, IllegalActionError


def _random_game(seed: int, rules: str = "mil") -> Game:
    rng = np.random.default_rng(seed)
    g = Game.new(seed, rules)
    while not g.done:
        legal = g.legal()
        g.play(legal[rng.integers(len(legal))])
    return g


def test_reset_deals_14_and_13_and_a_55_tile_wall():
    st = engine.reset([1, 2, 3])
    assert st.phase.tolist() == [VOID] * 3
    assert st.hand.sum(2).tolist() == [[14, 13, 13, 13]] * 3
    assert (st.wall_left == 55).all()
    total = st.hand.sum(1) + np.stack([np.bincount(w, minlength=27) for w in st.wall])
    assert (total == 4).all()


def test_a_table_does_not_depend_on_the_batch():
    alone = engine.reset([5])
    batch = engine.reset([9, 5, 7])
    assert (alone.hand[0] == batch.hand[1]).all() and (alone.wall[0] == batch.wall[1]).all()
    assert not (batch.wall[0] == batch.wall[1]).all()


@pytest.mark.parametrize("rules", ["mil", "mahjongsoft"])
def test_random_games_end_and_scores_match_payments(rules):
    for seed in range(15):
        g = _random_game(seed, rules)
        rec = g.record()
        totals = [0, 0, 0, 0]
        for p in rec["payments"]:
            totals[p["from"]] -= p["points"]
            if p["to"] is not None:
                totals[p["to"]] += p["points"]
        assert totals == g.scores == rec["scores"]
        assert rec["end"] in ("three_hu", "wall_exhausted")


def test_void_phase_then_dealer_turn():
    g = Game.new(3)
    for seat in range(4):
        assert g.current_seat == seat and g.phase == "void"
        g.play(g.legal()[0])
    assert g.phase in ("turn", "claim")  # dealer's turn, or a claim on its forced discard
    assert g.state.phase[0] != VOID and TURN == 1


def test_illegal_action_raises_and_changes_nothing():
    g = Game.new(11)
    before = g.state.copy()
    with pytest.raises(IllegalActionError, match=r"seat 0: illegal action 'pung'; legal: \['void"):
        g.play("pung")
    st = g.state
    for a, b in zip(before.arrays(), st.arrays(), strict=True):
        assert (a == b).all()
    with pytest.raises(IllegalActionError, match=r"table 0, seat 0: illegal action 999"):
        engine.step(st, [999])
    with pytest.raises(IllegalActionError, match=r"illegal action 84 \(pung\)"):
        engine.step(st, [84])
    for a, b in zip(before.arrays(), st.arrays(), strict=True):
        assert (a == b).all()

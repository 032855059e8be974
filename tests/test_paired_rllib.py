"""Paired-deal rewards in the RLlib envs (env config ``reference``): a learner seat that
plays as the reference gets 0 per deal; self-play is refused. Skipped without Ray RLlib."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from agents.bots.greedy import GreedyAgent  # noqa: E402
from agents.bots.rules_bot import RulesAgent  # noqa: E402
from sichuan_env.driver import agent_input  # noqa: E402
from sichuan_env.rllib import AGENT_IDS, SichuanMultiAgentEnv, SichuanVectorEnv  # noqa: E402


def _learner_actions(tb, rows: np.ndarray, bot) -> np.ndarray:
    st = tb.state
    seats = st.current[rows].astype(np.intp)
    return bot.act_batch(agent_input(bot, st, seats, rows), st.legal_action_mask[rows])


def test_one_table_env_learner_as_reference_gets_zero():
    env = SichuanMultiAgentEnv({"opponents": GreedyAgent(), "learner_seats": (2,),
                                "reference": "rules"})
    bot = RulesAgent()
    agent = AGENT_IDS[2]
    refs = []
    for seed in range(6):
        env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            a = int(_learner_actions(env.tables, np.zeros(1, np.intp), bot)[0])
            _, rew, term, _, info = env.step({agent: a})
            total += rew.get(agent, 0.0)
            done = term["__all__"]
        refs.append(info[agent]["reference_points"])
        assert total == 0.0
    assert any(r != 0 for r in refs)


def test_vector_env_paired_return_is_points_minus_reference():
    """Four tables, learner seats 0..3, learner greedy, reference rules: each finished
    match's summed reward is the seat's final points minus the reference's points."""
    env = SichuanVectorEnv(4, {"opponents": GreedyAgent(), "reference": RulesAgent()})
    env.reset(seed=10)
    tb = env.tables
    bot = GreedyAgent()
    ret = np.zeros(4)
    checked = 0
    for _ in range(120):
        live = np.flatnonzero(~env._autoreset)
        acts = [{} for _ in range(4)]
        if live.size:
            for t, a in zip(live.tolist(), _learner_actions(tb, live, bot).tolist(),
                            strict=True):
                acts[t] = {AGENT_IDS[int(tb.state.current[t])]: a}
        _, rew, term, _, infos = env.step(acts)
        for t in range(4):
            seat = int(tb.learner[t])
            if t not in live:
                ret[t] = 0.0
                continue
            ret[t] += rew[t].get(AGENT_IDS[seat], 0.0)
            if term[t]["__all__"]:
                ref = infos[t][AGENT_IDS[seat]]["reference_points"]
                assert abs(ret[t] - (tb.state.match_scores[t, seat] - ref)) < 1e-9
                checked += 1
    assert checked >= 4


def test_self_play_with_a_reference_is_refused():
    with pytest.raises(ValueError, match="self-play"):
        SichuanMultiAgentEnv({"reference": "rules"})

"""Paired-deal rewards in the RLlib envs (env config ``reference``): a learner seat that
plays as the reference gets 0 per deal; self-play is refused. Skipped without Ray RLlib."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from sichuan_agents.bots.greedy import GreedyAgent  # noqa: E402
from sichuan_agents.bots.rules_bot import RulesAgent  # noqa: E402
from sichuan_env.envs.rllib import AGENT_IDS, SichuanMultiAgentEnv, SichuanVectorEnv  # noqa: E402
from sichuan_env.seats.driver import agent_input  # noqa: E402


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


@pytest.mark.slow
def test_bulk_runner_paired_rewards_replay_in_the_one_table_env():
    """The bulk runner with --reference rules (train.py's env config): each table's
    matches, replayed action by action in SichuanMultiAgentEnv with the same reference,
    give the same rewards; a finished match's return is the learner seat's points minus
    the reference's."""
    from sichuan_agents import train
    from sichuan_agents.training.rllib_train import (
        build_config,
        env_runner_class,
        opponents_factory,
    )

    seed = 3
    args = train.parse_args([
        "--backend", "rllib", "--env-runners", "0", "--tables", "6", "--n-steps", "24",
        "--imitate", "none", "--device", "cpu", "--seed", str(seed), "--opponents",
        "greedy", "--features", "raw", "--sampler", "bulk", "--threads", "1",
        "--reference", "rules"])
    runner = env_runner_class(args)(config=build_config(args))
    assert runner.env.tables.paired is not None
    calls = [runner.sample() for _ in range(2)]
    matches: dict[int, list[list]] = {}
    for eps in calls:
        for ep in eps:
            chain = matches.setdefault(ep.custom_data["table"], [])
            if chain and chain[-1][-1].id_ == ep.id_:
                chain[-1].append(ep)
            else:
                chain.append([ep])
    tb = runner.env.tables
    finished = 0
    for t, chains in matches.items():
        seat = int(tb.learner[t])
        agent = AGENT_IDS[seat]
        env = SichuanMultiAgentEnv({"opponents": opponents_factory("greedy", seed),
                                    "learner_seats": (seat,), "illegal": "raise",
                                    "reference": "rules"})
        for k, chunks in enumerate(chains):
            env.reset(seed=seed + t) if k == 0 else env.reset()
            pre = float(env.tables.state.scores[0, seat])
            total = 0.0
            info: dict = {}
            for c, chunk in enumerate(chunks):
                acts = chunk.get_actions(slice(0, len(chunk)))
                rews = chunk.get_rewards(slice(0, len(chunk)))
                for j in range(len(chunk)):
                    _, rew, term, _, info = env.step({agent: int(acts[j])})
                    expected = rew.get(agent, 0.0) + (pre if c == j == 0 else 0.0)
                    assert rews[j] == pytest.approx(expected)
                    total += float(rews[j])
            if chunks[-1].is_done:
                finished += 1
                ref = info[agent]["reference_points"]
                assert total == pytest.approx(env.tables.state.scores[0, seat] - ref)
    assert finished >= 6

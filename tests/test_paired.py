"""Paired-deal rewards (sichuan_env.envs.paired): the vector, Gymnasium and RLlib envs with
``reference=``: zero for a learner that plays as the reference, unbiased against unpaired
play, smaller variance, seeded like the rest of the env."""

from __future__ import annotations

import numpy as np
import pytest

from sichuan_agents.bots.greedy import GreedyAgent
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_env.core import engine
from sichuan_env.core.rules import get_rules
from sichuan_env.envs.gym_env import SichuanSingleEnv
from sichuan_env.envs.paired import ReferencePlay
from sichuan_env.seats.driver import agent_input

pytest.importorskip("stable_baselines3")
from sichuan_env.envs import vector  # noqa: E402
from sichuan_env.envs.vector import SichuanVecEnv  # noqa: E402


def play_vec(env: SichuanVecEnv, learner, steps: int) -> tuple[list[dict], np.ndarray]:
    """Steps ``env`` with ``learner`` choosing for every slot; the finished episodes'
    infos and every step's rewards (steps, num_envs)."""
    env.reset()
    infos, rewards = [], []
    for _ in range(steps):
        a = learner.act_batch(env.learner_inputs(learner), env.action_masks())
        _, r, d, inf = env.step(a)
        rewards.append(r)
        infos += [inf[i] for i in np.flatnonzero(d)]
    return infos, np.array(rewards)


@pytest.mark.parametrize("reference", [RulesAgent(), RulesAgent(lookahead=False)],
                         ids=["compiled", "driver"])
def test_learner_playing_as_reference_gets_zero(reference):
    """Deterministic opponents; the learner plays the reference's policy: every deal's
    paired return is 0 (raw points = reference points), in the compiled play-out (rules)
    and through the driver (a rules bot with other options)."""
    learner = RulesAgent(lookahead=reference.lookahead)
    env = SichuanVecEnv(12, learner_seats=(0, 2), opponents=GreedyAgent(), seed=3,
                        reference=reference)
    assert env._paired.player.compiled == (reference.lookahead is True)
    infos, _ = play_vec(env, learner, 90)
    assert len(infos) > 40
    raw = np.array([i["raw_points"] for i in infos])
    assert np.abs(raw).sum() > 0  # deals with payments
    assert [i["reference_points"] for i in infos] == raw.tolist()
    assert all(i["episode"]["r"] == 0.0 for i in infos)


def test_compiled_play_out_matches_the_driver():
    """The compiled play-out of built-in bots gives every table the points the bots'
    own play through the driver gives (reference rules, opponents greedy and random)."""
    rules = get_rules(None)
    start = engine.reset(list(range(40)), rules)
    seats = np.arange(40) % 4
    player = ReferencePlay(RulesAgent(), [GreedyAgent()] * 3, rules, seed=0)
    assert player.compiled
    fast = player.play(start.copy(), seats)
    player._policies = None  # the driver's loop
    slow = player.play(start.copy(), seats)
    assert np.array_equal(fast, slow)
    assert np.abs(fast).sum() > 0


def _mean_sd(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1))


@pytest.mark.slow
def test_paired_rewards_are_unbiased_with_less_variance():
    """The rules bot without Hu passing as learner, rules as reference, three greedy
    opponents: the mean paired return equals the learner's mean points minus rules' mean
    points measured unpaired on other walls (within 3 standard errors), and its variance
    is several times smaller than that of the learner's raw points."""
    opp = GreedyAgent()
    steps = 100
    paired, _ = play_vec(SichuanVecEnv(64, learner_seats=(0, 1, 2, 3), opponents=opp, seed=11,
                                       reference=RulesAgent()), RulesAgent(pass_hu=False),
                         steps)
    g, _ = play_vec(SichuanVecEnv(64, learner_seats=(0, 1, 2, 3), opponents=opp, seed=12),
                    RulesAgent(pass_hu=False), steps)
    r, _ = play_vec(SichuanVecEnv(64, learner_seats=(0, 1, 2, 3), opponents=opp, seed=13),
                    RulesAgent(), steps)
    p = np.array([i["episode"]["r"] for i in paired])
    raw_g = np.array([i["episode"]["r"] for i in g])
    raw_r = np.array([i["episode"]["r"] for i in r])
    assert min(p.size, raw_g.size, raw_r.size) > 1000
    (mp, sp), (mg, sg), (mr, sr) = _mean_sd(p), _mean_sd(raw_g), _mean_sd(raw_r)
    se = np.sqrt(sp**2 / p.size + sg**2 / raw_g.size + sr**2 / raw_r.size)
    assert abs(mp - (mg - mr)) < 3 * se, (mp, mg, mr, se)
    assert sp**2 < sg**2 / 3, (sp, sg)
    # the paired env's own raw points are those of the learner
    assert np.allclose(p, [i["raw_points"] - i["reference_points"] for i in paired])


def test_same_seed_same_rewards_and_shards_do_not_matter(monkeypatch):
    """Two envs with one seed give the same rewards; so does one split into engine
    batches of 2 tables (a table's reference deals do not depend on the batching), with a
    driver-played reference; with random opponents (the reference deals' own seeded
    stream) one seed still gives one result."""
    def run(opponents=GreedyAgent, seed: int = 5) -> np.ndarray:
        env = SichuanVecEnv(5, opponents=opponents and opponents(), seed=seed,
                            reference=RulesAgent(lookahead=False))
        assert not env._paired.player.compiled
        return play_vec(env, GreedyAgent(), 36)[1]

    a = run()
    assert np.array_equal(a, run())
    assert not np.array_equal(a, run(seed=6))
    assert np.array_equal(run(None), run(None))
    monkeypatch.setattr(vector, "SHARD_TABLES", 2)
    assert np.array_equal(a, run())


def test_compiled_reference_with_random_opponents_is_seeded():
    """rules as reference against the default random opponents (compiled play-out, the
    random opponents drawing from each table's key): one seed, one result."""
    def run(seed: int) -> np.ndarray:
        env = SichuanVecEnv(8, seed=seed, reference="rules")
        assert env._paired.player.compiled
        return play_vec(env, GreedyAgent(), 50)[1]

    assert np.array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))


def test_set_reference_applies_to_later_deals():
    env = SichuanVecEnv(4, opponents=GreedyAgent(), seed=0, reference="greedy")
    learner = RulesAgent()
    env.set_reference(learner)  # before reset: every deal is the learner's own play
    infos, _ = play_vec(env, learner, 60)
    assert infos and all(i["episode"]["r"] == 0.0 for i in infos)
    assert env.reference is learner
    with pytest.raises(ValueError, match="reference="):
        SichuanVecEnv(2).set_reference("rules")


def test_refused_setups():
    with pytest.raises(ValueError, match="deals_per_match"):
        SichuanVecEnv(2, rules=get_rules(None).replace(deals_per_match=2), reference="rules")

    class PerTable(GreedyAgent):
        takes_tables = True

    with pytest.raises(ValueError, match="takes_tables"):
        SichuanVecEnv(2, opponents=PerTable(), reference="rules")
    with pytest.raises(ValueError, match="takes_tables"):
        SichuanVecEnv(2, reference=PerTable())


def _gym_run(env: SichuanSingleEnv, learner, seed: int, deals: int) -> list[tuple]:
    out = []
    for k in range(deals):
        obs, info = env.reset(seed=seed + k)
        total = 0.0
        done = False
        while not done:
            a = learner.act_batch(agent_input(learner, env.state, np.array([env.seat]),
                                              np.zeros(1, np.intp)),
                                  env.action_masks()[None])[0]
            obs, r, done, _, info = env.step(int(a))
            total += r
        out.append((total, info["raw_points"], info["reference_points"]))
    return out


def test_gym_env_zero_for_the_reference_and_seeded():
    env = SichuanSingleEnv(learner_seat="random", opponents=GreedyAgent(), reference="rules")
    res = _gym_run(env, RulesAgent(), 100, 12)
    assert all(t == 0.0 and raw == ref for t, raw, ref in res)
    assert any(raw != 0 for _, raw, _ in res)
    g1 = _gym_run(SichuanSingleEnv(reference="rules"), GreedyAgent(), 7, 6)
    g2 = _gym_run(SichuanSingleEnv(reference="rules"), GreedyAgent(), 7, 6)
    assert g1 == g2
    assert all(abs(t - (raw - ref)) < 1e-9 for t, raw, ref in g1)


class _Switch(GreedyAgent):
    """greedy until switched, then the rules bot without look-ahead (an opponent that
    changes during training, like a refreshed self-play snapshot)."""

    def __init__(self) -> None:
        super().__init__()
        self.other: RulesAgent | None = None

    def act_batch(self, views, masks):
        if self.other is not None:
            return self.other.act_batch(views, masks)
        return super().act_batch(views, masks)


def test_changed_opponents_after_flush_references_keep_every_deal_paired():
    """An opponent that changes mid-run: with flush_references() before the change, the
    reference deals of the deals started earlier meet the old opponent, and a learner that
    plays as the reference still gets 0 on every deal."""
    opp = _Switch()
    env = SichuanVecEnv(6, opponents=opp, seed=2, reference="rules")
    assert not env._paired.player.compiled
    learner = RulesAgent()
    env.reset()
    returns = []
    for k in range(70):
        if k == 30:
            env.flush_references()
            opp.other = RulesAgent(lookahead=False)
        a = learner.act_batch(env.learner_inputs(learner), env.action_masks())
        _, _, d, inf = env.step(a)
        returns += [inf[i]["episode"]["r"] for i in np.flatnonzero(d)]
    assert len(returns) > 10 and all(r == 0.0 for r in returns)

"""Rollout comparisons: where deviating from the rules bot pays, measured by playing on.

Four rules bots play deals. At a sample of their decisions (those with a real choice),
each *candidate* action -- the bot's own choice and a few alternatives -- is applied to a
copy of the table, and four rules bots play the deal out from there. The decider's points
from that moment to the end of the deal are the candidate's *return*.

The copies share the wall and the other hands as the game dealt them, so two candidates
differ only by what the action changes (common random numbers: the luck of the deal
cancels in the difference). The hidden part of a real table is a draw from exactly the
distribution the decider faces given what it has seen, so one comparison is an unbiased
sample of ``Q(a) - Q(b)`` -- the value of ``a`` over ``b`` for a player who then goes on as
the rules bot against rules bots -- given the decider's own information. A network that
regresses these differences from the decider's observation learns where the bot's choice
can be improved (one step of policy iteration), without ever seeing anything hidden.

:func:`generate` writes the samples (the decider's network input -- observation, analysis
and advice planes, as :class:`sichuan_agents.models.ppo.PPOAgent` builds them -- its mask, the
candidates
and their returns); ``sichuan_agents.training.distill`` trains a policy on them. With ``--player``
another agent (a fitted model, say) plays the deals and the play-outs in the bot's place:
the comparisons then measure deviations from that agent's choices, the next step of policy
iteration (:mod:`sichuan_agents.training.improve` repeats it). With ``--compiled`` the rules bot's
compiled copy (``sichuan_agents.search.rollout``, which chooses what the Python bot chooses) plays
the deals and the play-outs: the same comparisons at a fraction of the CPU, so that the
noisiest ones (one discard over another) can be sampled by the hundred thousand.

    python -m sichuan_agents.training.rollout_teacher --deals 20000 --seed 31 --out
    runs/rollouts_31.npz
    python -m sichuan_agents.training.rollout_teacher --compiled --deals 2000 --seed 31 --shards 64
    \
        --out runs/rollouts --address auto   # 64 shards as Ray tasks over a cluster
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sichuan_agents.bots.greedy import Seen
from sichuan_agents.bots.rules_bot import RulesAgent
from sichuan_agents.search.candidates import discard_preference, suit_of_void_action
from sichuan_agents.search.rollout import choose_actions
from sichuan_agents.search.rollout import play_out as compiled_play_out
from sichuan_agents.training.advice import advised_planes
from sichuan_env.core import engine
from sichuan_env.core.actions import DISCARD, HU, KONG, PUNG, VOID_TILE
from sichuan_env.core.rules import Rules, get_rules
from sichuan_env.core.state import TURN, VOID, State
from sichuan_env.seats.agent import agents_help
from sichuan_env.seats.driver import choose, play_until_learner
from sichuan_env.seats.view import SeatView, seat_view

MAX_CANDIDATES = 6  # room per sample: the bot's choice, Hu, kongs, discards, void suits


_ALL_SEATS_ONE_AGENT = np.zeros(4, np.intp)  # every seat played by agent 0


def candidate_actions(bot: RulesAgent, view: Seen, masks: np.ndarray, chosen: np.ndarray,
                      discards: int = 3) -> np.ndarray:
    """(N, MAX_CANDIDATES) int64 candidate actions per row, -1 padded; column 0 is the
    bot's own choice ``chosen``. Own turn: Hu and kongs when legal, and the ``discards``
    best discards in the bot's order (lowest shanten, then its score; discards of a worse
    shanten by isolation). Void choice: one action per other suit (the tile greedy would
    set aside). Claims: every legal action."""
    n = masks.shape[0]
    out = np.full((n, MAX_CANDIDATES), -1, np.int64)
    out[:, 0] = chosen
    for i in range(n):
        m = masks[i]
        got = [int(chosen[i])]
        if view.phase[i] == TURN:
            extra = [a for a in (HU, *range(KONG, PUNG)) if m[a]]
            got += [a for a in extra if a not in got]
        elif view.phase[i] == VOID:
            suits = suit_of_void_action(np.flatnonzero(m))
            legal = np.flatnonzero(m)
            own = int(suit_of_void_action(np.array([chosen[i]]))[0])
            for s in range(3):
                if s != own and (suits == s).any():
                    got.append(int(legal[suits == s][0]))
        else:
            got += [int(a) for a in np.flatnonzero(m) if a not in got]
        out[i, :min(len(got), MAX_CANDIDATES)] = got[:MAX_CANDIDATES]
    turn = np.flatnonzero(view.phase == TURN)
    if turn.size:
        sub = view.take(turn)
        key = discard_preference(bot, sub, masks[turn, DISCARD:VOID_TILE])
        order = np.argsort(-key, axis=1, kind="stable")
        for j, i in enumerate(turn):
            have = [a for a in out[i] if a >= 0]
            for k in order[j]:
                if len(have) >= MAX_CANDIDATES or not np.isfinite(key[j, k]):
                    break
                if sum(1 for a in have if a < VOID_TILE) >= discards:
                    break
                if int(k) not in have:
                    have.append(int(k))
            out[i, :len(have)] = have
    return out


def sample_probability(phase: np.ndarray, masks: np.ndarray, sample_prob: float,
                       claim_prob: float, void_prob: float) -> np.ndarray:
    """(N,) the chance that :func:`generate` samples each decision (see there)."""
    prob = np.where(phase == TURN, sample_prob, claim_prob)
    prob = np.where(phase == VOID, void_prob, prob)
    prob = np.where((phase == TURN) & masks[:, HU], claim_prob / 4, prob)
    return np.where((phase == TURN) & masks[:, KONG:PUNG].any(1), claim_prob, prob)


def _cat(states: list[State]) -> State:
    return State(*(np.concatenate(f) for f in zip(*(s.arrays() for s in states),
                                                      strict=True)), states[0].rules)


def play_out(state: State, seats: np.ndarray, first: np.ndarray, bot: Any) -> np.ndarray:
    """(B,) points of seat ``seats[i]`` at table ``i`` from now to the end of the deal,
    when that table's next action is ``first[i]`` and ``bot`` plays every seat after it
    (the tables are changed in place)."""
    _, first_points, _ = engine.step(state, np.asarray(first, np.int64), inplace=True)
    paid = play_until_learner(state, _ALL_SEATS_ONE_AGENT, [bot],
                              rewards=first_points.astype(np.float64))
    return paid[np.arange(state.batch_size), seats]


class _Pending:
    """Samples waiting for their play-outs."""

    def __init__(self) -> None:
        self.states: list[State] = []
        self.seats: list[np.ndarray] = []
        self.first: list[np.ndarray] = []
        self.slots: list[np.ndarray] = []  # (sample index, candidate column) per copy
        self.size = 0

    def add(self, state: State, rows: np.ndarray, seats: np.ndarray, cand: np.ndarray,
            first_sample: int) -> None:
        i, k = np.nonzero(cand >= 0)
        self.states.append(state.take(rows[i]))
        self.seats.append(seats[i])
        self.first.append(cand[i, k])
        self.slots.append(np.stack([first_sample + i, k], 1))
        self.size += i.size

    def run(self, bot: Any, returns: list[np.ndarray], compiled: bool = False) -> None:
        if not self.size:
            return
        st = _cat(self.states)
        seats = np.concatenate(self.seats)
        first = np.concatenate(self.first)
        if compiled:
            rows = np.arange(st.batch_size)
            before = st.scores[rows, seats].astype(np.float64)
            got = compiled_play_out(st, first, "rules")[rows, seats] - before
        else:
            got = play_out(st, seats, first, bot)
        slots = np.concatenate(self.slots)
        for (s, k), v in zip(slots, got, strict=True):
            returns[s][k] = v
        self.__init__()


def deal_steps(deals: int, seed: int, rules: Rules, tables: int,
               policy: Callable[[State, np.ndarray], np.ndarray],
               batch_done: Callable[[int], None] | None = None
               ) -> Iterator[tuple[State, np.ndarray, np.ndarray]]:
    """Play ``deals`` deals (seeds ``seed * 10**7 + i``), ``tables`` at a time, with
    ``policy(state, live_rows)`` choosing every seat's action. Before each step yields
    the state, its unfinished rows and the (B,) actions about to be played, for the
    caller to read; ``batch_done(deals_done)`` after each batch of tables."""
    done_deals = 0
    for lo in range(0, deals, tables):
        seeds = np.arange(lo, min(deals, lo + tables), dtype=np.int64) + seed * 10**7
        st = engine.reset(seeds, rules)
        while not st.done.all():
            live = np.flatnonzero(~st.done)
            acts = np.zeros(st.batch_size, np.int64)
            acts[live] = policy(st, live)
            yield st, live, acts
            engine.step(st, acts, inplace=True)
        done_deals += seeds.size
        if batch_done is not None:
            batch_done(done_deals)


def network_input(view: SeatView, rules: Rules, advised: np.ndarray) -> np.ndarray:
    """(N, 89, 27) float16: the decider's network input, as
    :class:`sichuan_agents.models.ppo.PPOAgent`
    builds it (observation and analysis planes, the advice planes of ``advised``)."""
    return advised_planes(view, rules, advised).astype(np.float16)


def generate(deals: int, seed: int, rules: str = "mil", sample_prob: float = 0.06,
             claim_prob: float = 0.5, void_prob: float = 0.05, tables: int = 256,
             discards: int = 3, batch: int = 2048, log: Any = None,
             player: Any = None, compiled: bool = False) -> dict[str, np.ndarray]:
    """Rollout comparisons from ``deals`` deals (seeds ``seed * 10**7 + i``) played by four
    copies of ``player`` (default: the rules bot), who also plays every play-out; column 0
    of the candidates is the player's choice, the advice planes hold the rules bot's. A
    decision with more than one legal action is sampled with ``sample_prob`` on an own
    turn (discards), ``claim_prob`` on a claim or an own turn offering a kong
    (``claim_prob / 4`` offering a self-drawn Hu), ``void_prob`` for the void choice: the
    rarer decisions with close alternatives get more of the play-outs. ``compiled``: the
    rules bot's compiled copy plays the deals and the play-outs (``player`` must be
    None); the comparisons are the same, the CPU a fraction."""
    if compiled and player is not None:
        raise ValueError("compiled play-outs are the rules bot's: give no player")
    rng = np.random.default_rng(seed)
    bot = RulesAgent()
    player = bot if player is None else player
    preset = get_rules(rules)
    planes, masks, cands, advice, phases = [], [], [], [], []
    returns: list[np.ndarray] = []
    pending = _Pending()
    started = time.time()

    def policy(st: State, live: np.ndarray) -> np.ndarray:
        return choose_actions(st, live, "rules") if compiled else choose(st, live, [player])

    def batch_done(done_deals: int) -> None:
        if log is not None:
            log(f"{done_deals} deals, {len(returns)} samples, {time.time() - started:.0f} s")

    for st, live, acts in deal_steps(deals, seed, preset, tables, policy, batch_done):
        m = st.legal_action_mask[live]
        prob = sample_probability(st.phase[live], m, sample_prob, claim_prob, void_prob)
        pick = live[(m.sum(1) > 1) & (rng.random(live.size) < prob)]
        if pick.size:
            seats = st.current[pick].astype(np.intp)
            view = seat_view(st, seats, pick)
            seen = Seen(view)
            mk = st.legal_action_mask[pick]
            cand = candidate_actions(bot, seen, mk, acts[pick], discards)
            keep = (cand >= 0).sum(1) > 1
            if keep.any():
                pick, seats, cand, mk = pick[keep], seats[keep], cand[keep], mk[keep]
                view = seat_view(st, seats, pick)
                advised = acts[pick] if player is bot else choose(st, pick, [bot])
                x = network_input(view, preset, advised)
                pending.add(st, pick, seats, cand, len(returns))
                for _ in range(pick.size):
                    returns.append(np.full(MAX_CANDIDATES, np.nan, np.float32))
                planes.append(x)
                masks.append(mk)
                cands.append(cand.astype(np.int16))
                advice.append(advised.astype(np.int16))
                phases.append(st.phase[pick].copy())
                if pending.size >= batch:
                    pending.run(player, returns, compiled)
    pending.run(player, returns, compiled)
    return {
        "planes": np.concatenate(planes), "masks": np.concatenate(masks),
        "candidates": np.concatenate(cands), "returns": np.stack(returns),
        "advice": np.concatenate(advice), "phase": np.concatenate(phases),
        "meta": np.array([seed, deals, int(sample_prob * 1e6), int(claim_prob * 1e6),
                          int(void_prob * 1e6), discards], np.int64),
    }


def write_shard(path: str, data: dict[str, np.ndarray]) -> None:
    """Save a shard of comparisons (compressed ``.npz``, its folder made; written to a
    temporary file and renamed, so that no reader finds it half-written) and say so."""
    from sichuan_agents.training.shards import write_atomic

    write_atomic(path, data)
    print(f"wrote {path}: {data['returns'].shape[0]} samples")


def add_shard_args(p: argparse.ArgumentParser) -> None:
    """The options of a teacher command that spread its shards over Ray tasks."""
    p.add_argument("--shards", type=int, default=None,
                   help="make N shards (seeds --seed .. --seed+N-1) in the folder --out, "
                        "skipping those already there, as Ray tasks")
    p.add_argument("--address", default=None,
                   help="with --shards: the Ray cluster to run on (auto or HOST:PORT); "
                        "default: --workers local cores")
    p.add_argument("--workers", type=int, default=1,
                   help="with --shards and no --address: local Ray workers (1: this "
                        "process, no Ray)")


def run_shard_command(prog: str, make: Any, kwargs: dict[str, Any],
                      a: argparse.Namespace) -> int:
    """One shard (``--out FILE``) or ``--shards`` shards (``--out`` a folder) of ``make``;
    a bad ``--shards``/``--workers``/``--address`` is one line and exit status 2."""
    from sichuan_agents.distributed import address_problem
    from sichuan_agents.training.cluster import ClusterError
    from sichuan_agents.training.shards import run_shards

    if a.shards is None:
        if a.address is not None or a.workers != 1:
            print(f"{prog}: --address and --workers spread --shards: give --shards N",
                  file=sys.stderr)
            return 2
        write_shard(a.out, make(seed=a.seed, log=lambda s: print(s, flush=True), **kwargs))
        return 0
    if a.shards < 1 or a.workers < 1:
        print(f"{prog}: --shards and --workers must be >= 1", file=sys.stderr)
        return 2
    if Path(a.out).suffix == ".npz" or Path(a.out).is_file():
        print(f"{prog}: with --shards, --out is a folder, got {a.out}", file=sys.stderr)
        return 2
    if a.address is not None:
        problem = address_problem(a.address)
        if problem is not None:
            print(f"{prog}: {problem}", file=sys.stderr)
            return 2
    try:
        run_shards(make, range(a.seed, a.seed + a.shards), a.out, kwargs, address=a.address,
                   workers=a.workers, log=lambda s: print(s, flush=True))
    except ClusterError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=int, default=2000)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--rules", default="mil")
    p.add_argument("--sample-prob", type=float, default=0.06)
    p.add_argument("--claim-prob", type=float, default=0.5)
    p.add_argument("--void-prob", type=float, default=0.05)
    p.add_argument("--discards", type=int, default=3)
    p.add_argument("--player", default="rules",
                   help=agents_help("the agent that plays the deals and the play-outs "
                                    "(rules; another: one step of policy iteration from it)"))
    p.add_argument("--compiled", action="store_true",
                   help="the rules bot's compiled copy plays the deals and the play-outs "
                        "(with --player rules only): the same comparisons, far less CPU")
    add_shard_args(p)
    p.add_argument("--out", required=True,
                   help="the shard (.npz); with --shards, the folder of the shards")
    a = p.parse_args(argv)
    probs = (a.sample_prob, a.claim_prob, a.void_prob)
    if a.deals < 1 or not all(0 < x <= 1 for x in probs) or not 1 <= a.discards <= \
            MAX_CANDIDATES:
        print("rollout_teacher: --deals must be >= 1, --sample-prob, --claim-prob and "
              f"--void-prob in (0, 1], --discards in 1..{MAX_CANDIDATES}", file=sys.stderr)
        return 2
    if a.compiled and a.player != "rules":
        print("rollout_teacher: --compiled plays the rules bot; it takes no --player",
              file=sys.stderr)
        return 2
    from sichuan_env.seats.agent import make_agent

    try:
        player = None if a.player == "rules" else make_agent(a.player, preset=a.rules)
    except (ValueError, FileNotFoundError) as err:
        print(f"rollout_teacher: --player: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    kwargs = {"deals": a.deals, "rules": a.rules, "sample_prob": a.sample_prob,
              "claim_prob": a.claim_prob, "void_prob": a.void_prob,
              "discards": a.discards, "compiled": a.compiled}
    if player is not None:
        if a.shards is not None and (a.address is not None or a.workers > 1):
            print("rollout_teacher: --player runs in this process; Ray tasks make the "
                  "rules bot's shards (--player rules)", file=sys.stderr)
            return 2
        kwargs["player"] = player
    return run_shard_command("rollout_teacher", generate, kwargs, a)


if __name__ == "__main__":
    sys.exit(main())


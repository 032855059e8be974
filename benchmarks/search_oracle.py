"""How much the search agent would gain from knowing the hidden hands (a diagnostic).

    python benchmarks/search_oracle.py [--agent "search?k=64&rollout=greedy"] [--deals 800]
        [--seed 911] [--rules mil]

Plays the same search agent against three ``rules`` bots on the same walls, once per mode:

* ``sampled``: the agent as shipped -- its play-out tables are sampled from its seat view;
* ``readiness``: sampled as shipped, but the other seats that are really ready get a
  ready hand: their sampled hand is improved by swapping wall tiles in (the discard that
  lowers the shanten most, as a tile-efficient player would) until it waits -- the
  sampler learns who is ready, not on what (own-turn decisions only);
* ``ready``: the other seats' hands that are ready (waiting) are the real ones, the rest
  of their hands and the wall are dealt again at random from those seats' tiles and the
  wall (each seat's void suit respected);
* ``oracle``: every hand is the real one; only the order of the wall is shuffled.

This cheats on purpose: the play-out tables are copies of the real table, taken from the
engine state the arena's driver holds (this script wraps ``sichuan_env.seats.driver.seat_view``
to see it). The agent itself never reads hidden information; the figures bound what
better sampling of the hidden hands could give it. Prints each mode's points per deal
over ``rules`` and each mode minus ``sampled`` on the same walls, with 95% CIs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sichuan_agents.search.agent as search_mod  # noqa: E402
import sichuan_env.seats.driver as driver  # noqa: E402
from sichuan_agents.bots.rules_bot import RulesAgent  # noqa: E402
from sichuan_agents.search.sampler import _take, make_ready  # noqa: E402
from sichuan_env.core import engine  # noqa: E402
from sichuan_env.core import engine_kernels as ek  # noqa: E402
from sichuan_env.core.rules import Rules, get_rules  # noqa: E402
from sichuan_env.core.state import TURN, State  # noqa: E402
from sichuan_env.core.vocab import N_KINDS  # noqa: E402
from sichuan_env.seats.view import SeatView  # noqa: E402

MODES = ("sampled", "readiness", "ready", "oracle")
_seen: dict[str, Any] = {}
_seat_view = driver.seat_view
_sample_states = search_mod.sample_states


def _remembering_seat_view(state: State, seats: Any, rows: Any = None) -> SeatView:
    _seen["state"], _seen["rows"] = state, rows
    return _seat_view(state, seats, rows)


def _real_table(i: int) -> int:
    """The table of the remembered state that row ``i`` of the last seat view shows."""
    state, rows = _seen["state"], _seen["rows"]
    return int(np.arange(state.batch_size)[rows][i]) if rows is not None else i


class TurnProbe(RulesAgent):
    """A ``rules`` bot (it plays as ``rules``) that, at a share of its own turns, calls
    :meth:`probe` with the view row and the real table it shows, for the diagnostics that
    compare sampled hands with the real ones (run it with :func:`play_seeing_the_table`)."""

    needs = "view"

    def __init__(self, seed: int, rules: Rules, samples: int, share: float) -> None:
        super().__init__(seed)
        self.rules, self.samples, self.share = rules, samples, share
        self.rng = np.random.default_rng(seed)
        self.rows: list[Any] = []

    def act_batch(self, views: SeatView, masks: np.ndarray) -> np.ndarray:
        for i in np.flatnonzero(views.phase == TURN):
            if self.rng.random() < self.share:
                state, t = _seen["state"], _real_table(int(i))
                real = State(*state.take(np.array([t])).arrays(), self.rules)
                self.probe(views, masks, int(i), real)
        return super().act_batch(views, masks)

    def probe(self, views: SeatView, masks: np.ndarray, i: int, real: State) -> None:
        """Record what the diagnostic measures at row ``i`` (``real``: its real table)."""
        raise NotImplementedError


def play_seeing_the_table(probe: TurnProbe, deals: int, seed: int, rules: Rules) -> float:
    """Four ``rules`` seats, ``probe`` in seat 0, ``deals`` deals of ``seed`` (no
    duplicate), the driver's seat view wrapped so the probe sees the real table; the
    driver is restored afterwards. Returns the CPU seconds taken."""
    from sichuan_agents.arena import run_arena

    driver.seat_view = _remembering_seat_view
    cpu = time.process_time()
    try:
        run_arena([probe, "rules", "rules", "rules"], deals=deals, seed=seed, rules=rules,
                  tables=16, progress=False, duplicate=False)
    finally:
        driver.seat_view = _seat_view
    return time.process_time() - cpu


def _redeal_loose_hands(out: State, j: int, lo: int, hi: int,
                        rng: np.random.Generator) -> None:
    """Table ``j``: the hands of the other seats not ready, dealt again with the wall."""
    me = int(out.current[j])
    loose = [a for a in range(4) if a != me and not out.hu[j, a] and out.waits[j, a] == 0]
    pool = out.wall[j, lo:hi].astype(np.int64).tolist()
    for a in loose:
        pool += np.repeat(np.arange(N_KINDS), out.hand[j, a]).tolist()
    pool = rng.permutation(np.asarray(pool, np.int64)).tolist()
    for a in loose:
        got = _take(pool, int(out.hand[j, a].sum()), int(out.void[j, a]))
        out.hand[j, a] = np.bincount(got, minlength=N_KINDS)
    out.wall[j, lo:hi] = pool


def _readiness_known(view: SeatView, i: int, mask: np.ndarray, rules: Rules, n: int,
                     rng: np.random.Generator, hands: str = "uniform",
                     hand_model: Any = None) -> State:
    out = _sample_states(view, i, mask, rules, n, rng, hands, hand_model)
    state, t = _seen["state"], _real_table(i)
    me = int(state.current[t])
    if int(state.phase[t]) != TURN:
        return out
    ready = [a for a in range(4) if a != me and not state.hu[t, a] and state.waits[t, a] != 0]
    if ready:
        for j in range(n):
            for a in ready:
                make_ready(out, j, a, rng)
        ek.refresh_waits(*engine.kernel_rule_args(out.rules), *out.arrays())
        out.legal_action_mask[:] = engine.legal_mask(out)
    return out


def shuffled_copies(state: State, t: int, rules: Rules, n: int, rng: np.random.Generator,
                    redeal_loose: bool = False) -> State:
    """``n`` copies of table ``t`` of ``state`` under ``rules`` with one deal per match,
    the wall's order shuffled in each; with ``redeal_loose`` the other seats' hands that
    are not ready are dealt again with the wall."""
    rules1 = rules.replace(deals_per_match=1)
    out = State(*state.take(np.full(n, t)).arrays(), rules1)
    lo, hi = int(out.wall_front[0]), int(out.wall_back[0])
    for j in range(n):
        out.wall[j, lo:hi] = rng.permutation(out.wall[j, lo:hi])
        if redeal_loose:
            _redeal_loose_hands(out, j, lo, hi, rng)
    ek.refresh_waits(*engine.kernel_rule_args(rules1), *out.arrays())
    out.legal_action_mask[:] = engine.legal_mask(out)
    return out


def _copies_of_the_real_table(mode: str):
    def sample(view: SeatView, i: int, mask: np.ndarray, rules: Rules, n: int,
               rng: np.random.Generator, hands: str = "uniform", hand_model: Any = None
               ) -> State:
        state, t = _seen["state"], _real_table(i)
        if int(state.current[t]) != int(view.seat[i]):
            raise RuntimeError("the remembered state does not match the view")
        return shuffled_copies(state, t, rules, n, rng, redeal_loose=mode == "ready")
    return sample


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="The search agent with sampled, partly real "
                                "and real hidden hands, on the same walls.")
    # the setting its figures in docs/history/search.md were measured with (then the default)
    p.add_argument("--agent", default="search?k=64&rollout=greedy")
    p.add_argument("--deals", type=int, default=800)
    p.add_argument("--seed", type=int, default=911)
    p.add_argument("--rules", default="mil")
    p.add_argument("--modes", default=",".join(MODES))
    a = p.parse_args(argv)
    from sichuan_agents.arena import mean_ci, run_arena
    from sichuan_env.seats.agent import make_agent

    modes = a.modes.split(",")
    try:
        if a.deals < 4 or a.seed < 0:
            raise ValueError("--deals must be >= 4 and --seed >= 0")
        if bad := [m for m in modes if m not in MODES]:
            raise ValueError(f"unknown mode {bad[0]!r}; known: {', '.join(MODES)}")
        rules = get_rules(a.rules)
        make_agent(a.agent, seed=a.seed, preset=rules.preset)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    driver.seat_view = _remembering_seat_view
    try:
        per_wall = _play_modes(a, modes, rules, run_arena, make_agent)
    finally:
        search_mod.sample_states = _sample_states
        driver.seat_view = _seat_view
    if "sampled" in per_wall:
        for mode in modes:
            if mode != "sampled":
                diff = per_wall[mode] - per_wall["sampled"]
                m, half, _ = mean_ci(diff[~np.isnan(diff)])
                print(f"{mode} - sampled (same walls): {m:+.3f} [{m - half:+.3f}, "
                      f"{m + half:+.3f}]")
    return 0


def _play_modes(a: argparse.Namespace, modes: list[str], rules: Rules, run_arena: Any,
                make_agent: Any) -> dict[str, np.ndarray]:
    """Each mode's per-wall points over ``rules``, printing its line."""
    per_wall = {}
    for mode in modes:
        search_mod.sample_states = (_sample_states if mode == "sampled" else
                                    _readiness_known if mode == "readiness" else
                                    _copies_of_the_real_table(mode))
        agent = make_agent(a.agent, seed=a.seed, preset=rules.preset)
        cpu = time.process_time()
        res = run_arena([agent, "rules", "rules", "rules"], deals=a.deals, seed=a.seed,
                        rules=rules, tables=64, progress=False)
        d = res.pairwise(agent.name, "rules")
        per_wall[mode] = res.unit_means(agent.name) - res.unit_means("rules")
        print(f"{mode:8s} {a.agent} - rules: {d['mean']:+.3f} [{d['ci_low']:+.3f}, "
              f"{d['ci_high']:+.3f}] over {res.deals} deals ({d['units']} walls), seed "
              f"{a.seed}, {rules.preset}; {agent.searched} of {agent.decisions} decisions "
              f"searched, {time.process_time() - cpu:.0f} CPU s", flush=True)
    return per_wall


if __name__ == "__main__":
    sys.exit(main())

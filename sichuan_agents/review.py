"""Review a deal: where each decision of a seat won or lost points, by play-outs.

Command line (also the ``sichuan-review`` script)::

    python -m sichuan_agents.review RECORDS.jsonl --deal N --seat S [--agent SPEC] [--k K]
        [--seed X] --out review.html [--json review.json]
    python -m sichuan_agents.review RECORDS.jsonl --deals 0-99 --seat all --json reviews.json

The deal is replayed through the engine (:func:`sichuan_env.records.record.replay_steps`). At
every decision of the seat with more than one legal action the review

1. takes the seat's :class:`~sichuan_env.seats.view.SeatView` at that moment -- nothing else of
   the table: never the record's hands or wall;
2. lists candidates the way the search agent does
   (:func:`sichuan_agents.search.candidates.search_candidates`:
   the prior's choice, the ``rules`` bot's, its next-best discards, kongs, every claim
   answer; at most ``top``), plus the action played and the reviewer's choice when they
   are not among them; a legal Hu is always a candidate;
3. samples ``k`` deals of the hidden tiles from the view and plays every candidate out on
   every sample (the search agent's own sampler and compiled rollout,
   :meth:`sichuan_agents.search.agent.SearchAgent.sample`,
   :func:`sichuan_agents.search.rollout.play_out`): each
   candidate's estimated points for the seat at the end of the deal are the mean over the
   samples, with its standard error;
4. reports the action played, the reviewer's choice (``--agent``: a search agent chooses
   on these very play-outs, as it would in play, except that a legal Hu is weighed like
   any other decision; another agent is asked for its action), the best candidate
   (highest mean) and the *loss*: best mean minus the played action's mean, with the
   standard error of that paired difference (the candidates share the samples and the
   rollout randomness). The loss is never measured against the reviewer's choice: an
   action played that is the best estimate has none;
5. flags the decision as a ``mistake`` when the loss is above :data:`MISTAKE_Z` standard
   errors, and gives ``why`` in one line where a simple reason shows (:func:`why`).

A decision's ``step`` is the deal's step that applies it: the number the replay viewer
shows on the page of every hand and on the seat's page alike.

Each decision's samples come from a generator seeded with ``(seed, event index)``, so a
review is reproducible and does not depend on which other decisions are reviewed.

The JSON (``sichuan-review/1``) holds every reviewed decision and a ``summary``:
``decisions``, ``total_loss``, ``loss_per_decision``, ``mistakes``, ``mistake_loss``,
``agreement`` (share of decisions where the played action is the reviewer's choice) and
``costliest`` (the five largest mistakes). With ``--deals A-B`` (many deals, JSON only)
it also holds ``table``: one row per seat and the agent that played it (from an arena
record's ``arena.agents``), so that a bot author sees where a bot loses points against the
reviewer over many deals. The HTML is the replay viewer's page (:mod:`sichuan_env.records.viewer`)
with the review beside each decision.

Exit status: 0 written (also when the reader of the printed summary has gone, ``|
head``); 2 bad arguments, an unreadable file, a record that does not replay or names a
rule preset this version does not know, or an agent that cannot be built (one line on
stderr).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from sichuan_agents.bots.greedy import Seen, shanten
from sichuan_agents.search.agent import SearchAgent
from sichuan_agents.search.candidates import suit_of_void_action
from sichuan_agents.search.rollout import play_out
from sichuan_env.core import engine
from sichuan_env.core.actions import (
    ACTION_STRINGS,
    DISCARD,
    HU,
    KONG,
    MELDED_KONG,
    PASS,
    PUNG,
    VOID_TILE,
)
from sichuan_env.core.rules import PRESETS, Rules
from sichuan_env.core.state import PHASE_NAMES, TURN, State
from sichuan_env.core.vocab import N_KINDS, SUITS
from sichuan_env.records.record import (
    RecordError,
    RecordMismatch,
    event_action,
    iter_jsonl,
    replay_steps,
    validate_record,
)
from sichuan_env.seats.agent import AgentSpecError, agent_input, agents_help, make_agent, parse_spec
from sichuan_env.seats.view import SeatView, seat_view

__all__ = ["DEFAULT_AGENT", "DEFAULT_K", "FORMAT", "DecisionPoint", "Reviewer",
           "UnknownPresetError", "decision_points", "is_mistake", "main", "review_part",
           "review_record", "seat_table", "summarize", "why"]

FORMAT = "sichuan-review/1"
#: The default reviewer: the search agent (its candidates, its choice on the play-outs).
DEFAULT_AGENT = "search"
#: Samples per decision by default, as the search agent's (benchmarks/review.py: one seat
#: of one deal well under 30 s on 2 cores).
DEFAULT_K = 256
#: Decisions listed in a summary's ``costliest``.
COSTLIEST = 5
#: A decision is a mistake when its loss is above this many standard errors.
MISTAKE_Z = 2.0
#: Tiles left in the wall at which a ready hand's collection at the wall's end is near.
WALL_END = 12


@dataclass
class DecisionPoint:
    """One decision of a replayed record: the table just before it (``state``, one row),
    the deciding ``seat``, the record ``event`` index, the viewer ``step`` (frame) it
    leads to, the ``played`` action and how many actions were legal."""

    event: int
    step: int
    seat: int
    phase: str
    state: State
    played: int
    n_legal: int


def decision_points(record: dict[str, Any], seats: Sequence[int]) -> list[DecisionPoint]:
    """Every decision of ``seats`` in ``record`` with more than one legal action, in
    order. Raises :class:`~sichuan_env.records.record.RecordError` or
    :class:`~sichuan_env.records.record.RecordMismatch` for a record that does not replay,
    ``ValueError`` for a deal with a short wall."""
    out: list[DecisionPoint] = []
    before: State | None = None
    steps = replay_steps(record)
    first = next(steps)  # checks the record
    tiles = int(first.state.hand[0].sum()) + len(record["wall"])
    if tiles != 4 * N_KINDS:
        raise ValueError(f"the deal holds {tiles} tiles, not {4 * N_KINDS}: a deal with "
                         "a short wall cannot be reviewed (the samples are full deals)")
    for k, step in enumerate(itertools.chain([first], steps)):
        if step.events and before is not None:
            i = step.events[0]
            e = record["events"][i]
            n = int(before.legal_action_mask[0].sum())
            if e["seat"] in seats and n > 1:
                out.append(DecisionPoint(i, k, int(e["seat"]),
                                         PHASE_NAMES[int(before.phase[0])], before,
                                         event_action(e), n))
        before = step.state
    return out


def _stats(pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = pts.shape[0]
    se = pts.std(0, ddof=1) / np.sqrt(k) if k > 1 else np.zeros(pts.shape[1])
    return pts.mean(0), se


def is_mistake(loss: float, loss_se: float) -> bool:
    """A decision is a mistake when its loss is significant: above ``MISTAKE_Z`` standard
    errors of the paired difference (and above 0)."""
    return bool(loss > 0 and loss > MISTAKE_Z * loss_se)


def _shanten_after(seen: Seen, a: int) -> int | None:
    """The seat's shanten after action ``a`` (a discard, a pass or a pung; else None)."""
    hand = seen.hand[0].astype(np.int8).copy()
    meld = seen.own_meld[0].astype(np.int8).copy()
    if DISCARD <= a < VOID_TILE:
        hand[a - DISCARD] -= 1
    elif a == PUNG and seen.claim_tile[0] >= 0:
        t = int(seen.claim_tile[0])
        hand[t] -= 2
        meld[t] = 1
    elif a != PASS:
        return None
    if (hand < 0).any():
        return None
    return int(shanten(hand[None], meld[None], seen.own_void[:1])[0])


def _is_kong(a: int) -> bool:
    return KONG <= a < PUNG or a == MELDED_KONG


def _deal_in(st: State, seat: int, kind: int) -> float:
    """The share of the samples in which a seat still playing waits on ``kind``."""
    others = [s for s in range(4) if s != seat]
    waits = st.waits[:, others].astype(np.int64)
    hit = ((waits >> kind) & 1).astype(bool) & ~st.hu[:, others]
    return float(hit.any(1).mean())


def why(view: SeatView, st: State, played: int, best: int,
        means: dict[int, float]) -> str | None:
    """One line on why ``best`` is estimated above ``played``, where a simple reason
    shows (from the seat's view and the sampled deals only); None otherwise."""
    if played == best:
        return None
    seen = Seen(view)
    wall = int(view.wall_left[0])
    name = ACTION_STRINGS[best]
    if played == HU:
        ready = ((best == PASS and int(view.phase[0]) != TURN)
                 or (DISCARD <= best < VOID_TILE and _shanten_after(seen, best) == 0))
        if not ready:
            return None
        verb = "passing" if best == PASS else f"{name} instead"
        if wall <= WALL_END:
            return (f"{verb} keeps a ready hand that collects at the wall's end ({wall} "
                    f"tiles left), worth more than this Hu ({means[best]:+.2f} against "
                    f"{means[HU]:+.2f})")
        return (f"{verb} keeps a ready hand in play for a larger win ({means[best]:+.2f} "
                f"against {means[HU]:+.2f} for this Hu)")
    if best == HU:
        return (f"declaring Hu takes the win now ({means[HU]:+.2f} against "
                f"{means[played]:+.2f})")
    if _is_kong(best) and not _is_kong(played):
        return f"{name}: a kong is paid at once and draws a replacement tile"
    if DISCARD <= played < VOID_TILE and DISCARD <= best < VOID_TILE:
        p_in = _deal_in(st, int(view.seat[0]), played - DISCARD)
        b_in = _deal_in(st, int(view.seat[0]), best - DISCARD)
        if p_in >= 0.05 and p_in >= 3 * b_in + 0.02:
            return (f"{ACTION_STRINGS[played].split()[1]} completes another seat's hand in "
                    f"{100 * p_in:.0f}% of the sampled deals, "
                    f"{ACTION_STRINGS[best].split()[1]} in {100 * b_in:.0f}%")
    sp, sb = _shanten_after(seen, played), _shanten_after(seen, best)
    if sp is not None and sb is not None and sp > sb:
        if sb == 0:
            return f"{ACTION_STRINGS[played]} breaks a ready hand; {name} keeps it ready"
        return (f"{name} keeps the hand closer to ready ({sb} tile{'s' * (sb > 1)} from "
                f"ready instead of {sp})")
    if played >= VOID_TILE and played < KONG and best >= VOID_TILE and best < KONG:
        hand = seen.hand[0].astype(np.int64)
        if seen.set_aside[0] >= 0:
            hand[int(seen.set_aside[0])] += 1
        per = [int(hand[9 * s:9 * s + 9].sum()) for s in range(3)]
        sp_, sb_ = (int(suit_of_void_action(np.array([a]))[0]) for a in (played, best))
        if per[sb_] < per[sp_]:
            return (f"void {SUITS[sb_]} leaves {per[sb_]} tiles to shed instead of "
                    f"{per[sp_]}")
    return None


class UnknownPresetError(ValueError):
    """A record whose rule preset this version does not know."""


class Reviewer:
    """Estimates every candidate of a decision by play-outs from the deciding seat's view.

    ``agent``: the reviewer (a spec for :func:`sichuan_env.seats.agent.make_agent`, or an agent);
    a :class:`~sichuan_agents.search.agent.SearchAgent` is also the estimator (its ``k``, ``top``,
    ``rollout`` and ``hands``), any other agent is asked for its choice and a default
    search agent estimates. ``k`` overrides the estimator's samples per decision; ``seed``
    seeds each decision's generator with ``(seed, event)``; ``rules`` are the deal's;
    ``threads``: numba threads for the play-outs (the same estimates on any number)."""

    def __init__(self, agent: str | Any = DEFAULT_AGENT, *, rules: Rules, k: int | None = None,
                 seed: int = 0, threads: int | None = None) -> None:
        if rules.preset not in PRESETS:
            raise UnknownPresetError(
                f"the record's rule preset {rules.preset!r} is unknown (known: "
                f"{', '.join(PRESETS)}): the agents of a review are made for a known preset")
        self.spec = agent if isinstance(agent, str) else getattr(agent, "name", repr(agent))
        self.agent = (make_agent(agent, seed=seed, preset=rules.preset)
                      if isinstance(agent, str) else agent)
        if isinstance(self.agent, SearchAgent):
            self.estimator = self.agent
        else:
            self.estimator = SearchAgent(seed, k=DEFAULT_K, rules=rules)
        if k is None and isinstance(agent, str) and "k" not in parse_spec(agent)[1]:
            k = DEFAULT_K  # a search spec or a search agent object may set its own
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, int) or k < 2:
                raise ValueError(f"k must be an integer >= 2, got {k!r}")
            self.estimator.k = k
        if threads is not None:
            self.estimator.threads = engine.check_threads(threads)
        self.estimator.rules = rules
        self.rules = rules
        self.seed = int(seed)

    def settings(self) -> dict[str, Any]:
        """The estimator's settings, for the review's JSON."""
        e = self.estimator
        return {"k": e.k, "top": e.top, "rollout": e.rollout, "hands": e.hands,
                "z": e.z, "seed": self.seed}

    def reset(self) -> None:
        """Called at the start of each reviewed deal."""
        reset = getattr(self.agent, "reset", None)
        if callable(reset):
            reset()

    def review(self, d: DecisionPoint) -> dict[str, Any]:
        """The review of one decision (see the module docstring)."""
        est = self.estimator
        view = seat_view(d.state, d.seat, np.zeros(1, np.intp))
        masks = d.state.legal_action_mask[:1].astype(bool)
        mask = masks[0]
        bot = est.bot.act_batch(view, masks)
        hu = bool(mask[HU])
        bot_hu = np.where(masks[:, HU], HU, bot)
        prior = bot_hu if est.prior is est.bot else est.prior.act_batch(view, masks)
        theirs = est.candidates(view, masks, prior, bot)[0]
        if self.agent is est:  # the search agent's choice on these play-outs, a Hu too
            searched = not (est.departures == "play" and prior[0] != bot_hu[0])
            choice = None if searched else int(prior[0])
        else:
            choice = int(self.agent.act_batch(agent_input(self.agent, d.state, d.seat,
                                                          np.zeros(1, np.intp)), masks)[0])
            if not mask[choice]:
                raise ValueError(f"reviewer {self.spec} chose the illegal action "
                                 f"{ACTION_STRINGS[choice]!r} at event {d.event}")
        cand = list(theirs)
        extra = [d.played] + ([] if choice is None else [choice]) + ([HU] if hu else [])
        cand += [a for a in dict.fromkeys(extra) if a not in cand]
        est.rng = np.random.default_rng([self.seed, d.event])
        k = est.samples_for(len(theirs))
        st, kept = est.sample(view, 0, mask, cand, k)
        if d.played not in kept:  # pragma: no cover - the sampler keeps the legal actions
            raise RuntimeError(f"event {d.event}: the played action is not legal on the samples")
        if len(kept) < 2:
            st.key[:] = est.rng.integers(0, 2**63, k, dtype=np.uint64)
        c = len(kept)
        batch = st.take(np.repeat(np.arange(k), c))
        scores = play_out(batch, np.tile(np.asarray(kept, np.int64), k), est.rollout,
                          est.threads)
        pts = scores[:, d.seat].reshape(k, c).astype(np.float64)
        mean, se = _stats(pts)
        if choice is None:
            cols = [kept.index(a) for a in theirs if a in kept]
            choice = kept[cols[est.pick(pts[:, cols])]] if len(cols) >= 2 else int(prior[0])
        best = int(np.argmax(mean))
        p = kept.index(d.played)
        diff = pts[:, best] - pts[:, p]
        loss = float(diff.mean())
        loss_se = float(diff.std(ddof=1) / np.sqrt(k)) if k > 1 else 0.0
        cands = [{"action": ACTION_STRINGS[a], "mean": round(float(mean[j]), 4),
                  "se": round(float(se[j]), 4)} for j, a in enumerate(kept)]
        means = {a: float(mean[j]) for j, a in enumerate(kept)}
        return {
            "event": d.event, "step": d.step, "seat": d.seat, "phase": d.phase,
            "legal": d.n_legal, "played": ACTION_STRINGS[d.played],
            "reviewer": ACTION_STRINGS[choice], "best": ACTION_STRINGS[kept[best]],
            "loss": round(loss, 4), "loss_se": round(loss_se, 4),
            "mistake": is_mistake(loss, loss_se),
            "why": why(view, st, d.played, kept[best], means),
            "samples": k, "candidates": cands,
        }


def summarize(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    """``decisions``, ``total_loss``, ``loss_per_decision``, ``mistakes`` (decisions with
    a significant loss), ``mistake_loss`` (their loss), ``agreement`` and the
    ``costliest`` five mistakes of reviewed decisions."""
    n = len(decisions)
    total = float(sum(d["loss"] for d in decisions))
    agree = sum(d["played"] == d["reviewer"] for d in decisions)
    wrong = [d for d in decisions if d["mistake"]]
    worst = sorted(wrong, key=lambda d: (-d["loss"], d.get("deal", 0), d["event"]))
    keys = ("deal", "event", "step", "seat", "played", "best", "loss", "loss_se", "why")
    return {
        "decisions": n, "total_loss": round(total, 4),
        "loss_per_decision": round(total / n, 4) if n else 0.0,
        "mistakes": len(wrong),
        "mistake_loss": round(float(sum(d["loss"] for d in wrong)), 4),
        "agreement": round(agree / n, 4) if n else None,
        "costliest": [{key: d[key] for key in keys if key in d} for d in worst[:COSTLIEST]],
    }


def review_record(record: dict[str, Any], seats: Sequence[int], reviewer: Reviewer,
                  progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Review ``seats`` of one record: ``{"decisions": [...], "seats": {seat: summary},
    "summary": ...}``. ``progress(done, total)`` is called after each decision."""
    points = decision_points(record, seats)
    reviewer.reset()
    out = []
    if progress is not None:
        progress(0, len(points))
    for j, d in enumerate(points):
        out.append(reviewer.review(d))
        if progress is not None:
            progress(j + 1, len(points))
    per_seat = {str(s): summarize([d for d in out if d["seat"] == s]) for s in seats}
    return {"decisions": out, "seats": per_seat, "summary": summarize(out)}


def review_part(record: dict[str, Any], seat: int, start: int, stop: int,
                k: int = DEFAULT_K, seed: int = 0) -> dict[str, Any]:
    """Decisions ``start..stop - 1`` of ``seat``'s review of ``record`` with the default
    reviewer (for a job that reports its progress, :mod:`sichuan_env.play.web.review`):
    ``{"total": N, "decisions": [...], "estimator": {...}}``. Each decision's samples
    depend on ``seed`` and its event only, so the parts make the whole review."""
    points = decision_points(record, [seat])
    reviewer = Reviewer(DEFAULT_AGENT, rules=validate_record(record), k=k, seed=seed)
    return {"total": len(points), "estimator": reviewer.settings(),
            "decisions": [reviewer.review(d) for d in points[start:stop]]}


def _record_agents(record: dict[str, Any]) -> list[str] | None:
    arena = record.get("arena")
    agents = arena.get("agents") if isinstance(arena, dict) else None
    return [str(a) for a in agents] if isinstance(agents, list) and len(agents) == 4 else None


def seat_table(deals: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per seat and the agent that played it, over reviewed deals (each with
    ``agents`` from its record, or None)."""
    rows: dict[tuple[int, str], list[dict[str, Any]]] = {}
    counts: dict[tuple[int, str], int] = {}
    for deal in deals:
        agents = deal.get("agents")
        for s in deal["reviewed_seats"]:
            key = (s, agents[s] if agents else "?")
            rows.setdefault(key, []).extend(d for d in deal["decisions"] if d["seat"] == s)
            counts[key] = counts.get(key, 0) + 1
    table = []
    for (s, agent), decisions in sorted(rows.items()):
        sm = summarize(decisions)
        table.append({"seat": s, "agent": agent, "deals": counts[(s, agent)],
                      "decisions": sm["decisions"], "total_loss": sm["total_loss"],
                      "loss_per_decision": sm["loss_per_decision"],
                      "mistakes": sm["mistakes"], "agreement": sm["agreement"]})
    return table


# ----------------------------------------------------------------------------- command line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


class _UsageError(Exception):
    pass


def _deal_range(text: str) -> list[int]:
    try:
        if "-" in text:
            a, b = (int(x) for x in text.split("-", 1))
        else:
            a = b = int(text)
    except ValueError:
        raise _UsageError(f"--deals must be N or A-B (deal numbers from 0), got {text!r}") from None
    if a < 0 or b < a:
        raise _UsageError(f"--deals must be N or A-B with 0 <= A <= B, got {text!r}")
    return list(range(a, b + 1))


def _seats(text: str) -> list[int]:
    if text == "all":
        return [0, 1, 2, 3]
    if text not in ("0", "1", "2", "3"):
        raise _UsageError(f"--seat must be a seat 0-3 or 'all', got {text!r}")
    return [int(text)]


def _read_deals(path: str, wanted: list[int]) -> dict[int, dict[str, Any]]:
    src = Path(path)
    if not src.is_file():
        raise _UsageError(f"no such records file: {path}")
    got: dict[int, dict[str, Any]] = {}
    count = 0
    last = wanted[-1]
    want = set(wanted)
    try:
        for n, (_, rec) in enumerate(iter_jsonl(src)):
            count = n + 1
            if n in want:
                if isinstance(rec, RecordError):
                    raise _UsageError(f"{path}: record {n}: {rec}")
                got[n] = rec
            if n >= last:
                break
    except OSError as err:
        raise _UsageError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise _UsageError(f"{path} is not a UTF-8 JSON Lines file of records") from None
    if last not in got:
        raise _UsageError(f"{path} holds {count} record(s); deal {last} is past the end (the first "
                    "is deal 0)")
    return got


def _check_out(name: str, path: str | None) -> None:
    if path is None:
        return
    out = Path(path)
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise _UsageError(f"{name} {path} is a folder; give a file name")
    if not folder.is_dir():
        raise _UsageError(f"the output folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise _UsageError(f"the output folder {folder} is not writable")


class _Progress:
    """A progress bar on stderr (tqdm when installed, else one updated line)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar: Any = None
        self.label = ""
        self.base = 0

    def start(self, label: str) -> None:
        self.label = label

    def __call__(self, done: int, total: int) -> None:
        if self.quiet:
            return
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - tqdm comes with the train extra
            print(f"\r{self.label}: {done}/{total} decisions", end="", file=sys.stderr,
                  flush=True)
            if done == total:
                print(file=sys.stderr)
            return
        if done == 0:
            if self.bar is not None:
                self.bar.close()
            self.bar = tqdm(total=total, desc=self.label, unit="decision", file=sys.stderr,
                            leave=False)
        else:
            self.bar.update(done - self.bar.n)
        if done == total:
            self.bar.close()
            self.bar = None


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    prog = "python -m sichuan_agents.review"
    p = _Parser(prog=prog, description="Review the decisions of a seat in recorded deals: "
                "each candidate's estimated points by play-outs from the seat's view, the "
                "estimated loss of the action played.")
    p.add_argument("records", help="a JSONL file of sichuan-record/1 records")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--deal", type=int, default=None, metavar="N",
                       help="the record on the N-th non-blank line, from 0 (default 0)")
    which.add_argument("--deals", default=None, metavar="A-B",
                       help="review deals A to B into one JSON (needs --json)")
    p.add_argument("--seat", default=None, help="the seat to review, 0-3, or 'all'")
    p.add_argument("--agent", default=DEFAULT_AGENT,
                   help=agents_help(f"the reviewer (default {DEFAULT_AGENT})"))
    p.add_argument("--k", type=int, default=None,
                   help=f"samples per decision (default {DEFAULT_K}, or the search spec's k)")
    p.add_argument("--seed", type=int, default=0, help="seed of the samples (default 0)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for the play-outs (default 1; the same estimates on any "
                        "number)")
    p.add_argument("--out", default=None, help="the HTML page to write (one deal)")
    p.add_argument("--json", default=None, help="the JSON to write")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    try:
        if a.seat is None:
            raise _UsageError("--seat is required (0-3 or 'all')")
        seats = _seats(a.seat)
        if a.deal is not None and a.deal < 0:
            raise _UsageError(f"--deal must be 0 or more, got {a.deal}")
        many = a.deals is not None
        numbers = _deal_range(a.deals) if many else [0 if a.deal is None else a.deal]
        if many and a.out is not None:
            raise _UsageError("--out writes one deal's page; with --deals give --json only")
        if a.out is None and a.json is None:
            raise _UsageError("give --out PAGE.html and/or --json FILE.json")
        if a.k is not None and a.k < 2:
            raise _UsageError(f"--k must be 2 or more, got {a.k}")
        if a.seed < 0:
            raise _UsageError(f"--seed must be 0 or more, got {a.seed}")
        _check_out("--out", a.out)
        _check_out("--json", a.json)
        records = _read_deals(a.records, numbers)
        started = time.perf_counter()
        reviewers: dict[str, Reviewer] = {}
        bar = _Progress(a.quiet)
        deals = []
        for n in numbers:
            rec = records[n]
            try:
                rules = validate_record(rec)
                key = json.dumps(rec["rules"], sort_keys=True)
                if key not in reviewers:
                    reviewers[key] = Reviewer(a.agent, rules=rules, k=a.k, seed=a.seed,
                                              threads=a.threads)
                reviewer = reviewers[key]
                bar.start(f"deal {n}")
                got = review_record(rec, seats, reviewer, bar)
            except (RecordError, RecordMismatch) as err:
                raise _UsageError(f"{a.records}: record {n} does not replay: {err}") from None
            except UnknownPresetError as err:
                raise _UsageError(f"{a.records}: record {n}: {err}") from None
            deals.append({"deal": n, "seed": rec.get("seed"), "agents": _record_agents(rec),
                          "reviewed_seats": seats,
                          "decisions": [dict(d, deal=n) for d in got["decisions"]],
                          "seats": got["seats"], "summary": got["summary"]})
    except _UsageError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except AgentSpecError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    reviewer = next(iter(reviewers.values()))
    head = {"format": FORMAT, "records": Path(a.records).name, "reviewer": reviewer.spec,
            "estimator": reviewer.settings()}
    if many:
        alld = [d for deal in deals for d in deal["decisions"]]
        doc = dict(head, deals=deals, table=seat_table(deals), summary=summarize(alld))
    else:
        doc = dict(head, **{k: v for k, v in deals[0].items() if k != "reviewed_seats"},
                   reviewed_seats=seats)
    try:
        if a.json is not None:
            Path(a.json).write_text(json.dumps(doc, indent=1) + "\n")
        if a.out is not None:
            from sichuan_env.records.viewer import write_replay

            n = numbers[0]
            write_replay(records[n], a.out, viewer=seats[0] if len(seats) == 1 else None,
                         title=f"{Path(a.records).name}, record {n}: review", review=doc)
    except OSError as err:
        print(f"{prog}: error: cannot write: {err.strerror or err}", file=sys.stderr)
        return 2
    try:
        _print_summary(doc, many, seconds)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left (``| head``): the files are written, stop
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 0


def _print_summary(doc: dict[str, Any], many: bool, seconds: float) -> None:
    s = doc["summary"]
    agree = "-" if s["agreement"] is None else f"{100 * s['agreement']:.0f}%"
    print(f"{s['decisions']} decisions reviewed by {doc['reviewer']} (k={doc['estimator']['k']})"
          f" in {seconds:.1f} s: estimated loss {s['total_loss']:.2f} points "
          f"({s['loss_per_decision']:.3f} per decision), {s['mistakes']} mistakes "
          f"(loss above {MISTAKE_Z:g} standard errors), agreement {agree}")
    if many:
        print(f"{'seat':>4}  {'agent':<24} {'deals':>5} {'decisions':>9} {'loss/decision':>13} "
              f"{'mistakes':>8} {'agreement':>9}")
        for r in doc["table"]:
            ag = "-" if r["agreement"] is None else f"{100 * r['agreement']:.0f}%"
            print(f"{r['seat']:>4}  {r['agent']:<24} {r['deals']:>5} {r['decisions']:>9} "
                  f"{r['loss_per_decision']:>13.3f} {r['mistakes']:>8} {ag:>9}")
    else:
        for c in s["costliest"]:
            print(f"  step {c['step']} (event {c['event']}), seat {c['seat']}: played "
                  f"{c['played']}, best {c['best']}: loss {c['loss']:.2f} ± {c['loss_se']:.2f}"
                  + (f": {c['why']}" if c.get("why") else ""))


if __name__ == "__main__":
    sys.exit(main())

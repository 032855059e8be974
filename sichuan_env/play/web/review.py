"""Reviews of finished browser deals, in the background: one worker process, a bounded queue.

"Review this deal" asks :class:`Reviews` to review the human seat's decisions of the
game's finished deal (the deal review of ``python -m sichuan_agents.review``, docs/review.md). The
review runs in a separate worker process (the play-outs are compiled code that holds the
interpreter lock: in a thread they would stall every other game), at most one review at a
time, the others queued (at most ``max_queued``; more are refused, 503). It goes a few
decisions at a time, so the page can show how far it is; a finished review is kept with
its game until the next deal. Its cost is bounded by the settings: ``k`` samples per
decision (default 256: well within a minute for one seat of one deal on 2 cores).

The reviewer is named by a string, :data:`REVIEWER` (``module:function``), and imported in
the worker process only: ``sichuan_env`` imports nothing from ``agents``. It is called as
``fn(record, seat, start, stop, k=k, seed=seed)`` and returns ``{"total": N, "decisions":
[...], "estimator": {...}}`` for the seat's reviewed decisions ``start..stop - 1``.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from sichuan_env.play.web.table import GameError

__all__ = ["REVIEWER", "ReviewJob", "Reviews"]

log = logging.getLogger("sichuan_env.play.web")

#: The reviewer the worker process imports (see the module docstring).
REVIEWER = "sichuan_agents.review:review_part"
#: Decisions reviewed per call of the worker (the page's progress moves by this much).
CHUNK = 2


def _call(target: str, *args: Any, **kwargs: Any) -> Any:
    """In the worker process: import ``module:function`` and call it."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


@dataclass
class ReviewJob:
    """The review of one deal of one game: ``status`` is ``queued``, ``running``,
    ``done`` or ``failed``; ``done`` of ``total`` decisions reviewed."""

    deal: int
    seat: int
    status: str = "queued"
    done: int = 0
    total: int | None = None
    decisions: list[dict[str, Any]] = field(default_factory=list)
    estimator: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    task: Any = None

    def public(self) -> dict[str, Any]:
        """What ``GET /api/review`` sends."""
        out: dict[str, Any] = {"deal": self.deal, "status": self.status, "done": self.done,
                               "total": self.total}
        if self.error:
            out["error"] = self.error
        return out

    def document(self, reviewer: str = "search") -> dict[str, Any]:
        """The finished review as ``sichuan-review/1`` data for the replay viewer."""
        return {"format": "sichuan-review/1", "reviewer": reviewer,
                "estimator": self.estimator, "deal": self.deal,
                "reviewed_seats": [self.seat], "decisions": self.decisions}


class Reviews:
    """The review jobs of a server, by game id (see the module docstring)."""

    def __init__(self, *, k: int = 256, seed: int = 0, max_queued: int = 16,
                 reviewer: str = REVIEWER) -> None:
        self.k = k
        self.seed = seed
        self.max_queued = max_queued
        self.reviewer = reviewer
        self.jobs: dict[str, ReviewJob] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._turn: asyncio.Lock | None = None

    def job(self, game_id: str, deal: int) -> ReviewJob | None:
        """The job of ``game_id``'s deal ``deal`` (None: none, or one of an older deal)."""
        job = self.jobs.get(game_id)
        return job if job is not None and job.deal == deal else None

    def waiting(self) -> int:
        return sum(j.status in ("queued", "running") for j in self.jobs.values())

    def start(self, game_id: str, deal: int, seat: int, record: dict[str, Any]) -> ReviewJob:
        """The job of this deal, started now unless it exists (503 when the queue is
        full)."""
        job = self.job(game_id, deal)
        if job is not None and job.status != "failed":
            return job
        if self.waiting() >= self.max_queued:
            raise GameError(f"the server is reviewing {self.max_queued} deals already; try "
                            "again in a minute", 503)
        job = ReviewJob(deal, seat)
        self.jobs[game_id] = job
        job.task = asyncio.get_running_loop().create_task(self._run(job, record))
        return job

    def forget(self, live: set[str]) -> None:
        """Drop the jobs of games that are gone."""
        for gid in [g for g in self.jobs if g not in live]:
            job = self.jobs.pop(gid)
            if job.task is not None and job.status == "queued":
                job.task.cancel()

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    async def _run(self, job: ReviewJob, record: dict[str, Any]) -> None:
        if self._turn is None:
            self._turn = asyncio.Lock()
        try:
            async with self._turn:  # one review at a time
                job.status = "running"
                loop = asyncio.get_running_loop()
                start = 0
                while job.total is None or start < job.total:
                    part = await loop.run_in_executor(
                        self._executor(), _call, self.reviewer, record, job.seat, start,
                        start + CHUNK, self.k, self.seed)
                    job.total = int(part["total"])
                    job.estimator = part["estimator"]
                    job.decisions.extend(part["decisions"])
                    start += CHUNK
                    job.done = min(start, job.total)
                job.status = "done"
        except asyncio.CancelledError:
            job.status = "failed"
            job.error = "cancelled"
            raise
        except BrokenProcessPool as err:  # the worker died: a new one for the next review
            self._pool = None
            log.error("review of deal %s failed: the worker process died: %s", job.deal, err)
            job.status = "failed"
            job.error = "the review failed (the error is logged)"
        except Exception as err:  # a fault of the review: this job fails, the server goes on
            log.error("review of deal %s failed: %s: %s", job.deal, type(err).__name__, err,
                      exc_info=err)
            job.status = "failed"
            job.error = "the review failed (the error is logged)"

    def close(self) -> None:
        """Stop the worker process."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

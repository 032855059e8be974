"""Independent jobs as Ray tasks: over a cluster, or a Ray instance on this machine's cores.

The search and rollout teachers' shards and the arena's slices of walls need nothing from
each other, so they spread over any number of machines. :func:`map_jobs` runs
``fn(*job)`` for every job and yields ``(index, result)`` as each finishes:

* ``address=None, workers=1``: in this process, one after the other (no Ray);
* ``address=None, workers=N``: a local Ray instance with ``N`` CPUs, one task per CPU;
* ``address="auto"`` or ``"HOST:PORT"``: the Ray cluster there (each node needs the project
  installed, as for ``train.py --backend rllib --address``);
* ``address="local"``: a new local Ray instance with ``workers`` CPUs (``1``: one), also
  where N is 1 -- the Ray path on one machine, for tests. (Ray 2.60 removed Ray's local
  mode, ``ray.init(local_mode=True)``.)

A job's result is the same wherever it runs (the jobs are seeded, not scheduled), so a
caller that orders the results by index gets what one process would.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any


def _project_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def address_problem(address: str) -> str | None:
    """What is wrong with a ``--address`` (one line), or None (``auto`` and ``local`` are
    left to Ray)."""
    from sichuan_agents.training.cluster import address_problem as problem

    return problem(address)


def start_ray(address: str | None, workers: int) -> bool:
    """Join (``address``) or start (``workers`` CPUs) Ray unless it already runs here;
    True when this call started it (the caller then shuts it down)."""
    import ray

    if ray.is_initialized():
        return False
    # the workers import this checkout's packages, as the driver does
    env = {"env_vars": {"PYTHONPATH": os.pathsep.join(
        p for p in (_project_root(), os.environ.get("PYTHONPATH", "")) if p)}}
    common = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False,
              "runtime_env": env}
    if address is not None and address != "local":
        from sichuan_agents.training.cluster import connect

        connect(address, **common)
    else:  # a new instance, never a cluster that `ray start` left running here
        ray.init(address="local", num_cpus=max(1, workers), **common)
    return True


def cluster_cpus() -> int:
    """CPUs of the running Ray instance or cluster."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def map_jobs(fn: Callable[..., Any], jobs: Sequence[tuple], *, address: str | None = None,
             workers: int = 1) -> Iterator[tuple[int, Any]]:
    """``(index, fn(*jobs[index]))`` for every job, in the order they finish (see the
    module's docstring for where they run). ``fn`` must be importable by the workers (a
    module-level function)."""
    if address is None and workers <= 1:
        for i, job in enumerate(jobs):
            yield i, fn(*job)
        return
    import ray

    started = start_ray(address, workers)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(fn)
        pending = {remote.remote(*job): i for i, job in enumerate(jobs)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)
    finally:
        if started:
            ray.shutdown()


def ordered(fn: Callable[..., Any], jobs: Sequence[tuple], *, address: str | None = None,
            workers: int = 1) -> list[Any]:
    """The results of :func:`map_jobs` in the order of ``jobs``."""
    out: list[Any] = [None] * len(jobs)
    for i, res in map_jobs(fn, jobs, address=address, workers=workers):
        out[i] = res
    return out

"""Shards of training data made as independent jobs, on one process or a Ray cluster.

A teacher (:mod:`sichuan_agents.training.search_teacher`,
:mod:`sichuan_agents.training.rollout_teacher`)
makes a shard from a seed alone, so many seeds spread over many cores (Ray tasks through
:func:`sichuan_agents.distributed.map_jobs`). :func:`run_shards`:

* writes each shard as it finishes, to a temporary name in its folder and then renamed
  (``os.replace``, atomic): a reader never finds a half-written shard, and a crash or
  Ctrl-C leaves only finished shards (and perhaps a temporary file, removed next time);
* skips the seeds whose shard is already there, so the same command resumes a stopped
  run without redoing a finished shard;
* reports each shard with the samples per second of the whole run (all its workers).

A shard is the same whether a Ray worker or this process made it (the teachers are
seeded), so a cluster run writes the samples of the one-process command.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

TMP_SUFFIX = ".tmp"


def shard_path(folder: str | Path, seed: int) -> Path:
    """Where the shard of ``seed`` lives in ``folder``."""
    return Path(folder) / f"s{seed}.npz"


def write_atomic(path: str | Path, data: dict[str, np.ndarray]) -> Path:
    """Save ``data`` as a compressed ``.npz`` at ``path`` (its folder made): written to a
    temporary file beside it, then renamed over ``path`` in one step."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")
    try:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _make(make: Callable[..., dict[str, np.ndarray]], seed: int,
          kwargs: dict[str, Any]) -> dict[str, np.ndarray]:
    from sichuan_agents.arena import limit_blas_threads

    limit_blas_threads(1)
    return make(seed=seed, **kwargs)


def run_shards(make: Callable[..., dict[str, np.ndarray]], seeds: Sequence[int],
               folder: str | Path, kwargs: dict[str, Any], *, address: str | None = None,
               workers: int = 1, log: Callable[[str], None] | None = print) -> list[Path]:
    """``make(seed=s, **kwargs)`` for every seed ``s`` whose shard (:func:`shard_path`) is
    not in ``folder`` yet, as Ray tasks (``address``/``workers``: see
    :func:`sichuan_agents.distributed.map_jobs`); each shard written (:func:`write_atomic`) as it
    finishes. ``make`` must be a module-level function. Returns every seed's path."""
    from sichuan_agents.distributed import cluster_cpus, map_jobs

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f".s*.npz.*{TMP_SUFFIX}"):  # left by a killed run
        stale.unlink()
    todo = [int(s) for s in seeds if not shard_path(folder, s).exists()]
    if log is not None and len(todo) < len(seeds):
        log(f"{len(seeds) - len(todo)} of {len(seeds)} shards already in {folder}: skipped")
    t0 = time.perf_counter()
    samples = 0
    first = True
    for done, (i, data) in enumerate(
            map_jobs(_make, [(make, s, kwargs) for s in todo], address=address,
                     workers=workers), 1):
        path = write_atomic(shard_path(folder, todo[i]), data)
        n = int(data["returns"].shape[0])
        samples += n
        if log is not None:
            if first:
                where = ("this process" if address is None and workers <= 1
                         else f"{cluster_cpus()} Ray CPUs")
                first = False
            secs = time.perf_counter() - t0
            log(f"shard {done}/{len(todo)} {path.name}: {n} samples; {samples} in "
                f"{secs:.0f} s, {samples / max(secs, 1e-9):.2f} samples/s on {where}")
    return [shard_path(folder, s) for s in seeds]

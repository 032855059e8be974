"""Search values per second: one process against N Ray workers (the same shards).

    python benchmarks/teacher_workers.py [--workers 2] [--shards 4] [--deals 2] [--k 32]
        [--teacher search|rollout] [--address HOST:PORT]

Makes ``--shards`` shards (seeds 7000 on) of ``sichuan_agents.training.search_teacher`` (or the
compiled rollout teacher) twice into fresh folders through
:func:`sichuan_agents.training.shards.run_shards`, after a warm-up shard in this process that
compiles the kernels: first in this process (the one-process command, no Ray), then with
``--workers`` local Ray workers (Ray's start-up included); checks that both wrote the same
samples and prints samples per wall-clock second of each and their ratio. ``--address``
measures a cluster instead of the local ``--workers``. Wall-clock: on a shared machine the
ratio says what the other jobs left, not what the code can do.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sichuan_agents.training import rollout_teacher, search_teacher  # noqa: E402
from sichuan_agents.training.shards import run_shards  # noqa: E402


def measure(make, kwargs: dict, seeds: list[int], folder: Path, workers: int,
            address: str | None) -> tuple[float, int]:
    t0 = time.perf_counter()
    paths = run_shards(make, seeds, folder, kwargs, address=address, workers=workers,
                       log=None)
    secs = time.perf_counter() - t0
    n = 0
    for p in paths:
        with np.load(p) as d:
            n += int(d["returns"].shape[0])
    return secs, n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Teacher samples per second, 1 vs N Ray workers.")
    p.add_argument("--teacher", default="search", choices=["search", "rollout"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--deals", type=int, default=2, help="deals per shard")
    p.add_argument("--k", type=int, default=32, help="search: sampled deals per decision")
    p.add_argument("--address", default=None)
    a = p.parse_args(argv)
    if a.workers < 1 or a.shards < 1 or a.deals < 1 or a.k < 2:
        print("error: --workers, --shards, --deals must be >= 1 and --k >= 2",
              file=sys.stderr)
        return 2
    if a.teacher == "search":
        make, kwargs = search_teacher.generate, {"deals": a.deals, "k": a.k}
    else:
        make, kwargs = rollout_teacher.generate, {"deals": a.deals, "compiled": True}
    make(seed=1, **{**kwargs, "deals": 1})  # warm-up: compile (the workers load the cache)
    seeds = list(range(7000, 7000 + a.shards))
    with tempfile.TemporaryDirectory() as tmp:
        one = measure(make, kwargs, seeds, Path(tmp) / "one", 1, None)
        many = measure(make, kwargs, seeds, Path(tmp) / "many", a.workers, a.address)
        same = all(
            all(np.array_equal(x[k], y[k], equal_nan=True) for k in x.files)
            for x, y in ((np.load(Path(tmp) / "one" / f"s{s}.npz"),
                          np.load(Path(tmp) / "many" / f"s{s}.npz")) for s in seeds))
    where = a.address or f"{a.workers} local workers"
    print(f"{a.teacher}: one process {one[1]} samples in {one[0]:.1f} s "
          f"({one[1] / one[0]:.2f}/s); {where} {many[1]} in {many[0]:.1f} s "
          f"({many[1] / many[0]:.2f}/s); ratio {(many[1] / many[0]) / (one[1] / one[0]):.2f}; "
          f"the same samples: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

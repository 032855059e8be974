"""Throughput of the hand functions.

    python benchmarks/hands.py [--n 100000]

Prints hands per second of the batched path on random hands (13 or 14 tiles dealt from a
shuffled 108-tile wall, no melds, random void; plus one row with 1-4 random melds),
microseconds per call of the single-hand API, the table build time (fresh temporary
cache) and the time of ``import sichuan_env.core.hands`` plus the first call, when the hand
kernels compile and with a warm cache (each in a subprocess). Targets on the 2-core
reference machine: is_complete >= 2e6/s, waits >= 5e5/s, shanten >= 2e5/s, shanten with
1-4 melds >= 5e5/s (the segment tables; before them, a search over ~6,400 arrangements
per suit, ~4e4/s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sichuan_env.core import hand_kernels, hands  # noqa: E402


def deal(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """(n, 27) int8 counts of `size` tiles from a shuffled wall each."""
    kinds = np.argsort(rng.random((n, 108)), axis=1)[:, :size] // 4
    counts = np.zeros((n, 27), np.int8)
    np.add.at(counts, (np.repeat(np.arange(n), size), kinds.ravel()), 1)
    return counts


def with_melds(
    rng: np.random.Generator, n: int, extra: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Standing hands of 13 - 3k (+ extra) tiles with k = 1..4 random pungs/kongs."""
    k = rng.integers(1, 5, n)
    mk = np.zeros((n, 27), np.int8)
    order = np.argsort(rng.random((n, 27)), axis=1)
    for j in range(4):  # at most four columns: a loop over melds, not over hands
        rows = np.flatnonzero(k > j)
        mk[rows, order[rows, j]] = rng.integers(1, 3, rows.size)
    room = (4 - np.array([0, 3, 4])[mk]).astype(np.int64)
    weights = rng.random((n, 108)) + (np.arange(108) % 4 >= room.repeat(4, axis=1)) * 2
    size = 13 - 3 * k + extra
    picked = np.argsort(weights, axis=1) // 4
    c = np.zeros((n, 27), np.int8)
    for s in (1 + extra, 4 + extra, 7 + extra, 10 + extra):
        rows = np.flatnonzero(size == s)
        np.add.at(c, (np.repeat(rows, s), picked[rows, :s].ravel()), 1)
    return c, mk


def complete_hands(rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, 27) complete 14-tile concealed hands: four random sets and a pair, redrawn
    where a kind would exceed four copies."""
    shapes = np.zeros((48, 27), np.int8)
    for s in range(3):
        for r in range(9):
            shapes[s * 16 + r, s * 9 + r] = 3
        for r in range(7):
            shapes[s * 16 + 9 + r, s * 9 + r : s * 9 + r + 3] = 1
    out = np.zeros((0, 27), np.int8)
    while len(out) < n:
        m = 2 * (n - len(out))
        c = shapes[rng.integers(0, 48, (m, 4))].sum(axis=1, dtype=np.int8)
        c[np.arange(m), rng.integers(0, 27, m)] += 2
        out = np.concatenate([out, c[(c <= 4).all(axis=1)]])
    return out[:n]


def rate(fn, n: int, repeat: int = 5) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return n / best


def micro(fn, repeat: int = 3000) -> float:
    fn()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat * 1e6


def subprocess_time(code: str, env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="hands per batch")
    args = parser.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    hand_kernels.hand_tables()  # load the tables before timing
    hand_kernels.shanten_tables()

    c14, c13 = deal(rng, n, 14), deal(rng, n, 13)
    none = np.zeros((n, 27), np.int8)
    void = rng.integers(-1, 3, n).astype(np.int8)
    n_melds = np.zeros(n, np.int8)
    cm, mkm = with_melds(rng, n)
    cm14, mkm14 = with_melds(rng, n, extra=1)
    done = complete_hands(rng, n)
    flags = np.zeros((5, n), bool)
    no_void = np.full(n, -1, np.int8)

    rows = [
        ("is_complete (14 tiles)", rate(lambda: hands.batch_is_complete(c14, n_melds, void), n)),
        ("waits (13 tiles)", rate(lambda: hands.batch_wait_mask(c13, none, void), n)),
        ("shanten (13 tiles)", rate(lambda: hands.batch_shanten(c13, none, void), n)),
        ("shanten (14 tiles)", rate(lambda: hands.batch_shanten(c14, none, void), n)),
        ("shanten (1-4 melds)", rate(lambda: hands.batch_shanten(cm, mkm, void), n)),
        ("shanten (1-4 melds, +1 tile)",
         rate(lambda: hands.batch_shanten(cm14, mkm14, void), n)),
        ("waits (1-4 melds)", rate(lambda: hands.batch_wait_mask(cm, mkm, void), n)),
        ("fans + value (complete)", rate(lambda: hands.batch_value(
            hands.batch_fans(done, none, n_melds, no_void, *flags), 3), n)),
        ("theoretical_max (13 tiles)",
         rate(lambda: hands.batch_theoretical_max(c13, none, void, 3), n)),
    ]
    print(f"batched path, {n:,} random hands, one process")
    print(f"  {'function':<30}{'hands/s':>14}")
    for name, r in rows:
        print(f"  {name:<30}{r:>14,.0f}")

    one = [
        ("is_complete", lambda: hands.is_complete("11123m456p789p55s5s")),
        ("waits", lambda: hands.waits("11123m456p789p55s")),
        ("shanten", lambda: hands.shanten("11123m456p789p55s")),
        ("shanten (melds)", lambda: hands.shanten("11234m55s", [("pung", "9p"),
                                                               ("melded_kong", "7m")])),
        ("score", lambda: hands.score("11123m456p789p55s", (), "5s", None)),
        ("theoretical_max", lambda: hands.theoretical_max("11123m456p789p55s")),
        ("batch_shanten, B=1", lambda: hands.batch_shanten(c13[:1], none[:1], void[:1])),
        ("batch_wait_mask, B=1", lambda: hands.batch_wait_mask(c13[:1], none[:1], void[:1])),
    ]
    print("\nsingle call (string input parsed each time)")
    print(f"  {'function':<28}{'us/call':>14}")
    for name, fn in one:
        print(f"  {name:<28}{micro(fn):>14.1f}")

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, SICHUAN_ENV_CACHE=tmp, PYTHONPATH=str(ROOT))
        build = subprocess_time(
            "import time; t = time.perf_counter()\n"
            "from sichuan_env.core.tables import load_tables; load_tables(rebuild=True)\n"
            "print(time.perf_counter() - t)", env)
        first_call = ("import time; t = time.perf_counter()\n"
                      "import sichuan_env.core.hands as h; h.shanten('11123m456p789p55s')\n"
                      "print(time.perf_counter() - t)")
        compiling = subprocess_time(first_call, env)  # the hand kernels compile into the cache
        first = subprocess_time(first_call, env)
        bare = subprocess_time(
            "import time; t = time.perf_counter()\n"
            "import sichuan_env\nprint(time.perf_counter() - t)", env)
    print("\ntables")
    print(f"  build (fresh cache dir)                 {build:8.2f} s")
    print(f"  import sichuan_env.core.hands + first call   {compiling:8.3f} s"
          "  (kernels compile, once)")
    print(f"  import sichuan_env.core.hands + first call   {first:8.3f} s  (warm cache)")
    print(f"  import sichuan_env (no tables loaded)   {bare:8.3f} s")


if __name__ == "__main__":
    main()

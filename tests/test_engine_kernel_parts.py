"""Parts of the compiled engine that have a plain numpy equivalent."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from sichuan_env.core import engine_kernels as ek
from sichuan_env.core.seeding import GOLDEN

_U64 = hs.integers(0, 2**64 - 1)
# keys with many ties (a few values, spread over the top byte or not) and arbitrary keys
_KEYS = hs.one_of(
    hs.lists(_U64, max_size=200),
    hs.lists(hs.sampled_from([0, 1, 2**56, 2**56 + 1, 2**63, 2**64 - 1]), max_size=200),
    hs.lists(hs.integers(0, 3).map(lambda x: x << 56), max_size=200),
)


@settings(max_examples=300, deadline=None)
@given(_KEYS)
def test_stable_order_is_numpy_stable_argsort(keys):
    arr = np.array(keys, dtype=np.uint64)
    got = ek.stable_order(arr)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.argsort(arr, kind="stable"))


def test_stable_order_of_deal_keys():
    """The keys a deal sorts (splitmix of consecutive counters) over many tables."""
    for seed in range(200):
        base = int(ek.splitmix_word(np.uint64(seed)))
        golden = int(GOLDEN)
        keys = np.array([ek.splitmix_word(np.uint64((base + i * golden) % 2**64))
                         for i in range(108)], np.uint64)
        np.testing.assert_array_equal(ek.stable_order(keys), np.argsort(keys, kind="stable"))

"""The rare-term joiners test membership in the population with one mask per search (issue 19): the same seqs,
in the same order, as the binary search they replace, for dense, sparse, empty and out-of-range inputs."""

from __future__ import annotations

import random

import numpy as np
from undercroft_store.search.postings import _membership, _within


def _sorted(values: set[int]) -> np.ndarray:
    return np.array(sorted(values), dtype=np.int64)


def test_the_mask_equals_the_binary_search() -> None:
    rng = random.Random(23)
    for _ in range(300):
        span = rng.choice((10, 1000, 50_000))
        population = _sorted({rng.randrange(span) for _ in range(rng.randrange(0, 400))})
        holders = _sorted({rng.randrange(-5, span + 200) for _ in range(rng.randrange(0, 600))})
        assert _membership(population)(holders).tolist() == _within(holders, population).tolist()


def test_a_sparse_population_keeps_the_binary_search() -> None:
    population = np.array([1, 2, 1 << 40], dtype=np.int64)  # a mask up to 2**40 would be a terabyte
    holders = np.array([0, 2, 5, 1 << 40], dtype=np.int64)
    assert _membership(population)(holders).tolist() == [2, 1 << 40]


def test_a_dense_population_is_masked() -> None:
    population = np.arange(0, 20_000, 2, dtype=np.int64)
    holders = np.arange(-3, 30_000, 3, dtype=np.int64)
    within = _membership(population)
    assert within.__name__ == "within"  # the mask, not the fallback
    assert within(holders).tolist() == [s for s in holders.tolist() if 0 <= s < 20_000 and s % 2 == 0]

"""The decrypt-once RAM postings of one vault: term → seqs of the verified drawers holding it.

A sealed vault keeps no lexical index on disk, so a candidate pool drawn by cosine alone lets BM25 see only
what the cosine stage admits: a drawer whose rare words answer the query but whose cosine rank falls below
the hydration size never reaches fusion. `Postings` is built from the `Lexicon` entries of EVERY drawer in
the vault (each HMAC-verified and decrypted on the way in, through `VaultStore.hydrate_many`), held in RAM
only and dropped with the store generation it was built under — exactly the embedding cache's rule.

Its one use is `Postings.rare_holders`: the scope's drawers holding the query's rarest terms, taken rarest
term first while they fit a budget, join the cosine candidates (a term held by more drawers than the budget
left is common, not evidence of a particular drawer, and stops the walk).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from undercroft_store.search.lexicon import BagSource, Lexicon

__all__ = ["Postings"]


@dataclass(frozen=True, slots=True)
class Postings:
    """Term id (the lexicon's) → ascending seqs holding it, for one store generation, as one CSR layout."""

    generation: int
    epoch: int
    starts: NDArray[np.intp]
    holders_by_term: NDArray[np.int64]

    @classmethod
    def build(cls, lexicon: Lexicon, source: BagSource, seqs: NDArray[np.int64]) -> Postings:
        """Fill ``lexicon`` for every seq of ``seqs`` (ascending; verified reads) and invert it."""
        generation = source.generation
        entries, _ = lexicon.entries(source, seqs.tolist())
        held = [(seq, entry) for seq, entry in zip(seqs.tolist(), entries, strict=True) if entry is not None]
        pool = lexicon.pool([entry for _, entry in held])
        owners = np.fromiter((seq for seq, _ in held), dtype=np.int64, count=len(held))[pool.owner]
        order = np.argsort(pool.ids, kind="stable")  # stable: each term's seqs stay ascending
        counts = np.bincount(pool.ids, minlength=len(lexicon.terms))
        starts = np.concatenate(([0], np.cumsum(counts))).astype(np.intp)
        return cls(generation, lexicon.epoch, starts, np.ascontiguousarray(owners[order]))

    def current(self, lexicon: Lexicon, generation: int) -> bool:
        """Whether these postings still speak ``lexicon``'s term ids for the store at ``generation``."""
        return self.generation == generation and self.epoch == lexicon.epoch

    def holders(self, term_id: int) -> NDArray[np.int64]:
        """The seqs holding ``term_id``, ascending (none for an id interned after the build)."""
        if not 0 <= term_id < len(self.starts) - 1:
            return np.zeros(0, dtype=np.int64)
        return self.holders_by_term[self.starts[term_id] : self.starts[term_id + 1]]

    def rare_holders(self, term_ids: Sequence[int], population: NDArray[np.int64], budget: int) -> NDArray[np.int64]:
        """Members of ``population`` (ascending) holding the rarest of ``term_ids``, rarest term first (within
        the population; ties in the order given), while each term's holders fit what is left of ``budget``;
        ascending seqs. Nothing here depends on drawers outside the population, so a pinned ranking's
        joiners do not move when later drawers arrive."""
        found: list[NDArray[np.int64]] = []
        left = budget
        holding = [_within(self.holders(term_id), population) for term_id in dict.fromkeys(term_ids)]
        for held in sorted((held for held in holding if len(held)), key=len):
            if len(held) > left:
                break
            found.append(held)
            left -= len(held)
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


def _within(seqs: NDArray[np.int64], population: NDArray[np.int64]) -> NDArray[np.int64]:
    """Those of ``seqs`` in ``population`` (both ascending)."""
    if len(seqs) == 0 or len(population) == 0:
        return seqs[:0]
    rows = np.minimum(np.searchsorted(population, seqs), len(population) - 1)
    kept: NDArray[np.int64] = seqs[population[rows] == seqs]
    return kept

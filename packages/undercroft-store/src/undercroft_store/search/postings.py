"""The decrypt-once RAM postings of one vault: term → seqs of the verified drawers holding it.

A sealed vault keeps no lexical index on disk, so a candidate pool drawn by cosine alone lets BM25 see only
what the cosine stage admits: a drawer whose rare words answer the query but whose cosine rank falls below
the hydration size never reaches fusion. `Postings` is built from the `Lexicon` entries of EVERY drawer in
the vault (each HMAC-verified and decrypted on the way in, through `VaultStore.hydrate_many`), held in RAM
only. When the store generation moves, `Postings.refresh` diffs the drawers' tags against those it was built
under: new and changed drawers are re-read verified and re-tokenised into an overlay, vanished ones voided; a
diff (or an overlay) past a quarter of the vault rebuilds the layout from the lexicon instead.

Its one use is `Postings.rare_holders`: the scope's drawers holding the query's rarest terms, taken rarest
term first while they fit a budget, join the cosine candidates (a term held by more drawers than the budget
left is common, not evidence of a particular drawer, and stops the walk).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from undercroft_store.search._internal.change_feed import change_feed
from undercroft_store.search._internal.row_marks import REBUILD_SHARE, too_many
from undercroft_store.search.lexicon import BagSource, LexicalEntry, Lexicon

__all__ = ["Postings"]

_CELL_SHIFT = 32  # a lexicon cell packs (term id << 32 | count)


class Postings:
    """Term id (the lexicon's) → ascending seqs holding it: one CSR layout built for a store generation, plus
    an overlay of the drawers written, changed or deleted since (merged back by a rebuild past a quarter)."""

    def __init__(
        self,
        generation: int,
        epoch: int,
        starts: NDArray[np.intp],
        holders_by_term: NDArray[np.int64],
        marks: dict[int, bytes] | None = None,
        position: int | None = None,
    ) -> None:
        """The CSR layout built under ``generation`` and the lexicon ``epoch`` (its ``marks`` then, and the
        handle's change-feed ``position``)."""
        self.generation = generation
        self._position = position
        self.epoch = epoch
        self.starts = starts
        self.holders_by_term = holders_by_term
        self._marks = marks if marks is not None else {}
        self._void: set[int] = set()  # seqs whose CSR cells no longer count
        self._void_sorted = np.zeros(0, dtype=np.int64)
        self._overlay: dict[int, NDArray[np.int64]] = {}  # seq → the term ids it holds now
        self._overlay_terms: dict[int, set[int]] = {}  # term id → overlay seqs holding it
        self.patched = 0
        # The last read-only population and its membership test (`_membership`): a scope answer is the same
        # read-only array on every search of a generation, so its mask is built once, not per query.
        self._membership: tuple[NDArray[np.int64], Callable[[NDArray[np.int64]], NDArray[np.int64]]] | None = None

    @classmethod
    def build(cls, lexicon: Lexicon, source: BagSource, seqs: NDArray[np.int64]) -> Postings:
        """Fill ``lexicon`` for every seq of ``seqs`` (ascending; verified reads) and invert it."""
        generation = source.generation
        feed = change_feed(source)
        position = feed.since(None)[1] if feed is not None else None
        entries, _ = lexicon.entries(source, seqs.tolist())
        marks = lexicon.marks
        held = [(seq, entry) for seq, entry in zip(seqs.tolist(), entries, strict=True) if entry is not None]
        pool = lexicon.pool([entry for _, entry in held])
        owners = np.fromiter((seq for seq, _ in held), dtype=np.int64, count=len(held))[pool.owner]
        order = np.argsort(pool.ids, kind="stable")  # stable: each term's seqs stay ascending
        counts = np.bincount(pool.ids, minlength=len(lexicon.terms))
        starts = np.concatenate(([0], np.cumsum(counts))).astype(np.intp)
        return cls(generation, lexicon.epoch, starts, np.ascontiguousarray(owners[order]), marks, position)

    def refresh(self, lexicon: Lexicon, source: BagSource, seqs: NDArray[np.int64]) -> Postings:
        """These postings brought to the source's current generation: the drawers whose tag moved since they
        were built are re-read verified (through ``lexicon``) and their cells replaced; vanished drawers are
        dropped. A rebuild over ``seqs`` (every drawer, ascending) when the diff is too large."""
        generation = source.generation
        lexicon.sync(source)
        if self.epoch != lexicon.epoch or not lexicon.marks:
            return Postings.build(lexicon, source, seqs)
        if self.generation == generation:
            return self
        old, marks = self._marks, lexicon.marks
        feed = change_feed(source)
        named, position = feed.since(self._position) if feed is not None else (None, None)
        # The drawers the handle's change feed names (else every drawer) whose tag moved since the build.
        candidates = old.keys() | marks.keys() if named is None else named
        touched = sorted(seq for seq in candidates if old.get(seq) != marks.get(seq))
        if too_many(len(touched), len(marks)):
            return Postings.build(lexicon, source, seqs)
        present = [seq for seq in touched if seq in marks]
        entries, _ = lexicon.entries(source, present)  # verified reads of the new and changed drawers
        if self.epoch != lexicon.epoch:  # the read raced another write and the lexicon rebuilt
            return Postings.build(lexicon, source, seqs)
        fresh = dict(zip(present, entries, strict=True))
        for seq in touched:
            self._replace(seq, fresh.get(seq))
        self._void_sorted = np.fromiter(sorted(self._void), dtype=np.int64, count=len(self._void))
        # Advanced together with the marks: a refresh that raised above leaves both where they were.
        self.generation, self._marks, self._position = generation, marks, position
        self.patched += len(touched)
        if len(self._void) > REBUILD_SHARE * len(marks):  # every patched seq is voided in the layout
            return Postings.build(lexicon, source, seqs)
        return self

    def _replace(self, seq: int, entry: LexicalEntry | None) -> None:
        for term_id in self._overlay.pop(seq, np.zeros(0, dtype=np.int64)).tolist():
            self._overlay_terms[term_id].discard(seq)
        self._void.add(seq)  # whatever the CSR held for it is stale (or it never held it)
        if entry is not None:
            ids = np.frombuffer(entry.cells, dtype=np.int64) >> _CELL_SHIFT
            self._overlay[seq] = ids
            for term_id in ids.tolist():
                self._overlay_terms.setdefault(term_id, set()).add(seq)

    def current(self, lexicon: Lexicon, generation: int) -> bool:
        """Whether these postings still speak ``lexicon``'s term ids for the store at ``generation``."""
        return self.generation == generation and self.epoch == lexicon.epoch

    def holders(self, term_id: int) -> NDArray[np.int64]:
        """The seqs holding ``term_id``, ascending (none for an id never filed)."""
        if 0 <= term_id < len(self.starts) - 1:
            base = self.holders_by_term[self.starts[term_id] : self.starts[term_id + 1]]
        else:
            base = np.zeros(0, dtype=np.int64)
        if len(self._void_sorted):
            base = base[~np.isin(base, self._void_sorted)]
        extra = self._overlay_terms.get(term_id)
        if extra:
            # Every overlay seq is voided in the layout above, so the two never share a seq: a concatenation,
            # sorted only when the overlay reaches below the layout's last holder (appends do not).
            added = np.sort(np.fromiter(extra, dtype=np.int64, count=len(extra)))
            low = bool(len(base)) and added[0] < base[-1]
            base = np.concatenate((base, added))
            if low:
                base.sort(kind="stable")
        return base

    def rare_holders(self, term_ids: Sequence[int], population: NDArray[np.int64], budget: int) -> NDArray[np.int64]:
        """Members of ``population`` (ascending) holding the rarest of ``term_ids``, rarest term first (within
        the population; ties in the order given), while each term's holders fit what is left of ``budget``;
        ascending seqs. Nothing here depends on drawers outside the population, so a pinned ranking's
        joiners do not move when later drawers arrive."""
        found: list[NDArray[np.int64]] = []
        left = budget
        within = self._membership_of(population)
        holding = [within(self.holders(term_id)) for term_id in dict.fromkeys(term_ids)]
        for held in sorted((held for held in holding if len(held)), key=len):
            if len(held) > left:
                break
            found.append(held)
            left -= len(held)
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def _membership_of(self, population: NDArray[np.int64]) -> Callable[[NDArray[np.int64]], NDArray[np.int64]]:
        """`_membership` of ``population``, remembered while it is the same read-only array (nothing can change
        its seqs under the memo; a writeable one is built for this search alone)."""
        held = self._membership
        if held is not None and held[0] is population:
            return held[1]
        within = _membership(population)
        if not population.flags.writeable:
            self._membership = (population, within)
        return within


#: A membership mask is built when the population's largest seq is at most this many times its size (plus
#: `_MASK_SLACK`): a byte per seq up to it. A sparser population keeps the binary searches.
_MASK_SPREAD = 4
_MASK_SLACK = 1 << 16


def _membership(population: NDArray[np.int64]) -> Callable[[NDArray[np.int64]], NDArray[np.int64]]:
    """`_within` against ``population`` for many holder lists: one mask over the seqs (built once per search)
    and a gather per list, instead of a binary search of every holder (a common term's holders are most of the
    vault: 0.5 ms of a 10k search went to those searches). Same seqs, same order."""
    if len(population) == 0 or int(population[0]) < 0:
        return partial(_within, population=population)
    top = int(population[-1])
    if top > _MASK_SPREAD * len(population) + _MASK_SLACK:
        return partial(_within, population=population)
    mask = np.zeros(top + 1, dtype=bool)
    mask[population] = True

    def within(seqs: NDArray[np.int64]) -> NDArray[np.int64]:
        inside = seqs[(seqs >= 0) & (seqs <= top)]
        kept: NDArray[np.int64] = inside[mask[inside]]
        return kept

    return within


def _within(seqs: NDArray[np.int64], population: NDArray[np.int64]) -> NDArray[np.int64]:
    """Those of ``seqs`` in ``population`` (both ascending)."""
    if len(seqs) == 0 or len(population) == 0:
        return seqs[:0]
    rows = np.minimum(np.searchsorted(population, seqs), len(population) - 1)
    kept: NDArray[np.int64] = seqs[population[rows] == seqs]
    return kept

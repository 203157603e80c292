"""The decrypt-once RAM cache of verified drawers' lexical bags, and the pool it gathers for one search.

Each entry is filled from a drawer the store has just HMAC-verified and decrypted (`VaultStore.hydrate_many`):
its term counts under the language layer's tokenizer, its length in terms, its letter scripts, its room and the
language it reads as (its script, else its own function words: docs/languages.md). The language is derived
from content, so like the bag it exists only here, in RAM, and goes with the entry when the drawer's tag moves.
Entries are keyed by ``seq``. When `VaultStore.generation` moves (any committed write, by any connection) the
cache diffs ``seq → tag`` (the HMAC tag covers id, meta and content) against the marks it was filled under and
drops only the entries of vanished or changed drawers; past a quarter of the vault, or in a small vault, it is
dropped whole. It lives in RAM; at rest it exists only inside the vault's sealed search snapshot
(`search._internal.snapshot`: `export` and `adopt`), never in clear.

Terms are interned into one vocabulary per cache, and each term is filed once under its lexeme keys, so a
search finds a query term's morphological relatives by lookup instead of re-keying the pool's vocabulary.
A pool is the candidates' cells laid end to end (``owner`` row, term id, count), scored by numpy.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Final, Protocol

import numpy as np
from numpy.typing import NDArray
from undercroft_core.drawer import Drawer
from undercroft_core.language import LANGUAGES, function_words, lexeme_keys, script_of

from undercroft_store.search._internal.change_feed import change_feed
from undercroft_store.search._internal.row_marks import tag_marks, tags_of, too_many
from undercroft_store.search._internal.term_bags import TermBag, term_bag
from undercroft_store.search._internal.term_shapes import TermShapes
from undercroft_store.store import VaultStore

__all__ = [
    "FILL_BATCH",
    "NO_LANGUAGE",
    "VOTER_WORDS",
    "BagSource",
    "LexicalEntry",
    "LexicalPool",
    "Lexicon",
    "LexiconImage",
]

#: Drawers hydrated per batch when filling (and warming) the cache.
FILL_BATCH: Final = 500
#: A pool's code for "this drawer says no language" (else the index in `LANGUAGES`).
NO_LANGUAGE: Final = -1
_LANGUAGE_INDEX: Final = {code: index for index, code in enumerate(LANGUAGES)}
# A cell packs (term id << 32 | count): counts stay below 2**32 (content is bounded at 16 MiB).
_COUNT_BITS: Final = 32
_COUNT_MASK: Final = (1 << _COUNT_BITS) - 1
#: A pool's language code of each entry language (None: `NO_LANGUAGE`).
_LANGUAGE_CODE: Final[dict[str | None, int]] = {
    code: NO_LANGUAGE if code is None else _LANGUAGE_INDEX[code] for code in (None, *LANGUAGES)
}
_CELLS: Final = attrgetter("cells")
_LENGTH: Final = attrgetter("length")
_LANGUAGE: Final = attrgetter("language")
_VOTERS: Final = attrgetter("voters")
#: Every language's function words: the only terms a pool's language vote reads (`lexical._pool_resolution`).
VOTER_WORDS: Final = frozenset().union(*(function_words(code) for code in LANGUAGES))


@lru_cache(maxsize=1 << 18)
def _keys(term: str) -> frozenset[str]:
    return lexeme_keys(term, script_of(term))


class BagSource(Protocol):
    """What the cache reads from a vault: its change counter and verified drawers by seq."""

    @property
    def generation(self) -> int:
        """Bumped on every committed write (any connection)."""
        ...

    def hydrate_many(self, seqs: Iterable[int]) -> dict[int, Drawer]:
        """Verified drawers by seq; absent seqs skipped."""
        ...


@dataclass(frozen=True, slots=True)
class LexicalEntry:
    """One verified drawer's lexical bag: packed (term id, count) cells, length in terms, scripts, room, the
    language it reads as (None: it does not say), and the cells of its function words (`VOTER_WORDS`), so a
    pool's language vote reads a handful of cells per drawer instead of its whole bag."""

    cells: bytes
    length: int
    scripts: frozenset[str]
    room: str
    language: str | None = None
    voters: bytes = b""


@dataclass(frozen=True, slots=True)
class LexicalPool:
    """The candidates of one search as parallel cell arrays (``owner[i]`` is the row holding cell ``i``)."""

    lexicon: Lexicon
    owner: NDArray[np.intp]
    ids: NDArray[np.int64]
    counts: NDArray[np.float64]
    lengths: NDArray[np.float64]
    #: Per row, the index in `LANGUAGES` of the language the drawer reads as (`NO_LANGUAGE`: none).
    languages: NDArray[np.int16]
    #: The rows' entries, in row order.
    entries: Sequence[LexicalEntry] = ()

    @property
    def size(self) -> int:
        """Candidates in the pool."""
        return len(self.lengths)

    def present(self) -> list[int]:
        """The term ids occurring anywhere in the pool, ascending."""
        found: list[int] = np.unique(self.ids).tolist()
        return found

    def holding(self, term_ids: Sequence[int]) -> list[int]:
        """Those of ``term_ids`` occurring somewhere in the pool, in the order given."""
        if not term_ids:
            return []
        wanted = np.asarray(term_ids, dtype=np.int64)
        found: list[int] = wanted[np.isin(wanted, self.ids)].tolist()
        return found

    def row_counts(self, rows: int) -> dict[str, int]:
        """Term counts summed over the first ``rows`` candidates."""
        chosen = self.owner < rows
        ids, inverse = np.unique(self.ids[chosen], return_inverse=True)
        sums = np.bincount(inverse, weights=self.counts[chosen], minlength=len(ids))
        terms = self.lexicon.terms
        return {terms[term_id]: int(total) for term_id, total in zip(ids.tolist(), sums.tolist(), strict=True)}

    def voter_counts(self, rows: int) -> dict[str, int]:
        """Function-word counts summed over the first ``rows`` candidates: `row_counts` restricted to
        `VOTER_WORDS`, read from each entry's voter cells."""
        # One array for the sample's cells (no Python loop per cell); terms in the order first met, as a walk
        # of the entries in row order would insert them. Sums stay far below 2**53: float weights are exact.
        packed = np.frombuffer(b"".join(map(_VOTERS, self.entries[:rows])), dtype=np.int64)
        if not len(packed):
            return {}
        ids, first, inverse = np.unique(packed >> _COUNT_BITS, return_index=True, return_inverse=True)
        sums = np.bincount(inverse, weights=packed & _COUNT_MASK, minlength=len(ids))
        order = np.argsort(first, kind="stable")
        terms = self.lexicon.terms
        return {
            terms[term_id]: int(total) for term_id, total in zip(ids[order].tolist(), sums[order].tolist(), strict=True)
        }


@dataclass(frozen=True, slots=True)
class LexiconImage:
    """A lexicon's entries for a list of seqs as flat arrays (`Lexicon.export`, `Lexicon.adopt`): the search
    snapshot's lexical half. Cells and voters are laid end to end, ``*_counts`` cells per row."""

    terms: list[str]
    cells: NDArray[np.int64]
    cell_counts: NDArray[np.int64]
    voters: NDArray[np.int64]
    voter_counts: NDArray[np.int64]
    lengths: NDArray[np.int64]
    scripts: list[frozenset[str]]
    rooms: list[str]
    languages: list[str | None]
    buckets: dict[str, list[int]]


class Lexicon:
    """Lexical bags of verified drawers by seq, for one store generation; keep one per `Searcher`."""

    def __init__(self) -> None:
        """An empty cache; searches fill it."""
        self._generation: int | None = None
        self._entries: dict[int, LexicalEntry] = {}
        self._vocabulary: dict[str, int] = {}
        self.terms: list[str] = []
        self._buckets: dict[str, list[int]] = {}
        self._scripts: dict[frozenset[str], frozenset[str]] = {}
        # seq → tag at the last sync (replaced, never mutated: `Postings` keeps the one it was built under),
        # and the held seqs filled while absent from it (a write racing the sync): dropped at the next one.
        self._marks: dict[int, bytes] = {}
        self._untagged: set[int] = set()
        self._position: int | None = None  # in the handle's change feed, as of the last sync
        self.filled = 0
        self.resets = 0
        #: Entries dropped one by one because their drawer vanished or its tag changed.
        self.dropped = 0
        #: Bumped whenever the vocabulary is dropped: term ids read before are void (see `postings`).
        self.epoch = 0
        #: term -> (epoch, terms checked, ids within its typo budget): `lexical._typo_ids` extends it as the
        #: vocabulary grows instead of re-scanning a pool's vocabulary on every query.
        self.typo_memo: dict[str, tuple[int, int, frozenset[int]]] = {}
        #: (term, language) -> (epoch, terms checked, its confirmed morphological relatives as sorted
        #: (term, id) pairs): `lexical._relatives` extends it over terms interned since, like `typo_memo`.
        self.relative_memo: dict[tuple[str, str], tuple[int, int, tuple[tuple[str, int], ...]]] = {}
        #: Length and letter mask of each term (by id), extended lazily: `lexical._typo_ids` filters in numpy.
        self.shapes = TermShapes()

    def __len__(self) -> int:
        """Entries held."""
        return len(self._entries)

    @property
    def marks(self) -> dict[int, bytes]:
        """``seq → tag`` of the vault as of the last sync (empty: the source offers none). Do not mutate."""
        return self._marks

    @property
    def generation(self) -> int | None:
        """The store generation the entries were last synced to (None: never, or cleared)."""
        return self._generation

    def clear(self) -> None:
        """Drop every entry and the vocabulary (closing a vault wipes them with the keys)."""
        self._entries = {}
        self._vocabulary = {}
        self.terms = []
        self._buckets = {}
        self._scripts = {}
        self._marks = {}
        self._untagged = set()
        self._generation = None
        self._position = None
        self.epoch += 1
        self.typo_memo = {}
        self.relative_memo = {}
        self.shapes = TermShapes()

    def sync(self, source: BagSource) -> None:
        """Follow ``source`` to its current generation: drop the entries of vanished or changed drawers (by
        their tags — those the handle's change feed names, else every row's), or everything when the diff is
        too large or cannot be read."""
        generation = source.generation
        if self._generation == generation:
            return
        feed = change_feed(source)
        named, position = feed.since(self._position) if feed is not None else (None, None)
        old = self._marks
        marks: dict[int, bytes] | None
        if named is not None and self._generation is not None and isinstance(source, VaultStore):
            named |= self._untagged
            tags = tags_of(source, named)
            marks = dict(old)  # replaced, never mutated (see above)
            for seq in named:
                marks.pop(seq, None)
            marks.update(tags)
            touched: set[int] | None = {seq for seq in named if old.get(seq) != tags.get(seq)} | self._untagged
        else:
            marks = tag_marks(source)
            if marks is None or self._generation is None:
                touched = None
            else:
                touched = {seq for seq in old.keys() | marks.keys() if old.get(seq) != marks.get(seq)}
                touched |= self._untagged
        if touched is None or too_many(len(touched), len(marks or ())):
            if self._generation is not None:
                self.resets += 1
            self.clear()
        else:
            for seq in touched:
                if self._entries.pop(seq, None) is not None:
                    self.dropped += 1
            self._untagged = set()
        # Advanced together with the marks and generation: a sync that raised above leaves all three as they were.
        self._marks, self._generation, self._position = marks or {}, generation, position

    def term_id(self, term: str) -> int | None:
        """The interned id of ``term`` (None: no cached drawer holds it)."""
        return self._vocabulary.get(term)

    def near(self, term: str) -> set[int]:
        """Ids of the cached terms filed under one of ``term``'s lexeme keys (candidate relatives)."""
        return {other for key in _keys(term) for other in self._buckets.get(key, ())}

    def export(self, seqs: Sequence[int]) -> LexiconImage | None:
        """The entries of ``seqs`` (in order) over a vocabulary of just the terms they hold (term ids renumbered,
        order kept: a term held only by a dropped drawer is not carried), or None when one is not held."""
        held = [self._entries.get(seq) for seq in seqs]
        if any(entry is None for entry in held):
            return None
        entries = [entry for entry in held if entry is not None]
        cells = np.frombuffer(b"".join(entry.cells for entry in entries), dtype=np.int64)
        voters = np.frombuffer(b"".join(entry.voters for entry in entries), dtype=np.int64)
        used = np.unique(cells >> _COUNT_BITS)
        remap = np.full(len(self.terms), -1, dtype=np.int64)
        remap[used] = np.arange(len(used), dtype=np.int64)
        # Ascending ids stay ascending, so every entry's cells stay sorted.

        def renumber(packed: NDArray[np.int64]) -> NDArray[np.int64]:
            renumbered: NDArray[np.int64] = (remap[packed >> _COUNT_BITS] << _COUNT_BITS) | (packed & _COUNT_MASK)
            return renumbered

        kept = set(used.tolist())
        buckets = {
            key: ids
            for key, members in self._buckets.items()
            if (ids := [int(remap[member]) for member in members if member in kept])
        }
        return LexiconImage(
            terms=[self.terms[term_id] for term_id in used.tolist()],
            cells=renumber(cells),
            cell_counts=np.fromiter((len(e.cells) // 8 for e in entries), dtype=np.int64, count=len(entries)),
            voters=renumber(voters),
            voter_counts=np.fromiter((len(e.voters) // 8 for e in entries), dtype=np.int64, count=len(entries)),
            lengths=np.fromiter((e.length for e in entries), dtype=np.int64, count=len(entries)),
            scripts=[e.scripts for e in entries],
            rooms=[e.room for e in entries],
            languages=[e.language for e in entries],
            buckets=buckets,
        )

    def adopt(
        self, image: LexiconImage, seqs: Sequence[int], generation: int, marks: dict[int, bytes], position: int | None
    ) -> None:
        """Hold ``image`` (the entries of ``seqs``, in order) as the cache of ``generation``: a verified
        snapshot's, its ``marks`` (seq → tag) read as of the handle's change-feed ``position``."""
        self.clear()
        self.terms = list(image.terms)
        self._vocabulary = {term: term_id for term_id, term in enumerate(self.terms)}
        self._buckets = {key: list(ids) for key, ids in image.buckets.items()}
        cell_ends = np.cumsum(image.cell_counts).tolist()
        voter_ends = np.cumsum(image.voter_counts).tolist()
        cells, voters = image.cells.tobytes(), image.voters.tobytes()
        entries: dict[int, LexicalEntry] = {}
        cell_start = voter_start = 0
        for row, seq in enumerate(seqs):
            scripts = self._scripts.setdefault(image.scripts[row], image.scripts[row])
            cell_end, voter_end = cell_ends[row], voter_ends[row]
            entries[seq] = LexicalEntry(
                cells[cell_start * 8 : cell_end * 8],
                int(image.lengths[row]),
                scripts,
                image.rooms[row],
                image.languages[row],
                voters[voter_start * 8 : voter_end * 8],
            )
            cell_start, voter_start = cell_end, voter_end
        self._entries = entries
        self._marks, self._generation, self._position = marks, generation, position

    def _intern(self, term: str) -> int:
        found = self._vocabulary.get(term)
        if found is None:
            found = len(self.terms)
            self._vocabulary[term] = found
            self.terms.append(term)
            for key in _keys(term):
                self._buckets.setdefault(key, []).append(found)
        return found

    def _entry(self, bag: TermBag, room: str) -> LexicalEntry:
        vocabulary = self._vocabulary
        for term in bag.counts:
            if term not in vocabulary:
                self._intern(term)
        ids = np.array([vocabulary[term] for term in bag.counts], dtype=np.int64)
        cells = np.sort((ids << _COUNT_BITS) | np.array(list(bag.counts.values()), dtype=np.int64))
        scripts = self._scripts.setdefault(bag.scripts, bag.scripts)
        # The function words' own cells, in the cells' order (a handful per drawer: no numpy round trip).
        voting = sorted(
            (vocabulary[term] << _COUNT_BITS) | bag.counts[term] for term in VOTER_WORDS.intersection(bag.counts)
        )
        voters = array("q", voting).tobytes()
        return LexicalEntry(cells.tobytes(), bag.length, scripts, room, bag.resolution().language, voters)

    def add(self, seq: int, drawer: Drawer) -> LexicalEntry:
        """File the bag of ``drawer`` (which the caller has just read verified) under ``seq``."""
        entry = self._entry(term_bag(drawer.content), drawer.room)
        self._entries[seq] = entry
        if seq not in self._marks:
            self._untagged.add(seq)
        self.filled += 1
        return entry

    def entries(self, source: BagSource, seqs: Sequence[int]) -> tuple[list[LexicalEntry | None], dict[int, Drawer]]:
        """The entry of each seq (None: no longer in the vault), and the drawers read to fill the missing ones.

        Missing entries are filled from `hydrate_many` — every one HMAC-verified and decrypted on the way in.
        """
        self.sync(source)
        found = list(map(self._entries.get, seqs))  # a C-level map: this runs on every search's whole pool
        missing = [seq for seq, entry in zip(seqs, found, strict=True) if entry is None]
        if not missing:
            return found, {}
        read: dict[int, Drawer] = {}
        for first in range(0, len(missing), FILL_BATCH):
            batch = source.hydrate_many(missing[first : first + FILL_BATCH])
            for seq, drawer in batch.items():
                self.add(seq, drawer)
            read.update(batch)
        return list(map(self._entries.get, seqs)), read

    def pool(self, entries: Sequence[LexicalEntry]) -> LexicalPool:
        """Lay the candidates' cells end to end for vectorised scoring."""
        # C-level maps over the entries (no Python frame per entry): a pool is gathered on every search.
        count = len(entries)
        cells = list(map(_CELLS, entries))
        packed = np.frombuffer(b"".join(cells), dtype=np.int64)
        sizes = np.fromiter(map(len, cells), dtype=np.intp, count=count) // 8
        owner = np.repeat(np.arange(count, dtype=np.intp), sizes)
        lengths = np.fromiter(map(_LENGTH, entries), dtype=np.float64, count=count)
        languages = np.fromiter(map(_LANGUAGE_CODE.__getitem__, map(_LANGUAGE, entries)), dtype=np.int16, count=count)
        return LexicalPool(
            lexicon=self,
            owner=owner,
            ids=packed >> _COUNT_BITS,
            counts=(packed & _COUNT_MASK).astype(np.float64),
            lengths=lengths,
            languages=languages,
            entries=entries,
        )

    @classmethod
    def of_bags(cls, bags: Sequence[TermBag]) -> tuple[Lexicon, LexicalPool]:
        """A throw-away cache holding ``bags`` (rows in order) and their pool: scoring without a vault."""
        lexicon = cls()
        return lexicon, lexicon.pool([lexicon._entry(bag, "") for bag in bags])

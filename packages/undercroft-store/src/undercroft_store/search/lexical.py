"""Okapi BM25 over the language layer's lexical analysis, split into an exact and a morphological channel.

The candidates are the hydrated, HMAC-verified drawers of one search, so the statistics (document count,
document frequency, average length) are the pool's own: a sealed vault keeps no corpus-wide lexical index.
Each query term forms one lexeme with its morphological relatives in the pool's vocabulary and, when the term
itself is absent from the pool, its typo neighbours. A relative counts in a drawer only under that drawer's own
language (the documents' order: declared on the request, else the script, else what the drawer says it is — its
own function words, read once per verified drawer by `Lexicon`): "run" reaches "running" in an English drawer
and "Kind" reaches "Kinder" in a German one in the same pool. A drawer that says nothing takes the request's
language: the query's own, else the one the pool's best candidates vote for together. Within a lexeme the
exact form counts fully and the other forms at :data:`MORPH_DISCOUNT` (:data:`TYPO_DISCOUNT` for a typo), so
``lexical = lexical_exact + lexical_morph``.

Query terms that are stop words of the language the query (or, failing that, the pool) resolves to are not
scored (one choice per query: a term is in BM25's sum for every candidate or for none) — the language layer's
own table decides (`undercroft_core.language.stop_words`), never a list kept here — unless the query holds
nothing else. The candidates come from `Lexicon` (a RAM cache of
verified drawers' bags) and are scored as one set of numpy arrays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_core.language import (
    LANGUAGES,
    SCRIPT_LANGUAGES,
    LanguageResolution,
    Token,
    content_words,
    require_language,
    resolve_counts,
    resolve_language,
    same_lexeme,
    script_of,
    stop_words,
    typo_budget,
)

from undercroft_store.search._internal.term_bags import TermBag, term_list
from undercroft_store.search.lexicon import NO_LANGUAGE, LexicalPool, Lexicon

__all__ = [
    "BM25_B",
    "BM25_K1",
    "MORPH_DISCOUNT",
    "TYPO_DISCOUNT",
    "LexicalQuery",
    "LexicalScores",
    "score_lexical",
    "score_pool",
]

#: Term-frequency saturation (0.9: measured on the LoCoMo dev split, see docs/search.md; 1.2 before).
BM25_K1: Final = 0.9
#: Length normalisation.
BM25_B: Final = 0.75
#: Weight of a morphological relative's occurrence against the query's own form.
MORPH_DISCOUNT: Final = 0.5
#: Weight of a typo neighbour's occurrence (only consulted when the query's form is absent from the pool).
TYPO_DISCOUNT: Final = 0.35


_RESOLUTION_SAMPLE: Final = 16
# The script each table is written in, by its index in LANGUAGES (the pool's per-row language codes).
_TABLE_SCRIPTS: Final = tuple(require_language(code).script for code in LANGUAGES)
_INDEX: Final = {code: index for index, code in enumerate(LANGUAGES)}


@lru_cache(maxsize=1 << 18)
def _script(term: str) -> str:
    return script_of(term)


@lru_cache(maxsize=1 << 18)
def _relative(query_term: str, term: str, language: str) -> bool:
    return same_lexeme(query_term, term, language) is not None


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """The query side of the lexical channels: its terms (repeats kept, as classic BM25 counts them),
    its letter scripts and the language resolution its morphology is read under."""

    terms: tuple[str, ...]
    scripts: frozenset[str]
    resolution: LanguageResolution

    @classmethod
    def parse(cls, query: str, language: str | None = None) -> LexicalQuery:
        """Analyse ``query``; a declared ``language`` wins over resolution from the query's own words."""
        found, scripts = term_list(query)
        return cls(tuple(found), scripts, resolve_language(query, declared=language))


@dataclass(frozen=True, slots=True)
class LexicalScores:
    """Per-candidate BM25, by channel: ``total = exact + morph``; ``coverage`` is the share of distinct query
    terms found exactly (the legacy fusion's lexical channel)."""

    exact: NDArray[np.float64]
    morph: NDArray[np.float64]
    total: NDArray[np.float64]
    coverage: NDArray[np.float64]
    query_weight: float
    #: The request-level language: the query's stop words were read under it (the query's own, else the
    #: pool's), as was the morphology of candidates that say no language of their own.
    language: str | None = None


def _relatives(term: str, pool: LexicalPool, present: set[int], language: str) -> list[tuple[str, int]]:
    """The pool's morphological relatives of ``term`` under ``language``: filed under one of its lexeme keys,
    then confirmed pairwise. A (term, language) met again is confirmed once against the whole vocabulary and
    extended over terms interned since (`Lexicon.relative_memo`), so a query then pays a filter of the
    confirmed relatives by the pool; met once, only the pool's candidates are confirmed (a one-off query
    term does not pay for the whole vocabulary)."""
    lexicon = pool.lexicon
    memo = lexicon.relative_memo
    key = (term, language)
    held = memo.get(key)
    terms = lexicon.terms
    if len(memo) >= _TYPO_MEMO:
        memo.clear()
    if held is None or held[0] != lexicon.epoch:
        memo[key] = (lexicon.epoch, _SEEN_ONCE, ())
        own = lexicon.term_id(term)
        candidates = [(terms[other], other) for other in lexicon.near(term) if other != own and other in present]
        return sorted(item for item in candidates if _relative(term, item[0], language))
    checked, known = max(held[1], 0), held[2]
    if checked < len(terms):
        own = lexicon.term_id(term)
        fresh = [
            (terms[other], other)
            for other in lexicon.near(term)
            if other >= checked and other != own and _relative(term, terms[other], language)
        ]
        known = tuple(sorted((*known, *fresh))) if fresh else known
        memo[key] = (lexicon.epoch, len(terms), known)
    return [item for item in known if item[1] in present]


#: `Lexicon.relative_memo`'s "terms checked" for a (term, language) met once: nothing confirmed yet.
_SEEN_ONCE: Final = -1


def _row_languages(script: str, pool: LexicalPool, fallback: LanguageResolution) -> NDArray[np.int16]:
    """Per candidate, the index in `LANGUAGES` of the table a query term written in ``script`` is read under
    there (`NO_LANGUAGE`: none, exact and typo matching only).

    A drawer's own language applies where its table is written in ``script``; otherwise (a drawer that says
    nothing, or a term in another script) ``fallback`` decides — which settles a script such as Greek or Arabic
    by itself, and otherwise gives the request's language. A declared language arrives as ``fallback`` with
    every row's own language set aside."""
    other = fallback.language_for(script)
    default = NO_LANGUAGE if other is None else _INDEX[other]
    if fallback.source == "declared":
        return np.full(pool.size, default, dtype=np.int16)
    # lookup[code + 1]: code NO_LANGUAGE (-1) lands on slot 0
    lookup = np.array(
        [default, *(index if table == script else default for index, table in enumerate(_TABLE_SCRIPTS))],
        dtype=np.int16,
    )
    return lookup[pool.languages + 1]


def _edit_distance_within(first: str, second: str, budget: int) -> bool:
    """Whether the Levenshtein distance of two terms is at most ``budget`` (banded dynamic programme)."""
    if abs(len(first) - len(second)) > budget:
        return False
    previous = list(range(len(second) + 1))
    for i, left in enumerate(first, 1):
        current = [i] + [0] * len(second)
        for j, right in enumerate(second, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (left != right))
        if min(current) > budget:
            return False
        previous = current
    return previous[-1] <= budget


def _typos(term: str, vocabulary: set[str]) -> list[str]:
    """Pool terms within :func:`~undercroft_core.language.typo_budget` edits of ``term`` (at least 3 letters)."""
    budget = typo_budget(term)
    if budget == 0:
        return []
    letters = frozenset(term)
    found = []
    for other in vocabulary:
        if len(other) < 3 or abs(len(other) - len(term)) > budget:
            continue
        # Each edit changes the set of letters by at most two: a cheap filter before the exact check.
        if len(letters.symmetric_difference(other)) > 2 * budget:
            continue
        if _edit_distance_within(term, other, budget):
            found.append(other)
    return sorted(found)


def _typo_scan(term: str, lexicon: Lexicon, start: int) -> frozenset[int]:
    """Ids from ``start`` on of the lexicon's terms within ``term``'s typo budget: exactly `_typos` over those
    terms, with the length and letter filters read from the lexicon's term shapes in numpy (`TermShapes`)."""
    budget = typo_budget(term)
    if budget == 0:
        return frozenset()
    terms = lexicon.terms
    lexicon.shapes.extend(terms)
    letters = frozenset(term)
    return frozenset(
        i
        for i in lexicon.shapes.near(term, budget, start).tolist()
        if len(letters.symmetric_difference(terms[i])) <= 2 * budget and _edit_distance_within(term, terms[i], budget)
    )


def _pool_resolution(pool: LexicalPool) -> LanguageResolution:
    """Resolve a language from the function words of the pool's best candidates (occurrences counted)."""
    rows = pool.entries[:_RESOLUTION_SAMPLE]
    if len(rows) == min(pool.size, _RESOLUTION_SAMPLE) and not any(SCRIPT_LANGUAGES.keys() & e.scripts for e in rows):
        # No script that settles a language by itself: the vote alone decides, and it reads only the
        # function words, each capped at three — the same resolution as the general path below.
        return resolve_counts({term: min(n, 3) for term, n in pool.voter_counts(_RESOLUTION_SAMPLE).items()}, {})
    return _sampled_resolution(pool)


def _sampled_resolution(pool: LexicalPool) -> LanguageResolution:
    """`_pool_resolution` read from every term of the sample (the general path: any script)."""
    sample = sorted(pool.row_counts(_RESOLUTION_SAMPLE).items())
    # Three occurrences are all a decisive vote needs from any one word.
    if all(term.isascii() for term, _ in sample):
        # ASCII terms re-read as text give back exactly these tokens: the layer's bulk path counts them.
        return resolve_language(" ".join(term for term, n in sample for _ in range(min(n, 3))))
    tokens = [Token(term, 0, len(term), _script(term)) for term, n in sample for _ in range(min(n, 3))]
    return resolve_language(tokens)


#: One form of a query term's lexeme: (term id, weight, the `LANGUAGES` index of the rows it counts in, or
#: None for every row).
_Form = tuple[int, float, int | None]


class _PoolTerms:
    """What every query term of one search reads from its pool, computed once: which term ids it holds (one
    boolean table over the vocabulary, filled by one scatter of the pool's cells: no sort of the cells per
    question asked of them), and the language codes present per script's row languages."""

    def __init__(self, pool: LexicalPool) -> None:
        self._pool = pool
        self._table: NDArray[np.bool_] | None = None
        self._codes: dict[int, list[int]] = {}

    def _held(self) -> NDArray[np.bool_]:
        if self._table is None:
            ids = self._pool.ids
            size = max(len(self._pool.lexicon.terms), int(ids.max()) + 1 if len(ids) else 0)
            self._table = np.zeros(size, dtype=np.bool_)
            self._table[ids] = True
        return self._table

    def holding(self, term_ids: Iterable[int]) -> set[int]:
        """Those of ``term_ids`` (ids of the pool's lexicon) occurring somewhere in the pool."""
        wanted = np.fromiter(term_ids, dtype=np.int64)
        if not len(wanted):
            return set()
        table = self._held()
        inside = wanted[(wanted >= 0) & (wanted < len(table))]
        return set(inside[table[inside]].tolist())

    def codes(self, languages: NDArray[np.int16]) -> list[int]:
        found = self._codes.get(id(languages))
        if found is None:
            # Not `np.unique`: its first plain call imports `numpy.ma` (~10 ms of a cold CLI search, issue 18 §4).
            found = self._codes[id(languages)] = sorted(set(languages.tolist()))
        return found


def _forms(
    term: str, pool: LexicalPool, present: set[int], languages: NDArray[np.int16], shared: _PoolTerms | None = None
) -> list[_Form]:
    """The forms one query term counts in this pool: itself, its relatives under each candidate language
    (``languages``, per row: see `_row_languages`), its typos.

    ``present`` holds which of the query terms' own ids and candidate relatives occur in the pool."""
    shared = shared or _PoolTerms(pool)
    lexicon = pool.lexicon
    own = lexicon.term_id(term)
    held = own is not None and own in present
    forms: list[_Form] = [(own, 1.0, None)] if held and own is not None else []
    for code in shared.codes(languages):
        if code != NO_LANGUAGE:
            forms += [(other, MORPH_DISCOUNT, code) for _, other in _relatives(term, pool, present, LANGUAGES[code])]
    if not held:
        near = shared.holding(_typo_ids(term, lexicon))
        # In the order of the terms' spelling, as a scan of the pool's own vocabulary gave them.
        forms += [(other, TYPO_DISCOUNT, None) for other in sorted(near, key=lexicon.terms.__getitem__)]
    return forms


#: Query terms whose typo neighbours a lexicon remembers before it starts over.
_TYPO_MEMO: Final = 20_000


def _typo_ids(term: str, lexicon: Lexicon) -> frozenset[int]:
    """Ids of every cached term within ``term``'s typo budget (`_typos`), extended only over terms interned
    since the last call. A pool's typos are these ids that occur in the pool: the same set a scan of the pool's
    vocabulary finds, since that vocabulary is part of the lexicon's."""
    memo = lexicon.typo_memo
    held = memo.get(term)
    checked, found = (held[1], held[2]) if held is not None and held[0] == lexicon.epoch else (0, frozenset())
    terms = lexicon.terms
    if checked < len(terms):
        found = found | _typo_scan(term, lexicon, checked)
        if len(memo) >= _TYPO_MEMO:
            memo.clear()
        memo[term] = (lexicon.epoch, len(terms), found)
    return found


def _frequencies(
    pool: LexicalPool, forms: list[_Form], languages: NDArray[np.int16]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per candidate: the query form's own count, and the weighted count of every form of the lexeme (a
    relative counted only in the rows whose language admits it)."""
    count = pool.size
    own = np.zeros(count, dtype=np.float64)
    weighted = np.zeros(count, dtype=np.float64)
    for form, weight, language in forms:
        cells = np.flatnonzero(pool.ids == form)
        if len(cells) == 0:
            continue
        rows, counts = pool.owner[cells], pool.counts[cells]
        if language is not None:
            admitted = languages[rows] == language
            rows, counts = rows[admitted], counts[admitted]
        # A bag holds each term once and each row has one language, so rows never repeat within a form.
        weighted[rows] += weight * counts
        if language is None and weight == 1.0:
            own[rows] = counts
    return own, weighted


def score_pool(query: LexicalQuery, pool: LexicalPool) -> LexicalScores:
    """BM25 of every candidate of ``pool`` against ``query``, channel by channel (vectorised over the pool)."""
    count = pool.size
    exact = np.zeros(count, dtype=np.float64)
    morph = np.zeros(count, dtype=np.float64)
    coverage = np.zeros(count, dtype=np.float64)
    distinct = list(dict.fromkeys(query.terms))
    if count == 0 or not distinct:
        return LexicalScores(exact, morph, exact.copy(), coverage, 0.0, query.resolution.language)
    lengths = pool.lengths
    average = float(lengths.mean()) or 1.0
    norms = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths / average)
    repeats = {term: query.terms.count(term) for term in distinct}
    resolution = query.resolution
    if resolution.language is None:
        # A short query rarely votes decisively: the pool's own function words decide its stop words instead
        # (and the table of any candidate that says no language of its own).
        resolution = _pool_resolution(pool)
    if resolution.language is not None:
        distinct = content_words(distinct, stop_words(resolution.language))
    lexicon = pool.lexicon
    wanted = {found for term in distinct if (found := lexicon.term_id(term)) is not None}
    for term in distinct:
        wanted |= lexicon.near(term)
    shared = _PoolTerms(pool)
    present = shared.holding(wanted)  # one pass over the pool's cells for every query term
    query_weight = 0.0
    by_script: dict[str, NDArray[np.int16]] = {}
    for term in distinct:
        script = _script(term)
        languages = by_script.get(script)
        if languages is None:
            languages = by_script[script] = _row_languages(script, pool, resolution)
        forms = _forms(term, pool, present, languages, shared)
        if not forms:
            continue
        own, weighted = _frequencies(pool, forms, languages)
        holding = int(np.count_nonzero(weighted))
        idf = math.log(1.0 + (count - holding + 0.5) / (holding + 0.5))
        factor = idf * (BM25_K1 + 1.0) * repeats[term]
        query_weight += factor
        exact_part = factor * own / (own + norms)
        exact += exact_part
        morph += factor * weighted / (weighted + norms) - exact_part
        coverage += own > 0
    coverage /= len(distinct)
    return LexicalScores(exact, morph, exact + morph, coverage, query_weight, resolution.language)


def score_lexical(query: LexicalQuery, bags: Sequence[TermBag]) -> LexicalScores:
    """BM25 of every candidate ``bag`` against ``query``, channel by channel (bags outside any cache)."""
    _, pool = Lexicon.of_bags(bags)
    return score_pool(query, pool)

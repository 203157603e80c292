"""The hmac-only FTS5 BM25 prefilter: the scope's drawers whose full-text rows best match the query.

An hmac-only vault stores its content in plaintext by the operator's choice and keeps a derived FTS5 table
``drawers_fts(content)``, rowid = drawer seq, beside it (``writes.py`` keeps it in step, ``repair.py``
rebuilds it). Above ``UNDERCROFT_FTS_PREFILTER_MIN`` drawers a search draws lexical candidates from it
instead of building the decrypt-once RAM postings (`postings.Postings`), in two stages:

1. `fts_candidates` — at least ``max(hydration size, population / UNDERCROFT_POOL_DIV)`` members of the
   population, best FTS5 ``bm25()`` first;
2. `cosine_cut` — cut back to the hydration size: the best half by BM25 rank kept whatever their cosine
   (the floor through which BM25 evidence reaches fusion), the rest by exact cosine.

The FTS rows sit OUTSIDE the HMAC envelope: a tampered, deleted or planted row can change which drawers are
drawn (an availability attack, healed by ``undercroft repair``), never what is returned — the engine
hydrates every candidate through the verified read path and scores it from its verified words.

User text never becomes FTS5 syntax: the query is cut into the language layer's terms (runs of letters or
digits, so ``"``, ``*``, ``-``, ``:``, ``^`` and parentheses never survive), each term is quoted as an FTS5
string (an embedded ``"`` doubled) and the strings are OR-ed: ``NEAR``, ``AND`` or a column name are then
plain words. The read is SELECT-only on the store's own connection, so a read-only handle serves it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

import numpy as np
from numpy.typing import NDArray

from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.kernel.schema import DRAWER_TABLE, FTS_TABLE
from undercroft_store.search._internal.term_bags import term_list
from undercroft_store.store import VaultStore

__all__ = [
    "BM25_FLOOR_SHARE",
    "COMMON_SHARE",
    "cosine_cut",
    "fts_candidates",
    "fts_joiners",
    "match_expression",
    "usable_terms",
]

#: A term held by at least this share of the FTS rows is not sent: FTS5's BM25 clamps the IDF of such a
#: term to 1e-6, so it changes no ranking and would only widen the match set to most of the vault.
COMMON_SHARE: Final = 0.5
#: Share of the hydration size kept by BM25 rank alone in the cut (the rest is chosen by exact cosine).
BM25_FLOOR_SHARE: Final = 0.5
#: Growth of the over-fetch when a scope's members are too sparse among the best FTS matches.
_GROWTH: Final = 4
#: Initial over-fetch beyond the population's share of the vault (a scope's members are not spread evenly).
_SLACK: Final = 2

_MATCH_SQL: Final = (
    f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? "  # noqa: S608 - fixed table names, bound values
    f"ORDER BY bm25({FTS_TABLE}), rowid LIMIT ?"
)
_COUNT_SQL: Final = f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ?"  # noqa: S608 - fixed name
_ROWS_SQL: Final = f"SELECT count(*) FROM {DRAWER_TABLE}"  # noqa: S608 - fixed name


def usable_terms(query: str) -> list[str]:
    """The query's distinct normalised terms, in order of first appearance (the language layer's cut)."""
    found, _ = term_list(query)
    return list(dict.fromkeys(term for term in found if term))


def _quoted(term: str) -> str:
    """``term`` as an FTS5 string: inside double quotes everything is literal text for the tokenizer."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: Iterable[str]) -> str | None:
    """An FTS5 MATCH expression OR-ing every distinct term as a quoted string; None when none is usable."""
    distinct = [term for term in dict.fromkeys(terms) if term and not term.isspace()]
    if not distinct:
        return None
    return " OR ".join(_quoted(term) for term in distinct)


def _within(seqs: NDArray[np.int64], population: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which of ``seqs`` (any order) are members of ``population`` (ascending)."""
    if len(population) == 0:
        return np.zeros(len(seqs), dtype=np.bool_)
    rows = np.minimum(np.searchsorted(population, seqs), len(population) - 1)
    found: NDArray[np.bool_] = population[rows] == seqs
    return found


def fts_candidates(
    store: VaultStore,
    query: str,
    population: NDArray[np.int64],
    budget: int,
    *,
    pool_div: int | None = 64,
) -> NDArray[np.int64]:
    """Members of ``population`` (ascending seqs) whose FTS5 rows best match ``query`` by ``bm25()``, best
    first (ties by seq): ``max(budget, len(population) // pool_div)`` of them, or every matching member when
    fewer match. A query with no usable term, or only terms held by half the vault or more, draws nothing.

    The population is applied in numpy after an over-fetch sized by its share of the vault (grown until
    enough members are found or the matches run out): measured cheaper than a ``rowid IN`` filter (which
    runs the MATCH once per chunk) and it writes nothing, not even a temporary table.
    """
    if budget < 0 or len(population) == 0:
        return np.zeros(0, dtype=np.int64)
    wanted = max(budget, len(population) // pool_div if pool_div else 0)
    if wanted == 0:
        return np.zeros(0, dtype=np.int64)
    connection = readable(store._context).connection
    rows = int(connection.execute(_ROWS_SQL).fetchone()[0])
    held = {term: int(connection.execute(_COUNT_SQL, (_quoted(term),)).fetchone()[0]) for term in usable_terms(query)}
    informative = [term for term, count in held.items() if 0 < count < COMMON_SHARE * rows]
    expression = match_expression(informative)
    if expression is None:
        return np.zeros(0, dtype=np.int64)
    matches = sum(held[term] for term in informative)  # an upper bound on the rows the OR can match
    share = max(1, -(-rows // len(population)))
    limit = min(matches, wanted if share == 1 else wanted * share * _SLACK)
    while True:
        fetched = connection.execute(_MATCH_SQL, (expression, limit)).fetchall()
        seqs = np.fromiter((row[0] for row in fetched), dtype=np.int64, count=len(fetched))
        members = seqs[_within(seqs, population)]
        if len(members) >= wanted or len(fetched) < limit or limit >= matches:
            return members[:wanted]
        limit = min(matches, limit * _GROWTH)


def cosine_cut(ranked: NDArray[np.int64], cosines: NDArray[np.float32], keep: int) -> NDArray[np.int64]:
    """Stage 2: ``keep`` of ``ranked`` (best BM25 first, ``cosines`` aligned), ascending seqs — the first
    ``keep · BM25_FLOOR_SHARE`` by BM25 rank whatever their cosine, the rest best cosine first (ties by seq)."""
    if len(ranked) <= keep:
        return np.sort(ranked)
    floor = int(keep * BM25_FLOOR_SHARE)
    rest, rest_cosines = ranked[floor:], cosines[floor:]
    order = np.lexsort((rest, -rest_cosines))[: keep - floor]
    return np.sort(np.concatenate((ranked[:floor], rest[order])))


def fts_joiners(
    store: VaultStore,
    query: str,
    population: NDArray[np.int64],
    hydrate: int,
    cosines_of: Callable[[NDArray[np.int64]], NDArray[np.float32]],
    *,
    pool_div: int | None = 64,
) -> NDArray[np.int64]:
    """Both stages: `fts_candidates` cut back to ``hydrate`` by `cosine_cut`; ascending seqs to join the
    cosine candidates. ``cosines_of`` gives the exact cosines of ascending seqs (the full-scan tier's)."""
    ranked = fts_candidates(store, query, population, hydrate, pool_div=pool_div)
    if len(ranked) <= hydrate:
        return np.sort(ranked)
    ascending = np.argsort(ranked, kind="stable")
    cosines = np.empty(len(ranked), dtype=np.float32)
    cosines[ascending] = cosines_of(ranked[ascending])
    return cosine_cut(ranked, cosines, hydrate)

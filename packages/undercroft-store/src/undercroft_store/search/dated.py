"""Dated candidates: the scope's drawers a date window names, drawn into the pool whatever their cosine.

A window (`when`, or `when_from_query`) is evidence about WHICH drawer answers, and a drawer the cosine cut
never drew can not be promoted or kept by it. So when the scope is larger than the hydration size, the
members whose own day falls in the applied window — ``content_date``, else the day it was filed (the anchor
`undercroft_core.language.drawer_anchor` reads), or a time mention resolved when it was written — join the
cut, best cosine first, at most the hydration size of them.

They are read from the clear metadata (``meta_json``, inside the HMAC envelope but not sealed) by one SQL
scan; nothing here is evidence of integrity: every candidate is hydrated through the verified path and the
engine re-reads its mentions live (under the request's conventions) before the window keeps or promotes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_core.language import WhenWindow

from undercroft_store._internal.transaction import readable
from undercroft_store.store import VaultStore

__all__ = ["dated_candidates", "dated_joiners"]

_DATED_SQL: Final = """
SELECT seq FROM drawers
WHERE substr(coalesce(nullif(json_extract(CAST(meta_json AS TEXT), '$.content_date'), ''),
                      json_extract(CAST(meta_json AS TEXT), '$.filed_at')), 1, 10) BETWEEN ?1 AND ?2
   OR EXISTS (
        SELECT 1 FROM json_each(CAST(meta_json AS TEXT), '$.time_mentions') AS mention
        WHERE json_extract(mention.value, '$.resolved') <= ?2
          AND coalesce(json_extract(mention.value, '$.resolved_end'), json_extract(mention.value, '$.resolved')) >= ?1
   )
ORDER BY seq
"""


def dated_candidates(store: VaultStore, window: WhenWindow, population: NDArray[np.int64]) -> NDArray[np.int64]:
    """Members of ``population`` (ascending seqs) whose day or a stored mention falls in the applied window."""
    if len(population) == 0:
        return np.zeros(0, dtype=np.int64)
    connection = readable(store._context).connection
    bounds = (window.applied_start.isoformat(), window.applied_end.isoformat())
    rows = connection.execute(_DATED_SQL, bounds).fetchall()
    seqs = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    found: NDArray[np.int64] = seqs[np.isin(seqs, population, assume_unique=True)]
    return found


def dated_joiners(
    store: VaultStore,
    window: WhenWindow,
    population: NDArray[np.int64],
    hydrate: int,
    cosines_of: Callable[[NDArray[np.int64]], NDArray[np.float32]],
) -> NDArray[np.int64]:
    """`dated_candidates` cut to the ``hydrate`` best by exact cosine (ties by write order); ascending seqs."""
    dated = dated_candidates(store, window, population)
    if len(dated) <= hydrate:
        return dated
    order = np.lexsort((dated, -cosines_of(dated)))[:hydrate]
    return np.sort(dated[order])

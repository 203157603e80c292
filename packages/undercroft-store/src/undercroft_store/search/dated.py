"""Dated candidates: the scope's drawers a date window names, drawn into the pool whatever their cosine.

A window (`when`, or `when_from_query`) is evidence about WHICH drawer answers, and a drawer the cosine cut
never drew can not be promoted or kept by it. So when the scope is larger than the hydration size, the
members whose own day falls in the applied window — ``content_date``, else the day it was filed (the anchor
`undercroft_core.language.drawer_anchor` reads), or a time mention resolved when it was written — join the
cut, best cosine first, at most the hydration size of them.

The days come from the metadata (``meta_json``, inside the HMAC envelope): on an hmac-only vault one SQL
scan, on a sealed vault the handle's RAM metadata cache (`kernel._internal.meta_cache`, each blob opened
once), into a RAM interval table (`DatedIndex`) kept per store generation, so a second windowed search
costs a numpy filter. Nothing here is evidence of integrity: every candidate is hydrated through the
verified path and the engine re-reads its mentions live (under the request's conventions) before the window
keeps or promotes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_core.language import WhenWindow

from undercroft_store.kernel._internal.meta_cache import opened_metas
from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.store import VaultStore

__all__ = ["DatedIndex", "dated_candidates", "dated_joiners"]

_DAYS_SQL: Final = """
SELECT seq,
       coalesce(nullif(json_extract(meta, '$.content_date'), ''), json_extract(meta, '$.filed_at')),
       json_extract(meta, '$.time_mentions')
FROM (SELECT seq, CAST(meta_json AS TEXT) AS meta FROM drawers)
ORDER BY seq
"""
_NO_DAY: Final = np.datetime64("NaT", "D")


def _day(value: object) -> np.datetime64:
    """The ISO day ``value`` starts with (a date or a timestamp), or NaT when it does not read as one."""
    if not isinstance(value, str) or len(value) < 10:
        return _NO_DAY
    try:
        return np.datetime64(value[:10], "D")
    except ValueError:
        return _NO_DAY


def _spans(seq: int, anchor: object, mentions: object) -> Iterable[tuple[int, np.datetime64, np.datetime64]]:
    day = _day(anchor)
    yield seq, day, day
    if not isinstance(mentions, str) or mentions == "[]":
        return
    for item in json.loads(mentions):
        if isinstance(item, dict):
            first = _day(item.get("resolved"))
            last = _day(item.get("resolved_end") or item.get("resolved"))
            yield seq, first, last


def _days(seq: int, meta: bytes) -> tuple[int, object, object]:
    """``_DAYS_SQL``'s row for one opened meta: seq, the anchor day's source, the mentions as JSON text."""
    try:
        document = json.loads(meta)
    except ValueError:
        return seq, None, None
    if not isinstance(document, dict):
        return seq, None, None
    anchor = document.get("content_date") or document.get("filed_at")
    mentions = document.get("time_mentions")
    return seq, anchor, json.dumps(mentions) if isinstance(mentions, list) else None


class DatedIndex:
    """Every drawer's dated spans (its anchor day, its stored mentions) as numpy arrays, per store generation."""

    def __init__(self) -> None:
        """An empty index; `load` fills it on first use and again whenever the store's generation moved."""
        self._generation: int | None = None
        self._seqs = np.zeros(0, dtype=np.int64)
        self._starts = np.zeros(0, dtype="datetime64[D]")
        self._ends = np.zeros(0, dtype="datetime64[D]")

    def load(self, store: VaultStore) -> None:
        """Read the spans again when ``store`` moved on since the last read (one SQL scan of the metadata)."""
        generation = store.generation
        if generation == self._generation:
            return
        context = readable(store._context)
        if context.metadata_sealed:  # the dates are inside each sealed meta blob: the handle's RAM cache
            rows = [_days(seq, meta) for seq, meta in sorted(opened_metas(context, generation).items())]
        else:
            rows = context.connection.execute(_DAYS_SQL).fetchall()
        spans = [span for seq, anchor, mentions in rows for span in _spans(int(seq), anchor, mentions)]
        self._seqs = np.fromiter((span[0] for span in spans), dtype=np.int64, count=len(spans))
        self._starts = np.array([span[1] for span in spans], dtype="datetime64[D]")
        self._ends = np.array([span[2] for span in spans], dtype="datetime64[D]")
        self._generation = generation

    def named(self, window: WhenWindow) -> NDArray[np.int64]:
        """Seqs (ascending, distinct) with a span overlapping the window's applied days."""
        first = np.datetime64(window.applied_start.isoformat(), "D")
        last = np.datetime64(window.applied_end.isoformat(), "D")
        hit = (self._starts <= last) & (self._ends >= first)  # NaT compares False: an undated span names nothing
        found: NDArray[np.int64] = np.unique(self._seqs[hit])
        return found


def dated_candidates(
    store: VaultStore, window: WhenWindow, population: NDArray[np.int64], index: DatedIndex | None = None
) -> NDArray[np.int64]:
    """Members of ``population`` (ascending seqs) whose day or a stored mention falls in the applied window."""
    if len(population) == 0:
        return np.zeros(0, dtype=np.int64)
    index = index or DatedIndex()
    index.load(store)
    found: NDArray[np.int64] = np.intersect1d(index.named(window), population, assume_unique=True)
    return found


def dated_joiners(
    store: VaultStore,
    window: WhenWindow,
    population: NDArray[np.int64],
    hydrate: int,
    cosines_of: Callable[[NDArray[np.int64]], NDArray[np.float32]],
    index: DatedIndex | None = None,
) -> NDArray[np.int64]:
    """`dated_candidates` cut to the ``hydrate`` best by exact cosine (ties by write order); ascending seqs."""
    dated = dated_candidates(store, window, population, index)
    if len(dated) <= hydrate:
        return dated
    order = np.lexsort((dated, -cosines_of(dated)))[:hydrate]
    return np.sort(dated[order])

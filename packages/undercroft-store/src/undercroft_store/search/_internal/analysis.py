"""Query-independent analysis of a verified drawer, computed once per handle instead of once per hit.

A hit carries the drawer's entities and its time mentions resolved against its own anchor under the request's
reading conventions. None of that depends on the query, yet it was re-derived with regexes for every returned
drawer on every search (74 % of a LoCoMo search: issue 19). The memo keys each result by what it is a function
of — the drawer id AND its verified content (an edit, a tamper repaired, a re-key that changes nothing: the
key follows the words), plus the anchor and the conventions for mentions — so a declared convention that
changes re-resolves, retroactively, as the documents require. It holds only values derived from content
already verified and held in RAM by this handle; nothing is written anywhere.
"""

from __future__ import annotations

from datetime import date
from typing import Final

from undercroft_core.drawer import Drawer, Entity
from undercroft_core.language import ReadingConventions, TimeMention, scan_time_mentions

from undercroft_store.search._internal.entities import read_entities

__all__ = ["AnalysisMemo"]

#: Entries kept before the memo starts over (a bound on RAM, far above any page of hits; ~0.5 KB each).
CAPACITY: Final = 100_000


class AnalysisMemo:
    """Entities and time mentions of verified drawers, memoised by (id, content[, anchor, conventions])."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._entities: dict[tuple[str, str], tuple[Entity, ...]] = {}
        self._mentions: dict[tuple[str, str, date | None, ReadingConventions], tuple[TimeMention, ...]] = {}

    def entities(self, drawer: Drawer) -> tuple[Entity, ...]:
        """The drawer's declared entities, else those read from its words (`read_entities`)."""
        if drawer.entities:
            return drawer.entities
        key = (drawer.id, drawer.content)
        found = self._entities.get(key)
        if found is None:
            if len(self._entities) >= self._capacity:
                self._entities.clear()
            found = self._entities[key] = read_entities(drawer.content)
        return found

    def mentions(self, drawer: Drawer, anchor: date | None, conventions: ReadingConventions) -> tuple[TimeMention, ...]:
        """`scan_time_mentions` of the drawer's words against ``anchor`` under ``conventions``."""
        key = (drawer.id, drawer.content, anchor, conventions)
        found = self._mentions.get(key)
        if found is None:
            if len(self._mentions) >= self._capacity:
                self._mentions.clear()
            found = self._mentions[key] = tuple(scan_time_mentions(drawer.content, anchor, conventions))
        return found

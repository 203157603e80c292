"""Query-independent analysis of a verified drawer, computed once per handle instead of once per hit.

A hit carries the drawer's entities and its time mentions resolved against its own anchor under the request's
reading conventions. None of that depends on the query, yet it was re-derived with regexes for every returned
drawer on every search (74 % of a LoCoMo search: issue 19). The memo keys each result by what it is a function
of — the drawer id AND its verified content (an edit, a tamper repaired, a re-key that changes nothing: the
key follows the words), plus the anchor and the conventions for mentions — so a declared convention that
changes re-resolves, retroactively, as the documents require. It holds only values derived from content
already verified and held in RAM by this handle; nothing is written anywhere.

In front of those two memos, `reading` remembers the whole per-drawer part of a hit (anchor, mentions,
entities) by the identity of the verified `Drawer` object: the handle's verified-row memo serves the same frozen
object for the same bytes, so a page served again costs one dict lookup per hit instead of an anchor parse and
two keyed lookups (whose keys hash the conventions each time). A changed row is a new object: it misses and is
read through the keyed memos as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Final

from undercroft_core.drawer import Drawer, Entity
from undercroft_core.language import ReadingConventions, TimeMention, drawer_anchor, scan_time_mentions

from undercroft_store.search._internal.entities import read_entities

__all__ = ["AnalysisMemo", "DrawerReading"]

#: Entries kept before the memo starts over (a bound on RAM, far above any page of hits; ~0.5 KB each).
CAPACITY: Final = 100_000


#: Drawer objects whose reading is remembered by identity (each held alive by its record, so an id is never
#: reused while it is a key): the pages a handle serves, as many as its verified-row memo holds.
READINGS: Final = 4_096


@dataclass(frozen=True, slots=True)
class DrawerReading:
    """What a hit reads from its drawer whatever the query: its anchor date, its time mentions resolved against
    that anchor under one request's conventions, and its entities."""

    anchor: date | None
    mentions: tuple[TimeMention, ...]
    entities: tuple[Entity, ...]


class AnalysisMemo:
    """Entities and time mentions of verified drawers, memoised by (id, content[, anchor, conventions]), and
    each drawer object's whole reading by identity (`reading`)."""

    def __init__(self, capacity: int = CAPACITY, readings: int = READINGS) -> None:
        self._capacity = capacity
        self._entities: dict[tuple[str, str], tuple[Entity, ...]] = {}
        self._mentions: dict[tuple[str, str, date | None, ReadingConventions], tuple[TimeMention, ...]] = {}
        self._reading_capacity = readings
        self._readings: dict[int, tuple[Drawer, ReadingConventions, DrawerReading]] = {}

    def reading(self, drawer: Drawer, conventions: ReadingConventions) -> DrawerReading:
        """The drawer's anchor (`drawer_anchor`), `mentions` under ``conventions`` and `entities`."""
        held = self._readings.get(id(drawer))
        if held is not None and held[0] is drawer and (held[1] is conventions or held[1] == conventions):
            return held[2]
        anchor = drawer_anchor(drawer.content_date, drawer.filed_at)
        found = DrawerReading(anchor, self.mentions(drawer, anchor, conventions), self.entities(drawer))
        if len(self._readings) >= self._reading_capacity:
            self._readings.clear()
        self._readings[id(drawer)] = (drawer, conventions, found)
        return found

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

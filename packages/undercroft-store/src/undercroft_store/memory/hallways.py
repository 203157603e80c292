"""Hallways: within-wing entity co-occurrence, computed on demand from verified drawers and never persisted.

Two entities share a hallway when they are named in the same drawer; the count is how many drawers name
both. Entities are capitalised runs of the drawer's own words (a rule, not a model).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING

from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_core.vocabulary import QUARANTINE_WING

from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.memory.kg._internal.entities import entity_counts
from undercroft_store.memory.kg.errors import InvalidSurfaceInput

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["Hallway", "hallways"]


@dataclass(frozen=True, slots=True)
class Hallway:
    """Two entities named together in `count` drawers of one wing (the first few drawer ids kept)."""

    first: str
    second: str
    count: int
    drawers: tuple[str, ...]


@audited_read("hallways", subject=lambda a: str(a["wing"]), scope=lambda a: {"wing": a["wing"]})
def hallways(store: VaultStore, wing: str, *, min_count: int = 1, limit: int = 50) -> list[Hallway]:
    """The wing's entity pairs by co-occurrence, most shared first (the quarantine wing is refused)."""
    try:
        validate_name(wing, what="wing")
    except InvalidInput as error:
        raise InvalidSurfaceInput(str(error)) from None
    if wing == QUARANTINE_WING:
        raise InvalidSurfaceInput(f"the {QUARANTINE_WING!r} wing has no hallways: review it with admission")
    for value, what in ((min_count, "min_count"), (limit, "limit")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidSurfaceInput(f"{what} must be a positive integer, got {value!r}")
    pairs: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], list[str]] = defaultdict(list)
    for drawer in store.list_drawers(wing=wing):
        names = sorted(entity_counts(drawer.content))
        for pair in combinations(names, 2):
            pairs[pair] += 1
            if len(where[pair]) < 5:
                where[pair].append(drawer.id)
    ranked = sorted(pairs.items(), key=lambda item: (-item[1], item[0]))
    return [Hallway(a, b, count, tuple(where[(a, b)])) for (a, b), count in ranked if count >= min_count][:limit]

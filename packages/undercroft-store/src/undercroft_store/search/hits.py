"""What a search returns: each hit's provenance, dates and scores, and the result's disclosures.

A hit carries what the ranking read (id, wing, room, kind, the drawer's dates, its occurrences, the time
mentions re-read live under the request's conventions, entities read from its own words, elapsed time when
``as_of`` was given) and the scores (score, semantic, lexical, lexical_exact, lexical_morph). It does not
carry ``added_by``, ``source_file`` or the writer's agent/channel/session claims: those come from a drawer
fetch, so an envelope cannot claim provenance the search never returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from undercroft_core.drawer import Entity, Occurrence
from undercroft_core.language import TimeMention, WhenWindow

__all__ = ["SearchHit", "SearchResult"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One verified, admitted drawer in ranked order."""

    id: str
    content: str
    wing: str
    room: str
    kind: str | None
    content_date: str | None
    filed_at: str
    occurrences: tuple[Occurrence, ...]
    time_mentions: tuple[TimeMention, ...]
    entities: tuple[Entity, ...]
    elapsed_days: int | None
    score: float
    semantic: float
    lexical: float
    lexical_exact: float
    lexical_morph: float
    rank: int

    @property
    def elapsed(self) -> str | None:
        """``elapsed_days`` in words (``today``, ``1 day ago``, ``12 days ago``, ``in 3 days``), or None."""
        days = self.elapsed_days
        if days is None:
            return None
        if days == 0:
            return "today"
        unit = "day" if abs(days) == 1 else "days"
        return f"{days} {unit} ago" if days > 0 else f"in {-days} {unit}"

    def to_dict(self) -> dict[str, Any]:
        """The hit as JSON-ready data (the /v1 and MCP shape)."""
        return {
            "id": self.id,
            "content": self.content,
            "wing": self.wing,
            "room": self.room,
            "kind": self.kind,
            "content_date": self.content_date,
            "filed_at": self.filed_at,
            "occurrences": [o.at_rest() for o in self.occurrences],
            "time_mentions": [m.to_record() for m in self.time_mentions],
            "entities": [e.name for e in self.entities],
            "elapsed": self.elapsed,
            "elapsed_days": self.elapsed_days,
            "score": self.score,
            "semantic": self.semantic,
            "lexical": self.lexical,
            "lexical_exact": self.lexical_exact,
            "lexical_morph": self.lexical_morph,
        }


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A page of hits and what shaped it: the scope, the window in force, the disclosures, the pool."""

    hits: tuple[SearchHit, ...]
    scope: str
    searched: int
    pool: int
    admitted: int
    unlabeled_excluded: int | None
    trust_excluded_wings: tuple[str, ...] | None
    window: WhenWindow | None
    room_cap: int | None
    ranked_at: str | None
    fusion: str

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data; ``window`` appears only while one is in force."""
        out: dict[str, Any] = {
            "hits": [hit.to_dict() for hit in self.hits],
            "scope": self.scope,
            "searched": self.searched,
            "pool": self.pool,
            "admitted": self.admitted,
            "unlabeled_excluded": self.unlabeled_excluded,
            "trust_excluded_wings": list(self.trust_excluded_wings) if self.trust_excluded_wings is not None else None,
            "room_cap": self.room_cap,
            "ranked_at": self.ranked_at,
            "fusion": self.fusion,
        }
        if self.window is not None:
            out["window"] = self.window.to_dict()
        return out


def elapsed_days(anchor: date | None, as_of: date | None) -> int | None:
    """Whole days from ``anchor`` to ``as_of`` (negative when the drawer is dated after it)."""
    if anchor is None or as_of is None:
        return None
    return (as_of - anchor).days

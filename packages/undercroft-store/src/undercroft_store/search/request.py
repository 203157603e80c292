"""What a search asks for: the query, its scope, the page, the pinned clock, the reading conventions."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Final

from undercroft_core.errors import InvalidInput
from undercroft_core.language import ReadingConventions
from undercroft_core.names import validate_name
from undercroft_core.vocabulary import validate_kind, validate_trust

from undercroft_store.search.errors import InvalidSearch

__all__ = ["MAX_LIMIT", "MAX_OFFSET", "MAX_QUERY_CHARS", "SearchRequest"]

#: Longest query accepted, in code points.
MAX_QUERY_CHARS: Final = 4096
#: Largest page.
MAX_LIMIT: Final = 1000
#: Deepest page start.
MAX_OFFSET: Final = 1_000_000


def _positive(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidSearch(f"{name} must be an integer from {low} to {high}; got {value!r}")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search. ``ranked_at`` pins the ranking's clock: drawers filed after it are not in the population,
    and relative dates in ``when`` read against it, so pages requested at different times tile one ranking.
    ``query_vector`` is the caller's own embedding of the query (an ``external:`` vault takes no other); the
    searcher checks its dimension and finiteness against the vault's embedder."""

    query: str
    limit: int = 10
    offset: int = 0
    wing: str | None = None
    room: str | None = None
    kind: str | None = None
    min_trust: str | None = None
    ranked_at: datetime | None = None
    room_cap: int | None = None
    when: str | None = None
    when_from_query: bool = False
    slack_days: int | None = None
    as_of: date | None = None
    conventions: ReadingConventions = field(default_factory=ReadingConventions)
    query_vector: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise InvalidSearch("query must be a non-empty string")
        if len(self.query) > MAX_QUERY_CHARS:
            raise InvalidSearch(f"query is {len(self.query)} characters; the limit is {MAX_QUERY_CHARS}")
        _positive("limit", self.limit, 1, MAX_LIMIT)
        _positive("offset", self.offset, 0, MAX_OFFSET)
        if self.room_cap is not None:
            _positive("room_cap", self.room_cap, 1, MAX_LIMIT)
        try:
            for what in ("wing", "room"):
                value = getattr(self, what)
                if value is not None:
                    validate_name(value, what=what)
            if self.kind is not None:
                validate_kind(self.kind)
            if self.min_trust is not None:
                validate_trust(self.min_trust)
        except InvalidInput as error:
            raise InvalidSearch(str(error)) from None
        if self.ranked_at is not None and (not isinstance(self.ranked_at, datetime) or self.ranked_at.tzinfo is None):
            raise InvalidSearch(f"ranked_at must be a timezone-aware datetime; got {self.ranked_at!r}")
        if self.as_of is not None and not isinstance(self.as_of, date):
            raise InvalidSearch(f"as_of must be a date; got {self.as_of!r}")
        if not isinstance(self.conventions, ReadingConventions):
            raise InvalidSearch("conventions must be a ReadingConventions (see undercroft_core.language)")

    @property
    def depth(self) -> int:
        """How deep the ranking must go for this page: ``offset + limit``."""
        return self.offset + self.limit

"""``when``: the date window of a search, declared or read out of the question, by one function.

Every surface (CLI, MCP, /v1) passes its three declarations — ``when``, ``when_from_query`` and
``slack_days`` — here, with the request's reading conventions, so 07/05/2023 in a query reads the
same way everywhere. The result says what was read, the window applied (widened by the slack),
where it came from and the slack; no window in force is None, and a search answers as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Final, Literal

import regex

from undercroft_core.errors import InvalidInput
from undercroft_core.language._internal.time_arithmetic import month_span
from undercroft_core.language.conventions import ReadingConventions
from undercroft_core.language.time_mentions import scan_time_mentions

__all__ = ["DEFAULT_QUERY_SLACK_DAYS", "MAX_SLACK_DAYS", "WhenSource", "WhenWindow", "parse_when"]

WhenSource = Literal["declared", "query"]

#: Slack around a window read from the question: a writer's "yesterday" is often a day off.
DEFAULT_QUERY_SLACK_DAYS: Final = 1
#: The widest slack accepted.
MAX_SLACK_DAYS: Final = 366

_ISO: Final = regex.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


@dataclass(frozen=True, slots=True)
class WhenWindow:
    """A date window in force: what was read, the window applied, its source and slack."""

    read_start: date
    read_end: date
    source: WhenSource
    slack_days: int

    @property
    def read(self) -> str:
        """The window as read, ``2023-10-03`` or ``2023-10-01..2023-10-31``."""
        return _render(self.read_start, self.read_end)

    @property
    def applied_start(self) -> date:
        """First day of the applied window (the read window widened by the slack)."""
        return self.read_start - timedelta(days=self.slack_days)

    @property
    def applied_end(self) -> date:
        """Last day of the applied window."""
        return self.read_end + timedelta(days=self.slack_days)

    @property
    def applied(self) -> str:
        """The applied window, rendered like :attr:`read`."""
        return _render(self.applied_start, self.applied_end)

    def overlaps(self, start: date, end: date | None = None) -> bool:
        """Whether a day (or the period ``start``..``end``) falls in the applied window."""
        return start <= self.applied_end and (end or start) >= self.applied_start

    def to_dict(self) -> dict[str, object]:
        """The /v1 window object: read, applied, source, slack_days."""
        return {"read": self.read, "applied": self.applied, "source": self.source, "slack_days": self.slack_days}

    def note(self) -> str:
        """The CLI/MCP note, e.g. ``date window 2023-10-03 read from the query``."""
        origin = "read from the query" if self.source == "query" else "declared"
        return f"date window {self.read} {origin}"


def _render(first: date, last: date) -> str:
    return first.isoformat() if first == last else f"{first.isoformat()}..{last.isoformat()}"


def _iso_bound(text: str) -> tuple[date, date] | None:
    match = _ISO.match(text.strip())
    if match is None:
        return None
    year, month, day = (int(part) if part else None for part in match.groups())
    assert year is not None
    try:
        if month is None:
            return date(year, 1, 1), date(year, 12, 31)
        if day is None:
            return month_span(year, month)
        exact = date(year, month, day)
    except ValueError as error:
        raise InvalidInput(f"when: {text.strip()!r} is not a valid date") from error
    return exact, exact


def _from_text(text: str, today: date, conventions: ReadingConventions) -> tuple[date, date] | None:
    mentions = scan_time_mentions(text, today, conventions)
    if not mentions:
        return None
    starts = [date.fromisoformat(m.resolved) for m in mentions]
    ends = [date.fromisoformat(m.resolved_end or m.resolved) for m in mentions]
    return min(starts), max(ends)


def _declared(when: str, today: date, conventions: ReadingConventions) -> tuple[date, date]:
    if ".." in when:
        left, right = when.split("..", 1)
        first, last = _iso_bound(left), _iso_bound(right)
        if first is None or last is None:
            raise InvalidInput(f"when: {when!r} is not a range of ISO dates (YYYY[-MM[-DD]]..YYYY[-MM[-DD]])")
        if first[0] > last[1]:
            raise InvalidInput(f"when: {when!r} ends before it starts")
        return first[0], last[1]
    window = _iso_bound(when) or _from_text(when, today, conventions)
    if window is None:
        raise InvalidInput(
            f"when: could not read a date from {when!r}: expected YYYY-MM-DD, YYYY-MM, YYYY, a range A..B "
            "or a date expression such as 'last week'"
        )
    return window


def parse_when(
    when: str | None = None,
    *,
    when_from_query: bool = False,
    query: str | None = None,
    today: date,
    conventions: ReadingConventions | None = None,
    slack_days: int | None = None,
) -> WhenWindow | None:
    """Parse a search's date window, the same way for every surface.

    A declared ``when`` wins (it is a statement, the query is only evidence); otherwise, with
    ``when_from_query``, the dates the query names (read under ``conventions``, relative ones
    against ``today``) span the window. No window in force returns None. Slack defaults to 0
    for a declared window and :data:`DEFAULT_QUERY_SLACK_DAYS` for one read from the query.
    """
    conventions = conventions or ReadingConventions()
    if slack_days is not None and (isinstance(slack_days, bool) or not 0 <= slack_days <= MAX_SLACK_DAYS):
        raise InvalidInput(f"slack_days must be an integer from 0 to {MAX_SLACK_DAYS}; got {slack_days!r}")
    if when is not None:
        if not isinstance(when, str) or not when.strip():
            raise InvalidInput("when must be a non-empty string")
        first, last = _declared(when.strip(), today, conventions)
        return WhenWindow(first, last, "declared", slack_days if slack_days is not None else 0)
    if not when_from_query:
        return None
    if query is None:
        raise InvalidInput("when_from_query needs the query to read the window from")
    window = _from_text(query, today, conventions)
    if window is None:
        return None
    slack = slack_days if slack_days is not None else DEFAULT_QUERY_SLACK_DAYS
    return WhenWindow(window[0], window[1], "query", slack)

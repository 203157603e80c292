"""Reading conventions: how a drawer's dates are read, declared per request, never detected.

Four fields, each defaulting to prior behaviour: ``language`` (None: resolved from the text),
``date_order`` (None: declared → demonstrated → implied by language → day-first), ``week_start``
(monday) and ``calendar`` (gregorian: years read as written). One parser serves every surface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from undercroft_core.errors import InvalidInput
from undercroft_core.language.morphology import LANGUAGES

__all__ = ["CALENDARS", "DATE_ORDERS", "WEEK_STARTS", "ReadingConventions", "reading_conventions"]

#: Accepted date orders for ambiguous numeric dates like 07/05/2023.
DATE_ORDERS: Final = ("day_first", "month_first")
#: Accepted first days of the week (for "last week", "this Tuesday").
WEEK_STARTS: Final = ("monday", "sunday", "saturday")
#: Accepted calendars for numeric dates and bare marked years.
CALENDARS: Final = ("gregorian", "buddhist", "minguo", "japanese", "hijri", "jalali")


@dataclass(frozen=True, slots=True)
class ReadingConventions:
    """The four read-time conventions of one request (see :func:`reading_conventions`)."""

    language: str | None = None
    date_order: str | None = None
    week_start: str = "monday"
    calendar: str = "gregorian"

    @property
    def week_start_index(self) -> int:
        """The first day of the week as a ``date.weekday()`` number (Monday is 0)."""
        return {"monday": 0, "sunday": 6, "saturday": 5}[self.week_start]


def _choose(field: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in allowed:
        raise InvalidInput(f"{field} must be one of {', '.join(allowed)}; got {value!r}")
    return value


def reading_conventions(
    language: str | None = None,
    date_order: str | None = None,
    week_start: str | None = None,
    calendar: str | None = None,
) -> ReadingConventions:
    """Validate the four declarations of a request; None keeps the default of each."""
    return ReadingConventions(
        language=_choose("language", language, LANGUAGES),
        date_order=_choose("date_order", date_order, DATE_ORDERS),
        week_start=_choose("week_start", week_start, WEEK_STARTS) or "monday",
        calendar=_choose("calendar", calendar, CALENDARS) or "gregorian",
    )

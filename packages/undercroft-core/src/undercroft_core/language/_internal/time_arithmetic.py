"""Calendar arithmetic the scanner resolves relative expressions with."""

from __future__ import annotations

import calendar as _calendar
from datetime import date, timedelta


def month_span(year: int, month: int) -> tuple[date, date]:
    """First and last day of a Gregorian month."""
    return date(year, month, 1), date(year, month, _calendar.monthrange(year, month)[1])


def shift_months(day: date, months: int) -> tuple[int, int]:
    """The (year, month) ``months`` away from ``day``'s month."""
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def week_span(day: date, week_start: int, weeks: int = 0) -> tuple[date, date]:
    """The week containing ``day`` (``weeks`` away), starting on weekday number ``week_start``."""
    first = day - timedelta(days=(day.weekday() - week_start) % 7) + timedelta(weeks=weeks)
    return first, first + timedelta(days=6)


def weekday_relative(anchor: date, weekday: int, step: int, week_start: int) -> date:
    """ "last Tuesday" (-1): the latest one before the anchor; "next" (+1): the first after it;
    "this" (0): the one in the anchor's week."""
    if step < 0:
        return anchor - timedelta(days=(anchor.weekday() - weekday - 1) % 7 + 1)
    if step > 0:
        return anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)
    first, _last = week_span(anchor, week_start)
    return first + timedelta(days=(weekday - week_start) % 7)


def two_digit_year(value: int, anchor_year: int) -> int:
    """Read a two-digit year as the century that keeps it within ten years ahead of the anchor."""
    candidate = 2000 + value
    return candidate if candidate <= anchor_year + 10 else 1900 + value

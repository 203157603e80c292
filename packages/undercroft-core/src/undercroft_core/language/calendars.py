"""Calendar conversion: renumbered years by arithmetic, Hijri and Jalali as whole dates.

Buddhist (B.E. = C.E. + 543), Minguo (year 1 = 1912) and the five Japanese eras are Gregorian
years renumbered. Hijri (Umm al-Qura, via ``hijridate``) and Jalali (via ``jdatetime``) are
different calendars, so a date converts whole and a year is the span between two new years.
A Japanese era is bounded by its exact start: 令和1年 is 2019-05-01 to 2019-12-31.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Final

from undercroft_core.errors import InvalidInput

__all__ = ["JAPANESE_ERAS", "era_year_span", "to_gregorian", "year_span"]

#: Japanese eras: name → (first day, last day or None for the current era), Gregorian.
JAPANESE_ERAS: Final[dict[str, tuple[date, date | None]]] = {
    "明治": (date(1868, 10, 23), date(1912, 7, 29)),
    "大正": (date(1912, 7, 30), date(1926, 12, 24)),
    "昭和": (date(1926, 12, 25), date(1989, 1, 7)),
    "平成": (date(1989, 1, 8), date(2019, 4, 30)),
    "令和": (date(2019, 5, 1), None),
}
_OFFSETS: Final = {"gregorian": 0, "buddhist": -543, "minguo": 1911}


def _bad(calendar: str, year: int, month: int, day: int) -> InvalidInput:
    return InvalidInput(f"{year:04d}-{month:02d}-{day:02d} is not a valid {calendar} date")


def to_gregorian(calendar: str, year: int, month: int, day: int) -> date:
    """Convert a date written in ``calendar`` to the Gregorian date it names.

    ``calendar`` is gregorian, buddhist, minguo, hijri or jalali (a Japanese date needs its era:
    use :func:`era_year_span`). An impossible date raises InvalidInput.
    """
    try:
        if calendar in _OFFSETS:
            return date(year + _OFFSETS[calendar], month, day)
        # The two calendar libraries load with the first date written in them, not with every reader of time
        # mentions: a search that shows hits scans their dates, and rarely meets one (issue 18 §4).
        if calendar == "hijri":
            from hijridate import Hijri

            converted = Hijri(year, month, day).to_gregorian()
            return date(converted.year, converted.month, converted.day)
        if calendar == "jalali":
            import jdatetime

            result: date = jdatetime.date(year, month, day).togregorian()
            return result
    except (ValueError, OverflowError) as error:
        raise _bad(calendar, year, month, day) from error
    raise InvalidInput(
        f"calendar {calendar!r} cannot convert a bare date (expected gregorian, buddhist, minguo, hijri or jalali)"
    )


def year_span(calendar: str, year: int) -> tuple[date, date]:
    """The first and last Gregorian days of ``year`` as numbered in ``calendar``."""
    if calendar in _OFFSETS:
        gregorian = year + _OFFSETS[calendar]
        if not 1 <= gregorian <= 9999:
            raise InvalidInput(f"year {year} is outside the {calendar} range")
        return date(gregorian, 1, 1), date(gregorian, 12, 31)
    first = to_gregorian(calendar, year, 1, 1)
    following = to_gregorian(calendar, year + 1, 1, 1)
    return first, following - timedelta(days=1)


def era_year_span(era: str, year: int, month: int | None = None, day: int | None = None) -> tuple[date, date]:
    """The Gregorian span of a Japanese era year (or month, or day), bounded by the era.

    Raises InvalidInput for an unknown era, or a year, month or day the era never reached.
    """
    bounds = JAPANESE_ERAS.get(era)
    if bounds is None:
        raise InvalidInput(f"unknown Japanese era {era!r}: expected one of {', '.join(JAPANESE_ERAS)}")
    era_start, era_end = bounds
    if year < 1:
        raise InvalidInput(f"{era}{year}年 does not exist: era years start at 1")
    gregorian = era_start.year + year - 1
    try:
        if day is not None and month is not None:
            first = last = date(gregorian, month, day)
        elif month is not None:
            first = date(gregorian, month, 1)
            last = (date(gregorian + (month == 12), month % 12 + 1, 1)) - timedelta(days=1)
        else:
            first, last = date(gregorian, 1, 1), date(gregorian, 12, 31)
    except ValueError as error:
        raise InvalidInput(f"{era}{year}年{month}月{day}日 is not a valid date") from error
    first = max(first, era_start)
    if era_end is not None:
        last = min(last, era_end)
    if first > last:
        raise InvalidInput(f"{era}{year}年 falls outside the era ({era_start.isoformat()} onwards)")
    return first, last

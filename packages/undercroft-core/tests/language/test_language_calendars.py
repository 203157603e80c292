"""Calendars: known dates per calendar, era bounds, and Umm al-Qura / Jalali round-trips."""

from datetime import date, timedelta

import jdatetime
import pytest
from hijridate import Gregorian
from undercroft_core.errors import InvalidInput
from undercroft_core.language import era_year_span, to_gregorian, year_span


@pytest.mark.parametrize(
    ("calendar", "written", "gregorian"),
    [
        ("gregorian", (2023, 5, 7), date(2023, 5, 7)),
        ("buddhist", (2566, 5, 7), date(2023, 5, 7)),
        ("minguo", (112, 5, 7), date(2023, 5, 7)),
        ("hijri", (1444, 10, 1), date(2023, 4, 21)),  # Eid al-Fitr 1444, Umm al-Qura
        ("hijri", (1445, 1, 1), date(2023, 7, 19)),
        ("jalali", (1402, 1, 1), date(2023, 3, 21)),  # Nowruz 1402
        ("jalali", (1403, 1, 1), date(2024, 3, 20)),
    ],
)
def test_known_dates(calendar: str, written: tuple[int, int, int], gregorian: date) -> None:
    assert to_gregorian(calendar, *written) == gregorian


@pytest.mark.parametrize(
    ("era", "year", "month", "day", "span"),
    [
        ("令和", 1, 5, 1, (date(2019, 5, 1), date(2019, 5, 1))),
        ("令和", 1, None, None, (date(2019, 5, 1), date(2019, 12, 31))),
        ("平成", 31, None, None, (date(2019, 1, 1), date(2019, 4, 30))),
        ("平成", 1, None, None, (date(1989, 1, 8), date(1989, 12, 31))),
        ("昭和", 64, None, None, (date(1989, 1, 1), date(1989, 1, 7))),
        ("大正", 1, None, None, (date(1912, 7, 30), date(1912, 12, 31))),
        ("明治", 45, 7, None, (date(1912, 7, 1), date(1912, 7, 29))),
    ],
)
def test_japanese_eras_are_bounded(
    era: str, year: int, month: int | None, day: int | None, span: tuple[date, date]
) -> None:
    assert era_year_span(era, year, month, day) == span


def test_an_era_day_outside_the_era_is_refused() -> None:
    with pytest.raises(InvalidInput, match="falls outside the era"):
        era_year_span("令和", 1, 4, 30)
    with pytest.raises(InvalidInput, match="unknown Japanese era '光文'"):
        era_year_span("光文", 1)
    with pytest.raises(InvalidInput, match="era years start at 1"):
        era_year_span("令和", 0)


def test_impossible_dates_are_refused_precisely() -> None:
    with pytest.raises(InvalidInput, match="2023-02-30 is not a valid gregorian date"):
        to_gregorian("gregorian", 2023, 2, 30)
    with pytest.raises(InvalidInput, match="1444-13-01 is not a valid hijri date"):
        to_gregorian("hijri", 1444, 13, 1)
    with pytest.raises(InvalidInput, match="cannot convert a bare date"):
        to_gregorian("japanese", 5, 1, 1)


def test_umm_al_qura_round_trip_over_a_range() -> None:
    day = date(2020, 1, 1)
    while day < date(2026, 1, 1):
        hijri = Gregorian(day.year, day.month, day.day).to_hijri()
        assert to_gregorian("hijri", hijri.year, hijri.month, hijri.day) == day
        day += timedelta(days=3)


def test_jalali_round_trip_over_a_range() -> None:
    day = date(2020, 1, 1)
    while day < date(2026, 1, 1):
        jalali = jdatetime.date.fromgregorian(date=day)
        assert to_gregorian("jalali", jalali.year, jalali.month, jalali.day) == day
        day += timedelta(days=3)


def test_year_spans() -> None:
    assert year_span("buddhist", 2568) == (date(2025, 1, 1), date(2025, 12, 31))
    assert year_span("hijri", 1447) == (date(2025, 6, 26), date(2026, 6, 15))
    assert year_span("jalali", 1402) == (date(2023, 3, 21), date(2024, 3, 19))

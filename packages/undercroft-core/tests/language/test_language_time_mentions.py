"""The time-mention scanner: arms per language and calendar, markers, date order, the م rule."""

from datetime import date, datetime

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_core.language import (
    ReadingConventions,
    drawer_anchor,
    reading_conventions,
    resolve_date_order,
    scan_time_mentions,
)

ANCHOR = date(2023, 10, 4)  # a Wednesday


def _read(text: str, conventions: ReadingConventions | None = None) -> list[tuple[str, str, str | None, str]]:
    return [
        (text[m.start : m.end], m.resolved, m.resolved_end, m.calendar)
        for m in scan_time_mentions(text, ANCHOR, conventions)
    ]


@pytest.mark.parametrize(
    ("text", "surface", "resolved", "resolved_end"),
    [
        ("Yesterday I met the artists in Boston", "Yesterday", "2023-10-03", None),
        ("we spoke two weeks ago", "two weeks ago", "2023-09-20", None),
        ("it was 3 days ago", "3 days ago", "2023-10-01", None),
        ("see you last Tuesday", "last Tuesday", "2023-10-03", None),
        ("next Monday works", "next Monday", "2023-10-09", None),
        ("busy last week", "last week", "2023-09-25", "2023-10-01"),
        ("a month ago", "a month ago", "2023-09-01", "2023-09-30"),
        ("next month", "next month", "2023-11-01", "2023-11-30"),
        ("last year", "last year", "2022-01-01", "2022-12-31"),
        ("on 2023-05-07 we left", "2023-05-07", "2023-05-07", None),
        ("May 7, 2023 it rained", "May 7, 2023", "2023-05-07", None),
        ("le 7 mai 2023", "7 mai 2023", "2023-05-07", None),
        ("am 7. Mai 2023", "7. Mai 2023", "2023-05-07", None),
        ("el 7 de mayo de 2023", "7 de mayo de 2023", "2023-05-07", None),
        ("7 мая 2023 года", "7 мая 2023", "2023-05-07", None),
        ("٧ مايو ٢٠٢٣", "٧ مايو ٢٠٢٣", "2023-05-07", None),
        ("in October 2023", "October 2023", "2023-10-01", "2023-10-31"),
        ("on the 3rd of October", "3rd of October", "2023-10-03", None),
        ("gestern war es kalt", "gestern", "2023-10-03", None),
        ("ذهبت أمس", "أمس", "2023-10-03", None),
        ("الأسبوع الماضي", "الأسبوع الماضي", "2023-09-25", "2023-10-01"),
        ("منذ ثلاثة أيام", "منذ ثلاثة أيام", "2023-10-01", None),
        ("يوم الثلاثاء الماضي", "يوم الثلاثاء الماضي", "2023-10-03", None),
    ],
)
def test_arms_resolve_against_the_anchor(text: str, surface: str, resolved: str, resolved_end: str | None) -> None:
    assert [m[:3] for m in _read(text)] == [(surface, resolved, resolved_end)]


def test_relative_mentions_need_an_anchor() -> None:
    assert scan_time_mentions("yesterday and 2023-05-07", None)[0].resolved == "2023-05-07"
    assert len(scan_time_mentions("yesterday and 2023-05-07", None)) == 1


def test_week_start_is_declared() -> None:
    sunday = reading_conventions(week_start="sunday")
    assert _read("last week", sunday)[0][1:3] == ("2023-09-24", "2023-09-30")


def test_date_order_chain() -> None:
    assert _read("07/05/2023")[0][1] == "2023-05-07"  # default day-first
    assert _read("07/05/2023", reading_conventions(date_order="month_first"))[0][1] == "2023-07-05"
    # demonstrated: 05/13/2023 can only be month-first, so 07/05 in the same drawer is 5 July
    assert [m[1] for m in _read("07/05/2023 and 05/13/2023")] == ["2023-07-05", "2023-05-13"]
    assert resolve_date_order("05/13/2023", ReadingConventions()) == ("month_first", "demonstrated")
    assert resolve_date_order("07/05/2023", ReadingConventions(language="ar")) == ("day_first", "language")
    assert resolve_date_order("05/13/2023 13/05/2023", ReadingConventions()) == ("day_first", "default")
    assert resolve_date_order("13/05/2023", ReadingConventions(date_order="month_first")) == ("month_first", "declared")


@pytest.mark.parametrize(
    ("text", "conventions", "expected"),
    [
        ("07/05/2566", {"calendar": "buddhist"}, ("2023-05-07", None, "buddhist")),
        ("07/05/2566", {}, None),  # undeclared: read as written, a year 543 high — no valid date lost
        ("1402/02/17", {"calendar": "jalali"}, ("2023-05-07", None, "jalali")),
        ("15/10/1444", {"calendar": "hijri"}, ("2023-05-05", None, "hijri")),
        ("07/05/112", {"calendar": "minguo"}, ("2023-05-07", None, "minguo")),
        ("15/10/1444هـ", {}, ("2023-05-05", None, "hijri")),  # a marker outranks the declaration
        ("15/10/1444 هـ", {"calendar": "buddhist"}, ("2023-05-05", None, "hijri")),
        ("令和1年5月1日", {}, ("2019-05-01", None, "japanese")),
        ("令和元年", {}, ("2019-05-01", "2019-12-31", "japanese")),
        ("平成31年", {}, ("2019-01-01", "2019-04-30", "japanese")),
        ("民國112年5月7日", {}, ("2023-05-07", None, "minguo")),
        ("พ.ศ. 2568", {}, ("2025-01-01", "2025-12-31", "buddhist")),
        ("2568พ.ศ.", {}, ("2025-01-01", "2025-12-31", "buddhist")),
        ("ค.ศ.2023", {"calendar": "buddhist"}, ("2023-01-01", "2023-12-31", "gregorian")),
        ("1447هـ", {}, ("2025-06-26", "2026-06-15", "hijri")),
        ("西暦2023年", {}, ("2023-01-01", "2023-12-31", "gregorian")),
        ("2023 ميلادي", {"calendar": "hijri"}, ("2023-01-01", "2023-12-31", "gregorian")),
    ],
)
def test_calendars_and_era_markers(text: str, conventions: dict[str, str], expected: tuple[str, ...] | None) -> None:
    found = _read(text, reading_conventions(**conventions))
    if expected is None:
        assert [m[1] for m in found] == ["2566-05-07"]
    else:
        assert found[0][1:] == expected


def test_disagreeing_markers_leave_the_declaration_standing() -> None:
    found = _read("พ.ศ. 2566 ค.ศ.", reading_conventions(calendar="buddhist"))
    assert found[0][1:] == ("2023-01-01", "2023-12-31", "buddhist")


def test_a_bare_year_is_a_quantity() -> None:
    assert _read("we sold 2568 units in 1995") == []


@pytest.mark.parametrize(
    ("text", "year"),
    [
        ("سنة ٢٠٢٣م", "2023"),  # a year noun governs, glued
        ("عام ١٩٩٥ م", "1995"),  # a year noun governs, spaced
        ("في العام ٢٠٠٠م", "2000"),
        ("وُلد ١٩٩٥م", "1995"),  # glued: how Arabic writes a year
        ("جريت ١٥٠٠ م", None),  # spaced, no year noun: a quantity (metres)
        ("٥٠٠م", None),  # three digits: the Gregorian gate wants four
        ("عام ١٤٤٥ه", "2023"),  # bare ه under a year noun: Hijri 1445 starts 2023-07-19
    ],
)
def test_the_arabic_bare_marker_rule(text: str, year: str | None) -> None:
    found = _read(text)
    if year is None:
        assert found == []
    else:
        assert found[0][1][:4] == year


def test_the_pinned_cost_of_the_glued_marker() -> None:
    # على ارتفاع ٢٥٠٠م is an altitude, and it reads as the year 2500: nothing in the string
    # separates the two, and reading the number's size would be inference. Pinned as the price.
    assert _read("على ارتفاع ٢٥٠٠م")[0][1:3] == ("2500-01-01", "2500-12-31")


def test_month_name_arms_are_gregorian_only() -> None:
    assert _read("٧ مايو ٢٠٢٣", reading_conventions(calendar="hijri"))[0][1:] == ("2023-05-07", None, "gregorian")


def test_mentions_carry_offsets_and_dates_never_words() -> None:
    (mention,) = scan_time_mentions("Met Anna yesterday.", ANCHOR)
    record = mention.to_record()
    assert record == {"start": 9, "end": 18, "kind": "relative_day", "resolved": "2023-10-03"}
    assert "yesterday" not in repr(mention)


def test_drawer_anchor() -> None:
    assert drawer_anchor("2023-10-04", "2024-01-01T10:00:00Z") == date(2023, 10, 4)
    assert drawer_anchor(None, "2024-01-01T10:00:00Z") == date(2024, 1, 1)
    assert drawer_anchor(None, datetime(2024, 2, 3, 4, 5)) == date(2024, 2, 3)
    assert drawer_anchor(None, None) is None
    with pytest.raises(InvalidInput, match="anchor 'yesterday' is not an ISO 8601 date or timestamp"):
        drawer_anchor("yesterday", None)


def test_invalid_dates_are_skipped_not_invented() -> None:
    assert _read("31/02/2023 and 2023-13-01") == []

"""when windows: declared or read from the query, by one function, with slack and source."""

from datetime import date

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_core.language import DEFAULT_QUERY_SLACK_DAYS, parse_when, reading_conventions

TODAY = date(2023, 10, 4)


@pytest.mark.parametrize(
    ("when", "read"),
    [
        ("2023-10-03", "2023-10-03"),
        ("2023-10", "2023-10-01..2023-10-31"),
        ("2023", "2023-01-01..2023-12-31"),
        ("2023-09..2023-10-03", "2023-09-01..2023-10-03"),
        ("last week", "2023-09-25..2023-10-01"),
        ("yesterday", "2023-10-03"),
    ],
)
def test_declared_windows(when: str, read: str) -> None:
    window = parse_when(when, today=TODAY)
    assert window is not None
    assert (window.read, window.applied, window.source, window.slack_days) == (read, read, "declared", 0)


def test_window_read_from_the_query() -> None:
    window = parse_when(when_from_query=True, query="Which city was Calvin at on October 3, 2023?", today=TODAY)
    assert window is not None
    assert window.to_dict() == {
        "read": "2023-10-03",
        "applied": "2023-10-02..2023-10-04",
        "source": "query",
        "slack_days": DEFAULT_QUERY_SLACK_DAYS,
    }
    assert window.note() == "date window 2023-10-03 read from the query"
    assert window.overlaps(date(2023, 10, 2)) and not window.overlaps(date(2023, 10, 5))
    assert window.overlaps(date(2023, 9, 1), date(2023, 10, 2))


def test_the_query_reads_under_the_declared_conventions() -> None:
    day_first = parse_when(when_from_query=True, query="what happened on 07/05/2023", today=TODAY, slack_days=0)
    month_first = parse_when(
        when_from_query=True,
        query="what happened on 07/05/2023",
        today=TODAY,
        slack_days=0,
        conventions=reading_conventions(date_order="month_first"),
    )
    assert day_first is not None and month_first is not None
    assert (day_first.read, month_first.read) == ("2023-05-07", "2023-07-05")


def test_no_window_in_force() -> None:
    assert parse_when(today=TODAY) is None
    assert parse_when(when_from_query=True, query="where is Calvin", today=TODAY) is None
    assert parse_when(query="on 2023-10-03", today=TODAY) is None  # not asked to read the query


def test_declared_wins_over_the_query() -> None:
    window = parse_when("2022", when_from_query=True, query="on 2023-10-03", today=TODAY)
    assert window is not None and (window.read, window.source) == ("2022-01-01..2022-12-31", "declared")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"when": "soonish"}, "when: could not read a date from 'soonish': expected YYYY-MM-DD"),
        ({"when": "2023-02-30"}, "when: '2023-02-30' is not a valid date"),
        ({"when": "2023-10..2023-01"}, "when: '2023-10..2023-01' ends before it starts"),
        ({"when": "2023..later"}, "is not a range of ISO dates"),
        ({"when": "  "}, "when must be a non-empty string"),
        ({"when": "2023", "slack_days": -1}, "slack_days must be an integer from 0 to 366; got -1"),
        ({"when": "2023", "slack_days": 400}, "slack_days must be an integer from 0 to 366; got 400"),
        ({"when_from_query": True}, "when_from_query needs the query"),
    ],
)
def test_bad_declarations_are_refused_precisely(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_when(today=TODAY, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("date_order", "middle_first", "date_order must be one of day_first, month_first; got 'middle_first'"),
        ("week_start", "friday", "week_start must be one of monday, sunday, saturday; got 'friday'"),
        ("calendar", "julian", "calendar must be one of gregorian, buddhist, minguo, japanese, hijri, jalali"),
        ("language", "xx", "language must be one of en, de"),
    ],
)
def test_bad_conventions_are_refused_precisely(field: str, value: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        reading_conventions(**{field: value})

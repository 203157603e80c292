"""The time-mention scanner: dates and relative expressions, resolved against the drawer's anchor.

A mention carries its offsets, its kind, the calendar it was read in and the resolved ISO date
(``resolved``), or the period's first and last days (``resolved`` + ``resolved_end``). It never
carries the words: what is stored is offsets and dates only; a reader slices the text itself.

Reading follows the declared conventions (:mod:`~undercroft_core.language.conventions`), except
where the writing says more: an era marker beside a year outranks the declared calendar, and an
unambiguous numeric date in the same drawer states the writer's date order by example.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Final, Literal

import regex

from undercroft_core.errors import InvalidInput
from undercroft_core.language._internal import time_arithmetic as arith
from undercroft_core.language._internal.era_markers import MARKED_YEAR, read_markers
from undercroft_core.language._internal.time_words import (
    MONTHS,
    NUMBER_WORDS,
    RELATIVE_DAYS,
    STEPS,
    UNITS,
    WEEKDAYS,
)
from undercroft_core.language.calendars import era_year_span, to_gregorian, year_span
from undercroft_core.language.conventions import ReadingConventions

__all__ = ["DateOrderSource", "TimeMention", "drawer_anchor", "resolve_date_order", "scan_time_mentions"]

DateOrderSource = Literal["declared", "demonstrated", "language", "default"]

_ALEF_FORMS: Final = ("أ", "إ", "آ", "ٱ")
_FLAGS: Final = regex.VERSION1  # the shadow text is lower-cased, so no IGNORECASE (slow) is needed
_WORD: Final = re.compile(r"\w+")
_WHITESPACE: Final = regex.compile(r"\s+")  # compiled once: module-level regex.sub pays a cache lookup per call


def _alternation(words: object) -> str:
    ordered = sorted(words, key=len, reverse=True)  # type: ignore[call-overload]
    return "|".join(regex.escape(word).replace(r"\ ", r"\s+") for word in ordered)


_MONTH: Final = "{months}"  # filled per drawer with only the month names it contains
_ERA = (
    r"(?P<era>令和|平成|昭和|大正|明治)\s*(?P<y>\d{1,2}|元)\s*年"
    r"(?:\s*(?P<m>\d{1,2})\s*月(?:\s*(?P<d>\d{1,2})\s*日)?)?"
)
_MINGUO = r"(?:民國|民国)\s*(?P<y>\d{1,3})\s*年(?:\s*(?P<m>\d{1,2})\s*月(?:\s*(?P<d>\d{1,2})\s*日)?)?"
_YMD = r"(?<![\d./-])(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?![\d])"
_DMY = r"(?<![\d./-])(?P<a>\d{1,2})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{3}|\d{2})(?![\d])"
_DAY_MONTH = (
    rf"(?<!\w)(?P<d>\d{{1,2}})(?:st|nd|rd|th|er|\.|º)?\s+(?:of\s+|de\s+)?(?P<month>{_MONTH})"
    rf"(?:,?\s+(?:de\s+)?(?P<y>\d{{4}}))?(?!\w)"
)
_MONTH_DAY = rf"(?<!\w)(?P<month>{_MONTH})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?(?!\w)"
_MONTH_YEAR = rf"(?<!\w)(?P<month>{_MONTH})\s+(?:de\s+)?(?P<y>\d{{4}})(?!\w)"
_NUMBER = rf"\d+|{_alternation(NUMBER_WORDS)}"
_AGO = rf"(?<!\w)(?P<n>{_NUMBER})\s+(?P<unit>days?|weeks?|months?|years?)\s+ago(?!\w)"
_AR_COUNTS: Final = {"ثلاثة": 3, "ثلاث": 3, "اربعة": 4, "اربع": 4, "خمسة": 5, "خمس": 5, "ستة": 6, "عشرة": 10}
_AGO_AR = rf"(?<!\w)منذ\s+(?:(?P<n>\d+|{_alternation(_AR_COUNTS)})\s+)?(?P<unit>{_alternation(UNITS)})(?!\w)"
_STEP_UNIT = r"(?<!\w)(?P<step>last|past|previous|this|next|coming)\s+(?P<unit>week|month|year)(?!\w)"
_STEP_UNIT_AR = (
    r"(?<!\w)(?P<unit>الاسبوع|الشهر|العام|السنة)\s+"
    r"(?P<step>الماضي|الماضية|الفائت|الحالي|القادم|القادمة|المقبل)(?!\w)"
)
_WEEKDAY = rf"(?<!\w)(?P<step>last|this|next|on)\s+(?P<day>{_alternation(k for k in WEEKDAYS if k.isascii())})(?!\w)"
_WEEKDAY_AR = (
    rf"(?<!\w)(?:يوم\s+)?(?P<day>{_alternation(k for k in WEEKDAYS if not k.isascii())})\s+"
    r"(?P<step>الماضي|القادم|المقبل)(?!\w)"
)
_RELATIVE_DAY = r"(?<!\w)(?P<word>{words})(?!\w)"
_DMY_RE: Final = regex.compile(_DMY, _FLAGS)


@dataclass(frozen=True, slots=True)
class TimeMention:
    """One date or period named in a text: offsets, kind, calendar read in, resolved ISO dates."""

    start: int
    end: int
    kind: str
    resolved: str
    resolved_end: str | None = None
    calendar: str = "gregorian"

    def to_record(self) -> dict[str, object]:
        """The mention as stored: offsets and dates only, never the words."""
        record: dict[str, object] = {"start": self.start, "end": self.end, "kind": self.kind, "resolved": self.resolved}
        if self.resolved_end is not None:
            record["resolved_end"] = self.resolved_end
        if self.calendar != "gregorian":
            record["calendar"] = self.calendar
        return record


def drawer_anchor(content_date: date | datetime | str | None, filed_at: date | datetime | str | None) -> date | None:
    """The date a drawer's relative mentions resolve against: content_date, else filed_at."""
    for value in (content_date, filed_at):
        if value is None or value == "":
            continue
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
        except ValueError as error:
            raise InvalidInput(f"anchor {value!r} is not an ISO 8601 date or timestamp") from error
    return None


def resolve_date_order(text: str, conventions: ReadingConventions) -> tuple[str, DateOrderSource]:
    """Which way 07/05/2023 reads in ``text``: declared → demonstrated → language → day-first."""
    if conventions.date_order is not None:
        return conventions.date_order, "declared"
    seen: set[str] = set()
    for match in _DMY_RE.finditer(text):
        first, second = int(match["a"]), int(match["b"])
        if first > 12 >= second:
            seen.add("day_first")
        elif second > 12 >= first:
            seen.add("month_first")
    if len(seen) == 1:
        return seen.pop(), "demonstrated"
    if conventions.language == "ar":  # CLDR: d/M/y in every Arabic territory
        return "day_first", "language"
    return "day_first", "default"


def _span(kind: str, first: date, last: date | None, calendar: str, match: regex.Match[str]) -> TimeMention:
    end = None if last is None or last == first else last.isoformat()
    return TimeMention(match.start(), match.end(), kind, first.isoformat(), end, calendar)


_Handler = Callable[[regex.Match[str], str, "_Context"], TimeMention | None]


@dataclass(frozen=True, slots=True)
class _Context:
    anchor: date | None
    conventions: ReadingConventions
    date_order: str


def _numeric(calendar: str, year: int, month: int, day: int, match: regex.Match[str]) -> TimeMention | None:
    try:
        if calendar == "japanese":  # no era written: the year reads as written
            calendar = "gregorian"
        return _span("date", to_gregorian(calendar, year, month, day), None, calendar, match)
    except InvalidInput:
        return None


def _on_era(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    year = 1 if match["y"] == "元" else int(match["y"])
    month = int(match["m"]) if match["m"] else None
    day = int(match["d"]) if match["d"] else None
    try:
        first, last = era_year_span(match["era"], year, month, day)
    except InvalidInput:
        return None
    return _span("date" if day else "month" if month else "year", first, last, "japanese", match)


def _on_minguo(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    year = int(match["y"])
    if match["d"]:
        return _numeric("minguo", year, int(match["m"]), int(match["d"]), match)
    if match["m"]:
        first, last = arith.month_span(year + 1911, int(match["m"])) if 1 <= int(match["m"]) <= 12 else (None, None)
        return None if first is None or last is None else _span("month", first, last, "minguo", match)
    first, last = year_span("minguo", year)
    return _span("year", first, last, "minguo", match)


def _calendar_for(match: regex.Match[str], shadow: str, ctx: _Context) -> str:
    # The writer's marker about this one date outranks the declaration about the corpus.
    return read_markers(shadow, match.start(), match.end()).calendar or ctx.conventions.calendar


def _on_ymd(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    calendar = _calendar_for(match, shadow, ctx)
    return _numeric(calendar, int(match["y"]), int(match["m"]), int(match["d"]), match)


def _on_dmy(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    calendar = _calendar_for(match, shadow, ctx)
    first, second, year = int(match["a"]), int(match["b"]), int(match["y"])
    day, month = (first, second) if ctx.date_order == "day_first" else (second, first)
    if len(match["y"]) == 2:
        if calendar not in ("gregorian", "japanese"):
            return None
        year = arith.two_digit_year(year, (ctx.anchor or date.today()).year if ctx.anchor else 2000)
    elif len(match["y"]) == 3 and calendar != "minguo":
        return None
    return _numeric(calendar, year, month, day, match)


def _year_or_anchor(match: regex.Match[str], ctx: _Context) -> int | None:
    if match["y"]:
        return int(match["y"])
    return ctx.anchor.year if ctx.anchor else None


def _on_day_month(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    # Month-name arms are Gregorian-only: no calendar and no marker is consulted.
    year = _year_or_anchor(match, ctx)
    month = MONTHS.get(_WHITESPACE.sub(" ", match["month"].casefold()))
    if year is None or month is None:
        return None
    return _numeric("gregorian", year, month, int(match["d"]), match)


def _on_month_year(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    month = MONTHS.get(_WHITESPACE.sub(" ", match["month"].casefold()))
    if month is None:
        return None
    first, last = arith.month_span(int(match["y"]), month)
    return _span("month", first, last, "gregorian", match)


def _on_marked_year(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    reading = read_markers(shadow, match.start(), match.end())
    if not reading.marked:
        return None  # 2568 alone is a quantity
    calendar = reading.calendar or ctx.conventions.calendar
    if calendar == "japanese":
        return None
    try:
        first, last = year_span(calendar, int(match["y"]))
    except InvalidInput:
        return None
    end = None if last == first else last.isoformat()
    return TimeMention(reading.start, reading.end, "year", first.isoformat(), end, calendar)


def _count(word: str | None) -> int:
    if word is None:
        return 1
    folded = _WHITESPACE.sub(" ", word.casefold())
    if folded.isdigit():
        return int(folded)
    return NUMBER_WORDS.get(folded) or _AR_COUNTS.get(folded, 1)


def _relative_unit(
    unit: str, steps: int, anchor: date, ctx: _Context, match: regex.Match[str], ago: bool
) -> TimeMention:
    if unit == "day":
        return _span("relative_day", anchor + timedelta(days=steps), None, "gregorian", match)
    if unit == "week":
        if ago:  # "two weeks ago" names a day, the same weekday two weeks back
            return _span("relative_day", anchor + timedelta(weeks=steps), None, "gregorian", match)
        first, last = arith.week_span(anchor, ctx.conventions.week_start_index, steps)
        return _span("relative_week", first, last, "gregorian", match)
    if unit == "month":
        first, last = arith.month_span(*arith.shift_months(anchor, steps))
        return _span("relative_month", first, last, "gregorian", match)
    first, last = date(anchor.year + steps, 1, 1), date(anchor.year + steps, 12, 31)
    return _span("relative_year", first, last, "gregorian", match)


def _on_ago(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    if ctx.anchor is None:
        return None
    folded = match["unit"].casefold()
    unit, multiplier = UNITS.get(folded, (folded.rstrip("s"), 1))
    count = _count(match["n"]) * multiplier if match["n"] else multiplier
    return _relative_unit(unit, -count, ctx.anchor, ctx, match, ago=True)


_AR_UNITS: Final = {"الاسبوع": "week", "الشهر": "month", "العام": "year", "السنة": "year"}


def _on_step_unit(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    if ctx.anchor is None:
        return None
    unit = _AR_UNITS.get(match["unit"], match["unit"].casefold())
    return _relative_unit(unit, STEPS[match["step"].casefold()], ctx.anchor, ctx, match, ago=False)


def _on_weekday(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    if ctx.anchor is None:
        return None
    word = match["step"].casefold()
    step = -1 if word == "on" else STEPS[word]  # "on Tuesday" in a record: the one just past
    day = arith.weekday_relative(ctx.anchor, WEEKDAYS[match["day"].casefold()], step, ctx.conventions.week_start_index)
    return _span("weekday", day, None, "gregorian", match)


def _on_relative_day(match: regex.Match[str], shadow: str, ctx: _Context) -> TimeMention | None:
    if ctx.anchor is None:
        return None
    offset = RELATIVE_DAYS[_WHITESPACE.sub(" ", match["word"].casefold())]
    return _span("relative_day", ctx.anchor + timedelta(days=offset), None, "gregorian", match)


def _first_words(keys: object) -> dict[str, tuple[str, ...]]:
    index: dict[str, tuple[str, ...]] = {}
    for key in keys:  # type: ignore[attr-defined]
        first = _WORD.match(key)
        if first is not None:
            index[first.group()] = (*index.get(first.group(), ()), key)
    return index


_MONTH_KEYS: Final = _first_words(MONTHS)
_RELATIVE_KEYS: Final = _first_words(RELATIVE_DAYS)
_DIGIT: Final = re.compile(r"\d")

# (pattern, handler, the words one of which the text must contain; None: needs a digit)
_STATIC: Final[tuple[tuple[regex.Pattern[str], _Handler, frozenset[str] | None], ...]] = tuple(
    (regex.compile(pattern, _FLAGS), handler, gate)
    for pattern, handler, gate in (
        (_ERA, _on_era, None),
        (_MINGUO, _on_minguo, None),
        (_YMD, _on_ymd, None),
        (_DMY, _on_dmy, None),
        (MARKED_YEAR, _on_marked_year, None),
        (_AGO, _on_ago, frozenset({"ago"})),
        (_AGO_AR, _on_ago, frozenset({"منذ"})),
        (_STEP_UNIT, _on_step_unit, frozenset({"week", "month", "year"})),
        (_STEP_UNIT_AR, _on_step_unit, frozenset(STEPS)),
        (_WEEKDAY, _on_weekday, frozenset(WEEKDAYS)),
        (_WEEKDAY_AR, _on_weekday, frozenset(WEEKDAYS)),
    )
)


@lru_cache(maxsize=512)
def _month_arms(names: frozenset[str]) -> tuple[tuple[regex.Pattern[str], _Handler], ...]:
    months = _alternation(names)
    return tuple(
        (regex.compile(pattern.replace("{months}", months), _FLAGS), handler)
        for pattern, handler in (
            (_DAY_MONTH, _on_day_month),
            (_MONTH_DAY, _on_day_month),
            (_MONTH_YEAR, _on_month_year),
        )
    )


@lru_cache(maxsize=512)
def _relative_arm(words: frozenset[str]) -> regex.Pattern[str]:
    return regex.compile(_RELATIVE_DAY.replace("{words}", _alternation(words)), _FLAGS)


def _arms(shadow: str) -> Iterator[tuple[regex.Pattern[str], _Handler]]:
    words = set(_WORD.findall(shadow))
    has_digit = _DIGIT.search(shadow) is not None
    if "年" in shadow:  # both arms need it; 令和元年 has no digit
        yield from ((pattern, handler) for pattern, handler, _gate in _STATIC[:2])
    if has_digit:
        yield from ((pattern, handler) for pattern, handler, _gate in _STATIC[2:4])
        months = frozenset(name for word in words & _MONTH_KEYS.keys() for name in _MONTH_KEYS[word])
        if months:  # before the marked year: a month-name date is Gregorian, its marker unread
            yield from _month_arms(months)
        yield _STATIC[4][0], _STATIC[4][1]
    for pattern, handler, gate in _STATIC[5:]:
        if gate is not None and not words.isdisjoint(gate):
            yield pattern, handler
    relative = frozenset(key for word in words & _RELATIVE_KEYS.keys() for key in _RELATIVE_KEYS[word])
    if relative:
        yield _relative_arm(relative), _on_relative_day


def _candidates(shadow: str, ctx: _Context) -> Iterator[TimeMention]:
    for pattern, handler in _arms(shadow):
        for match in pattern.finditer(shadow):
            mention = handler(match, shadow, ctx)
            if mention is not None:
                yield mention


def _shadow(text: str) -> str:
    # Lower-cased and alef-unified, one character for one, so offsets stay the text's own.
    lowered = text.lower()
    if len(lowered) != len(text):  # a character whose lower case is longer (İ): map one by one
        lowered = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)
    # Four C-level replaces are several times faster than translate() on non-ASCII text.
    for alef in _ALEF_FORMS:
        lowered = lowered.replace(alef, "ا")
    return lowered


def scan_time_mentions(
    text: str, anchor: date | None = None, conventions: ReadingConventions | None = None
) -> list[TimeMention]:
    """Find every date and relative expression in ``text`` and resolve it, in text order.

    Relative expressions ("yesterday", "two weeks ago", "last Tuesday") resolve against
    ``anchor`` (see :func:`drawer_anchor`) and are skipped without one. Where two readings
    overlap, the earlier arm in the scanner's order (most specific first) keeps the span.
    """
    conventions = conventions or ReadingConventions()
    shadow = _shadow(text)
    order, _source = resolve_date_order(shadow, conventions)
    ctx = _Context(anchor, conventions, order)
    # A byte per character marks the spans already taken: one C-level find tests an overlap.
    # A zero-width span (which no arm yields today) marks nothing, so those keep the pairwise test.
    covered = bytearray(len(shadow) + 1)
    empty: list[tuple[int, int]] = []
    found: list[TimeMention] = []
    for mention in _candidates(shadow, ctx):
        start, end = mention.start, mention.end
        if start < end:
            if covered.find(1, start, end) != -1 or any(start < e and s < end for s, e in empty):
                continue
            covered[start:end] = b"\x01" * (end - start)
        else:
            if any(start < e and s < end for s, e in _spans(found)):
                continue
            empty.append((start, end))
        found.append(mention)
    return sorted(found, key=lambda mention: mention.start)


def _spans(found: list[TimeMention]) -> list[tuple[int, int]]:
    return [(mention.start, mention.end) for mention in found]

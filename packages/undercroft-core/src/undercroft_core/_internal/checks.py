"""Field checks shared by the domain model: ISO dates and timestamps, bounded labels, offsets."""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime

from undercroft_core.errors import InvalidInput

__all__ = ["check_date", "check_date_or_timestamp", "check_label", "check_offset_pair", "check_timestamp"]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# RFC 3339 in UTC with an explicit Z, optional fraction up to microseconds: one spelling per instant.
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")


def check_date(value: object, what: str) -> str:
    """A calendar date spelled ``YYYY-MM-DD``."""
    if not isinstance(value, str) or _DATE.fullmatch(value) is None:
        raise InvalidInput(f"{what} must be an ISO date YYYY-MM-DD, got {value!r}")
    try:
        date.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{what} is not a real calendar date: {value!r}") from None
    return value


def check_timestamp(value: object, what: str) -> str:
    """A UTC instant spelled ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``."""
    if not isinstance(value, str) or _TIMESTAMP.fullmatch(value) is None:
        raise InvalidInput(f"{what} must be a UTC timestamp YYYY-MM-DDTHH:MM:SS[.ffffff]Z, got {value!r}")
    try:
        datetime.fromisoformat(value[:-1] + "+00:00")
    except ValueError:
        raise InvalidInput(f"{what} is not a real instant: {value!r}") from None
    return value


def check_date_or_timestamp(value: object, what: str) -> str:
    """Either spelling above (a content date may be a day or an instant)."""
    if isinstance(value, str) and "T" in value:
        return check_timestamp(value, what)
    return check_date(value, what)


def check_label(value: object, what: str, *, max_chars: int) -> str:
    """A non-empty string of at most ``max_chars`` with no control or invisible characters."""
    if not isinstance(value, str) or value == "":
        raise InvalidInput(f"{what} must be a non-empty string, got {value!r}")
    if len(value) > max_chars:
        raise InvalidInput(f"{what} is {len(value)} characters, the limit is {max_chars}")
    for position, character in enumerate(value):
        category = unicodedata.category(character)
        if category[0] == "C" or category in ("Zl", "Zp"):
            raise InvalidInput(f"{what} contains the control character U+{ord(character):04X} at position {position}")
    return value


def check_offset_pair(start: object, end: object, length: int | None, what: str) -> None:
    """``0 <= start < end`` (and ``end <= length`` when the text length is known)."""
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidInput(f"{what} {name} must be a non-negative integer, got {value!r}")
    assert isinstance(start, int) and isinstance(end, int)
    if start >= end:
        raise InvalidInput(f"{what} span [{start}, {end}) is empty or reversed")
    if length is not None and end > length:
        raise InvalidInput(f"{what} span [{start}, {end}) runs past the end of the content ({length} characters)")

"""Era markers written beside a year: read before it, after it, or glued to it.

An explicit marker (พ.ศ., ค.ศ., هـ, ميلادي, 民國, 公元, 西暦, …) names its calendar wherever it
stands. A bare م or ه (also metres, or a list letter) is read only where the writing confirms it:
a year noun governs the number (سنة ٢٠٢٣م, عام ١٩٩٥ م), or the letter is glued to a four-digit
year with no separator at all (١٩٩٥م). Markers on both sides that disagree settle nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import regex

from undercroft_core.language._internal.time_words import ERA_MARKERS, YEAR_NOUNS

_BARE: Final = {"م": "gregorian", "ه": "hijri"}
_BY_LENGTH: Final = sorted(ERA_MARKERS, key=len, reverse=True)
_LETTER: Final = regex.compile(r"\p{L}")
_WORD_BEFORE: Final = regex.compile(r"(\p{L}+)\s*$")
_SPACES: Final = " \u00a0\u202f\t"
# The characters a marker (or a bare letter) can start with, and the ones a marker can end with.
_AFTER_FIRST: Final = frozenset(marker[0] for marker in ERA_MARKERS) | frozenset(_BARE)
_BEFORE_LAST: Final = frozenset(marker[-1] for marker in ERA_MARKERS)


@dataclass(frozen=True, slots=True)
class MarkerReading:
    """What the markers beside a number say: the calendar (None if silent or split) and span."""

    calendar: str | None
    start: int
    end: int
    marked: bool


def _after(shadow: str, start: int, end: int) -> tuple[str, int] | None:
    glued = end
    spaced = end + 1 if end < len(shadow) and shadow[end] in _SPACES else end
    # Nothing can follow unless a marker or a bare letter starts right there: one set test
    # saves the marker loop for almost every number.
    if (glued >= len(shadow) or shadow[glued] not in _AFTER_FIRST) and (
        spaced >= len(shadow) or shadow[spaced] not in _AFTER_FIRST
    ):
        return None
    for position in {glued, spaced}:
        for marker in _BY_LENGTH:
            if shadow.startswith(marker, position):
                tail = position + len(marker)
                if marker[-1].isalpha() and tail < len(shadow) and _LETTER.match(shadow, tail):
                    continue  # the marker is only the start of a longer word
                return ERA_MARKERS[marker], tail
    if end < len(shadow) and sum(ch.isdigit() for ch in shadow[start:end]) == 4:
        for position in (glued, spaced):
            letter = shadow[position] if position < len(shadow) else ""
            if letter in _BARE and not _LETTER.match(shadow, position + 1):
                # glued needs nothing more; spaced needs a governing year noun
                if position == glued or _governed(shadow, start):
                    return _BARE[letter], position + 1
    return None


def _before(shadow: str, start: int) -> tuple[str, int] | None:
    position = start - 1 if start > 0 and shadow[start - 1] in _SPACES else start
    if position == 0 or shadow[position - 1] not in _BEFORE_LAST:
        return None
    for marker in _BY_LENGTH:
        if shadow.endswith(marker, 0, position):
            head = position - len(marker)
            if marker[0].isalpha() and head > 0 and _LETTER.match(shadow, head - 1):
                continue
            return ERA_MARKERS[marker], head
    return None


def _governed(shadow: str, start: int) -> bool:
    word = _WORD_BEFORE.search(shadow, max(0, start - 24), start)
    return word is not None and word.group(1) in YEAR_NOUNS


def read_markers(shadow: str, start: int, end: int) -> MarkerReading:
    """Read the era markers around the number at ``shadow[start:end]``."""
    before = _before(shadow, start)
    after = _after(shadow, start, end)
    new_start = before[1] if before else start
    new_end = after[1] if after else end
    if before and after and before[0] != after[0]:
        return MarkerReading(None, new_start, new_end, True)
    chosen = before or after
    return MarkerReading(chosen[0] if chosen else None, new_start, new_end, chosen is not None)


#: a bare three- or four-digit number: a year only where a marker names it
MARKED_YEAR: Final = r"(?<!\d[./:-]?)(?P<y>\d{3,4})(?![./:-]?\d)"

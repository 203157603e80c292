"""Values every surface accepts the same way: an ISO date, an ISO 8601 instant with its timezone, a vector.

A parser refuses with ``ValueRefused``, which says what was expected and what came; each adapter phrases it
for its own subject (a CLI option, a tool argument, an HTTP field).
"""

from __future__ import annotations

from datetime import date, datetime

__all__ = ["MAX_VECTOR_COMPONENTS", "ValueRefused", "parse_day", "parse_instant", "parse_vector"]

MAX_VECTOR_COMPONENTS = 65_536
"""More components than any embedding space this engine accepts (the store checks the exact dimension)."""


class ValueRefused(ValueError):
    """A value of the wrong form: ``expected`` is a noun phrase (``"an ISO date (YYYY-MM-DD)"``)."""

    def __init__(self, expected: str, value: str, *, missing_timezone: bool = False) -> None:
        """Refuse ``value``; ``missing_timezone`` when it parsed but names no offset."""
        super().__init__(expected, value)
        self.expected = expected
        self.value = value
        self.missing_timezone = missing_timezone

    def __str__(self) -> str:
        """The problem on its own, for a reader who is not told the subject."""
        if self.missing_timezone:
            return f"{self.value!r} has no timezone (add Z or +00:00)"
        return f"{self.value!r} is not {self.expected}"


def parse_day(value: str) -> date:
    """An ISO date ``YYYY-MM-DD``; ``ValueRefused`` otherwise."""
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueRefused("an ISO date (YYYY-MM-DD)", value) from None


def parse_instant(value: str) -> datetime:
    """An ISO 8601 instant with a timezone (``Z`` accepted); ``ValueRefused`` otherwise."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueRefused("an ISO 8601 timestamp", value) from None
    if parsed.tzinfo is None:
        raise ValueRefused("an ISO 8601 timestamp", value, missing_timezone=True)
    return parsed


def parse_vector(value: object) -> tuple[float, ...]:
    """A caller-supplied embedding: a non-empty list of finite numbers (booleans refused); ``ValueRefused``.

    The dimension is the vault's business (its embedder's identity), checked where the vector is used.
    """
    if not isinstance(value, list) or not value:
        raise ValueRefused("a non-empty array of numbers", repr(value)[:40])
    if len(value) > MAX_VECTOR_COMPONENTS:
        raise ValueRefused(f"at most {MAX_VECTOR_COMPONENTS} components", f"{len(value)} components")
    components: list[float] = []
    for position, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise ValueRefused(f"a number at component {position}", repr(item)[:40])
        number = float(item)
        if number != number or number in (float("inf"), float("-inf")):
            raise ValueRefused(f"a finite number at component {position}", repr(item))
        components.append(number)
    return tuple(components)

"""Typed access to one call's arguments: every bad input is refused with a message naming the tool and key.

Bounds, choices and defaults come from the tool's own input schema (the ``properties`` a ``ToolSpec``
advertises), so what ``tools/list`` tells a host and what the call enforces cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from undercroft_core.normalisation import is_blank

from undercroft_cli.mcp.errors import InvalidArgument
from undercroft_cli.operations import ValueRefused, parse_day, parse_instant, parse_vector

__all__ = ["Arguments"]


class Arguments:
    """The argument map of one call to ``tool``; ``accepted`` names every key the tool takes."""

    def __init__(
        self, tool: str, raw: Mapping[str, object] | None, properties: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """Refuse any key the tool does not take (a typo must not silently drop a filter)."""
        self.tool = tool
        self._raw: dict[str, object] = dict(raw or {})
        self._properties = properties
        accepted = frozenset(properties)
        unknown = sorted(set(self._raw) - accepted)
        if unknown:
            expected = ", ".join(sorted(accepted)) or "none"
            raise InvalidArgument(f"{tool}: unknown argument(s) {', '.join(unknown)}; expected: {expected}")

    @property
    def raw(self) -> dict[str, object]:
        """The call's arguments as given (already checked for unknown keys)."""
        return dict(self._raw)

    def require(self, keys: tuple[str, ...]) -> None:
        """Refuse the call when any of ``keys`` is absent (before the handler runs, so nothing is half-done)."""
        for key in keys:
            if self._raw.get(key) is None:
                raise self._fail(key, "is required")

    def _fail(self, key: str, problem: str) -> InvalidArgument:
        return InvalidArgument(f"{self.tool}: argument '{key}' {problem}")

    def text(self, key: str, *, required: bool = False, default: str | None = None) -> str | None:
        """A string argument (``None``/``default`` when absent; refused when required and absent or blank)."""
        value = self._raw.get(key)
        if value is None:
            if required:
                raise self._fail(key, "is required")
            return default
        if not isinstance(value, str):
            raise self._fail(key, f"must be a string, got {type(value).__name__}")
        if required and is_blank(value):  # the store's rule: zero-width characters are as empty as spaces
            raise self._fail(key, "must not be empty (whitespace or invisible characters only)")
        return value

    def required_text(self, key: str) -> str:
        """A string argument that must be present and non-blank."""
        value = self.text(key, required=True)
        assert value is not None  # text(required=True) never returns None
        return value

    def _schema(self, key: str) -> Mapping[str, Any]:
        schema = self._properties.get(key)
        if schema is None:  # a handler reading a key its tool does not advertise is a build error
            raise KeyError(f"{self.tool} reads argument {key!r} that its input schema does not declare")
        return schema

    def integer(self, key: str) -> int | None:
        """An integer within the schema's ``minimum``/``maximum`` (its ``default`` when absent; bools refused)."""
        schema = self._schema(key)
        value = self._raw.get(key)
        if value is None:
            return schema.get("default")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._fail(key, f"must be an integer, got {type(value).__name__}")
        low, high = schema["minimum"], schema["maximum"]
        if not low <= value <= high:
            raise self._fail(key, f"must be between {low} and {high}, got {value}")
        return value

    def number(self, key: str) -> float | None:
        """A number within ``(exclusiveMinimum, maximum]`` (integers accepted; booleans, strings and NaN refused)."""
        schema = self._schema(key)
        value = self._raw.get(key)
        if value is None:
            default = schema.get("default")
            return None if default is None else float(default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._fail(key, f"must be a number, got {type(value).__name__}")
        low, high = schema["exclusiveMinimum"], schema["maximum"]
        if not low < value <= high:  # NaN fails this comparison too
            raise self._fail(key, f"must be in ({low:g}, {high:g}], got {value!r}")
        return float(value)

    def flag(self, key: str) -> bool:
        """A boolean argument (the schema's ``default`` when absent, else false)."""
        value = self._raw.get(key)
        if value is None:
            return bool(self._schema(key).get("default", False))
        if not isinstance(value, bool):
            raise self._fail(key, f"must be a boolean, got {type(value).__name__}")
        return value

    def choice(self, key: str) -> str | None:
        """A string that must be one of the schema's ``enum`` (its ``default`` when absent)."""
        allowed = self._schema(key)["enum"]
        value = self.text(key, default=self._schema(key).get("default"))
        if value is not None and value not in allowed:
            raise self._fail(key, f"must be one of {', '.join(allowed)}, got {value!r}")
        return value

    def day(self, key: str) -> date | None:
        """An ISO date (``YYYY-MM-DD``) argument."""
        value = self.text(key)
        if value is None:
            return None
        try:
            return parse_day(value)
        except ValueRefused as refused:
            raise self._fail(key, _phrased(refused)) from None

    def vector(self, key: str) -> tuple[float, ...] | None:
        """A caller-supplied embedding (a non-empty array of finite numbers), or None when absent."""
        self._schema(key)
        value = self._raw.get(key)
        if value is None:
            return None
        try:
            return parse_vector(value)
        except ValueRefused as refused:
            raise self._fail(key, _phrased(refused)) from None

    def instant(self, key: str) -> datetime | None:
        """An ISO 8601 timestamp with a timezone."""
        value = self.text(key)
        if value is None:
            return None
        try:
            return parse_instant(value)
        except ValueRefused as refused:
            raise self._fail(key, _phrased(refused)) from None


def _phrased(refused: ValueRefused) -> str:
    """A refused value in the tools' phrasing: ``must be <expected>, got '<value>'``."""
    if refused.missing_timezone:
        return f"has no timezone (add Z or +00:00): {refused.value!r}"
    return f"must be {refused.expected}, got {refused.value!r}"

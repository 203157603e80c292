"""Validation of label and event metadata: short scalars only, so content cannot ride a signal."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

from undercroft_obs.errors import InvalidMetadata

__all__ = [
    "MAX_EVENT_ITEMS",
    "MAX_LABEL_CHARS",
    "MAX_TEXT_CHARS",
    "EventValue",
    "LabelValue",
    "validate_event_metadata",
    "validate_labels",
]

#: A metric label value is at most this long (a route template, a kind, an outcome).
MAX_LABEL_CHARS: Final = 64
#: An event's text value is at most this long (a vault id, a wing or room name, a signal code).
MAX_TEXT_CHARS: Final = 128
#: An event's sequence value (signal codes, [wing, drawers] pairs) holds at most this many items.
MAX_EVENT_ITEMS: Final = 256

_KEY = re.compile(r"[a-z_][a-z0-9_]{0,63}\Z")

LabelValue = str | int | bool
Scalar = str | int | float | bool | None
EventValue = Scalar | tuple[Scalar | tuple[Scalar, ...], ...]


def _check_key(key: str, where: str) -> None:
    if not _KEY.match(key):
        raise InvalidMetadata(f"{where}: key {key!r} is not a lower-case identifier of at most 64 characters")


def _check_text(key: str, value: str, limit: int, where: str) -> str:
    if len(value) > limit:
        raise InvalidMetadata(
            f"{where}: {key}={value[:16]!r}… is {len(value)} characters; at most {limit} are allowed "
            "(signals carry metadata, never content)"
        )
    if any(ch in value for ch in "\r\n\x00"):
        raise InvalidMetadata(f"{where}: {key} contains a line break or NUL; label values are single-line")
    return value


def _scalar(key: str, value: object, where: str) -> Scalar:
    # bool is an int subclass: accept it before the int branch so it keeps its type.
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMetadata(f"{where}: {key}={value!r} is not a finite number")
        return value
    if isinstance(value, str):
        return _check_text(key, value, MAX_TEXT_CHARS, where)
    raise InvalidMetadata(
        f"{where}: {key} is a {type(value).__name__}; allowed are str (≤ {MAX_TEXT_CHARS} chars), int, float, "
        "bool, None, or a short tuple/list of those"
    )


def validate_event_metadata(event: str, metadata: Mapping[str, object]) -> dict[str, EventValue]:
    """Return `metadata` normalised (lists become tuples), or raise `InvalidMetadata` naming the bad key."""
    where = f"event {event!r}"
    clean: dict[str, EventValue] = {}
    for key, value in metadata.items():
        _check_key(key, where)
        if isinstance(value, list | tuple):
            if len(value) > MAX_EVENT_ITEMS:
                raise InvalidMetadata(f"{where}: {key} holds {len(value)} items; at most {MAX_EVENT_ITEMS}")
            items: list[Scalar | tuple[Scalar, ...]] = []
            for item in value:
                if isinstance(item, list | tuple):
                    # One level of pairs, e.g. [wing, drawers] in a sample frame; never deeper.
                    if len(item) > 4:
                        raise InvalidMetadata(f"{where}: {key} nests a sequence of {len(item)} items; at most 4")
                    inner = []
                    for part in item:
                        if isinstance(part, list | tuple):
                            raise InvalidMetadata(f"{where}: {key} nests deeper than one level")
                        inner.append(_scalar(key, part, where))
                    items.append(tuple(inner))
                else:
                    items.append(_scalar(key, item, where))
            clean[key] = tuple(items)
        else:
            clean[key] = _scalar(key, value, where)
    return clean


def validate_labels(
    metric: str,
    labels: Mapping[str, object],
    expected: frozenset[str],
    vocabularies: Mapping[str, frozenset[str]],
) -> dict[str, str]:
    """Return the labels rendered as strings, or raise `InvalidMetadata`.

    The key set must equal `expected` exactly (a missing label splits a series; an extra one can grow an
    unbounded value set), and a key with a closed vocabulary must take one of its values.
    """
    where = f"metric {metric!r}"
    keys = set(labels)
    if keys != expected:
        missing = sorted(expected - keys)
        extra = sorted(keys - expected)
        raise InvalidMetadata(f"{where}: takes labels {sorted(expected)}; missing {missing}, unexpected {extra}")
    clean: dict[str, str] = {}
    for key, value in labels.items():
        _check_key(key, where)
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, str):
            text = _check_text(key, value, MAX_LABEL_CHARS, where)
        else:
            raise InvalidMetadata(
                f"{where}: label {key} is a {type(value).__name__}; a label value is a str "
                f"(≤ {MAX_LABEL_CHARS} chars), an int or a bool"
            )
        vocabulary = vocabularies.get(key)
        if vocabulary is not None and text not in vocabulary:
            raise InvalidMetadata(f"{where}: label {key}={text!r} is not one of {sorted(vocabulary)}")
        clean[key] = text
    return clean

"""Structured logs: one JSON object per line on stderr, with a closed set of metadata fields.

``configure(level, fmt)`` sets up the ``undercroft`` logger tree once (``UNDERCROFT_LOG`` is the level,
``UNDERCROFT_LOG_FORMAT=json`` the format). `log_event` writes one event with metadata only — time, level,
event, and the scalars a caller passes among `FIELDS` (surface, vault, route, status, duration_ms, counts):
no free text reaches a JSON line except the event name, so a drawer's words, a query or a key cannot.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Final

from undercroft_obs.errors import InvalidMetadata

__all__ = ["FIELDS", "JsonFormatter", "configure", "log_event"]

LOGGER = "undercroft"

#: The metadata a log event may carry (anything else is refused: the event would need a review first).
FIELDS: Final = frozenset({"surface", "vault", "route", "method", "status", "duration_ms", "count", "class"})


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "event", ...fields}`` per record; a record without fields logs its logger message."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one JSON line."""
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "level": record.levelname.lower(),
            "event": getattr(record, "event", record.name),
        }
        fields = getattr(record, "fields", None)
        if fields is None:  # a plain engine log line: its fixed sentence (never an exception's text)
            line["message"] = record.getMessage()
        else:
            line.update(fields)
        return json.dumps(line, sort_keys=True, ensure_ascii=True)


def configure(level: str | None, fmt: str) -> None:
    """Route the ``undercroft`` loggers to stderr at ``level`` (default warning), as text or JSON lines."""
    logger = logging.getLogger(LOGGER)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.getLevelNamesMapping().get((level or "warning").upper(), logging.WARNING))
    logger.propagate = False


def log_event(event: str, *, level: int = logging.INFO, **fields: str | int | float | None) -> None:
    """Log one event with metadata-only fields (each among `FIELDS`, each a scalar)."""
    unknown = sorted(set(fields) - FIELDS)
    if unknown:
        raise InvalidMetadata(f"log event {event!r}: fields {unknown} are not among undercroft_obs.logs.FIELDS")
    clean = {k: v for k, v in fields.items() if v is not None}
    for key, value in clean.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise InvalidMetadata(f"log event {event!r}: field {key!r} must be a scalar, got {type(value).__name__}")
    logging.getLogger(f"{LOGGER}.{event.split('.')[0]}").log(
        level,
        "%s %s",
        event,
        " ".join(f"{k}={v}" for k, v in sorted(clean.items())),
        extra={"event": event, "fields": clean},
    )

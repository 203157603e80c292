"""Deciding which parser reads a file — by the content's shape, never by its name alone — and reading it.

The rules, in order:

1. The bytes must be UTF-8 (a leading byte-order mark is allowed); anything else is refused by byte offset.
2. Text whose first non-blank character is ``{`` or ``[`` is JSON. If it parses as one document, each
   whole-document format tests its shape (and an object is also offered to the line formats as a one-line
   file). If it does not, and its first non-blank line is a JSON object on its own, it is JSONL: every
   non-blank line must be an object, and the line formats test the records. Otherwise it is refused at the
   line and column of the syntax error.
3. Any other text is a plain-text chat log when enough lines start with ``>``.

No match is :class:`UnrecognisedFormat`; more than one is :class:`AmbiguousFormat` — never a guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from undercroft_cli.mining._internal.shapes import JsonLine, decode_json, load_json, load_jsonl
from undercroft_cli.mining.errors import AmbiguousFormat, MalformedTranscript, UnrecognisedFormat
from undercroft_cli.mining.formats import JSON_FORMATS, JSONL_FORMATS, plain_text
from undercroft_cli.mining.messages import Transcript, TranscriptFormat

__all__ = ["decode_text", "detect_format", "parse_text", "parse_transcript", "read_text"]


@dataclass(frozen=True, slots=True)
class _Shape:
    """A file's decoded content: JSONL records, a JSON document, or plain text (exactly one is set)."""

    records: list[JsonLine] | None = None
    document: Any = None
    is_document: bool = False
    text: str | None = None


def decode_text(data: bytes, path: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped), or :class:`MalformedTranscript`."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise MalformedTranscript(path, f"byte {error.start}", "not valid UTF-8") from None


def read_text(path: str | Path) -> str:
    """Read a file as UTF-8 text."""
    return decode_text(Path(path).read_bytes(), str(path))


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return line
    return ""


def _shape(text: str, path: str) -> _Shape:
    if text.lstrip()[:1] not in ("{", "["):
        return _Shape(text=text)
    try:
        return _Shape(document=decode_json(text, path, "line 1"), is_document=True)
    except json.JSONDecodeError:
        pass
    try:
        first = decode_json(_first_line(text), path, "line 1")
    except json.JSONDecodeError:
        first = None
    if isinstance(first, dict):
        return _Shape(records=load_jsonl(text, path))
    load_json(text, path)  # raises with the syntax error's line and column
    raise AssertionError("unreachable: the document failed to parse above")


def _candidates(shape: _Shape) -> list[TranscriptFormat]:
    found: list[TranscriptFormat] = []
    if shape.text is not None:
        if plain_text.matches(shape.text):
            found.append(plain_text.FORMAT)
        return found
    records = shape.records
    if shape.is_document:
        found.extend(entry.format for entry in JSON_FORMATS if entry.matches(shape.document))
        records = [JsonLine(1, shape.document)] if isinstance(shape.document, dict) else None
    if records is not None:
        found.extend(entry.format for entry in JSONL_FORMATS if entry.matches(records))
    return sorted(set(found))


def _detect(shape: _Shape, path: str) -> TranscriptFormat:
    found = _candidates(shape)
    if not found:
        raise UnrecognisedFormat(path, "content matches no supported transcript format")
    if len(found) > 1:
        raise AmbiguousFormat(path, tuple(str(item) for item in found))
    return found[0]


def detect_format(text: str, path: str) -> TranscriptFormat:
    """The single transcript format ``text`` (the content of ``path``) has; refuses none or several."""
    return _detect(_shape(text, path), path)


def parse_text(text: str, path: str, *, format: TranscriptFormat | None = None) -> Transcript:
    """Parse ``text`` (the content of ``path``) with the detected parser, or with ``format`` when given."""
    if format is TranscriptFormat.PLAIN_TEXT:
        return Transcript(path, format, plain_text.parse(text, path))
    shape = _shape(text, path)
    chosen = format if format is not None else _detect(shape, path)
    if chosen is TranscriptFormat.PLAIN_TEXT:
        assert shape.text is not None
        return Transcript(path, chosen, plain_text.parse(shape.text, path))
    for json_entry in JSON_FORMATS:
        if json_entry.format is chosen and shape.is_document and json_entry.matches(shape.document):
            return Transcript(path, chosen, json_entry.parse(shape.document, path))
    for line_entry in JSONL_FORMATS:
        if line_entry.format is chosen:
            records = shape.records
            if records is None and shape.is_document and isinstance(shape.document, dict):
                records = [JsonLine(1, shape.document)]
            if records is not None:
                return Transcript(path, chosen, line_entry.parse(records, path))
    for json_entry in JSON_FORMATS:
        if json_entry.format is chosen and shape.is_document:
            return Transcript(path, chosen, json_entry.parse(shape.document, path))
    raise MalformedTranscript(path, "line 1", f"content is not in the shape of a {chosen} transcript")


def parse_transcript(path: str | Path, *, format: TranscriptFormat | None = None) -> Transcript:
    """Read ``path`` and parse it (the format detected from its content unless ``format`` is given)."""
    return parse_text(read_text(path), str(path), format=format)

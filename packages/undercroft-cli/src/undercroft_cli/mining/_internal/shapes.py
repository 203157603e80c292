"""Reading JSON and JSONL with positions, timestamps and content blocks: the shared mechanics of the parsers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from undercroft_core import InvalidInput, normalise, render_turn

from undercroft_cli.mining.errors import MalformedTranscript
from undercroft_cli.mining.messages import Message

__all__ = [
    "MAX_NESTING",
    "JsonLine",
    "MessageCollector",
    "block_text",
    "child_path",
    "decode_json",
    "expect",
    "load_json",
    "load_jsonl",
    "optional_string",
    "parse_timestamp",
]

_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|z|[+-]\d{2}:?\d{2})?")
_EPOCH_STRING = re.compile(r"(\d{1,12})(?:\.(\d{1,9}))?")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: How deep a transcript's JSON may nest. Every supported format is under a dozen levels deep; a file past
#: this is hostile or broken, and Python's decoder (and any walk of the tree) would die of recursion on it.
MAX_NESTING = 100
# Blocks of one message are joined by a blank line so each block stays its own paragraph.
BLOCK_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One record of a JSONL file: its 1-based line number and the decoded object."""

    number: int
    record: dict[str, Any]

    @property
    def position(self) -> str:
        """``line N``."""
        return f"line {self.number}"


def child_path(parent: str, key: str | int) -> str:
    """A JSON path one step below ``parent`` (``$.a[0].b``)."""
    return f"{parent}[{key}]" if isinstance(key, int) else f"{parent}.{key}"


def expect(condition: bool, path: str, position: str, reason: str) -> None:
    """Refuse with :class:`MalformedTranscript` unless ``condition`` holds."""
    if not condition:
        raise MalformedTranscript(path, position, reason)


def decode_json(text: str, path: str, position: str) -> Any:
    """``json.loads(text)`` bounded to :data:`MAX_NESTING` levels; deeper is :class:`MalformedTranscript`.

    ``json.JSONDecodeError`` passes through for the caller to place. The decoder recurses once per level
    and raises ``RecursionError`` somewhere below a thousand (``'[' * 100000`` is the attack): that, and a
    tree that decoded but nests past the bound, are refused here as one file's fault, never a traceback.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise MalformedTranscript(path, position, f"JSON nested deeper than {MAX_NESTING} levels") from None
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:  # iterative: the check itself must not recurse
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > MAX_NESTING:
                    raise MalformedTranscript(path, position, f"JSON nested deeper than {MAX_NESTING} levels")
                stack.append((child, depth + 1))
    return value


def load_json(text: str, path: str) -> Any:
    """Decode a whole JSON document, naming the line and column of a syntax error."""
    try:
        return decode_json(text, path, "line 1")
    except json.JSONDecodeError as error:
        raise MalformedTranscript(
            path, f"line {error.lineno} column {error.colno}", f"invalid JSON: {error.msg}"
        ) from None


def load_jsonl(text: str, path: str) -> list[JsonLine]:
    """Decode every non-blank line as a JSON object; the first line that is not one is refused by number."""
    records: list[JsonLine] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = decode_json(line, path, f"line {number}")
        except json.JSONDecodeError as error:
            raise MalformedTranscript(
                path, f"line {number} column {error.colno}", f"invalid JSON: {error.msg}"
            ) from None
        expect(isinstance(record, dict), path, f"line {number}", f"expected a JSON object, got {_kind(record)}")
        records.append(JsonLine(number, record))
    return records


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def optional_string(value: object, path: str, position: str, what: str) -> str | None:
    """``value`` when it is a string, None when absent/null; anything else is refused."""
    if value is None:
        return None
    expect(isinstance(value, str), path, position, f"{what} must be a string, got {_kind(value)}")
    assert isinstance(value, str)
    return value


def parse_timestamp(value: object, path: str, position: str) -> str | None:
    """Read a source timestamp as a UTC instant ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``; None when absent.

    Accepted: ISO 8601 strings (an offset converts to UTC; no offset is read as UTC), epoch seconds as a
    JSON number, and epoch seconds as a decimal string (Slack's ``ts``). Anything else is refused.
    """
    if value is None or value == "":
        return None
    instant: datetime
    if isinstance(value, bool):
        raise MalformedTranscript(path, position, f"timestamp must be a string or a number, got {value!r}")
    if isinstance(value, int | float):
        if not (0 <= value < 1e11):
            raise MalformedTranscript(path, position, f"epoch timestamp {value!r} is out of range")
        instant = _EPOCH + timedelta(microseconds=round(value * 1_000_000))
    elif isinstance(value, str):
        epoch = _EPOCH_STRING.fullmatch(value)
        if epoch is not None:
            whole, fraction = epoch.group(1), (epoch.group(2) or "").ljust(6, "0")[:6]
            instant = _EPOCH + timedelta(seconds=int(whole), microseconds=int(fraction))
        else:
            instant = _parse_iso(value, path, position)
    else:
        raise MalformedTranscript(path, position, f"timestamp must be a string or a number, got {_kind(value)}")
    text = instant.strftime("%Y-%m-%dT%H:%M:%S")
    if instant.microsecond:
        text += f".{instant.microsecond:06d}"
    return text + "Z"


def _parse_iso(value: str, path: str, position: str) -> datetime:
    match = _ISO.fullmatch(value.strip())
    if match is None:
        raise MalformedTranscript(path, position, f"unreadable timestamp {value!r}")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    fraction = (match.group(7) or "").ljust(6, "0")[:6]
    offset = match.group(8)
    try:
        instant = datetime(year, month, day, hour, minute, second, int(fraction), tzinfo=UTC)
    except ValueError as error:
        raise MalformedTranscript(path, position, f"timestamp {value!r} is not a real instant ({error})") from None
    if offset and offset not in ("Z", "z"):
        digits = offset[1:].replace(":", "")
        shift = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        instant = instant - shift if offset[0] == "+" else instant + shift
    return instant


def block_text(content: object, path: str, position: str, *, text_types: frozenset[str] = frozenset({"text"})) -> str:
    """The prose of a message body: a string as is, or the ``text`` of its text blocks joined by a blank line.

    Blocks of other types (tool calls, tool results, images, thinking) carry no prose and are left out.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        return block_text([content], path, position, text_types=text_types)
    expect(
        isinstance(content, Sequence),
        path,
        position,
        f"message content must be a string or a list, got {_kind(content)}",
    )
    assert isinstance(content, Sequence)
    parts: list[str] = []
    for number, block in enumerate(content):
        where = child_path(position, number)
        if isinstance(block, str):
            parts.append(block)
            continue
        expect(
            isinstance(block, Mapping), path, where, f"content block must be an object or a string, got {_kind(block)}"
        )
        assert isinstance(block, Mapping)
        if block.get("type", "text") in text_types:
            text = block.get("text")
            expect(isinstance(text, str), path, where, f"text block has no string 'text' (got {_kind(text)})")
            assert isinstance(text, str)
            parts.append(text)
    return BLOCK_SEPARATOR.join(part for part in parts if part.strip())


@dataclass(slots=True)
class MessageCollector:
    """Numbers messages in order, normalising their words and dropping those with none.

    A speaker label the renderer would refuse, or text that is not valid Unicode, is refused here with the
    message's position.
    """

    path: str
    messages: list[Message] = field(default_factory=list)

    def add(
        self,
        *,
        role: str,
        speaker: str,
        text: str,
        position: str,
        timestamp: str | None = None,
        conversation: str | None = None,
        source_id: str | None = None,
    ) -> None:
        """Append a message unless its normalised text is empty."""
        try:
            words = normalise(text)
            render_turn(speaker, "")
        except InvalidInput as error:
            raise MalformedTranscript(self.path, position, str(error)) from None
        if not words:
            return
        self.messages.append(
            Message(
                index=len(self.messages),
                role=role,
                speaker=speaker,
                text=words,
                timestamp=timestamp,
                conversation=conversation,
                source_id=source_id,
                position=position,
            )
        )

    def __iter__(self) -> Iterator[Message]:
        return iter(self.messages)

    def result(self) -> tuple[Message, ...]:
        """The collected messages."""
        return tuple(self.messages)

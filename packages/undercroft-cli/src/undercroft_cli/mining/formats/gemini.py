"""Gemini CLI and Google AI Studio sessions, in the JSONL and the JSON layouts.

* JSONL (``~/.gemini/tmp/<project>/chats/session-*.jsonl``): a ``session_metadata`` record, then records of
  ``type`` ``user`` or ``gemini`` whose ``content`` is a list of ``{"text": …}`` parts (or a string);
  ``message_update`` and other records carry no words. Records before ``session_metadata`` are refused.
* JSON: ``{"contents": [{"role": "user"|"model", "parts": [{"text": …}]}]}`` (the Gemini API shape), a
  chat file ``{"sessionId", "messages": [{"type": "user"|"gemini", "content", "timestamp"}]}``, or a
  ``messages`` wrapper / bare list of ``{"role", "content"}`` in which at least one role is ``model``.

Gemini's ``model`` role is reported as ``assistant``. Parts without ``text`` (function calls, inline data)
carry no prose and are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from undercroft_cli.mining._internal.shapes import (
    BLOCK_SEPARATOR,
    JsonLine,
    MessageCollector,
    child_path,
    expect,
    optional_string,
    parse_timestamp,
)
from undercroft_cli.mining.messages import ROLE_ASSISTANT, ROLE_USER, Message, TranscriptFormat

__all__ = ["FORMAT", "matches_json", "matches_jsonl", "parse_json", "parse_jsonl"]

#: The format this module reads.
FORMAT = TranscriptFormat.GEMINI

# Source role or record type → (role, speaker); "system" and anything else carries no conversation.
_ROLES = {
    "user": (ROLE_USER, "User"),
    "model": (ROLE_ASSISTANT, "Assistant"),
    "gemini": (ROLE_ASSISTANT, "Assistant"),
    "assistant": (ROLE_ASSISTANT, "Assistant"),
}


def _parts_text(parts: object, path: str, position: str) -> str:
    if isinstance(parts, str):
        return parts
    expect(isinstance(parts, list), path, position, "parts/content must be a list or a string")
    assert isinstance(parts, list)
    texts: list[str] = []
    for number, part in enumerate(parts):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            text = part.get("text")
            if text is not None:
                expect(isinstance(text, str), path, child_path(position, number), "part 'text' must be a string")
                texts.append(str(text))
        else:
            expect(False, path, child_path(position, number), "a part must be an object or a string")
    return BLOCK_SEPARATOR.join(text for text in texts if text.strip())


def matches_jsonl(records: Sequence[JsonLine]) -> bool:
    """True when a record is a Gemini CLI ``session_metadata`` header."""
    return any(line.record.get("type") == "session_metadata" for line in records)


def parse_jsonl(records: Sequence[JsonLine], path: str) -> tuple[Message, ...]:
    """The session's user and model messages, in file order."""
    collected = MessageCollector(path)
    session: str | None = None
    seen_header = False
    for line in records:
        record = line.record
        kind = record.get("type")
        if kind == "session_metadata":
            seen_header = True
            session = optional_string(record.get("sessionId"), path, line.position, "sessionId")
            continue
        if kind not in ("user", "gemini"):
            continue
        expect(seen_header, path, line.position, f"a '{kind}' record comes before the session_metadata record")
        role, speaker = _ROLES[str(kind)]
        collected.add(
            role=role,
            speaker=speaker,
            text=_parts_text(record.get("content", []), path, f"{line.position} content"),
            position=line.position,
            timestamp=parse_timestamp(record.get("timestamp"), path, line.position),
            conversation=session,
            source_id=optional_string(record.get("id"), path, line.position, "id"),
        )
    expect(seen_header, path, "line 1", "no session_metadata record: not a Gemini CLI session")
    return collected.result()


def _items(data: Any) -> tuple[list[Any], str] | None:
    if isinstance(data, dict) and isinstance(data.get("contents"), list):
        return data["contents"], "$.contents"
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return data["messages"], "$.messages"
    if isinstance(data, list):
        return data, "$"
    return None


def _speaks_gemini(item: object) -> bool:
    return isinstance(item, dict) and (item.get("role") == "model" or item.get("type") == "gemini")


def matches_json(data: Any) -> bool:
    """True for the ``contents`` shape, or a message list in which some entry is the model speaking."""
    if isinstance(data, dict) and isinstance(data.get("contents"), list):
        return True
    found = _items(data)
    return found is not None and any(_speaks_gemini(item) for item in found[0])


def parse_json(data: Any, path: str) -> tuple[Message, ...]:
    """The conversation's user and model messages, in order."""
    found = _items(data)
    expect(found is not None, path, "$", "expected 'contents', 'messages' or a list of messages")
    assert found is not None
    items, base = found
    session = None
    if isinstance(data, dict):
        session = optional_string(data.get("sessionId"), path, "$.sessionId", "sessionId")
    collected = MessageCollector(path)
    for number, item in enumerate(items):
        where = child_path(base, number)
        expect(isinstance(item, dict), path, where, "a message must be an object")
        assert isinstance(item, dict)
        source_role = item.get("role", item.get("type"))
        if source_role not in _ROLES:
            continue
        role, speaker = _ROLES[str(source_role)]
        body = item["parts"] if "parts" in item else item.get("content", "")
        collected.add(
            role=role,
            speaker=speaker,
            text=_parts_text(body, path, where),
            position=where,
            timestamp=parse_timestamp(item.get("timestamp"), path, where),
            conversation=session,
            source_id=optional_string(item.get("id"), path, where, "id"),
        )
    return collected.result()

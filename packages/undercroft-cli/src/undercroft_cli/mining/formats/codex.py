"""OpenAI Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Every line is ``{"timestamp", "type", "payload"}``. A ``session_meta`` record (its ``payload.id`` is the
session) marks the file as a rollout. The conversation is the ``event_msg`` records whose payload is a
``user_message`` or an ``agent_message`` (``payload.message``, a string); ``response_item`` records repeat
those turns with injected context around them and are not read. A rollout that has ``response_item``
messages but no such event is refused rather than read as nothing: its schema is not one this parser knows.
"""

from __future__ import annotations

from collections.abc import Sequence

from undercroft_cli.mining._internal.shapes import (
    JsonLine,
    MessageCollector,
    expect,
    optional_string,
    parse_timestamp,
)
from undercroft_cli.mining.errors import MalformedTranscript
from undercroft_cli.mining.messages import ROLE_ASSISTANT, ROLE_USER, Message, TranscriptFormat

__all__ = ["FORMAT", "matches", "parse"]

#: The format this module reads.
FORMAT = TranscriptFormat.CODEX

_EVENTS = {"user_message": (ROLE_USER, "User"), "agent_message": (ROLE_ASSISTANT, "Assistant")}


def matches(records: Sequence[JsonLine]) -> bool:
    """True when a record is a Codex ``session_meta`` header."""
    return any(line.record.get("type") == "session_meta" for line in records)


def parse(records: Sequence[JsonLine], path: str) -> tuple[Message, ...]:
    """The rollout's user and agent messages, in file order."""
    collected = MessageCollector(path)
    session: str | None = None
    seen_meta = False
    first_response_item: JsonLine | None = None
    for line in records:
        record = line.record
        kind = record.get("type")
        payload = record.get("payload")
        if kind == "session_meta":
            expect(isinstance(payload, dict), path, line.position, "session_meta needs a 'payload' object")
            assert isinstance(payload, dict)
            session = optional_string(payload.get("id"), path, line.position, "session_meta payload id")
            seen_meta = True
            continue
        if kind == "response_item" and first_response_item is None and isinstance(payload, dict):
            if payload.get("type") == "message":
                first_response_item = line
        if kind != "event_msg":
            continue
        expect(isinstance(payload, dict), path, line.position, "event_msg needs a 'payload' object")
        assert isinstance(payload, dict)
        event = payload.get("type")
        if event not in _EVENTS:
            continue
        text = payload.get("message")
        expect(isinstance(text, str), path, line.position, f"{event} payload needs a string 'message'")
        assert isinstance(text, str)
        role, speaker = _EVENTS[str(event)]
        collected.add(
            role=role,
            speaker=speaker,
            text=text,
            position=line.position,
            timestamp=parse_timestamp(record.get("timestamp"), path, line.position),
            conversation=session,
        )
    expect(seen_meta, path, "line 1", "no session_meta record: not a Codex rollout")
    if not collected.messages and first_response_item is not None:
        raise MalformedTranscript(
            path,
            first_response_item.position,
            "rollout has response_item messages but no user_message/agent_message events: unsupported schema",
        )
    return collected.result()

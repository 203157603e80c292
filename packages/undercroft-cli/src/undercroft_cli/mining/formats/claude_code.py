"""Claude Code sessions: ``~/.claude/projects/<project>/<session>.jsonl``, one JSON record per line.

A message is a record of ``type`` ``user`` or ``assistant`` carrying a ``message`` object (``role``,
``content``: a string or a list of blocks), with ``uuid``, ``sessionId`` and ``timestamp`` beside it. Other
record types (``summary``, ``system``, ``file-history-snapshot``, progress records) carry no conversation.
Only prose is a message: ``text`` blocks. Tool calls, tool results and thinking blocks are left out, and so
are records Claude Code marks ``isMeta`` (text it injected, not text anyone wrote).
"""

from __future__ import annotations

from collections.abc import Sequence

from undercroft_cli.mining._internal.shapes import (
    JsonLine,
    MessageCollector,
    block_text,
    expect,
    optional_string,
    parse_timestamp,
)
from undercroft_cli.mining.messages import ROLE_ASSISTANT, ROLE_USER, Message, TranscriptFormat

__all__ = ["FORMAT", "matches", "parse"]

#: The format this module reads.
FORMAT = TranscriptFormat.CLAUDE_CODE

_ROLES = {ROLE_USER: "User", ROLE_ASSISTANT: "Assistant"}


def _is_message_record(record: dict[str, object]) -> bool:
    message = record.get("message")
    return record.get("type") in _ROLES and isinstance(message, dict) and "role" in message


def matches(records: Sequence[JsonLine]) -> bool:
    """True when at least one record is a Claude Code user/assistant message record."""
    return any(_is_message_record(line.record) for line in records)


def parse(records: Sequence[JsonLine], path: str) -> tuple[Message, ...]:
    """The session's prose messages, in file order."""
    collected = MessageCollector(path)
    for line in records:
        record = line.record
        kind = record.get("type")
        if kind not in _ROLES or record.get("isMeta") is True:
            continue
        message = record.get("message")
        expect(isinstance(message, dict), path, line.position, f"a '{kind}' record needs a 'message' object")
        assert isinstance(message, dict)
        role = message.get("role")
        expect(role == kind, path, line.position, f"message role {role!r} does not match record type {kind!r}")
        collected.add(
            role=str(role),
            speaker=_ROLES[str(role)],
            text=block_text(message.get("content"), path, line.position),
            position=line.position,
            timestamp=parse_timestamp(record.get("timestamp"), path, line.position),
            conversation=optional_string(record.get("sessionId"), path, line.position, "sessionId"),
            source_id=optional_string(record.get("uuid"), path, line.position, "uuid"),
        )
    return collected.result()

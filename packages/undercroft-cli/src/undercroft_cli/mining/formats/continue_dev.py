"""Continue.dev sessions: ``~/.continue/sessions/<id>.json``.

A session is ``{"sessionId", "title", "workspaceDirectory", "history": [...]}``. A history entry is either
``{"message": {"role", "content"}, "contextItems": [...]}`` (current releases) or a bare
``{"role", "content"}``; ``content`` is a string or a list of ``{"type": "text", "text"}`` parts. Only
``user`` and ``assistant`` entries are prose: system prompts and tool output are left out. Continue records no
per-message time.
"""

from __future__ import annotations

from typing import Any

from undercroft_cli.mining._internal.shapes import (
    MessageCollector,
    block_text,
    child_path,
    expect,
    optional_string,
)
from undercroft_cli.mining.messages import ROLE_ASSISTANT, ROLE_USER, Message, TranscriptFormat

__all__ = ["FORMAT", "matches", "parse"]

#: The format this module reads.
FORMAT = TranscriptFormat.CONTINUE

_ROLES = {"user": (ROLE_USER, "User"), "assistant": (ROLE_ASSISTANT, "Assistant")}


def matches(data: Any) -> bool:
    """True for an object with a ``history`` list."""
    return isinstance(data, dict) and isinstance(data.get("history"), list)


def parse(data: Any, path: str) -> tuple[Message, ...]:
    """The session's user and assistant messages, in order."""
    expect(matches(data), path, "$", "a Continue session needs a 'history' list")
    session = optional_string(data.get("sessionId"), path, "$.sessionId", "sessionId")
    collected = MessageCollector(path)
    for number, entry in enumerate(data["history"]):
        at = child_path("$.history", number)
        expect(isinstance(entry, dict), path, at, "a history entry must be an object")
        message = entry.get("message", entry)
        where = child_path(at, "message") if "message" in entry else at
        expect(isinstance(message, dict), path, where, "a history message must be an object")
        role = message.get("role")
        expect(isinstance(role, str), path, child_path(where, "role"), "message needs a string 'role'")
        if role not in _ROLES:
            continue
        mapped_role, speaker = _ROLES[role]
        collected.add(
            role=mapped_role,
            speaker=speaker,
            text=block_text(message.get("content"), path, child_path(where, "content")),
            position=where,
            conversation=session,
            source_id=optional_string(message.get("id"), path, child_path(where, "id"), "id"),
        )
    return collected.result()

"""Claude.ai data exports: ``conversations.json``, an array of conversations (or one conversation object).

A conversation is ``{"uuid", "name", "created_at", "chat_messages": [...]}``; each message carries
``sender`` (``human`` or ``assistant``), ``text``, ``content`` (a list of blocks), ``created_at`` and
``uuid``. The words are the ``text`` blocks of ``content`` when there are any, else ``text``. Some exports
name the list ``messages``; that spelling is read when its entries carry ``sender``.
"""

from __future__ import annotations

from typing import Any

from undercroft_cli.mining._internal.shapes import (
    MessageCollector,
    block_text,
    child_path,
    expect,
    optional_string,
    parse_timestamp,
)
from undercroft_cli.mining.messages import ROLE_ASSISTANT, ROLE_USER, Message, TranscriptFormat

__all__ = ["FORMAT", "matches", "parse"]

#: The format this module reads.
FORMAT = TranscriptFormat.CLAUDE_AI

_SENDERS = {"human": (ROLE_USER, "User"), "user": (ROLE_USER, "User"), "assistant": (ROLE_ASSISTANT, "Assistant")}


def _message_list(conversation: object) -> tuple[str, list[Any]] | None:
    if not isinstance(conversation, dict):
        return None
    if isinstance(conversation.get("chat_messages"), list):
        return "chat_messages", conversation["chat_messages"]
    messages = conversation.get("messages")
    if isinstance(messages, list) and messages and all(isinstance(m, dict) and "sender" in m for m in messages):
        return "messages", messages
    return None


def matches(data: Any) -> bool:
    """True for a conversation object, or a non-empty array of them, each with its message list."""
    if isinstance(data, list):
        return bool(data) and all(_message_list(item) is not None for item in data)
    return _message_list(data) is not None


def parse(data: Any, path: str) -> tuple[Message, ...]:
    """Every conversation's messages, conversation after conversation, in export order."""
    conversations = data if isinstance(data, list) else [data]
    base = "$" if isinstance(data, list) else ""
    collected = MessageCollector(path)
    for number, conversation in enumerate(conversations):
        where = child_path(base, number) if base else "$"
        found = _message_list(conversation)
        expect(found is not None, path, where, "a conversation needs a 'chat_messages' list")
        assert found is not None and isinstance(conversation, dict)
        key, messages = found
        name = optional_string(conversation.get("uuid"), path, child_path(where, "uuid"), "conversation uuid")
        for position, message in enumerate(messages):
            at = child_path(child_path(where, key), position)
            expect(isinstance(message, dict), path, at, "a message must be an object")
            assert isinstance(message, dict)
            sender = message.get("sender", message.get("role"))
            expect(sender in _SENDERS, path, child_path(at, "sender"), f"unknown sender {sender!r}")
            role, speaker = _SENDERS[str(sender)]
            text = block_text(message.get("content"), path, child_path(at, "content"))
            if not text.strip():
                text = optional_string(message.get("text"), path, child_path(at, "text"), "text") or ""
            collected.add(
                role=role,
                speaker=speaker,
                text=text,
                position=at,
                timestamp=parse_timestamp(message.get("created_at"), path, child_path(at, "created_at")),
                conversation=name if name is not None else str(number),
                source_id=optional_string(message.get("uuid"), path, child_path(at, "uuid"), "uuid"),
            )
    return collected.result()

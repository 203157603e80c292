"""ChatGPT data exports: ``conversations.json``, an array of conversations (or one conversation object).

A conversation is ``{"id"/"conversation_id", "title", "mapping": {node_id: node}, "current_node"}``, where
each node is ``{"id", "message", "parent", "children"}`` and a message carries ``author.role``,
``create_time`` (epoch seconds) and ``content`` (``{"content_type", "parts": [...]}``). The mapping is a
tree: edits and regenerations are branches. The branch read is the one the user last saw — from
``current_node`` up the ``parent`` links — and, when an export has no ``current_node``, the first child at
every fork from the root. Only ``user`` and ``assistant`` messages with string parts are prose; system and
tool messages and non-text parts are left out.
"""

from __future__ import annotations

from typing import Any

from undercroft_cli.mining._internal.shapes import (
    BLOCK_SEPARATOR,
    MessageCollector,
    child_path,
    expect,
    optional_string,
    parse_timestamp,
)
from undercroft_cli.mining.messages import ROLE_ASSISTANT, ROLE_USER, Message, TranscriptFormat

__all__ = ["FORMAT", "matches", "parse"]

#: The format this module reads.
FORMAT = TranscriptFormat.CHATGPT

_ROLES = {"user": (ROLE_USER, "User"), "assistant": (ROLE_ASSISTANT, "Assistant")}


def _is_conversation(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("mapping"), dict)


def matches(data: Any) -> bool:
    """True for a conversation object with a ``mapping``, or a non-empty array of them."""
    if isinstance(data, list):
        return bool(data) and all(_is_conversation(item) for item in data)
    return _is_conversation(data)


def _branch(mapping: dict[str, Any], current: object, path: str, where: str) -> list[str]:
    """Node ids from the root to the leaf of the branch to read."""
    for node_id, node in mapping.items():
        at = child_path(child_path(where, "mapping"), node_id)
        expect(isinstance(node, dict), path, at, "a mapping node must be an object")
        parent = node.get("parent")
        expect(parent is None or parent in mapping, path, child_path(at, "parent"), f"unknown parent {parent!r}")
    if current is not None:
        expect(current in mapping, path, child_path(where, "current_node"), f"unknown node {current!r}")
        chain: list[str] = []
        walker: str | None = str(current)
        while walker is not None:
            expect(walker not in chain, path, child_path(where, "mapping"), f"parent links loop at {walker!r}")
            chain.append(walker)
            walker = mapping[walker].get("parent")
        return chain[::-1]
    roots = [node_id for node_id, node in mapping.items() if node.get("parent") is None]
    expect(len(roots) == 1, path, child_path(where, "mapping"), f"expected exactly one root node, found {len(roots)}")
    chain = []
    next_id: str | None = roots[0]
    while next_id is not None:
        expect(next_id not in chain, path, child_path(where, "mapping"), f"children links loop at {next_id!r}")
        chain.append(next_id)
        children = mapping[next_id].get("children") or []
        expect(
            isinstance(children, list), path, child_path(where, "mapping"), f"node {next_id!r} children is not a list"
        )
        next_id = children[0] if children else None
        expect(next_id is None or next_id in mapping, path, child_path(where, "mapping"), f"unknown child {next_id!r}")
    return chain


def parse(data: Any, path: str) -> tuple[Message, ...]:
    """Every conversation's branch of user and assistant messages, conversation after conversation."""
    conversations = data if isinstance(data, list) else [data]
    collected = MessageCollector(path)
    for number, conversation in enumerate(conversations):
        where = child_path("$", number) if isinstance(data, list) else "$"
        expect(_is_conversation(conversation), path, where, "a conversation needs a 'mapping' object")
        mapping: dict[str, Any] = conversation["mapping"]
        name = conversation.get("conversation_id", conversation.get("id"))
        name = optional_string(name, path, child_path(where, "id"), "conversation id")
        for node_id in _branch(mapping, conversation.get("current_node"), path, where):
            at = child_path(child_path(where, "mapping"), node_id)
            message = mapping[node_id].get("message")
            if message is None:
                continue
            expect(isinstance(message, dict), path, child_path(at, "message"), "message must be an object or null")
            author = message.get("author")
            expect(isinstance(author, dict), path, child_path(at, "message.author"), "message needs an 'author' object")
            role = author.get("role")
            if role not in _ROLES:
                continue
            content = message.get("content")
            expect(isinstance(content, dict), path, child_path(at, "message.content"), "content must be an object")
            parts = content.get("parts", [])
            expect(isinstance(parts, list), path, child_path(at, "message.content.parts"), "parts must be a list")
            text = BLOCK_SEPARATOR.join(part for part in parts if isinstance(part, str) and part.strip())
            mapped_role, speaker = _ROLES[str(role)]
            collected.add(
                role=mapped_role,
                speaker=speaker,
                text=text,
                position=at,
                timestamp=parse_timestamp(message.get("create_time"), path, child_path(at, "message.create_time")),
                conversation=name if name is not None else str(number),
                source_id=optional_string(message.get("id"), path, child_path(at, "message.id"), "message id"),
            )
    return collected.result()

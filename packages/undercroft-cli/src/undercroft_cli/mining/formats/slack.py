"""Slack workspace exports: one JSON array per channel and day (``<channel>/<YYYY-MM-DD>.json``).

Each entry is ``{"type": "message", "user", "text", "ts", ...}``; ``ts`` is epoch seconds as a decimal
string and is both the message's time and its id. The speaker is the ``user`` id (else ``username``, else
``bot_id``), kept as Slack wrote it: Slack is multi-party, so every speaker has the role ``participant``.
Channel housekeeping (joins, leaves, topic, purpose and name changes) is not conversation and is left out.
The export's ``users.json`` and ``channels.json`` are not messages and are not recognised as transcripts.
"""

from __future__ import annotations

from typing import Any

from undercroft_cli.mining._internal.shapes import (
    MessageCollector,
    child_path,
    expect,
    optional_string,
    parse_timestamp,
)
from undercroft_cli.mining.messages import ROLE_PARTICIPANT, Message, TranscriptFormat

__all__ = ["FORMAT", "HOUSEKEEPING_SUBTYPES", "matches", "parse"]

#: The format this module reads.
FORMAT = TranscriptFormat.SLACK

#: Message subtypes that record channel events rather than anything somebody said.
HOUSEKEEPING_SUBTYPES = frozenset(
    {"channel_join", "channel_leave", "channel_topic", "channel_purpose", "channel_name", "channel_archive"}
)


def matches(data: Any) -> bool:
    """True for a non-empty array of objects that each carry ``type`` and ``ts``, one at least a message."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and "type" in item and "ts" in item for item in data)
        and any(item.get("type") == "message" for item in data)
    )


def parse(data: Any, path: str) -> tuple[Message, ...]:
    """The day's messages, in file order."""
    expect(isinstance(data, list), path, "$", "a Slack export file must be an array of messages")
    collected = MessageCollector(path)
    for number, item in enumerate(data):
        at = child_path("$", number)
        expect(isinstance(item, dict), path, at, "a Slack entry must be an object")
        if item.get("type") != "message" or item.get("subtype") in HOUSEKEEPING_SUBTYPES:
            continue
        speaker = item.get("user") or item.get("username") or item.get("bot_id")
        expect(isinstance(speaker, str), path, at, "message has no 'user', 'username' or 'bot_id'")
        text = optional_string(item.get("text"), path, child_path(at, "text"), "text") or ""
        collected.add(
            role=ROLE_PARTICIPANT,
            speaker=str(speaker),
            text=text,
            position=at,
            timestamp=parse_timestamp(item.get("ts"), path, child_path(at, "ts")),
            source_id=optional_string(item.get("ts"), path, child_path(at, "ts"), "ts"),
        )
    return collected.result()

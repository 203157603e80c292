"""Plain-text chat logs: the user's turns are lines starting with ``>``, the replies are the lines between.

This is the transcript shape MemPalace writes and mines. A run of consecutive ``>`` lines is one user
message (each line loses its ``>`` and one following space, nothing else); the lines up to the next ``>``
line are one assistant message, blank lines and indentation included. Text before the first user turn is
kept as a message of its own, spoken by ``Preamble``. A file is recognised as a chat log when at least
:data:`MIN_TURN_LINES` lines start with ``>`` (MemPalace's threshold).
"""

from __future__ import annotations

from undercroft_cli.mining._internal.shapes import MessageCollector, expect
from undercroft_cli.mining.messages import ROLE_ASSISTANT, ROLE_PARTICIPANT, ROLE_USER, Message, TranscriptFormat

__all__ = ["FORMAT", "MIN_TURN_LINES", "matches", "parse"]

#: The format this module reads.
FORMAT = TranscriptFormat.PLAIN_TEXT
#: Fewest ``>`` lines that make a text file a chat log.
MIN_TURN_LINES = 3


def _is_turn(line: str) -> bool:
    return line.lstrip(" \t").startswith(">")


def _unquote(line: str) -> str:
    body = line.lstrip(" \t")[1:]
    return body[1:] if body.startswith(" ") else body


def matches(text: str) -> bool:
    """True when at least :data:`MIN_TURN_LINES` lines start with ``>``."""
    return sum(1 for line in text.split("\n") if _is_turn(line)) >= MIN_TURN_LINES


def parse(text: str, path: str) -> tuple[Message, ...]:
    """The log's messages: user turns, replies and any preamble, in order."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    expect(any(_is_turn(line) for line in lines), path, "line 1", "no user turn: no line starts with '>'")
    collected = MessageCollector(path)
    start = 0
    while start < len(lines):
        quoted = _is_turn(lines[start])
        end = start
        while end < len(lines) and _is_turn(lines[end]) == quoted:
            end += 1
        block = lines[start:end]
        if quoted:
            collected.add(
                role=ROLE_USER, speaker="User", text="\n".join(map(_unquote, block)), position=f"line {start + 1}"
            )
        elif start > 0:
            collected.add(role=ROLE_ASSISTANT, speaker="Assistant", text="\n".join(block), position=f"line {start + 1}")
        else:
            collected.add(
                role=ROLE_PARTICIPANT, speaker="Preamble", text="\n".join(block), position=f"line {start + 1}"
            )
        start = end
    return collected.result()

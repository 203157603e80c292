"""What a transcript parser returns: ordered, verbatim messages tagged with their format."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["ROLE_ASSISTANT", "ROLE_PARTICIPANT", "ROLE_USER", "Message", "Transcript", "TranscriptFormat"]

#: The human side of an agent conversation.
ROLE_USER = "user"
#: The model side of an agent conversation (Gemini's ``model`` is reported as this).
ROLE_ASSISTANT = "assistant"
#: A member of a multi-party chat (Slack), where no side is the agent.
ROLE_PARTICIPANT = "participant"


class TranscriptFormat(StrEnum):
    """Every transcript format the miners read (the value is the name used in messages and docs)."""

    CLAUDE_CODE = "claude-code"
    CLAUDE_AI = "claude-ai"
    CHATGPT = "chatgpt"
    CODEX = "codex"
    GEMINI = "gemini"
    CONTINUE = "continue"
    SLACK = "slack"
    PLAIN_TEXT = "plain-text"


@dataclass(frozen=True, slots=True)
class Message:
    """One message as spoken: the words are ``normalise``-d and otherwise untouched.

    ``index`` is the message's position among the file's messages (0-based, stable while a file only grows);
    ``timestamp`` is a UTC instant ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` when the source records one;
    ``conversation`` names the conversation inside a bundle export (or the session), when the source has one;
    ``source_id`` is the source's own id for the message; ``position`` says where in the file it came from.
    """

    index: int
    role: str
    speaker: str
    text: str
    timestamp: str | None
    conversation: str | None
    source_id: str | None
    position: str


@dataclass(frozen=True, slots=True)
class Transcript:
    """The parsed form of one transcript file."""

    path: str
    format: TranscriptFormat
    messages: tuple[Message, ...]

    def conversations(self) -> tuple[tuple[str | None, tuple[Message, ...]], ...]:
        """The messages grouped by ``conversation``, in order of first appearance."""
        groups: dict[str | None, list[Message]] = {}
        for message in self.messages:
            groups.setdefault(message.conversation, []).append(message)
        return tuple((name, tuple(items)) for name, items in groups.items())

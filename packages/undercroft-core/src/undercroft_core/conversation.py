"""Rendering transcript turns as drawer text: ``SPEAKER said, "…"`` with the words left exactly as spoken."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from undercroft_core.errors import InvalidInput

__all__ = ["MAX_SPEAKER_CHARS", "render_transcript", "render_turn"]

#: Longest speaker label accepted.
MAX_SPEAKER_CHARS = 128


def _validate_speaker(speaker: object) -> str:
    if not isinstance(speaker, str) or not speaker.strip():
        raise InvalidInput(f"speaker must be a non-empty string, got {speaker!r}")
    if len(speaker) > MAX_SPEAKER_CHARS:
        raise InvalidInput(f"speaker label is {len(speaker)} characters, the limit is {MAX_SPEAKER_CHARS}")
    if speaker != speaker.strip():
        raise InvalidInput(f"speaker {speaker!r} starts or ends with whitespace")
    for character in speaker:
        if unicodedata.category(character)[0] == "C" or character in "\u2028\u2029":
            raise InvalidInput(f"speaker {speaker!r} contains the control character U+{ord(character):04X}")
    return speaker


def render_turn(speaker: str, text: str) -> str:
    """Render one turn as ``SPEAKER said, "TEXT"``; ``text`` is embedded verbatim (quotes inside are kept)."""
    if not isinstance(text, str):
        raise InvalidInput(f"turn text must be a string, got {type(text).__name__}")
    return f'{_validate_speaker(speaker)} said, "{text}"'


def render_transcript(turns: Iterable[tuple[str, str]]) -> str:
    """Render ``(speaker, text)`` turns one per paragraph, so the chunker prefers to cut between turns."""
    return "\n\n".join(render_turn(speaker, text) for speaker, text in turns)

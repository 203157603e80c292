"""One parser per transcript format, and the registry the detector consults.

JSONL formats read a list of decoded lines, JSON formats the decoded document, the plain-text format the
text itself. Each entry pairs a shape test (``matches``) with the parser it selects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from undercroft_cli.mining._internal.shapes import JsonLine
from undercroft_cli.mining.formats import (
    chatgpt,
    claude_ai,
    claude_code,
    codex,
    continue_dev,
    gemini,
    plain_text,
    slack,
)
from undercroft_cli.mining.messages import Message, TranscriptFormat

__all__ = ["JSONL_FORMATS", "JSON_FORMATS", "JsonFormat", "JsonlFormat"]


@dataclass(frozen=True, slots=True)
class JsonlFormat:
    """A format stored as one JSON object per line."""

    format: TranscriptFormat
    matches: Callable[[Sequence[JsonLine]], bool]
    parse: Callable[[Sequence[JsonLine], str], tuple[Message, ...]]


@dataclass(frozen=True, slots=True)
class JsonFormat:
    """A format stored as one JSON document."""

    format: TranscriptFormat
    matches: Callable[[Any], bool]
    parse: Callable[[Any, str], tuple[Message, ...]]


#: Line-oriented formats, by detection order (detection tries them all and refuses more than one match).
JSONL_FORMATS: tuple[JsonlFormat, ...] = (
    JsonlFormat(claude_code.FORMAT, claude_code.matches, claude_code.parse),
    JsonlFormat(codex.FORMAT, codex.matches, codex.parse),
    JsonlFormat(gemini.FORMAT, gemini.matches_jsonl, gemini.parse_jsonl),
)

#: Whole-document formats.
JSON_FORMATS: tuple[JsonFormat, ...] = (
    JsonFormat(claude_ai.FORMAT, claude_ai.matches, claude_ai.parse),
    JsonFormat(chatgpt.FORMAT, chatgpt.matches, chatgpt.parse),
    JsonFormat(gemini.FORMAT, gemini.matches_json, gemini.parse_json),
    JsonFormat(continue_dev.FORMAT, continue_dev.matches, continue_dev.parse),
    JsonFormat(slack.FORMAT, slack.matches, slack.parse),
)

# The plain-text parser is not registered above: it reads text, not JSON.
_ = plain_text

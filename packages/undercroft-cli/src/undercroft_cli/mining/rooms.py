"""Where mined drawers are filed when the caller does not say: the wing and room defaults.

They follow MemPalace 3.11's miners, so a palace mined by either lands in the same places:

* **Wing**: the ``--wing`` given; else, for transcripts under an AI tool's own storage (a ``.codex`` or
  ``.gemini`` path segment, or ``.claude/projects``), :data:`AI_TOOL_WING`; else the mined directory's name,
  lower-cased with spaces and hyphens turned into ``_`` (MemPalace's wing slug).
* **Room, documents**: :data:`DOCUMENT_ROOM` — MemPalace files every document in ``general`` unless a
  project config lists rooms, and Undercroft has no such config.
* **Room, ``mine --mode convos``**: a topic read off the conversation's first 3,000 characters — the topic
  whose keywords appear most (whole words, each counted once), ties to the earlier topic, ``general``
  when none appears. MemPalace does the same with substring hits; whole words keep ``latest`` out of
  ``test``.
* **Room, ``sweep``**: :data:`SWEEP_ROOM` for every message. A swept message's id must not change as its
  session grows, and a topic read from the session would.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from undercroft_core import InvalidInput, validate_name

__all__ = [
    "AI_TOOL_WING",
    "CLAUDE_CODE_WING",
    "DEFAULT_ROOM",
    "DOCUMENT_ROOM",
    "SWEEP_ROOM",
    "TOPIC_KEYWORDS",
    "TOPIC_WINDOW",
    "conversation_room",
    "default_wing",
    "is_ai_tool_path",
    "wing_slug",
]

#: Wing of transcripts found in an AI tool's own storage (MemPalace's name for it).
AI_TOOL_WING = "wing_api"
#: The wing Claude Code's auto-save files into: the default of both ``hooks claude-code`` and ``daemon run``.
#: One constant, because a message's drawer id depends on its wing: a hook and a daemon that disagreed here
#: filed every message twice.
CLAUDE_CODE_WING = "claude-code"
#: Room of every mined document.
DOCUMENT_ROOM = "general"
#: Room of a conversation that matches no topic.
DEFAULT_ROOM = "general"
#: Room of every swept message.
SWEEP_ROOM = "conversations"
#: Characters of a conversation the topic is read from.
TOPIC_WINDOW = 3000

#: Topic rooms and the words that vote for them, in tie-break order.
TOPIC_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("technical", ("code", "python", "function", "bug", "error", "api", "database", "server", "deploy", "git",
                   "test", "debug", "refactor", "compile")),
    ("architecture", ("architecture", "design", "pattern", "structure", "schema", "interface", "module",
                      "component", "service", "layer")),
    ("planning", ("plan", "roadmap", "milestone", "deadline", "priority", "sprint", "backlog", "scope",
                  "requirement", "spec")),
    ("decisions", ("decided", "decision", "chose", "picked", "switched", "migrated", "replaced", "trade-off",
                   "alternative", "approach")),
    ("problems", ("problem", "issue", "broken", "failed", "crash", "stuck", "workaround", "fix", "solved",
                  "resolved")),
)  # fmt: skip

_TOPIC_PATTERNS = tuple(
    (room, tuple(re.compile(rf"(?<!\w){re.escape(word)}(?:s|es)?(?!\w)") for word in words))
    for room, words in TOPIC_KEYWORDS
)


def is_ai_tool_path(path: Path) -> bool:
    """True when ``path`` lies in Codex's, Gemini CLI's or Claude Code's transcript storage."""
    parts = path.parts
    if ".codex" in parts or ".gemini" in parts:
        return True
    return any(first == ".claude" and second == "projects" for first, second in itertools.pairwise(parts))


def wing_slug(name: str) -> str:
    """MemPalace's wing slug of a directory name: lower-cased, spaces and hyphens to ``_``, ends trimmed."""
    slug = name.lower().replace(" ", "_").replace("-", "_").strip("_")
    if not slug:
        raise InvalidInput(f"cannot derive a wing from the directory name {name!r}: pass a wing explicitly")
    try:
        return validate_name(slug, what="wing")
    except InvalidInput as error:
        raise InvalidInput(f"{error} (derived from the directory name {name!r}): pass a wing explicitly") from None


def default_wing(root: Path, *, transcripts: bool) -> str:
    """The wing mined content from ``root`` goes to when no wing is given."""
    if transcripts and is_ai_tool_path(root):
        return AI_TOOL_WING
    return wing_slug(root.name)


def conversation_room(text: str) -> str:
    """The topic room of a conversation (its rendered text), or :data:`DEFAULT_ROOM`."""
    window = text[:TOPIC_WINDOW].casefold()
    best, best_score = DEFAULT_ROOM, 0
    for room, patterns in _TOPIC_PATTERNS:
        score = sum(1 for pattern in patterns if pattern.search(window))
        if score > best_score:
            best, best_score = room, score
    return best

"""The protocol's chunking: turns rendered `SPEAKER said, "…"` one per line, packed greedily into chunks.

The head-to-head protocol fixes the chunks every system receives, so runs are comparable byte for byte:
each session's turns become one line each (a turn whose text holds a newline stays one unit), and the lines
are packed greedily, in order, into chunks of at most 800 characters on line boundaries. A single line longer
than the limit becomes a chunk of its own rather than being cut. Each chunk carries its session and the turn
ids it holds, so session recall and turn recall can both be scored from a ranking of chunk ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from undercroft_bench.errors import ArmUnavailable, InvalidSetting

__all__ = [
    "CHUNKERS",
    "CHUNK_LIMIT",
    "Chunk",
    "Chunker",
    "Session",
    "Turn",
    "chunk_sessions",
    "pack_lines",
    "protocol_chunks",
    "render_turn",
]

#: The protocol's chunk size limit, in characters (code points).
CHUNK_LIMIT = 800


@dataclass(frozen=True)
class Turn:
    """One utterance of a conversation: who spoke, what was said, and the dataset's id for it (may be empty)."""

    speaker: str
    text: str
    turn_id: str = ""


@dataclass(frozen=True)
class Session:
    """One session of a conversation, in dataset order: its identity (LoCoMo's `N` of `session_N`) and turns."""

    session_id: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Chunk:
    """One unit handed to a retriever: its id (unique within a conversation), text, session and turn ids."""

    chunk_id: str
    text: str
    session_id: str
    turn_ids: tuple[str, ...]


#: A chunking strategy: a conversation's sessions in, its chunks out (ids unique within the conversation).
Chunker = Callable[[Sequence[Session]], list[Chunk]]


def render_turn(turn: Turn) -> str:
    """Render one turn as the protocol's line: `SPEAKER said, "TEXT"` (the text verbatim, newlines kept)."""
    return f'{turn.speaker} said, "{turn.text}"'


def pack_lines(lines: Sequence[str], limit: int = CHUNK_LIMIT) -> list[list[int]]:
    """Group line indices greedily, in order, so each group joined by newlines is at most `limit` characters.

    A line longer than `limit` on its own forms a group alone; nothing is ever split or reordered.
    """
    if limit < 1:
        raise InvalidSetting(f"chunk limit must be at least 1 character, got {limit}")
    groups: list[list[int]] = []
    current: list[int] = []
    length = 0
    for index, line in enumerate(lines):
        # Joining adds one newline between lines, which counts against the limit.
        grown = length + len(line) + (1 if current else 0)
        if current and grown > limit:
            groups.append(current)
            current, length = [], 0
            grown = len(line)
        current.append(index)
        length = grown
    if current:
        groups.append(current)
    return groups


def protocol_chunks(sessions: Sequence[Session], limit: int = CHUNK_LIMIT) -> list[Chunk]:
    """Chunk a conversation by the protocol: one line per turn, greedy packing per session, never across sessions."""
    chunks: list[Chunk] = []
    for session in sessions:
        lines = [render_turn(turn) for turn in session.turns]
        for group in pack_lines(lines, limit):
            chunks.append(
                Chunk(
                    chunk_id=f"c{len(chunks)}",
                    text="\n".join(lines[i] for i in group),
                    session_id=session.session_id,
                    turn_ids=tuple(session.turns[i].turn_id for i in group if session.turns[i].turn_id),
                )
            )
    return chunks


def _ours_chunks(sessions: Sequence[Session]) -> list[Chunk]:
    """The second arm's seam: chunking by undercroft_core's own chunker, wired once core ships it."""
    raise ArmUnavailable(
        "chunking 'ours' needs undercroft_core's chunker, which is not built yet; use --chunking protocol"
    )


# ---- CHUNKING REGISTRATION POINT ----------------------------------------------------------------------------
# "ours" (the second arm: sessions rendered the same way, then cut by undercroft_core's chunker) is
# replaced here once core's chunker exists. Every chunker must keep chunk ids unique within a conversation and
# carry each chunk's session and turn ids.
CHUNKERS: dict[str, Chunker] = {
    "protocol": protocol_chunks,
    "ours": _ours_chunks,
}


def chunk_sessions(name: str, sessions: Sequence[Session]) -> list[Chunk]:
    """Chunk `sessions` with the registered chunker `name`; refuse an unknown name."""
    try:
        chunker = CHUNKERS[name]
    except KeyError:
        raise InvalidSetting(f"unknown chunking {name!r}; known: {', '.join(sorted(CHUNKERS))}") from None
    return chunker(sessions)

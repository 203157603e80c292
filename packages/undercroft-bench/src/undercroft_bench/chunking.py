"""The protocol's chunking: turns rendered `SPEAKER said, "…"` one per line, packed greedily into chunks.

The head-to-head protocol fixes the chunks every system receives, so runs are comparable byte for byte:
each session's turns become one line each (a turn whose text holds a newline stays one unit), and the lines
are packed greedily, in order, into chunks of at most 800 characters on line boundaries. A single line longer
than the limit becomes a chunk of its own rather than being cut. Each chunk carries its session and the turn
ids it holds, so session recall and turn recall can both be scored from a ranking of chunk ids.

Two more arms (issues 4 and 11) cut the same rendering with undercroft_core's own chunker instead: each
session's lines joined by newlines into one text (exactly the text one protocol chunk would hold if the whole
session fitted), `undercroft_core.chunk(text, target=800)` applied, and each chunk mapped back by offsets to
its session and every turn whose line it overlaps. `ours-overlap` is a bench-only experiment: the same chunks,
each start (after the first) moved back over at most 100 characters of the previous chunk to a word start,
MemPalace's 100-character overlap made without ever cutting a word. Every chunk stays an exact substring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from undercroft_core import MIN_CHUNK_CHARS
from undercroft_core import chunk as core_chunk

from undercroft_bench.errors import InvalidSetting

__all__ = [
    "CHUNKERS",
    "CHUNK_LIMIT",
    "OVERLAP_CHARS",
    "Chunk",
    "Chunker",
    "RenderedSession",
    "Session",
    "Turn",
    "chunk_sessions",
    "ours_chunks",
    "ours_overlap_chunks",
    "ours_spans",
    "pack_lines",
    "protocol_chunks",
    "render_session",
    "render_turn",
]

#: The protocol's chunk size limit, in characters (code points).
CHUNK_LIMIT = 800
#: The `ours-overlap` arm's overlap between consecutive chunks, in characters (MemPalace's setting).
OVERLAP_CHARS = 100


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
    #: The day the session took place (ISO ``YYYY-MM-DD``), when the dataset says.
    date: str | None = None


@dataclass(frozen=True)
class Chunk:
    """One unit handed to a retriever: its id (unique within a conversation), text, session and turn ids."""

    chunk_id: str
    text: str
    session_id: str
    turn_ids: tuple[str, ...]
    #: Its session's day (ISO), when known: an arm may file it as the content's date.
    session_date: str | None = None


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
                    session_date=session.date,
                )
            )
    return chunks


@dataclass(frozen=True)
class RenderedSession:
    """A session as one text: its turns' protocol lines joined by newlines, and each line's `[start, end)` span."""

    text: str
    turn_spans: tuple[tuple[int, int], ...]


def render_session(session: Session) -> RenderedSession:
    """Render every turn as the protocol does and join the lines with newlines, keeping each line's offsets."""
    lines = [render_turn(turn) for turn in session.turns]
    spans: list[tuple[int, int]] = []
    position = 0
    for line in lines:
        spans.append((position, position + len(line)))
        position += len(line) + 1  # the joining newline belongs to no turn
    return RenderedSession(text="\n".join(lines), turn_spans=tuple(spans))


def _word_start_from(text: str, floor: int, start: int) -> int:
    """The first word start (a non-space after a space, or the text's start) in `[floor, start)`, else `start`."""
    for position in range(floor, start):
        if not text[position].isspace() and (position == 0 or text[position - 1].isspace()):
            return position
    return start


def ours_spans(text: str, *, limit: int = CHUNK_LIMIT, overlap: int = 0) -> list[tuple[int, int]]:
    """The `[start, end)` spans core's chunker cuts `text` into, each start after the first moved back.

    With `overlap` 0 these are `undercroft_core.chunk`'s spans unchanged. Otherwise a chunk's start moves back
    to the first word start at or after `overlap` characters before the previous chunk's end (never before the
    previous chunk's start), so consecutive chunks share at most `overlap` characters, beginning on a word.
    """
    if limit < MIN_CHUNK_CHARS:
        raise InvalidSetting(f"chunk limit for core's chunker must be at least {MIN_CHUNK_CHARS}, got {limit}")
    if overlap < 0:
        raise InvalidSetting(f"chunk overlap must be at least 0 characters, got {overlap}")
    cut = [(piece.start, piece.end) for piece in core_chunk(text, target=limit)]
    spans = cut[:1]
    for (previous_start, previous_end), (start, end) in pairwise(cut):
        floor = max(previous_start, previous_end - overlap)
        spans.append((_word_start_from(text, floor, start), end))
    return spans


def _core_chunks(sessions: Sequence[Session], limit: int, overlap: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    for session in sessions:
        rendered = render_session(session)
        for start, end in ours_spans(rendered.text, limit=limit, overlap=overlap):
            # A turn belongs to every chunk whose span overlaps its line, even by one character.
            held = (
                turn.turn_id
                for turn, (turn_start, turn_end) in zip(session.turns, rendered.turn_spans, strict=True)
                if turn_start < end and turn_end > start and turn.turn_id
            )
            chunks.append(
                Chunk(
                    chunk_id=f"c{len(chunks)}",
                    text=rendered.text[start:end],
                    session_id=session.session_id,
                    turn_ids=tuple(held),
                    session_date=session.date,
                )
            )
    return chunks


def ours_chunks(sessions: Sequence[Session], limit: int = CHUNK_LIMIT) -> list[Chunk]:
    """Chunk each rendered session with `undercroft_core.chunk` (no overlap), never across sessions."""
    return _core_chunks(sessions, limit, 0)


def ours_overlap_chunks(
    sessions: Sequence[Session], limit: int = CHUNK_LIMIT, overlap: int = OVERLAP_CHARS
) -> list[Chunk]:
    """As `ours_chunks`, each chunk after a session's first also repeating up to `overlap` characters before it."""
    return _core_chunks(sessions, limit, overlap)


# ---- CHUNKING REGISTRATION POINT ----------------------------------------------------------------------------
# Every chunker must keep chunk ids unique within a conversation and carry each chunk's session and turn ids.
# "ours" is the second arm (the same rendering cut by undercroft_core's chunker); "ours-overlap" is the
# bench-only overlap experiment of issue 4 (core's chunker has no overlap unless LoCoMo shows it pays).
CHUNKERS: dict[str, Chunker] = {
    "protocol": protocol_chunks,
    "ours": ours_chunks,
    "ours-overlap": ours_overlap_chunks,
}


def chunk_sessions(name: str, sessions: Sequence[Session]) -> list[Chunk]:
    """Chunk `sessions` with the registered chunker `name`; refuse an unknown name."""
    try:
        chunker = CHUNKERS[name]
    except KeyError:
        raise InvalidSetting(f"unknown chunking {name!r}; known: {', '.join(sorted(CHUNKERS))}") from None
    return chunker(sessions)

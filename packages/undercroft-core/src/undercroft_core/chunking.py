"""The chunker: ~800-character drawers cut on paragraph, line, sentence or word boundaries, never altering a byte.

Every chunk is an exact substring of the input (``text[chunk.start:chunk.end] == chunk.text``), chunks come
in order without overlapping, and what lies between them (and before the first, after the last) is
whitespace only: together they cover every non-whitespace character exactly once. No overlap is applied:
MemPalace overlaps 100 characters, and this project adds overlap only when a LoCoMo run shows it pays.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from undercroft_core.errors import InvalidInput

__all__ = ["CHUNK_CHARS", "MIN_CHUNK_CHARS", "Chunk", "chunk"]

#: Target (and maximum) drawer length in characters.
CHUNK_CHARS = 800
#: Smallest ``target`` accepted; below this boundaries stop meaning anything.
MIN_CHUNK_CHARS = 32

# A sentence ends at terminal punctuation, optionally followed by closing quotes/brackets, then whitespace.
_SENTENCE_END = re.compile(r"[.!?。！？…؟।][\"'”’»)\]]*(?=\s)")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: its position in the sequence, its ``[start, end)`` span in the input, and its exact text."""

    index: int
    start: int
    end: int
    text: str


def _skip_whitespace(text: str, position: int) -> int:
    length = len(text)
    while position < length and text[position].isspace():
        position += 1
    return position


def _cut_point(text: str, start: int, target: int) -> int:
    """Where to end a chunk that begins at ``start`` and cannot fit whole: an index in ``(start, start+target]``."""
    limit = start + target
    # Prefer boundaries in the second half of the window so chunks do not come out tiny.
    floor = start + target // 2
    paragraph = text.rfind("\n\n", floor, limit)
    if paragraph > start:
        return paragraph
    line = text.rfind("\n", floor, limit)
    if line > start:
        return line
    last_sentence = -1
    for match in _SENTENCE_END.finditer(text, floor, limit):
        last_sentence = match.end()
    if last_sentence > start:
        return last_sentence
    for position in range(limit, start, -1):
        if text[position].isspace():
            return position
    # No boundary at all (a long token): a hard cut, moved back off combining marks so a grapheme stays whole.
    cut = limit
    while cut - 1 > start and unicodedata.category(text[cut])[0] == "M":
        cut -= 1
    return cut


def chunk(text: str, *, target: int = CHUNK_CHARS) -> tuple[Chunk, ...]:
    """Split ``text`` (normally the output of ``normalise``) into chunks of at most ``target`` characters.

    Deterministic and pure. Whitespace-only input gives no chunks. Raises :class:`InvalidInput` for a
    non-string or a ``target`` below :data:`MIN_CHUNK_CHARS`.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a string, got {type(text).__name__}")
    if isinstance(target, bool) or not isinstance(target, int) or target < MIN_CHUNK_CHARS:
        raise InvalidInput(f"chunk target must be an integer >= {MIN_CHUNK_CHARS}, got {target!r}")
    chunks: list[Chunk] = []
    length = len(text)
    position = _skip_whitespace(text, 0)
    while position < length:
        end = length if length - position <= target else _cut_point(text, position, target)
        stop = end
        while text[stop - 1].isspace():
            stop -= 1
        chunks.append(Chunk(index=len(chunks), start=position, end=stop, text=text[position:stop]))
        position = _skip_whitespace(text, end)
    return tuple(chunks)

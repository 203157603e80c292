"""The scorer shared by every instrument: a ranking of chunk ids mapped to sessions and turns, and tallies.

A retriever ranks chunks; the scorer alone decides what that ranking reached. Sessions are taken from the
ranking in order, deduplicated on first appearance, and the first `k` kept; a question is a session hit iff
any gold session is among them. Turn recall reads the turns held by the first `k` chunks of the ranking:
a hit iff any gold turn is among them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import RetrieverFault
from undercroft_bench.evidence import parse_turn_id

__all__ = [
    "Tally",
    "category_order",
    "checked_ranking",
    "chunk_turns",
    "sessions_in_rank_order",
    "turns_reached",
]


@dataclass
class Tally:
    """An exact numerator and denominator: printed as `hits/total`, never as a rounded ratio alone."""

    hits: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        """Count one evaluated question, a hit or not."""
        self.total += 1
        self.hits += int(hit)

    def percent(self) -> float | None:
        """Hits as a percentage of the total, or None when nothing was evaluated."""
        return None if self.total == 0 else 100.0 * self.hits / self.total

    def describe(self) -> str:
        """`hits/total (pp.pp %)`, or `0/0 (n/a)` when nothing was evaluated."""
        percent = self.percent()
        shown = "n/a" if percent is None else f"{percent:.2f} %"
        return f"{self.hits}/{self.total} ({shown})"


def checked_ranking(ranking: Sequence[str], chunks: Mapping[str, Chunk], asked: int, arm: str) -> list[str]:
    """Validate a retriever's answer: at most `asked` ids, each one it was given; duplicates keep first rank."""
    if len(ranking) > asked:
        raise RetrieverFault(f"arm {arm!r} returned {len(ranking)} chunk ids when asked for at most {asked}")
    seen: list[str] = []
    for chunk_id in ranking:
        if chunk_id not in chunks:
            raise RetrieverFault(f"arm {arm!r} returned chunk id {chunk_id!r}, which it was never given")
        if chunk_id not in seen:
            seen.append(chunk_id)
    return seen


def sessions_in_rank_order(ranking: Iterable[str], chunks: Mapping[str, Chunk], k: int) -> list[str]:
    """The sessions of the ranked chunks, deduplicated in rank order, first `k` kept."""
    sessions: list[str] = []
    for chunk_id in ranking:
        session = chunks[chunk_id].session_id
        if session not in sessions:
            sessions.append(session)
            if len(sessions) == k:
                break
    return sessions


def chunk_turns(chunk: Chunk) -> set[tuple[int, int]]:
    """The `(session, turn)` pairs a chunk holds, parsed from its turn ids as evidence is parsed."""
    pairs: set[tuple[int, int]] = set()
    for turn_id in chunk.turn_ids:
        parsed = parse_turn_id(turn_id)
        if parsed is not None and parsed[1] is not None:
            pairs.add((parsed[0], parsed[1]))
    return pairs


def turns_reached(ranking: Sequence[str], chunks: Mapping[str, Chunk], k: int) -> set[tuple[int, int]]:
    """Every `(session, turn)` held by the first `k` chunks of the ranking."""
    reached: set[tuple[int, int]] = set()
    for chunk_id in ranking[:k]:
        reached |= chunk_turns(chunks[chunk_id])
    return reached


def category_order(category: str) -> tuple[int, int, str]:
    """Sort key putting numeric categories first in numeric order, then named ones alphabetically."""
    return (0, int(category), "") if category.isdigit() else (1, 0, category)

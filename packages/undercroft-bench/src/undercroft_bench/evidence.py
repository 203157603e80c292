"""Lenient parsing of LoCoMo `evidence` ids (`D<session>:<turn>`) into gold sessions and gold turns.

The dataset's evidence lists hold a few malformed strings ('D8:6; D9:17', 'D:11:26', 'D30:05', a bare 'D').
The protocol parses them leniently: each item is split on `;` and whitespace, and a token's session is the
first integer after its `D` (its turn the next integer, when there is one). Whatever yields no session is
kept and counted as unparsed, never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Evidence", "parse_evidence", "parse_turn_id"]

_SPLIT = re.compile(r"[;\s]+")
# "D", then anything but digits, then the session integer; optionally non-digits and the turn integer.
_TOKEN = re.compile(r"[Dd]\D*?(\d+)(?:\D+(\d+))?")


@dataclass(frozen=True)
class Evidence:
    """Gold sessions and turns of one question, in first-seen order, plus the tokens that did not parse."""

    sessions: tuple[int, ...]
    turns: tuple[tuple[int, int], ...]
    unparsed: tuple[str, ...]


def parse_turn_id(token: str) -> tuple[int, int | None] | None:
    """Parse one token such as `D3:7` into `(3, 7)`; `(3, None)` without a turn; None when no session."""
    match = _TOKEN.search(token)
    if match is None:
        return None
    turn = match.group(2)
    return int(match.group(1)), (int(turn) if turn is not None else None)


def parse_evidence(items: Iterable[object]) -> Evidence:
    """Parse a question's evidence list leniently (see the module docstring); never raises on content."""
    sessions: list[int] = []
    turns: list[tuple[int, int]] = []
    unparsed: list[str] = []
    for item in items:
        for token in _SPLIT.split(str(item)):
            if not token:
                continue
            parsed = parse_turn_id(token)
            if parsed is None:
                unparsed.append(token)
                continue
            session, turn = parsed
            if session not in sessions:
                sessions.append(session)
            if turn is not None and (session, turn) not in turns:
                turns.append((session, turn))
    return Evidence(sessions=tuple(sessions), turns=tuple(turns), unparsed=tuple(unparsed))

"""Selection: the page cut over an already-scored, already-admitted ranking.

``room_cap`` is a soft per-room cap: walking the ranking in score order, each room keeps at most ``cap``
places; once every hit has been offered, leftover places refill in score order, so a page is never shorter
than the ranking allows and a single-room question still gets all its evidence. It reorders, never
rescores. Pages are slices ``[offset, offset + limit)`` of one selection, so consecutive pages tile it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["cap_rooms", "page"]

T = TypeVar("T")


def cap_rooms(ranked: Sequence[T], rooms: Sequence[str], cap: int | None, depth: int) -> list[T]:
    """The first ``depth`` items of ``ranked`` under a soft per-room ``cap`` (None: pure score order)."""
    if cap is None:
        return list(ranked[:depth])
    taken: list[int] = []
    deferred: list[int] = []
    per_room: dict[str, int] = {}
    for position, room in enumerate(rooms):
        if len(taken) >= depth:
            break
        if per_room.get(room, 0) < cap:
            per_room[room] = per_room.get(room, 0) + 1
            taken.append(position)
        else:
            deferred.append(position)
    if len(taken) < depth:
        # Refill in score order from what the cap held back (and anything never reached).
        rest = deferred + list(range(len(taken) + len(deferred), len(ranked)))
        taken.extend(rest[: depth - len(taken)])
    return [ranked[position] for position in taken]


def page(selected: Sequence[T], offset: int, limit: int) -> list[T]:
    """Ranks ``[offset, offset + limit)`` of ``selected``."""
    return list(selected[offset : offset + limit])

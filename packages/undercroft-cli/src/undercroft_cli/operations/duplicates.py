"""Is this text already stored? What ``undercroft drawer check-dup``, the MCP tool ``undercroft_check_duplicate``
and the /v1 route bound to it answer, said once.

Exact by keyed fingerprint; with a threshold, also by embedding cosine. A drawer named as the duplicate is read
again, verified, through the store's door that refuses a quarantine resident (defence in depth behind the
store's own exclusion of the review wing). The surfaces' defaults differ, for a stated reason: the tool keeps
MemPalace 3.11's contract (``threshold`` 0.9 when none is given), the command asks the exact question unless
``--threshold`` widens it.
"""

from __future__ import annotations

from dataclasses import dataclass

from undercroft_core.drawer import Drawer
from undercroft_store.memory.dedup import check_duplicate
from undercroft_store.store import VaultStore

__all__ = ["DuplicateVerdict", "find_duplicate"]


@dataclass(frozen=True, slots=True)
class DuplicateVerdict:
    """The answer: whether a drawer holds these words (``exact``, or ``similarity`` ≥ ``threshold``), and which."""

    duplicate: bool
    id: str | None
    exact: bool
    similarity: float | None
    threshold: float | None
    match: Drawer | None


def find_duplicate(
    store: VaultStore, text: str, *, wing: str | None = None, room: str | None = None, threshold: float | None = None
) -> DuplicateVerdict:
    """The duplicate of ``text`` in the scope (unscoped: under the vault's trust floor), the match re-read verified.

    Blank text is the store's ``InvalidSurfaceInput``; a tampered match an integrity verdict, never an answer.
    """
    found = check_duplicate(store, text, wing=wing, room=room, threshold=threshold)
    match = store.get(found.id) if found.duplicate and found.id is not None else None
    return DuplicateVerdict(
        duplicate=match is not None,
        id=match.id if match is not None else found.id,
        exact=bool(found.exact),
        similarity=found.similarity,
        threshold=threshold,
        match=match,
    )

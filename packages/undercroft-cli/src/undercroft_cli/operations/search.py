"""What a search result owes its reader on every surface: the window in force and what each filter excluded."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the store is imported by whoever ran the search, never by this module
    from undercroft_store.search import SearchResult

__all__ = ["TOOL_SEARCH_LIMIT", "no_hits_line", "search_disclosures"]

TOOL_SEARCH_LIMIT = 100
"""The most hits one MCP search page returns. The CLI takes up to the store's 1000 (``MAX_LIMIT``): a person
pipes a long page into a file, while a tool reply lands whole in a model's context, so an agent pages instead."""


def search_disclosures(result: SearchResult) -> list[str]:
    """The parenthesised notes before the hits: the date window, the kind filter's and trust floor's exclusions."""
    notes: list[str] = []
    if result.window is not None:
        notes.append(f"({result.window.note()})")
    if result.unlabeled_excluded is not None:
        notes.append(f"(kind filter: {result.unlabeled_excluded} drawer(s) with no kind excluded)")
    if result.trust_excluded_wings is not None:
        notes.append(f"(trust floor: wings excluded: {', '.join(result.trust_excluded_wings) or 'none'})")
    return notes


def no_hits_line(result: SearchResult) -> str:
    """The line that stands in for an empty page: how much was searched, in which scope."""
    return f"no hits (searched {result.searched} drawer(s), scope {result.scope})"

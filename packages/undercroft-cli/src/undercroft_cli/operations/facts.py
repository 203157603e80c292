"""Writing facts: what ``undercroft kg add|invalidate|supersede``, the MCP tools ``undercroft_kg_add`` /
``undercroft_kg_invalidate`` / ``undercroft_kg_supersede`` and the /v1 routes bound to them do, said once.

A fact is a triple with its validity window and, when it cites one, the drawer it came from (its receipt). The
CLI also records the cited span, who claimed the fact and its grounding verdict; the tool takes the triple, the
window and the source, so a fact an agent adds is always ``unevaluated`` (its grounding is for ``refine`` or an
operator to judge, never for the claimant to declare).

Closing and superseding act on one fact by id. The CLI names the id; a tool names the triple and closes each
open fact that matches it behind the canonical fence (``mcp/tools/graph.py``), one call here per fact.
"""

from __future__ import annotations

from undercroft_store.memory.kg.facts import Fact
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.store import VaultStore

from undercroft_cli.operations.values import ValueRefused

__all__ = ["add_fact", "close_fact", "parse_span", "supersede_fact"]


def parse_span(text: str) -> tuple[int, int]:
    """``START:END`` (two non-negative integers) as a span; `ValueRefused` otherwise."""
    start, _, end = text.partition(":")
    if not (start.isdigit() and end.isdigit()):
        raise ValueRefused("START:END integers", text)
    return int(start), int(end)


def add_fact(
    store: VaultStore,
    subject: str,
    predicate: str,
    obj: str,
    *,
    valid_from: str | None = None,
    valid_to: str | None = None,
    source_drawer: str | None = None,
    source_span: tuple[int, int] | None = None,
    extractor: str | None = None,
    grounding: str = "unevaluated",
) -> Fact:
    """Add ``subject predicate obj`` (sealed, tagged, audited); the new fact. The graph's refusals pass through
    (a bad name or date, an unknown source drawer, a span outside it: ``InvalidInput``)."""
    return KnowledgeGraph(store).add(
        subject,
        predicate,
        obj,
        valid_from=valid_from,
        valid_to=valid_to,
        source_drawer=source_drawer,
        source_span=source_span,
        extractor=extractor,
        grounding=grounding,
    )


def close_fact(store: VaultStore, fact_id: str, *, ended: str | None = None) -> Fact:
    """Close fact ``fact_id``'s validity window at ``ended`` (default now); the closed fact."""
    return KnowledgeGraph(store).invalidate(fact_id, ended=ended)


def supersede_fact(store: VaultStore, fact_id: str, new_object: str, *, at: str | None = None) -> tuple[Fact, Fact]:
    """Close fact ``fact_id`` and open its successor with ``new_object`` at ``at`` (default now), atomically;
    ``(closed, successor)``."""
    return KnowledgeGraph(store).supersede(fact_id, new_object, at=at)

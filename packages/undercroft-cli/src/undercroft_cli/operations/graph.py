"""The knowledge graph's reads, said once: what ``undercroft kg query|rel|timeline|canonical|stats|receipts``, the
MCP tools ``undercroft_kg_query|rel|timeline|stats|receipts`` and ``undercroft_lookup_canonical``, and the /v1
``kg/…`` routes bound to those tools select.

Each read records itself on an audited vault exactly as the graph's own door does (one ``read/kg-…`` record).
The selection is shared; the rendering stays each surface's: the CLI's ``--json`` prints ``Fact.to_dict()``
(nulls kept, docs/cli.md), a tool's reply prints `facts_record` (``FACT_SCHEMA``, nulls dropped).
"""

from __future__ import annotations

from typing import Any

from undercroft_store.memory.kg.authority import canonical
from undercroft_store.memory.kg.facts import Fact
from undercroft_store.memory.kg.graph import Direction, KnowledgeGraph
from undercroft_store.memory.kg.receipts import ReceiptReport, support_of
from undercroft_store.store import VaultStore

from undercroft_cli.operations.shapes import fact_record

__all__ = [
    "canonical_fact",
    "fact_timeline",
    "facts_about",
    "facts_by_relation",
    "facts_record",
    "graph_counts",
    "receipt_rows",
]


def facts_about(
    store: VaultStore,
    entity: str,
    *,
    direction: Direction = "both",
    as_of: str | None = None,
    grounding: str | None = None,
) -> list[Fact]:
    """The facts naming ``entity`` (as subject, object or either), only those true at ``as_of`` when given."""
    return KnowledgeGraph(store).query(entity, direction=direction, as_of=as_of, grounding=grounding)


def facts_by_relation(
    store: VaultStore, predicate: str, *, as_of: str | None = None, grounding: str | None = None
) -> list[Fact]:
    """The facts whose predicate is ``predicate`` (case folded), only those true at ``as_of`` when given."""
    return KnowledgeGraph(store).rel(predicate, as_of=as_of, grounding=grounding)


def fact_timeline(store: VaultStore, entity: str | None = None, *, grounding: str | None = None) -> list[Fact]:
    """Every fact (about ``entity`` when given), closed ones included, in validity order; only the ``grounding``
    ones when given (the filter runs after the read, so the read's record counts what was selected)."""
    facts = KnowledgeGraph(store).timeline(entity)
    return [fact for fact in facts if grounding is None or fact.grounding == grounding]


def canonical_fact(store: VaultStore, key: str) -> Fact | None:
    """The one active approved fact holding canonical ``key``, or ``None`` (no declared truth: not a guess)."""
    return canonical(store, key)


def graph_counts(store: VaultStore) -> dict[str, int]:
    """``{entities, facts, active, closed, predicates}``: counts only, no name or value read."""
    return KnowledgeGraph(store).stats().to_dict()


def facts_record(store: VaultStore, facts: list[Fact]) -> dict[str, Any]:
    """``{facts: [fact]}`` as ``FACT_SCHEMA`` records, each cited fact with its ``support`` (its receipt and the
    byte ranges of its words in the drawer: offsets only, never the words)."""
    support = support_of(store, facts)
    return {"facts": [fact_record(fact, support.get(fact.id)) for fact in facts]}


def receipt_rows(report: ReceiptReport, *, problems_only: bool = False) -> list[dict[str, Any]]:
    """``[{fact_id, source_drawer, verdict}]`` per cited fact, in the report's order; without the verified ones
    when ``problems_only``."""
    return [
        {"fact_id": r.fact_id, "source_drawer": r.source_drawer, "verdict": r.verdict}
        for r in report.receipts
        if not problems_only or r.verdict != "verified"
    ]

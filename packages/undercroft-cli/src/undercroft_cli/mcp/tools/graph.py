"""Knowledge-graph tools: add, invalidate, supersede, query, timeline, stats, rel, receipts, lookup_canonical,
entities.

Facts are temporal triples in the vault (sealed objects, tagged, chain-audited). Argument names follow
MemPalace 3.11 (``subject``/``predicate``/``object``, ``ended``, ``old_object``/``new_object``/``at``,
``entity``/``as_of``/``direction``). Closing a window is refused where the target is the approved canonical
fact ``undercroft_lookup_canonical`` returns: the authority tier is an operator surface in both directions.
"""

from __future__ import annotations

import json
from typing import Any, cast

from undercroft_store.governance.read_audit import InternalRead, silent
from undercroft_store.memory.kg.facts import GROUNDINGS, Fact
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.kg.receipts import ReceiptReport, fact_receipts

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.errors import InvalidArgument, ToolRefused
from undercroft_cli.mcp.tools.base import ToolOutput, ToolSession, ToolSpec, boolean, integer, string
from undercroft_cli.operations import FACT_SCHEMA, fact_record
from undercroft_cli.operations.entities import ENTITY_PAGE_MAX, ENTITY_SCHEMA, entity_records
from undercroft_cli.operations.facts import add_fact, close_fact, supersede_fact
from undercroft_cli.operations.graph import (
    canonical_fact,
    fact_timeline,
    facts_about,
    facts_by_relation,
    facts_record,
    graph_counts,
    receipt_rows,
)

__all__ = ["GRAPH_TOOLS"]

_DIRECTIONS = ("outgoing", "incoming", "both")
# Opt-in only: the default returns all three, since dropping background facts breaks the multi-hop answers.
_GROUNDING = string("only facts so grounded (default: all three)", enum=GROUNDINGS)


def _facts(session: ToolSession, facts: list[Fact]) -> str:
    return json.dumps(facts_record(session.store, facts), indent=2, ensure_ascii=False)


def _open_facts(graph: KnowledgeGraph, args: Arguments, subject: str, predicate: str, obj: str | None) -> list[Fact]:
    folded = predicate.casefold()
    # The authority fence and the close's target lookup: the reply carries fact ids and the caller's own
    # values, never the facts read here, so the read is the engine's and records nothing.
    with silent(graph, InternalRead.POLICY_FENCE):
        found = graph.query(subject, direction="outgoing")
    matches = [
        fact
        for fact in found
        if fact.active and fact.predicate.casefold() == folded and (obj is None or fact.object == obj)
    ]
    for fact in matches:
        if fact.canonical_key is not None and fact.review_state == "approved":
            raise ToolRefused(
                f"{args.tool}: ({subject}, {predicate}) is held by approved canonical fact {fact.id}; closing its "
                "window would leave the key without its approved answer, and approving answers is operator-only"
            )
    if not matches:
        raise InvalidArgument(f"{args.tool}: no open fact ({subject}, {predicate}{', ' + obj if obj else ''})")
    return matches


def _kg_add(session: ToolSession, args: Arguments) -> ToolOutput:
    fact = add_fact(
        session.store,
        args.required_text("subject"),
        args.required_text("predicate"),
        args.required_text("object"),
        valid_from=args.text("valid_from"),
        valid_to=args.text("valid_to"),
        source_drawer=args.text("source_drawer_id"),
    )
    return ToolOutput(f"fact: {fact.id} ({fact.subject} {fact.predicate} {fact.object})", {"fact": fact_record(fact)})


def _kg_invalidate(session: ToolSession, args: Arguments) -> ToolOutput:
    graph = KnowledgeGraph(session.store)
    subject, predicate = args.required_text("subject"), args.required_text("predicate")
    closed = [
        close_fact(session.store, fact.id, ended=args.text("ended"))
        for fact in _open_facts(graph, args, subject, predicate, args.text("object"))
    ]
    text = "\n".join(f"closed: {fact.id} (valid_to {fact.valid_to})" for fact in closed)
    return ToolOutput(text, {"closed": [fact_record(fact) for fact in closed]})


def _kg_supersede(session: ToolSession, args: Arguments) -> ToolOutput:
    graph = KnowledgeGraph(session.store)
    subject, predicate = args.required_text("subject"), args.required_text("predicate")
    old_object = args.text("old_object")
    lines, pairs = [], []
    for fact in _open_facts(graph, args, subject, predicate, old_object):
        closed, successor = supersede_fact(session.store, fact.id, args.required_text("new_object"), at=args.text("at"))
        lines.append(f"superseded: {closed.id} -> {successor.id} ({successor.object}, from {successor.valid_from})")
        pairs.append({"closed": fact_record(closed), "successor": fact_record(successor)})
    return ToolOutput("\n".join(lines), {"superseded": pairs})


def _kg_query(session: ToolSession, args: Arguments) -> str:
    direction = args.choice("direction") or "both"
    facts = facts_about(
        session.store,
        args.required_text("entity"),
        direction=cast(Any, direction),  # one of the enum's values: the parser checked it
        as_of=args.text("as_of"),
        grounding=args.choice("grounding"),
    )
    return _facts(session, facts)


def _kg_timeline(session: ToolSession, args: Arguments) -> str:
    facts = fact_timeline(session.store, args.text("entity"), grounding=args.choice("grounding"))
    return _facts(session, facts)


def _kg_stats(session: ToolSession, args: Arguments) -> str:
    return json.dumps(graph_counts(session.store), indent=2)


def _kg_rel(session: ToolSession, args: Arguments) -> str:
    facts = facts_by_relation(
        session.store, args.required_text("predicate"), as_of=args.text("as_of"), grounding=args.choice("grounding")
    )
    return _facts(session, facts)


def _kg_receipts(session: ToolSession, args: Arguments) -> str:
    report = fact_receipts(session.store)
    assert isinstance(report, ReceiptReport)  # integrity_only=False always answers the full report
    rows = receipt_rows(report, problems_only=args.flag("problems_only"))
    return json.dumps({"counts": report.counts, "uncited": report.uncited, "receipts": rows}, indent=2)


def _lookup_canonical(session: ToolSession, args: Arguments) -> ToolOutput:
    fact = canonical_fact(session.store, args.required_text("key"))
    if fact is None:
        text = "no canonical fact holds this key: no declared truth exists (this is not a guess)"
        return ToolOutput(text, {"fact": None})
    record = fact_record(fact)
    return ToolOutput(json.dumps(record, indent=2, ensure_ascii=False), {"fact": record})


def _kg_entities(session: ToolSession, args: Arguments) -> str:
    limit, offset = args.integer("limit"), args.integer("offset")
    page = entity_records(session.store, limit=100 if limit is None else limit, offset=offset or 0)
    return json.dumps(page, indent=2, ensure_ascii=False)


_AS_OF = string("YYYY, YYYY-MM, YYYY-MM-DD or an ISO instant: only facts true then")

GRAPH_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_kg_add",
        "Add a temporal fact (subject, predicate, object) with an optional validity window.",
        {
            "subject": string("entity"),
            "predicate": string("relation, e.g. works_at"),
            "object": string("value or entity"),
            "valid_from": string("when the fact starts: YYYY, YYYY-MM, YYYY-MM-DD or an ISO instant"),
            "valid_to": string("when it ends (exclusive): YYYY, YYYY-MM, YYYY-MM-DD or an ISO instant"),
            "source_drawer_id": string("drawer whose words state the fact"),
        },
        _kg_add,
        required=("subject", "predicate", "object"),
        output={"fact": FACT_SCHEMA},
    ),
    ToolSpec(
        "undercroft_kg_invalidate",
        "Close the validity window of the open facts (subject, predicate[, object]).",
        {
            "subject": string("entity"),
            "predicate": string("relation"),
            "object": string("only this value"),
            "ended": string("ISO end (default now)"),
        },
        _kg_invalidate,
        required=("subject", "predicate"),
        output={"closed": {"type": "array", "items": FACT_SCHEMA}},
    ),
    ToolSpec(
        "undercroft_kg_supersede",
        "Close the current value of (subject, predicate) and open the new one at the same instant.",
        {
            "subject": string("entity"),
            "predicate": string("relation"),
            "old_object": string("only this value"),
            "new_object": string("new value"),
            "at": string("ISO instant of the change (default now)"),
        },
        _kg_supersede,
        required=("subject", "predicate", "new_object"),
        output={"superseded": {"type": "array", "items": {"type": "object"}, "description": "closed, successor"}},
    ),
    ToolSpec(
        "undercroft_kg_query",
        "Facts about an entity, optionally only those true at as_of.",
        {
            "entity": string("entity"),
            "as_of": _AS_OF,
            "direction": string(
                "facts where the entity is subject, object, or either", enum=_DIRECTIONS, default="both"
            ),
            "grounding": _GROUNDING,
        },
        _kg_query,
        required=("entity",),
        output={"facts": {"type": "array", "items": FACT_SCHEMA}},
    ),
    ToolSpec(
        "undercroft_kg_timeline",
        "Fact history (closed facts included), optionally for one entity.",
        {"entity": string("entity"), "grounding": _GROUNDING},
        _kg_timeline,
        output={"facts": {"type": "array", "items": FACT_SCHEMA}},
    ),
    ToolSpec(
        "undercroft_kg_stats",
        "Knowledge-graph counts.",
        {},
        _kg_stats,
        output={
            key: {"type": "integer", "minimum": 0} for key in ("entities", "facts", "active", "closed", "predicates")
        },
    ),
    ToolSpec(
        "undercroft_kg_rel",
        "Facts by predicate (the edge label), e.g. every reports_to.",
        {"predicate": string("predicate to match"), "as_of": _AS_OF, "grounding": _GROUNDING},
        _kg_rel,
        required=("predicate",),
        output={"facts": {"type": "array", "items": FACT_SCHEMA}},
    ),
    ToolSpec(
        "undercroft_kg_receipts",
        "Per-fact receipt verdicts against each cited verbatim source.",
        {"problems_only": boolean("omit verified facts")},
        _kg_receipts,
        output={
            "counts": {"type": "object"},
            "uncited": {"type": "integer", "minimum": 0},
            "receipts": {"type": "array", "items": {"type": "object"}},
        },
    ),
    ToolSpec(
        "undercroft_lookup_canonical",
        "The one approved answer for a key: the single active fact an operator approved as canonical. Consult "
        "it before searching for exact or high-risk asks; an empty answer means no declared truth exists.",
        {"key": string("canonical key")},
        _lookup_canonical,
        required=("key",),
        output={"fact": {"type": ["object", "null"], "description": "the canonical fact, or null when none"}},
    ),
    ToolSpec(
        "undercroft_kg_entities",
        "The graph's entities (the names facts use), in first-named order, paged: find the name to pass to "
        "kg_query or kg_timeline.",
        {
            # The same bounds as GET /v1/vaults/{id}/kg/entities: a page of names is small at either end.
            "limit": integer("page size", minimum=1, maximum=ENTITY_PAGE_MAX, default=100),
            "offset": integer("entities to skip", minimum=0, maximum=10_000_000, default=0),
        },
        _kg_entities,
        output={
            "entities": {"type": "array", "items": ENTITY_SCHEMA},
            "offset": {"type": "integer", "minimum": 0},
        },
    ),
)

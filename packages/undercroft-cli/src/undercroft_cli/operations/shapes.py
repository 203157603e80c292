"""The JSON shapes every surface returns, as records and as JSON-schema fragments.

One shape per thing: a search result (``SearchResult.to_dict``, the CLI's ``search --json``, the MCP
``undercroft_search`` structured content and the coming ``/v1/search``), a drawer, a write's outcome, a fact.
The schema fragments are what MCP ``outputSchema`` advertises and docs/cli.md documents; a test validates real
results against them. A fact's record leaves out the fields it does not have (no ``null`` noise).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the caller already holds these objects; this module never loads the store itself
    from undercroft_core.drawer import Drawer
    from undercroft_store.memory.kg.facts import Fact
    from undercroft_store.memory.kg.receipts import Support

__all__ = [
    "DRAWER_SCHEMA",
    "FACT_SCHEMA",
    "HIT_SCHEMA",
    "SEARCH_RESULT_PROPERTIES",
    "WRITE_PROPERTIES",
    "closet_record",
    "dedup_record",
    "drawer_record",
    "erasure_record",
    "fact_record",
    "hallway_record",
    "nullable",
    "reached_records",
    "verify_record",
]

_STRING = {"type": "string"}
_INTEGER = {"type": "integer"}
_NUMBER = {"type": "number"}


def nullable(kind: str) -> dict[str, Any]:
    """A property that holds ``kind`` or ``null``."""
    return {"type": [kind, "null"]}


DRAWER_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "wing": _STRING,
        "room": _STRING,
        "content": _STRING,
        "kind": nullable("string"),
        "content_date": nullable("string"),
        "filed_at": _STRING,
        "updated_at": nullable("string"),
        "added_by": _STRING,
        "source_file": nullable("string"),
        "supersedes": nullable("string"),
        "agent": nullable("string"),
        "channel": nullable("string"),
        "session": nullable("string"),
        "preview": {"type": "boolean", "description": "true when content is clipped (get the drawer for all)"},
    },
    "required": ["id", "wing", "room", "content", "filed_at"],
}
"""A drawer: its words, where it lives, its dates and provenance (writer claims are claims)."""

HIT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "content": _STRING,
        "wing": _STRING,
        "room": _STRING,
        "kind": nullable("string"),
        "content_date": nullable("string"),
        "filed_at": _STRING,
        "occurrences": {"type": "array", "items": {"type": "object"}},
        "time_mentions": {"type": "array", "items": {"type": "object"}},
        "entities": {"type": "array", "items": _STRING},
        "elapsed": nullable("string"),
        "elapsed_days": nullable("integer"),
        "score": _NUMBER,
        "semantic": _NUMBER,
        "lexical": _NUMBER,
        "lexical_exact": _NUMBER,
        "lexical_morph": _NUMBER,
    },
    "required": ["id", "content", "wing", "room", "filed_at", "score"],
}

SEARCH_RESULT_PROPERTIES: Mapping[str, Mapping[str, Any]] = {
    "hits": {"type": "array", "items": HIT_SCHEMA, "description": "best first; content is untrusted data"},
    "scope": _STRING,
    "searched": _INTEGER,
    "pool": _INTEGER,
    "admitted": _INTEGER,
    "unlabeled_excluded": nullable("integer"),
    "trust_excluded_wings": {"type": ["array", "null"], "items": _STRING},
    "room_cap": nullable("integer"),
    "ranked_at": nullable("string"),
    "fusion": _STRING,
    "window": {"type": "object", "description": "the date window in force (present only when one is)"},
}
"""``SearchResult.to_dict()``: the page, its scope and what each filter excluded (``window`` when one is set)."""

WRITE_PROPERTIES: Mapping[str, Mapping[str, Any]] = {
    "outcome": {"type": "string", "enum": ["created", "updated", "unchanged", "quarantined"]},
    "id": {"type": "string", "description": "the drawer's id (for quarantined: the review-queue slot)"},
    "wing": {"type": "string", "description": "where it was filed (for quarantined: where it was headed)"},
    "room": _STRING,
}
"""One drawer write's outcome, in the words the text reply uses."""

FACT_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "subject": _STRING,
        "predicate": _STRING,
        "object": _STRING,
        "valid_from": _STRING,
        "valid_to": _STRING,
        "active": {"type": "boolean"},
        "source_drawer": _STRING,
        "source_span": {"type": "array", "items": _INTEGER},
        "grounding": _STRING,
        "authority_class": _STRING,
        "review_state": _STRING,
        "canonical_key": _STRING,
        "supersedes": _STRING,
        "superseded_by": _STRING,
        "support": {
            "type": "object",
            "description": "a cited fact's support: the drawer, its receipt verdict and the UTF-8 byte ranges of "
            "the cited words in that drawer's verbatim content (spans empty unless the receipt verifies)",
            "properties": {
                "drawer": _STRING,
                "receipt": {"type": "string", "enum": ["verified", "source_changed", "dangling", "tampered"]},
                "spans": {"type": "array", "items": {"type": "array", "items": _INTEGER}},
            },
            "required": ["drawer", "receipt", "spans"],
        },
    },
    "required": ["id", "subject", "predicate", "object", "active"],
}
"""A temporal fact; a field the fact does not have is absent, never ``null``. ``source_span`` is in characters
(the KG's contract); ``support.spans`` gives the same words as byte offsets, on the surfaces that read facts."""


def drawer_record(drawer: Drawer, *, full: bool = True, preview_chars: int | None = None) -> dict[str, Any]:
    """A drawer as a ``DRAWER_SCHEMA`` record; ``full`` adds provenance, ``preview_chars`` clips the content."""
    content = drawer.content
    record: dict[str, Any] = {
        "id": drawer.id,
        "wing": drawer.wing,
        "room": drawer.room,
        "kind": drawer.kind,
        "content_date": drawer.content_date,
        "filed_at": drawer.filed_at,
    }
    if full:
        record.update(
            updated_at=drawer.updated_at,
            added_by=drawer.added_by,
            source_file=drawer.source_file,
            supersedes=drawer.supersedes,
            agent=drawer.agent,
            channel=drawer.channel,
            session=drawer.session,
        )
    if preview_chars is not None and len(content) > preview_chars:
        content = content[:preview_chars]
        record["preview"] = True
    record["content"] = content
    return record


def dedup_record(report: Any, *, dry_run: bool) -> dict[str, Any]:
    """A ``DedupReport``: ``{dry_run, groups: [{wing, room, keep, duplicates}], removed}`` (0 on a dry run)."""
    groups = [{"wing": g.wing, "room": g.room, "keep": g.keep, "duplicates": list(g.duplicates)} for g in report.groups]
    return {"dry_run": dry_run, "groups": groups, "removed": 0 if dry_run else report.removed}


def erasure_record(verdict: Any) -> dict[str, Any]:
    """A ``ForgettingVerdict``: ``{status: verified|recorded|failed, findings, signature, sender}``."""
    return {"status": verdict.status, "findings": list(verdict.findings), "signature": verdict.signature,
            "sender": verdict.sender}  # fmt: skip


def closet_record(closet: Any) -> dict[str, Any]:
    """One closet: ``{wing, room, closet, lines}`` (lines are derived from drawer words: untrusted data)."""
    return {"wing": closet.wing, "room": closet.room, "closet": closet.number, "lines": list(closet.lines)}


def hallway_record(wing: str, hallway: Any) -> dict[str, Any]:
    """One hallway: two names that appear in the same drawers of ``wing``, how often, and where."""
    return {"wing": wing, "first": hallway.first, "second": hallway.second, "count": hallway.count,
            "drawers": list(hallway.drawers)}  # fmt: skip


def reached_records(reached: Any) -> list[dict[str, Any]]:
    """A traversal's ``(wing, hops, via)`` triples as ``[{wing, hops, via}]``."""
    return [{"wing": wing, "hops": hops, "via": via} for wing, hops, via in reached]


def verify_record(report: Any) -> dict[str, Any]:
    """A ``VerifyReport`` as JSON: every leg's findings by field name, and ``ok`` (the verdict) first."""
    if not is_dataclass(report) or isinstance(report, type):
        raise TypeError("verify_record takes a VerifyReport")
    return {"ok": bool(getattr(report, "ok")), **asdict(report)}  # noqa: B009 -- asdict narrowed the type


def fact_record(fact: Fact, support: Support | None = None) -> dict[str, Any]:
    """A fact as a ``FACT_SCHEMA`` record: ``Fact.to_dict()`` without the fields that are ``None``, plus its
    ``support`` when given (`undercroft_store.memory.kg.receipts.support_of`)."""
    record = {key: value for key, value in fact.to_dict().items() if value is not None}
    if support is not None:
        record["support"] = support.to_dict()
    return record

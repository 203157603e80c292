"""Typed results of the everyday /v1 routes: a hit, a search, a write, a verify, a vault — and `Reply`, the base
every typed result shares (the other routes' results are in `undercroft_net.engine.replies`).

Each is a frozen dataclass built from the engine's JSON by ``from_json``, which takes the fields it names and keeps
the whole reply in ``raw``. A test records every reply a live engine gives the client and checks both directions:
every field of a reply is a field of its model and every field of the model is in the reply (a field the engine
answers only in some replies is named in the model's ``OPTIONAL``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar, cast

__all__ = ["Hit", "Reply", "SearchResult", "StreamFrame", "VaultCreated", "VerifyReport", "WriteOutcome"]

R = TypeVar("R", bound="Reply")


class Reply:
    """The base of every typed result: ``from_json`` takes each field the model names and keeps ``raw``."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    """Fields the engine answers in some replies of this shape and not in others (``None`` when absent)."""

    raw: dict[str, Any]
    """The whole reply, as the engine answered it."""

    @classmethod
    def from_json(cls: type[R], data: Mapping[str, Any]) -> R:
        """The result from one reply (a field the reply lacks is ``None``; the test says which may lack)."""
        names = [f.name for f in fields(cast(Any, cls)) if f.name != "raw"]
        built: R = cast(Any, cls)(**{name: data.get(name) for name in names}, raw=dict(data))
        return built


@dataclass(frozen=True)
class Hit(Reply):
    """One search hit: the drawer's exact words, where it lives, its dates and the ranking's evidence."""

    id: str
    content: str
    wing: str
    room: str
    kind: str | None
    content_date: str | None
    filed_at: str
    occurrences: list[Any] | None
    time_mentions: list[Any] | None
    entities: list[str] | None
    elapsed: str | None
    elapsed_days: int | None
    score: float
    semantic: float
    lexical: float
    lexical_exact: float | None
    lexical_morph: float | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class SearchResult(Reply):
    """A search page: the hits in rank order, what was searched and excluded, and the offset of the next page."""

    hits: tuple[Hit, ...]
    scope: str
    searched: int
    pool: int
    admitted: int
    unlabeled_excluded: int | None
    trust_excluded_wings: list[str] | None
    room_cap: int | None
    ranked_at: str | None
    fusion: str
    next_offset: int
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SearchResult:
        """The result from a ``POST …/search`` reply, each hit a `Hit`."""
        hits = tuple(Hit.from_json(hit) for hit in data.get("hits") or ())
        names = [f.name for f in fields(cls) if f.name not in ("raw", "hits")]
        built: SearchResult = cast(Any, cls)(hits=hits, **{name: data.get(name) for name in names}, raw=dict(data))
        return built


@dataclass(frozen=True)
class WriteOutcome(Reply):
    """A save or an update: ``created | updated | unchanged`` and the id it landed under (never ``quarantined``:
    a diverted write raises `Quarantined`); ``deduped`` when a dedup-refresh save refreshed ``id`` in place."""

    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"wing", "room", "deduped", "similarity", "quarantined"})

    outcome: str
    id: str
    wing: str | None
    room: str | None
    deduped: bool | None
    similarity: float | None
    quarantined: bool | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class VerifyReport(Reply):
    """``POST …/verify``: every leg's findings by field name, and ``lines`` — the text ``undercroft verify``
    prints, one leg per line (``ok: false`` raises `IntegrityError`, the reply on its ``.body``)."""

    ok: bool
    vault: str
    records_checked: int
    tampered: list[str]
    embedding_failures: list[str]
    audit_chain_ok: bool
    chain_detail: str
    chain_records: int
    anchor: str
    orphan_labels: list[str]
    stale_records: list[str]
    unlabelled_records: list[str]
    tombstone_failures: list[str]
    mirror_drift: list[str]
    trust_failures: list[str]
    queue_failures: list[str]
    resurrected: list[str]
    retention_drift: list[str]
    surfaces: dict[str, Any] | None
    deep: bool
    sqlite_findings: list[str]
    scope_index: list[str]
    fingerprint_drift: list[str]
    order_drift: list[str]
    index_tier: list[str]
    search_snapshot: list[str]
    tokens: dict[str, Any] | None
    append_counter: str
    lines: list[str]
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class VaultCreated(Reply):
    """``POST /v1/vaults``: the new vault's id, level and embedding space."""

    id: str
    level: str
    embedder: str
    created: bool
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class StreamFrame:
    """One event of a vault's live stream (``client.stream(vault)``): its name and its metadata-only data.

    ``event`` is one of the stream's names (``sample``, ``drawer-saved``, ``drawer-quarantined``,
    ``drawer-deleted``, ``search``, ``kg-triple``, ``chain-commit``, ``hmac-fail``); ``data`` carries ids,
    counts and labels, never content.
    """

    event: str
    data: dict[str, Any]

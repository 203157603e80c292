"""Typed results of the /v1 routes a program reads field by field: a hit, a search, a write, a verify, a vault.

Each is built from the engine's JSON by ``from_json``, which takes the fields it names and keeps the whole reply
in ``raw``; a test checks every field name against the engine's own output schema, so the two cannot drift.
Routes whose replies a program mostly passes on (listings, the operator plane) return the JSON object as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar, cast

__all__ = ["Hit", "SearchResult", "VaultCreated", "VerifyReport", "WriteOutcome"]

T = TypeVar("T")


def _build(kind: type[T], data: Mapping[str, Any]) -> T:
    names = [f.name for f in fields(kind) if f.name != "raw"]  # type: ignore[arg-type]
    built: T = cast(Any, kind)(**{name: data.get(name) for name in names}, raw=dict(data))
    return built


@dataclass(frozen=True)
class Hit:
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
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Hit:
        """A hit from one element of a search reply's ``hits``."""
        return _build(cls, data)


@dataclass(frozen=True)
class SearchResult:
    """A search page: the hits in rank order, what was searched, and the offset of the next page."""

    hits: tuple[Hit, ...]
    scope: str
    searched: int
    pool: int
    admitted: int
    next_offset: int
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SearchResult:
        """The result from a ``POST …/search`` reply."""
        hits = tuple(Hit.from_json(hit) for hit in data.get("hits") or ())
        built: SearchResult = _build(cls, {**data, "hits": hits})
        return built


@dataclass(frozen=True)
class WriteOutcome:
    """A save or an update: ``created | updated | unchanged`` and the id it landed under (never ``quarantined``:
    a diverted write raises `Quarantined`); ``deduped`` when a dedup-refresh save refreshed ``id`` in place."""

    outcome: str
    id: str
    wing: str | None
    room: str | None
    deduped: bool | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WriteOutcome:
        """The outcome from a save or update reply."""
        return _build(cls, data)


@dataclass(frozen=True)
class VerifyReport:
    """``POST …/verify``: every HMAC walked and the chain replayed (``ok: false`` raises `IntegrityError`)."""

    ok: bool
    vault: str
    records_checked: int
    audit_chain_ok: bool
    tampered: list[Any]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VerifyReport:
        """The report from a verify reply."""
        return _build(cls, data)


@dataclass(frozen=True)
class VaultCreated:
    """``POST /v1/vaults``: the new vault's id, level and embedding space."""

    id: str
    level: str
    embedder: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VaultCreated:
        """The vault from a create reply."""
        return _build(cls, data)

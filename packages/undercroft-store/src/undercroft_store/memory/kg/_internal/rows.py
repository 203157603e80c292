"""Reading and writing fact and entity rows (verified reads; writes inside an audited transaction)."""

from __future__ import annotations

import json
import sqlite3

from undercroft_vault import AuditRow, BlindIndex, Domain, IntegrityFailure, compute_tag, constant_time_equal

from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.memory.kg.errors import FactNotFound, FactTampered
from undercroft_store.memory.kg.facts import (
    INSERT_COLUMNS,
    MIRROR_COLUMNS,
    Fact,
    FactRow,
    decode_fact,
    encode_fact,
    entity_key,
    fact_tag,
    mirrors_of,
    sealed_window,
    true_at,
    window_holds,
)

__all__ = [
    "FACT_SELECT",
    "ensure_entity",
    "entity_tag",
    "insert_fact",
    "load_fact",
    "update_fact",
    "verified_fact",
    "verified_fact_at",
]

# Opened windows one handle keeps (about 200 bytes each; a fact whose tag changed is opened again).
_WINDOW_CACHE = 262_144

#: The columns a verified fact read selects, in order: the tagged ones, then the clear mirrors it checks.
FACT_SELECT = f"SELECT id, meta_json, terms, value, tag, {MIRROR_COLUMNS} FROM kg_facts"  # noqa: S608


def _checked(context: VaultContext, row: tuple[object, ...]) -> tuple[str, bytes, bytes, bytes]:
    """A fact row's tag and clear mirrors checked (nothing opened yet); its id and tagged bytes."""
    fact_id = str(row[0])
    meta, terms, value, tag = (bytes(row[i]) for i in (1, 2, 3, 4))  # type: ignore[call-overload]
    if not constant_time_equal(fact_tag(context, fact_id, meta, terms, value), tag):
        raise FactTampered(f"fact {fact_id} in vault {context.vault_id!r} fails its HMAC tag: run undercroft verify")
    # The SQL filters ran on the clear mirrors: a row that matched through a flipped mirror is refused.
    if len(row) > 5 and tuple(row[5:]) != mirrors_of(meta):
        raise FactTampered(
            f"fact {fact_id} in vault {context.vault_id!r}: a clear index column disagrees with its HMAC-covered "
            "meta: run undercroft verify"
        )
    return fact_id, meta, terms, value


def verified_fact(context: VaultContext, row: tuple[object, ...]) -> Fact:
    """Check a fact row's tag, then open and rebuild it; `FactTampered` on any failure."""
    fact_id, meta, terms, value = _checked(context, row)
    try:
        return decode_fact(context, fact_id, meta, terms, value)
    except (IntegrityFailure, ValueError, KeyError, TypeError) as error:
        raise FactTampered(
            f"fact {fact_id} in vault {context.vault_id!r} verifies but does not open: {error}"
        ) from None


def verified_fact_at(context: VaultContext, row: tuple[object, ...], moment: str) -> Fact | None:
    """`verified_fact` for an as-of read: after the tag and mirror checks, a sealed window is opened first and a
    fact not true at ``moment`` is dropped with its terms and object unopened (None); else the fact.

    The opened window is kept per handle under the row's tag (``context.kg_window_cache``): a later as-of read
    of the same verified bytes (equal tag, checked above) reuses it instead of another AEAD open; a row whose
    tag changed (an update, a rotation) is opened again. The cache is cleared when the handle closes."""
    fact_id, meta, terms, value = _checked(context, row)
    tag = bytes(row[4])  # type: ignore[call-overload]
    try:
        cached = context.kg_window_cache.get(fact_id)
        if cached is not None and constant_time_equal(cached[0], tag):
            window: tuple[str | None, str | None] | None = cached[1]  # the same verified bytes: opened already
        else:
            window = sealed_window(context, fact_id, meta)
            if window is not None and len(context.kg_window_cache) < _WINDOW_CACHE:
                context.kg_window_cache[fact_id] = (tag, window)
        if window is None:  # a clear window (hmac-only, or not migrated yet): the fact's own fields decide
            fact = decode_fact(context, fact_id, meta, terms, value)
            return fact if true_at(fact, moment) else None
        if not window_holds(window, moment):
            return None
        return decode_fact(context, fact_id, meta, terms, value)
    except (IntegrityFailure, ValueError, KeyError, TypeError) as error:
        raise FactTampered(
            f"fact {fact_id} in vault {context.vault_id!r} verifies but does not open: {error}"
        ) from None


def load_fact(context: VaultContext, fact_id: str) -> Fact:
    """The verified fact `fact_id`, or `FactNotFound`."""
    row = context.connection.execute(f"{FACT_SELECT} WHERE id = ?", (fact_id,)).fetchone()
    if row is None:
        raise FactNotFound(f"no fact {fact_id!r} in vault {context.vault_id!r}")
    return verified_fact(context, row)


def insert_fact(context: VaultContext, blind: BlindIndex, fact: Fact, at: str, records: list[AuditRow]) -> FactRow:
    """INSERT a new fact row and queue its ``kg/<id>`` audit record."""
    row = encode_fact(context, blind, fact)
    placeholders = ", ".join("?" * 14)
    context.connection.execute(
        f"INSERT INTO kg_facts ({INSERT_COLUMNS}) VALUES ({placeholders})",  # noqa: S608 - fixed columns
        row.params(),
    )
    records.append(AuditRow(f"kg/{fact.id}", row.tag, at))
    return row


def update_fact(context: VaultContext, blind: BlindIndex, fact: Fact, at: str, records: list[AuditRow]) -> FactRow:
    """Rewrite an existing fact row (window closed, tier changed, link added) and queue its audit record."""
    row = encode_fact(context, blind, fact)
    context.connection.execute(
        """UPDATE kg_facts SET valid_to = ?, authority_class = ?, review_state = ?, canonical = ?,
           meta_json = ?, terms = ?, value = ?, tag = ? WHERE id = ?""",
        (
            row.valid_to,
            row.authority_class,
            row.review_state,
            row.canonical,
            row.meta_json,
            row.terms,
            row.value,
            row.tag,
            fact.id,
        ),
    )
    records.append(AuditRow(f"kg/{fact.id}", row.tag, at))
    return row


def entity_tag(context: VaultContext, entity_id: str, meta: bytes, name: bytes) -> bytes:
    """An entity row's HMAC tag (also the tag of its ``kgent/<id>`` audit record)."""
    return compute_tag(context.keys, f"kgent/{entity_id}", meta, name)


def ensure_entity(
    context: VaultContext, blind: BlindIndex, name: str, at: str, records: list[AuditRow], cache: set[str]
) -> str:
    """The entity's blind id; a new entity row (name sealed under ``kgname/{blind}``) is written once."""
    entity_id = entity_key(blind, name)
    if entity_id in cache:
        return entity_id
    cache.add(entity_id)
    connection: sqlite3.Connection = context.connection
    if connection.execute("SELECT 1 FROM kg_entities WHERE id = ?", (entity_id,)).fetchone() is not None:
        return entity_id
    plain = name.encode("utf-8")
    stored = context.sealer.seal(Domain.kg_name(entity_id), plain) if context.sealed else plain
    meta = json.dumps({"created_at": at}, separators=(",", ":")).encode("ascii")
    tag = entity_tag(context, entity_id, meta, stored)
    connection.execute(
        "INSERT INTO kg_entities (id, name, meta_json, tag) VALUES (?, ?, ?, ?)", (entity_id, stored, meta, tag)
    )
    records.append(AuditRow(f"kgent/{entity_id}", tag, at))
    return entity_id


def open_entity_name(context: VaultContext, entity_id: str, meta: bytes, name: bytes, tag: bytes) -> str:
    """A verified entity name; `FactTampered` when the row fails its tag or its sealed name does not open."""
    if not constant_time_equal(entity_tag(context, entity_id, meta, name), tag):
        raise FactTampered(f"entity {entity_id} in vault {context.vault_id!r} fails its HMAC tag")
    try:
        plain = context.sealer.open(Domain.kg_name(entity_id), name) if context.sealed else name
        return plain.decode("utf-8")
    except (IntegrityFailure, UnicodeDecodeError) as error:
        raise FactTampered(f"entity {entity_id} in vault {context.vault_id!r} does not open: {error}") from None

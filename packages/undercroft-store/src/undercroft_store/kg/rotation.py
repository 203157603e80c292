"""Re-keying the surfaces' tables for a key rotation (called by `undercroft_store.rotation`).

Each `reseal_*` runs inside the rotation's open transaction: it opens every sealed blob under the old
sealer (a blob that does not open refuses the rotation), seals it again under the new one and recomputes
the row's tag under the new MAC key. Blind values do not move (the blind-index secret is re-sealed, never
redrawn), so no index column changes. Each returns the ``(label, new tag)`` pairs the rotation appends as
re-key audit records, so every row's tag stays equal to the newest record naming it.
"""

from __future__ import annotations

import sqlite3

from undercroft_vault import Domain, Sealer, VaultKeys, compute_tag

from undercroft_store.kg.facts import at_rest_payload

__all__ = ["reseal", "reseal_entities", "reseal_facts", "reseal_supersessions", "reseal_tunnels"]

Rekeyed = list[tuple[str, bytes]]


def _move(blob: bytes, domain: Domain, old: Sealer, new: Sealer, sealed: bool) -> bytes:
    return new.seal(domain, old.open(domain, blob)) if sealed else blob


def reseal_facts(connection: sqlite3.Connection, old: Sealer, new: Sealer, keys: VaultKeys, *, sealed: bool) -> Rekeyed:
    """``kg_facts``: terms under ``kgterms/{id}``, object under ``kg/{id}``, tag ``kg/<id>``."""
    out: Rekeyed = []
    for fact_id, meta, terms, value in connection.execute(
        "SELECT id, meta_json, terms, value FROM kg_facts"
    ).fetchall():
        terms = _move(bytes(terms), Domain.kg_terms(fact_id), old, new, sealed)
        value = _move(bytes(value), Domain.kg_object(fact_id), old, new, sealed)
        tag = compute_tag(keys, f"kg/{fact_id}", bytes(meta), at_rest_payload(terms, value))
        connection.execute(
            "UPDATE kg_facts SET terms = ?, value = ?, tag = ? WHERE id = ?", (terms, value, tag, fact_id)
        )
        out.append((f"kg/{fact_id}", tag))
    return out


def reseal_entities(
    connection: sqlite3.Connection, old: Sealer, new: Sealer, keys: VaultKeys, *, sealed: bool
) -> Rekeyed:
    """``kg_entities``: name under ``kgname/{blind}``, tag ``kgent/<id>``."""
    out: Rekeyed = []
    for entity_id, name, meta in connection.execute("SELECT id, name, meta_json FROM kg_entities").fetchall():
        name = _move(bytes(name), Domain.kg_name(entity_id), old, new, sealed)
        tag = compute_tag(keys, f"kgent/{entity_id}", bytes(meta), name)
        connection.execute("UPDATE kg_entities SET name = ?, tag = ? WHERE id = ?", (name, tag, entity_id))
        out.append((f"kgent/{entity_id}", tag))
    return out


def reseal_tunnels(
    connection: sqlite3.Connection, old: Sealer, new: Sealer, keys: VaultKeys, *, sealed: bool
) -> Rekeyed:
    """``tunnels``: label under ``kg/{id}``, tag ``tunnel/<id>``."""
    out: Rekeyed = []
    for tunnel_id, label, meta in connection.execute("SELECT id, label, meta_json FROM tunnels").fetchall():
        label = _move(bytes(label), Domain.kg_object(tunnel_id), old, new, sealed)
        tag = compute_tag(keys, f"tunnel/{tunnel_id}", bytes(meta), label)
        connection.execute("UPDATE tunnels SET label = ?, tag = ? WHERE id = ?", (label, tag, tunnel_id))
        out.append((f"tunnel/{tunnel_id}", tag))
    return out


def reseal_supersessions(
    connection: sqlite3.Connection, old: Sealer, new: Sealer, keys: VaultKeys, *, sealed: bool
) -> Rekeyed:
    """``supersessions``: nothing sealed (the receipt is blind-keyed and survives); tag ``supersession/<id>``."""
    del old, new, sealed
    out: Rekeyed = []
    for drawer_id, meta in connection.execute("SELECT drawer_id, meta_json FROM supersessions").fetchall():
        tag = compute_tag(keys, f"supersession/{drawer_id}", bytes(meta), b"")
        connection.execute("UPDATE supersessions SET tag = ? WHERE drawer_id = ?", (tag, drawer_id))
        out.append((f"supersession/{drawer_id}", tag))
    return out


def reseal(connection: sqlite3.Connection, old: Sealer, new: Sealer, keys: VaultKeys, *, sealed: bool) -> Rekeyed:
    """Every surface table at once (facts, entities, tunnels, supersessions), inside the caller's transaction."""
    out: Rekeyed = []
    for step in (reseal_facts, reseal_entities, reseal_tunnels, reseal_supersessions):
        out += step(connection, old, new, keys, sealed=sealed)
    return out

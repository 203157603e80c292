"""The memory surfaces' tables: knowledge-graph entities and facts, tunnels, drawer supersession links.

The kernel owns every table's DDL (`kernel.schema` executes `SURFACE_DDL` at create and checks
`SURFACE_TABLES` at open), so the schema never imports a feature; the memory package writes and reads them.
Every table here carries an HMAC ``tag`` column and every write to it appends an audit record (labels in
`AUDIT_PREFIXES`); rotation re-keys each table through `undercroft_store.memory.kg.rotation` and the sealed
domains listed in `SEALED_DOMAINS`.
"""

from __future__ import annotations

from typing import Final

__all__ = ["AUDIT_PREFIXES", "SEALED_DOMAINS", "SURFACE_DDL", "SURFACE_TABLES", "SURFACE_TAGGED_TABLES"]

#: Every DDL statement the surfaces add, executed inside the vault-creation transaction.
SURFACE_DDL: Final = (
    """CREATE TABLE kg_entities (
        id TEXT PRIMARY KEY,
        name BLOB NOT NULL,
        meta_json BLOB NOT NULL,
        tag BLOB NOT NULL
    ) STRICT""",
    """CREATE TABLE kg_facts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        subject TEXT NOT NULL,
        predicate TEXT NOT NULL,
        object TEXT NOT NULL,
        valid_from TEXT,
        valid_to TEXT,
        source_drawer TEXT,
        authority_class TEXT NOT NULL,
        review_state TEXT NOT NULL,
        canonical TEXT,
        meta_json BLOB NOT NULL,
        terms BLOB NOT NULL,
        value BLOB NOT NULL,
        tag BLOB NOT NULL
    ) STRICT""",
    "CREATE INDEX kg_facts_subject ON kg_facts (subject, predicate, object)",
    "CREATE INDEX kg_facts_object ON kg_facts (object, valid_from)",
    "CREATE INDEX kg_facts_predicate ON kg_facts (predicate, valid_from)",
    "CREATE INDEX kg_facts_canonical ON kg_facts (canonical) WHERE canonical IS NOT NULL",
    """CREATE TABLE tunnels (
        id TEXT PRIMARY KEY,
        from_wing TEXT NOT NULL,
        from_room TEXT,
        to_wing TEXT NOT NULL,
        to_room TEXT,
        meta_json BLOB NOT NULL,
        label BLOB NOT NULL,
        tag BLOB NOT NULL
    ) STRICT""",
    """CREATE TABLE supersessions (
        drawer_id TEXT PRIMARY KEY,
        superseded_id TEXT NOT NULL,
        meta_json BLOB NOT NULL,
        tag BLOB NOT NULL
    ) STRICT""",
)

#: The tables `SURFACE_DDL` creates (checked at open).
SURFACE_TABLES: Final = ("kg_entities", "kg_facts", "tunnels", "supersessions")
#: Tables whose rows carry an HMAC tag: rotation re-tags each (see `undercroft_store.memory.kg.rotation`).
SURFACE_TAGGED_TABLES: Final = SURFACE_TABLES
#: Sealed columns per table and the AAD domain each is sealed under (sealed vaults only).
SEALED_DOMAINS: Final = {
    "kg_entities": {"name": "kgname/{id}"},
    "kg_facts": {"terms": "kgterms/{id}", "value": "kg/{id}"},
    "tunnels": {"label": "kg/{id}"},
}
#: Audit-record label prefixes the surfaces write (``<prefix>/<row id>``).
AUDIT_PREFIXES: Final = ("kg", "kgent", "tunnel", "tunneldel", "supersession")

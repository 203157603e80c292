"""Source-level inventory: every AAD domain kind and every tag-carrying table is named in the rotation path."""

from __future__ import annotations

import re
from pathlib import Path

import undercroft_store.integrity.rotation as rotation
from undercroft_store.kernel import seams
from undercroft_store.kernel.schema import TAGGED_TABLES
from undercroft_vault import DomainKind

SOURCE = Path(rotation.__file__).read_text(encoding="utf-8")


def test_every_domain_kind_is_placed_and_named() -> None:
    assert set(rotation.SEALED_DOMAINS) == set(DomainKind)
    for kind in DomainKind:
        assert f"DomainKind.{kind.name}" in SOURCE, kind


def test_every_placed_domain_is_resealed_in_the_source() -> None:
    # A domain that lives in a table must be sealed again under the new keys, by its constructor's name.
    constructors = {
        DomainKind.CONTENT: "Domain.content(",
        DomainKind.EMBEDDING: "Domain.embedding(",
        DomainKind.VAULT_SECRET: "blind.reseal(",
        # Derived, never re-sealed: the candidate tier's hook drops its rows in the rotation's transaction.
        DomainKind.PQ_ARTIFACT: "search.tiers.integrity.drop_on_rotation",
    }
    placed = {kind for kind, where in rotation.SEALED_DOMAINS.items() if where is not None}
    assert placed == set(constructors), "a newly placed domain needs its re-seal named here and in rotation.py"
    for needle in constructors.values():
        assert needle in SOURCE


def test_every_tag_carrying_table_is_named() -> None:
    # A new tagged table fails here until it is re-keyed by the core path, has a hook, or is declared pending
    # (a pending table with rows refuses the rotation at run time).
    core = set(rotation.TAG_TABLES)
    assert set(TAGGED_TABLES) <= core | set(seams.resealers()) | set(rotation.PENDING_RESEALERS)
    assert core <= set(TAGGED_TABLES)
    # ... and touched by SQL in the rotation path itself, not only listed in the map.
    for table in rotation.TAG_TABLES:
        assert re.search(rf"(FROM|INTO|UPDATE)\s+{table}\b", SOURCE) or f'"{table}"' in SOURCE.split("def ")[-1], table


def test_inventory_notices_a_new_kind() -> None:
    # The check above is not vacuous: a kind missing from the map fails it.
    partial = dict(rotation.SEALED_DOMAINS)
    partial.pop(DomainKind.KG_NAME)
    assert set(partial) != set(DomainKind)


def test_the_candidate_tier_tables_are_dropped_on_rotation() -> None:
    from undercroft_store.search.tiers.integrity import TIER_TABLES, drop_on_rotation

    assert all(seams.resealers()[table] is drop_on_rotation for table in TIER_TABLES)


def test_every_registered_hook_is_callable() -> None:
    registered = seams.resealers()
    assert registered, "the composition root (undercroft_store.wiring) registered no resealer"
    for table, hook in registered.items():
        assert callable(hook), table

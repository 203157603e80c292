"""Which drawer-id recipe a vault uses (``meta.drawer_id_recipe``), and the `DrawerIds` that applies it.

A sealed vault created by this release records ``hmac-v1``: its drawer ids are HMAC-SHA256 under a key derived
from the vault's never-rotated blind-index secret (`BlindIndex.drawer_id_key`), so an id confirms no guessed
(wing, room, source, index) to a reader without the key. A vault without the key — every vault created before
keyed ids, and every hmac-only vault (its content is plaintext by choice) — keeps the public ``sha256-v1``
recipe: its ids are folded into the audit chain, held in receipts, exports and agents' notes, and are never
re-keyed silently. A recipe this build does not know refuses the open (`SchemaMismatch`), never a guess.

Deleting the key downgrades nothing quietly: verify re-derives every drawer's id under the vault's recipe
and reports a row whose id does not re-derive (`mirror_drift`), so a vault whose recipe was edited to the
public one fails on every keyed row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Final

from undercroft_core.errors import InvalidInput
from undercroft_core.ids import (
    ID_RECIPE_APPEND,
    PUBLIC_DRAWER_IDS,
    VAULT_ID_RECIPE_KEYED,
    VAULT_ID_RECIPE_PUBLIC,
    DrawerIds,
)
from undercroft_vault import BlindIndex
from undercroft_vault.manifest import Level

from undercroft_store.errors import SchemaMismatch

__all__ = ["ID_RECIPE_KEY", "NEW_SEALED_RECIPE", "creation_recipe", "drawer_ids_for", "rederives", "stored_recipe"]

#: The ``meta`` key naming the vault's drawer-id recipe (absent: ``sha256-v1``, the recipe before keyed ids).
ID_RECIPE_KEY: Final = "drawer_id_recipe"
#: The recipe a NEW sealed vault records. Tests that pin the public recipe on new vaults patch this (the
#: ``legacy_ids`` marker of the store's tests); nothing else may.
NEW_SEALED_RECIPE: str = VAULT_ID_RECIPE_KEYED


def creation_recipe(level: Level) -> str:
    """The recipe a vault of ``level`` is created with: keyed when sealed, public on hmac-only."""
    return NEW_SEALED_RECIPE if level == "sealed" else VAULT_ID_RECIPE_PUBLIC


def stored_recipe(connection: sqlite3.Connection, vault_id: str) -> str:
    """The vault's recorded recipe (``sha256-v1`` when none is recorded); an unknown one is `SchemaMismatch`."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (ID_RECIPE_KEY,)).fetchone()
    if row is None:
        return VAULT_ID_RECIPE_PUBLIC
    value = bytes(row[0])
    for recipe in (VAULT_ID_RECIPE_PUBLIC, VAULT_ID_RECIPE_KEYED):
        if value == recipe.encode("ascii"):
            return recipe
    raise SchemaMismatch(
        f"vault {vault_id!r} records drawer id recipe {value[:40]!r}, which this build does not know "
        f"(expected {VAULT_ID_RECIPE_PUBLIC} or {VAULT_ID_RECIPE_KEYED}): upgrade undercroft"
    )


def drawer_ids_for(recipe: str, blind: Callable[[], BlindIndex]) -> DrawerIds:
    """The `DrawerIds` of ``recipe``; the keyed one takes its key from the vault's blind index (opened only
    then: a public-recipe vault never opens its blind secret for ids)."""
    if recipe == VAULT_ID_RECIPE_PUBLIC:
        return PUBLIC_DRAWER_IDS
    return DrawerIds.keyed(blind().drawer_id_key())


def rederives(ids: DrawerIds, drawer_id: str, document: dict[str, object]) -> bool:
    """True when ``drawer_id`` is what ``ids`` derives from the row's covered meta (verify's id leg).

    Read straight from the opened meta document (no `Drawer` is built): the wing, room, source, chunk index,
    drawer recipe and normalisation version the id was derived from."""
    wing, room, index = document.get("wing"), document.get("room"), document.get("chunk_index")
    version, source = document.get("normalize_version"), document.get("source_file")
    if not (isinstance(wing, str) and isinstance(room, str) and isinstance(index, int) and isinstance(version, int)):
        return False
    try:
        if document.get("id_recipe") == ID_RECIPE_APPEND:
            return ids.append(wing, room, index, normalize_version=version) == drawer_id
        return isinstance(source, str) and ids.source(wing, room, source, index, normalize_version=version) == drawer_id
    except InvalidInput:
        return False

"""Carrying a vault's id key to its copy: drawer ids that survive a move to another vault (issue 29).

A sealed vault derives its drawer ids (``hmac-v1``), its blind labels and its entity ids under one long-lived
blind-index secret, drawn at creation and never redrawn (rotation re-seals it). A copy made by export and
import into a new vault derives everything again under the new vault's own secret, so every drawer id an
agent or a tenant kept would stop resolving. Two explicit steps carry it instead:

* `export_id_key` reads the secret out of the source (the caller puts it in the export stream, which already
  holds every word of the vault: it is as sensitive as the export and travels with it);
* `adopt_id_key` installs it in the destination, sealed under the destination's keys, before anything is
  written there — so every id, label and entity the import writes is the source's, byte for byte.

Adoption is refused unless the destination is EMPTY (no row in any table a blind value or keyed id keys, no
label registry): a vault that already holds rows keyed under its own secret would be left with two keyings.
It is one audited transaction (an ``id-key/adopted`` record, keyed over the recipe the ids follow) and is
never the default: an export that names a secret is adopted only when the importer asks, because a secret
chosen by the export's author would let that author compute the destination's blind values later.
"""

from __future__ import annotations

import binascii
from typing import Final

from undercroft_core.drawer import canonical_json
from undercroft_core.errors import InvalidInput
from undercroft_vault import AuditRow, BlindIndex, SecretBytes, compute_tag
from undercroft_vault.blindindex import BLIND_SECRET_LENGTH

from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.governance import audited, context_of
from undercroft_store.kernel._internal.ids_at_rest import drawer_ids_for, stored_recipe
from undercroft_store.kernel._internal.meta_at_rest import NAMES_KEY, blind_index

__all__ = ["ADOPTED_LABEL", "KEYED_TABLES", "InvalidIdKey", "adopt_id_key", "export_id_key"]

#: The audit label of an adoption.
ADOPTED_LABEL: Final = "id-key/adopted"
#: The tables whose rows are keyed by the blind secret (a label, an id or an entity): all must be empty.
KEYED_TABLES: Final = (
    "drawers",
    "tombstones",
    "kg_entities",
    "kg_facts",
    "tunnels",
    "supersessions",
    "admission_queue",
    "wing_trust",
    "retention_policy",
)


class InvalidIdKey(InvalidInput):
    """An id key that is malformed, or a vault that cannot adopt one (a usage error, never an integrity one)."""


def export_id_key(store: object) -> str:
    """The vault's blind-index secret, base64: what `adopt_id_key` installs in a copy."""
    context = context_of(store)
    return binascii.b2a_base64(blind_index(context).export_secret(), newline=False).decode("ascii")


def _decoded(encoded: object) -> bytes:
    if not isinstance(encoded, str):
        raise InvalidIdKey(f"an id key is a base64 string, got {type(encoded).__name__}")
    try:
        secret = binascii.a2b_base64(encoded.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise InvalidIdKey("the id key is not valid base64") from None
    if len(secret) != BLIND_SECRET_LENGTH:
        raise InvalidIdKey(f"the id key holds {len(secret)} bytes, not {BLIND_SECRET_LENGTH}")
    return secret


def _holdings(context: VaultContext) -> list[str]:
    connection = context.connection
    present = {str(r[0]) for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    held: list[str] = []
    for table in (t for t in KEYED_TABLES if t in present):
        count = int(connection.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0])  # noqa: S608 - constant
        if count:
            held.append(f"{table} ({count})")
    if connection.execute("SELECT 1 FROM meta WHERE key = ?", (NAMES_KEY,)).fetchone() is not None:
        held.append("a label registry")
    return held


def adopt_id_key(store: object, encoded: str) -> None:
    """Install ``encoded`` (from `export_id_key`) as this EMPTY vault's blind-index secret, in one audited
    transaction; `InvalidIdKey` for a malformed key or a vault that already holds keyed rows (nothing changes)."""
    context = context_of(store)
    secret = bytearray(_decoded(encoded))
    try:
        adopted = BlindIndex(SecretBytes(bytes(secret), expected_length=BLIND_SECRET_LENGTH))
    finally:
        secret[:] = bytes(len(secret))
    try:
        with audited(context) as records:
            held = _holdings(context)  # inside the write transaction: no writer can slip a row in between
            if held:
                raise InvalidIdKey(
                    f"vault {context.vault_id!r} cannot adopt an id key: it already holds {', '.join(held)}; "
                    "adopt into a new, empty vault (before anything is written to it)"
                )
            context.connection.execute(
                "UPDATE meta SET value = ? WHERE key = 'blind_secret'", (adopted.seal(context.sealer),)
            )
            recipe = stored_recipe(context.connection, context.vault_id)
            summary = canonical_json({"drawer_id_recipe": recipe})
            tag = compute_tag(context.keys, ADOPTED_LABEL, summary, b"")
            records.append(AuditRow(ADOPTED_LABEL, tag, context.now()))
    except BaseException:
        adopted.wipe()
        raise
    # The handle's keyed state was derived from the old secret: drop it, and derive the ids from the new one.
    if context.blind is not None:
        context.blind.wipe()
    context.blind = adopted
    context.label_memo.clear()
    context.label_names.clear()
    context.covered_memo = None
    context.drawer_ids = drawer_ids_for(recipe, lambda: blind_index(context))

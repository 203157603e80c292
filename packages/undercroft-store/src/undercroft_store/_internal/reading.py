"""The verified read: a row's HMAC is checked before anything is decrypted or returned."""

from __future__ import annotations

import json

import undercroft_obs as obs
from undercroft_core.drawer import Drawer
from undercroft_core.errors import InvalidInput
from undercroft_obs import names
from undercroft_vault import Domain, IntegrityFailure, compute_tag, constant_time_equal

from undercroft_store._internal.context import VaultContext
from undercroft_store.errors import RecordTampered

__all__ = ["DRAWER_COLUMNS", "SELECT_BY_ID", "SELECT_BY_SEQ", "report_tamper", "verified_drawer"]

#: The columns a verified read selects, in this order.
DRAWER_COLUMNS = "id, meta_json, content, tag"
#: A verified read by id, and by seq.
SELECT_BY_ID = "SELECT id, meta_json, content, tag FROM drawers WHERE id = ?"
SELECT_BY_SEQ = "SELECT id, meta_json, content, tag FROM drawers WHERE seq = ?"


def _claimed(meta: bytes, key: str) -> str | None:
    try:
        value = json.loads(meta).get(key)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and len(value) <= 128 else None


def report_tamper(context: VaultContext, drawer_id: str, meta: bytes) -> None:
    """The tamper signal: counter by surface and a live frame naming what the row claims (unverified)."""
    obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="drawer")
    shown = drawer_id if len(drawer_id) <= 128 else drawer_id[:128]
    obs.emit(
        names.EVENT_HMAC_FAIL,
        vault=context.vault_id,
        surface="drawer",
        id=shown,
        wing=_claimed(meta, "wing"),
        room=_claimed(meta, "room"),
        unverified=True,
    )


def verified_drawer(context: VaultContext, drawer_id: str, meta: bytes, content: bytes, tag: bytes) -> Drawer:
    """Verify the row's tag, then open (sealed) and rebuild the drawer; `RecordTampered` on any failure."""
    expected = compute_tag(context.keys, drawer_id, meta, content)
    if not constant_time_equal(expected, tag):
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r} fails its HMAC tag: run undercroft verify"
        )
    try:
        plain = context.sealer.open(Domain.content(drawer_id), content) if context.sealed else content
        return Drawer.from_at_rest(drawer_id, plain.decode("utf-8"), meta)
    except (IntegrityFailure, InvalidInput, UnicodeDecodeError) as error:
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r} verifies but does not open: {error}"
        ) from None

"""The write path's decision over an existing row, taken from VERIFIED bytes only.

Dedup ("nothing changed"), update and the quarantine backstop all read the row already stored under the
incoming id; each reads it only after its HMAC tag has been recomputed over the exact bytes at rest (id,
meta, content). A row that fails its tag is an integrity verdict (`RecordTampered`, exit 2): the write
neither skips it as unchanged (that would report a tampered drawer as filed) nor overwrites it (that would
destroy the evidence the tamper runbook preserves before restoring from backup).

The stored fingerprint lies outside the tag (repair recomputes it), so it only pre-filters: a dedup is
confirmed on the verified content itself, opened on a sealed vault.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from undercroft_core.drawer import Drawer
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_vault import Domain, IntegrityFailure, compute_tag, constant_time_equal, fingerprint

from undercroft_store.errors import InvalidDrawer, RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import open_meta
from undercroft_store.kernel._internal.reading import report_tamper

__all__ = ["LOOKUP_CHUNK", "Incoming", "StoredRow", "incoming", "is_unchanged", "stored_rows"]

# Fields that change on every re-file of the same words: ignored when deciding a write is a duplicate.
_VOLATILE_META: Final = frozenset({"filed_at", "updated_at", "occurrences"})
#: Ids per ``IN (...)`` lookup: well under SQLite's bound on host parameters.
LOOKUP_CHUNK: Final = 500
_FIX: Final = (
    "the write refuses to dedup against, update or replace it; `undercroft verify` names the tampered record(s) "
    "and the fix is the tamper runbook's restore from backup (`undercroft backup restore`)"
)


@dataclass(frozen=True, slots=True)
class Incoming:
    """One drawer on its way in: its meta at rest, its UTF-8 content and that content's keyed fingerprint."""

    drawer: Drawer
    meta: bytes
    plain: bytes
    fingerprint: bytes


@dataclass(frozen=True, slots=True)
class StoredRow:
    """The row already stored under an incoming id, as read (NOT yet verified)."""

    seq: int
    meta: bytes
    content: bytes
    tag: bytes
    fingerprint: bytes


def incoming(context: VaultContext, drawer: Drawer) -> Incoming:
    """Encode `drawer` once: its meta at rest, its content bytes and their keyed fingerprint."""
    plain = drawer.content.encode("utf-8")
    return Incoming(drawer, drawer.meta_at_rest(), plain, fingerprint(context.keys, plain))


def stored_rows(context: VaultContext, ids: Sequence[str]) -> dict[str, StoredRow]:
    """``id -> StoredRow`` for the ids among `ids` that have a row, in chunked ``IN`` queries."""
    found: dict[str, StoredRow] = {}
    connection = context.connection
    for first in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[first : first + LOOKUP_CHUNK]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT id, seq, meta_json, content, tag, fingerprint FROM drawers WHERE id IN ({marks})"  # noqa: S608 - marks only
        for drawer_id, seq, meta, content, tag, mark in connection.execute(query, chunk):
            found[drawer_id] = StoredRow(int(seq), bytes(meta), bytes(content), bytes(tag), bytes(mark))
    return found


def _tampered(context: VaultContext, drawer_id: str, meta: bytes, what: str) -> RecordTampered:
    report_tamper(context, drawer_id, meta)
    return RecordTampered(f"record {drawer_id} in vault {context.vault_id!r} {what}: {_FIX}")


def _occurrences(document: dict[str, Any]) -> set[str]:
    return {json.dumps(o, sort_keys=True) for o in document.get("occurrences") or []}


def _parsed(context: VaultContext, drawer_id: str, meta: bytes) -> dict[str, Any]:
    try:
        document = json.loads(meta)
    except ValueError:
        document = None
    if not isinstance(document, dict):  # verified, yet not what the choke point writes
        raise _tampered(context, drawer_id, meta, "verifies but its meta is not a JSON object")
    return document


def is_unchanged(context: VaultContext, item: Incoming, row: StoredRow) -> bool:
    """Verify `row`'s tag, then decide: True when writing `item` would change nothing (a dedup).

    Unchanged means the same content (compared on the verified, opened content), the same stable meta
    and no occurrence date the row lacks (merged dates are a real change). False means the row is
    rewritten. Raises `RecordTampered` when the row fails its tag or its sealed content does not open,
    and `InvalidDrawer` when the verified row is a quarantine resident that this write would replace.
    """
    drawer_id = item.drawer.id
    if not constant_time_equal(compute_tag(context.keys, drawer_id, row.meta, row.content), row.tag):
        raise _tampered(context, drawer_id, row.meta, "fails its HMAC tag")
    try:
        meta = open_meta(context, drawer_id, row.meta)
    except IntegrityFailure as error:
        raise _tampered(context, drawer_id, row.meta, f"verifies but its meta does not open ({error})") from None
    stored = _parsed(context, drawer_id, meta)
    if (
        row.fingerprint == item.fingerprint  # a pre-filter only: the fingerprint is outside the tag
        and (meta == item.meta or _same_meta(stored, item.meta))
        and _same_content(context, drawer_id, row, item.plain)
    ):
        return True
    if stored.get("wing") == QUARANTINE_WING:
        # The backstop: a queue resident is never edited or replaced (a raced write, a forged import).
        raise InvalidDrawer(
            f"drawer {drawer_id} is in {QUARANTINE_WING!r}: it cannot be edited or replaced; "
            "rule on it with undercroft admission"
        )
    return False


def _stable(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key not in _VOLATILE_META}


def _same_meta(stored: dict[str, Any], incoming_meta: bytes) -> bool:
    """The same stable meta, and every incoming occurrence date already stored."""
    offered: dict[str, Any] = json.loads(incoming_meta)
    return _stable(stored) == _stable(offered) and _occurrences(offered) <= _occurrences(stored)


def _same_content(context: VaultContext, drawer_id: str, row: StoredRow, plain: bytes) -> bool:
    if not context.sealed:
        return row.content == plain
    try:
        opened = context.sealer.open(Domain.content(drawer_id), row.content)
    except IntegrityFailure as error:
        raise _tampered(context, drawer_id, row.meta, f"verifies but does not open ({error})") from None
    return opened == plain

"""The verified read, and the rule every SERVED row obeys.

A verified read checks a row's HMAC before anything is decrypted or rebuilt (`verified_drawer`). A read that
hands a drawer back to a caller (get, hydrate, listings, search hits, wake-up, closets …) goes through
`served_drawers` (or, for hydration's batched rebuild, `check_served`), which adds the two facts that the tag
alone does not give:

* the clear mirror columns (``wing``, ``room``, ``kind``, ``supersedes``) — what every scope, fence and floor
  filter compares in SQL — equal the HMAC-covered meta of the row returned. A row whose mirror disagrees was
  edited beneath the engine: the filter that selected it decided on a forged label, so the row is an integrity
  verdict (`RecordTampered`), never a served result. The mirrors are read as raw bytes and compared with the
  covered values encoded, so a mirror that is not even UTF-8 is the same verdict (never a decode crash);
* an id that carries a delete tombstone is served only if the chain's newest ``drawer/<id>`` record comes
  after its newest ``delete/<id>`` and carries this row's tag (a legitimate re-write after a delete); a row
  written back after its recorded destruction (a forgotten drawer restored offline) is `RecordTampered`.
  Only tombstoned ids consult the label guard, so a vault without re-used ids pays one indexed lookup per
  batch and no chain replay.

Both compare what hydration already holds (the verified meta, the row's tag): nothing is re-opened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import undercroft_obs as obs
from undercroft_core.drawer import Drawer
from undercroft_core.errors import InvalidInput
from undercroft_obs import names
from undercroft_vault import Domain, IntegrityFailure, compute_tag, constant_time_equal

from undercroft_store.errors import RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import covered_labels, open_meta

__all__ = [
    "DRAWER_COLUMNS",
    "SELECT_BY_ID",
    "SELECT_BY_SEQ",
    "SERVED_BY_ID",
    "SERVED_BY_SEQ",
    "SERVED_COLUMNS",
    "check_served",
    "report_tamper",
    "served_drawers",
    "served_row",
    "verified_content",
    "verified_drawer",
]

#: The columns a verified read selects, in this order.
DRAWER_COLUMNS = "id, meta_json, content, tag"
#: A verified read by id, and by seq.
SELECT_BY_ID = "SELECT id, meta_json, content, tag FROM drawers WHERE id = ?"
SELECT_BY_SEQ = "SELECT id, meta_json, content, tag FROM drawers WHERE seq = ?"
#: The columns a served read selects: seq, the row's bytes, then its clear mirrors as stored (raw bytes).
SERVED_COLUMNS: Final = (
    "seq, CAST(id AS BLOB), meta_json, content, tag, "
    "CAST(wing AS BLOB), CAST(room AS BLOB), CAST(kind AS BLOB), CAST(supersedes AS BLOB)"
)
#: A served read by id, and by seq.
SERVED_BY_ID: Final = f"SELECT {SERVED_COLUMNS} FROM drawers WHERE id = ?"  # noqa: S608 - constant columns
SERVED_BY_SEQ: Final = f"SELECT {SERVED_COLUMNS} FROM drawers WHERE seq = ?"  # noqa: S608 - constant columns
#: Bound parameters per tombstone lookup.
_LOOKUP: Final = 500
_FIX: Final = "run undercroft verify"


def _claimed(meta: bytes, key: str) -> str | None:
    try:
        value = json.loads(meta).get(key)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and len(value) <= 128 else None


def _claims(context: VaultContext, drawer_id: str, meta: bytes) -> bytes:
    """The row's meta as it reads itself: opened on a sealed vault (the seal is not the HMAC that failed, so
    it may still open), else as stored; ``b""`` when it does not open. A lead, never a finding."""
    try:
        return open_meta(context, drawer_id, meta)
    except (IntegrityFailure, ValueError):
        return b""


def report_tamper(context: VaultContext, drawer_id: str, meta: bytes) -> None:
    """The tamper signal: counter by surface and a live frame naming what the row claims (unverified)."""
    obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="drawer")
    shown = drawer_id if len(drawer_id) <= 128 else drawer_id[:128]
    meta = _claims(context, drawer_id, meta)
    obs.emit(
        names.EVENT_HMAC_FAIL,
        vault=context.vault_id,
        surface="drawer",
        id=shown,
        wing=_claimed(meta, "wing"),
        room=_claimed(meta, "room"),
        unverified=True,
    )


def _check_tag(context: VaultContext, drawer_id: str, meta: bytes, content: bytes, tag: bytes) -> None:
    expected = compute_tag(context.keys, drawer_id, meta, content)
    if not constant_time_equal(expected, tag):
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(f"record {drawer_id} in vault {context.vault_id!r} fails its HMAC tag: {_FIX}")


def verified_drawer(context: VaultContext, drawer_id: str, meta: bytes, content: bytes, tag: bytes) -> Drawer:
    """Verify the row's tag, then open (sealed) and rebuild the drawer; `RecordTampered` on any failure."""
    _check_tag(context, drawer_id, meta, content, tag)
    try:
        plain = context.sealer.open(Domain.content(drawer_id), content) if context.sealed else content
        return Drawer.from_at_rest(drawer_id, plain.decode("utf-8"), open_meta(context, drawer_id, meta))
    except (IntegrityFailure, InvalidInput, UnicodeDecodeError) as error:
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r} verifies but does not open: {error}"
        ) from None


def verified_content(context: VaultContext, drawer_id: str, meta: bytes, content: bytes, tag: bytes) -> str:
    """`verified_drawer`'s tag check and content open, without rebuilding the drawer from its metadata: for a
    reader that needs only the verbatim words (a receipt, its byte span); `RecordTampered` on any failure."""
    _check_tag(context, drawer_id, meta, content, tag)
    try:
        plain = context.sealer.open(Domain.content(drawer_id), content) if context.sealed else content
        return plain.decode("utf-8")
    except (IntegrityFailure, UnicodeDecodeError) as error:
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r} verifies but does not open: {error}"
        ) from None


def served_row(context: VaultContext, row: Sequence[Any]) -> tuple[str, bytes, bytes, bytes]:
    """``(id, meta, content, tag)`` of a `SERVED_COLUMNS` row; an id that is not UTF-8 is `RecordTampered`."""
    try:
        drawer_id = bytes(row[1]).decode("utf-8")
    except UnicodeDecodeError:
        obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="drawer")
        raise RecordTampered(
            f"the drawer row at seq {int(row[0])} in vault {context.vault_id!r} has an id that is not UTF-8: {_FIX}"
        ) from None
    return drawer_id, bytes(row[2]), bytes(row[3]), bytes(row[4])


def _check_mirrors(context: VaultContext, drawer: Drawer, row: Sequence[Any]) -> None:
    # On a sealed vault the columns hold blind values: the covered names are blinded and compared.
    covered = covered_labels(context, drawer)
    if tuple(row[5:9]) == covered:  # the common case: the columns come back as bytes (or NULL) and agree
        return
    stored = tuple(None if value is None else bytes(value) for value in row[5:9])
    if stored != covered:
        report_tamper(context, drawer.id, bytes(row[2]))
        drifted = [
            name for name, a, b in zip(("wing", "room", "kind", "supersedes"), stored, covered, strict=True) if a != b
        ]
        raise RecordTampered(
            f"record {drawer.id} in vault {context.vault_id!r}: its clear {', '.join(drifted)} column "
            f"disagrees with its HMAC-covered meta (the row was edited beneath the engine; it is not served): {_FIX}"
        )


def _check_not_destroyed(context: VaultContext, tags: dict[str, bytes]) -> None:
    """Refuse a served id whose tombstone is newer than its last write, or whose last write is not this row."""
    ids = list(tags)
    tombstoned: list[str] = []
    connection = context.connection
    for first in range(0, len(ids), _LOOKUP):
        batch = ids[first : first + _LOOKUP]
        marks = ",".join("?" * len(batch))
        sql = f"SELECT drawer_id FROM tombstones WHERE drawer_id IN ({marks})"  # noqa: S608 - marks only
        tombstoned += [str(found) for (found,) in connection.execute(sql, batch)]
    if not tombstoned:
        return
    from undercroft_store.kernel.label_guard import label_guard  # local: the guard imports the opening path

    held = label_guard(context).placed(
        [f"{kind}/{drawer_id}" for drawer_id in tombstoned for kind in ("drawer", "delete")]
    )
    for drawer_id in sorted(tombstoned):
        written, deleted = held.get(f"drawer/{drawer_id}"), held.get(f"delete/{drawer_id}")
        if deleted is None:
            continue  # a tombstone no delete record names is verify's finding; the row's own write decides
        if written is None or written[0] < deleted[0]:
            obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="label")
            raise RecordTampered(
                f"record {drawer_id} in vault {context.vault_id!r} was destroyed by a recorded delete and its row "
                f"is present again (written back after its destruction; it is not served): {_FIX}"
            )
        if not constant_time_equal(written[1].tag, tags[drawer_id]):
            obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="label")
            raise RecordTampered(
                f"record {drawer_id} in vault {context.vault_id!r} is not the newest write the audit chain records "
                f"for its id (an older row written back; it is not served): {_FIX}"
            )


def check_served(context: VaultContext, served: Sequence[tuple[Drawer, Sequence[Any]]]) -> None:
    """THE served-row rule: every verified ``(drawer, SERVED_COLUMNS row)`` pair about to be returned must have
    mirrors equal to its covered meta and an id not destroyed after its last write; else `RecordTampered`."""
    for drawer, row in served:
        _check_mirrors(context, drawer, row)
    if served:
        _check_not_destroyed(context, {drawer.id: bytes(row[4]) for drawer, row in served})


def served_drawers(context: VaultContext, rows: Sequence[Sequence[Any]]) -> list[Drawer]:
    """Verified drawers for `SERVED_COLUMNS` rows, in order, each obeying the served-row rule (`check_served`)."""
    drawers = [verified_drawer(context, *served_row(context, row)) for row in rows]
    check_served(context, list(zip(drawers, rows, strict=True)))
    return drawers

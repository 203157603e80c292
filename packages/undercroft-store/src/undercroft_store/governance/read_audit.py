"""Read and egress auditing, the anchor window closer, and the audit ceiling report.

* The store's public content-returning readers carry `audited_read` (``_internal/read_door.py``): under
  ``UNDERCROFT_READ_AUDIT=chain`` each outermost read appends ONE ``read/<op>`` record whose tag is keyed
  over a canonical document holding a keyed fingerprint of the subject (a query, an id — never its text),
  the declared scope and the count. The engine's own reads are silent through `silent(handle,
  InternalRead.…)`. Read records do NOT advance the manifest anchor (a per-read fsync of the manifest is
  the cost the spec declines); `anchor` closes that window. A read-only handle cannot append: it warns at
  open and serves unaudited (the replica precedent).
* `record_read(target, op, *, subject, scope, count)` — the same record, appended by hand (a surface
  door the store does not own).
* `record_egress(target, kind, *, surface, recipient, counts, manifest_digest, details=None)` — unconditional,
  no variable: one ``egress/<kind>`` record per export (or other custody-leaving path), anchored. ``details``
  binds what else the path declares (a served model's name, a refine run's scope and dry-run flag); the record's
  tag covers `egress_document`, so a test recomputes it from the expected fields.
* `anchor(target) -> int` — write the manifest anchor at the committed head; returns the height.
* `ceiling_report(target, ceiling) -> CeilingReport` — the chain height against
  ``UNDERCROFT_AUDIT_CEILING``: reported, never enforced, never deletes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, NamedTuple

from undercroft_config import settings
from undercroft_core.errors import InvalidInput
from undercroft_vault import AuditRow, compute_tag

from undercroft_store.errors import Error, ReadOnlyStore
from undercroft_store.governance.forgetting import _context_of
from undercroft_store.kernel._internal.chain_append import anchor_now, append_in_transaction, committed_head
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.read_door import (
    READ_OPS,
    READ_PREFIX,
    READERS,
    InternalRead,
    append_read,
    audited_read,
    silent,
)
from undercroft_store.stats import CeilingReport
from undercroft_store.store import VaultStore

__all__ = [
    "EGRESS_DETAIL_KEYS",
    "EGRESS_PREFIX",
    "READERS",
    "READ_OPS",
    "READ_PREFIX",
    "CeilingReport",
    "InternalRead",
    "InvalidAuditRecord",
    "WindowClosed",
    "anchor",
    "audited_read",
    "ceiling_report",
    "close_window",
    "egress_document",
    "read_audit_enabled",
    "record_egress",
    "record_read",
    "silent",
]

EGRESS_PREFIX = "egress/"

#: The detail keys each egress kind may bind: declarations and the operator's scope (a model's name, the wing
#: and room asked for, flags, a backend's name), never anything that left — no text, no query, no key, no URL
#: (the recipient is the endpoint's origin). `record_egress` refuses a key outside its kind's set.
EGRESS_DETAIL_KEYS: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "export": frozenset(),
        "index-push": frozenset({"backend", "collection", "space", "content", "plaintext_permitted", "complete"}),
        "refine": frozenset({"model", "wing", "room", "limit", "dry_run"}),
        "embed/repair": frozenset({"model"}),
        "advise/dedup": frozenset({"model", "applied"}),
    }
)
_EGRESS_KINDS = frozenset(EGRESS_DETAIL_KEYS)
#: Longest detail text: a name (a model, a wing, a collection), never a passage.
_MAX_DETAIL_CHARS: Final = 256


class InvalidAuditRecord(Error, InvalidInput):
    """A read or egress record was refused (an op or kind outside the vocabulary, a bad count)."""


def read_audit_enabled(env: Mapping[str, str] | None = None) -> bool:
    """``UNDERCROFT_READ_AUDIT=chain`` (garbage raises the config's refusal: a declaration must not fall back)."""
    return str(settings.read_audit(env)) == "chain"


def _canonical(document: Mapping[str, object]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def _append(context: VaultContext, record: AuditRow, *, anchored: bool) -> int:
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        _head, height = append_in_transaction(context, [record])
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    context.generation += 1
    if anchored:
        anchor_now(context)
    return height


def record_read(
    target: VaultStore | VaultContext,
    op: str,
    *,
    subject: str,
    scope: Mapping[str, str | None] | None = None,
    count: int,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Append one ``read/<op>`` record when read auditing is on; False when off or the handle is read-only."""
    context = _context_of(target)
    if op not in READ_OPS:
        raise InvalidAuditRecord(f"read op {op!r} is not one of {', '.join(sorted(READ_OPS))}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InvalidAuditRecord(f"read count must be a non-negative integer, got {count!r}")
    if not read_audit_enabled(env) or context.read_only:
        return False
    append_read(context, op, subject, scope, count)
    return True


EgressDetail = str | int | bool | None


def egress_document(
    *,
    surface: str,
    recipient: str | None,
    counts: Mapping[str, int],
    manifest_digest: str,
    details: Mapping[str, EgressDetail] | None = None,
) -> bytes:
    """The canonical bytes an ``egress/<kind>`` record's tag covers (``details`` absent when None or empty)."""
    document: dict[str, object] = {
        "surface": surface,
        "recipient": recipient,
        "counts": dict(sorted(counts.items())),
        "manifest_digest": manifest_digest,
    }
    if details:
        if any(not isinstance(key, str) or not isinstance(v, EgressDetail) for key, v in details.items()):
            raise InvalidAuditRecord("egress details are text keys with text, integer, boolean or null values")
        document["details"] = dict(sorted(details.items()))
    return _canonical(document)


def record_egress(
    target: VaultStore | VaultContext,
    kind: str,
    *,
    surface: str,
    recipient: str | None,
    counts: Mapping[str, int],
    manifest_digest: str,
    details: Mapping[str, EgressDetail] | None = None,
) -> int:
    """Append one ``egress/<kind>`` record (unconditional) and anchor it; returns the chain height.

    ``details`` binds what a kind needs beyond the common fields (an index push: backend, collection,
    embedding space, sealed or plaintext, whether plaintext was permitted); a record without it binds the
    same document as before. A read-only handle cannot append: `ReadOnlyStore`, so the caller says the
    egress went unaudited.
    """
    context = _context_of(target)
    if kind not in _EGRESS_KINDS:
        raise InvalidAuditRecord(f"egress kind {kind!r} is not one of {', '.join(sorted(_EGRESS_KINDS))}")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in counts.values()):
        raise InvalidAuditRecord("egress counts must be non-negative integers")
    _check_details(kind, details or {})
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: this egress goes unaudited")
    body = egress_document(
        surface=surface, recipient=recipient, counts=counts, manifest_digest=manifest_digest, details=details
    )
    label = EGRESS_PREFIX + kind
    return _append(
        context,
        AuditRow(label, compute_tag(context.keys, label, body, b""), context.now()),
        anchored=True,
    )


def _check_details(kind: str, details: Mapping[str, EgressDetail]) -> None:
    """Refuse a detail key outside the kind's `EGRESS_DETAIL_KEYS`, and text that is long or not one line.

    The refusal names the key, never the value (it might be the very text that must not be recorded).
    """
    allowed = EGRESS_DETAIL_KEYS[kind]
    for key, detail in details.items():
        if key not in allowed:
            raise InvalidAuditRecord(
                f"egress/{kind} binds no detail {key!r}: its details are {', '.join(sorted(allowed)) or 'none'}"
            )
        if isinstance(detail, str) and (len(detail) > _MAX_DETAIL_CHARS or not detail.isprintable()):
            raise InvalidAuditRecord(
                f"egress/{kind} detail {key!r} is not a short one-line name (at most {_MAX_DETAIL_CHARS} printable "
                "characters): details carry declarations and scope, never text"
            )


def anchor(target: VaultStore | VaultContext) -> int:
    """Close the manifest window: anchor at the committed head (a write; refused read-only). Returns the height."""
    context = _context_of(target)
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: anchor is a write")
    _head, height = anchor_now(context)
    return height


class WindowClosed(NamedTuple):
    """What `close_window` did: the height anchored at, and how far behind the anchor was."""

    height: int
    behind_by: int


def close_window(target: VaultStore | VaultContext) -> WindowClosed:
    """`anchor`, also answering how far behind the anchor was a moment ago (``behind_by``): the records since this
    handle last anchored, plus — once, on the handle's first call — the lag its own open re-anchored (a server's
    first anchor to a vault it had not served opens it, and the open closes the window before the call can)."""
    context = _context_of(target)
    before = context.manifest.anchor.count
    height = anchor(context)
    healed, context.open_anchor_lag = context.open_anchor_lag, 0
    return WindowClosed(height, max(0, height - before) + healed)


def ceiling_report(target: VaultStore | VaultContext, ceiling: int | None = None) -> CeilingReport:
    """The chain height against ``ceiling`` (default: ``UNDERCROFT_AUDIT_CEILING``). Reports; never deletes."""
    context = _context_of(target)
    declared = settings.audit_ceiling() if ceiling is None else ceiling
    return CeilingReport(committed_head(context)[1], declared)

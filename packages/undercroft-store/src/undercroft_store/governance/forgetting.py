"""Provable forgetting: destroy drawers through the chain and hand back a receipt that can be checked later.

`forget(target, ids, *, signer=None, reason="operator", admission_ruling=False) -> ForgetReceipt` verifies
each drawer, takes the UNKEYED SHA-256 of its content (a data subject checks it against words they hold,
without the vault key), destroys the drawers through the choke point's delete path (keyed tombstones and
one contiguous run of ``delete/<id>`` audit records) and appends one ``forget/<sha256(body)>`` record whose
tag is keyed over the receipt body — all in ONE ``BEGIN IMMEDIATE`` transaction (the head after the
tombstones is folded inside it, before the commit), the manifest anchored after. A crash leaves the drawers
and no record, or the erasure with its record: never an erasure without its receipt. The receipt carries the
ids, the fingerprints, the chain heads before and after the tombstone interval, the interval itself, and
optionally a signature made with the vault library's signing identity over the body. `forget_within` runs
the same inside a caller's transaction (an admission deny commits its ruling with the erasure).

`verify_forgetting(target, receipt, *, pinned_sender=None) -> ForgettingVerdict` replays it:

* ``verified`` — same key generation: heads, tombstone tags and the record tag recompute under the key;
* ``recorded`` (still a pass, exit 0) — a rotation has since destroyed the key the receipt was made under,
  so only the key-free facts are checked: the interval holds exactly those tombstone labels, the record
  names this body's digest, the drawers are gone and their tombstones present;
* ``failed`` (exit 2) — anything else, including a drawer present again after its recorded destruction,
  an edited body, and a signature that names no sender (refused, never skipped).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import undercroft_obs as obs
from undercroft_core.errors import InvalidInput
from undercroft_core.ids import validate_drawer_id
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_obs import names
from undercroft_vault import GENESIS, AuditRow, SignatureRefused, chain_step, compute_tag, constant_time_equal

from undercroft_store.errors import DrawerNotFound, InvalidDrawer, ReadOnlyStore, StoreClosed
from undercroft_store.kernel._internal.chain_append import committed_head
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.forget_receipt import (
    FORGET_LABEL_PREFIX,
    RECEIPT_FORMAT,
    ForgottenDrawer,
    InvalidReceipt,
    ReceiptBody,
    parse_receipt,
)
from undercroft_store.kernel._internal.reading import SELECT_BY_ID, verified_drawer
from undercroft_store.kernel._internal.transaction import audited
from undercroft_store.kernel.label_guard import label_guard
from undercroft_store.kernel.writes import delete_within
from undercroft_store.store import VaultStore

if TYPE_CHECKING:
    from undercroft_vault import SigningIdentity

__all__ = [
    "FORGET_LABEL_PREFIX",
    "RECEIPT_FORMAT",
    "ForgetReceipt",
    "ForgettingStatus",
    "ForgettingVerdict",
    "ForgottenDrawer",
    "InvalidReceipt",
    "forget",
    "forget_within",
    "verify_forgetting",
]

ForgettingStatus = Literal["verified", "recorded", "failed"]
_MAX_REASON = 200
# Receipts do not expire; the vault library's signed manifest needs an expiry, so it gets the last instant.
_NEVER = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def _context_of(target: VaultStore | VaultContext) -> VaultContext:
    context = target._context if isinstance(target, VaultStore) else target
    if context.closed:
        raise StoreClosed(f"vault {context.vault_id!r} is closed")
    return context


@dataclass(frozen=True)
class ForgetReceipt:
    """An erasure attestation: the chain-bound body, the height of its ``forget/`` record, an optional signature."""

    body: ReceiptBody
    record_height: int
    attestation: dict[str, Any] | None = None
    record_label: str | None = None  # as written in a parsed document; None means "the body's own label"

    @property
    def ids(self) -> tuple[str, ...]:
        """The forgotten drawer ids, in destruction order."""
        return tuple(d.id for d in self.body.forgotten)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready document."""
        document = self.body.to_dict()
        document["record"] = {"label": self.record_label or self.body.label, "height": self.record_height}
        document["attestation"] = self.attestation
        return document

    def to_json(self) -> str:
        """The receipt document as handed to an operator or a data subject."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=2, ensure_ascii=True)

    @classmethod
    def from_json(cls, document: bytes | str) -> ForgetReceipt:
        """Parse a receipt document; `InvalidReceipt` when it is malformed."""
        body, height, label, attestation = parse_receipt(document)
        return cls(body, height, attestation, label)


@dataclass(frozen=True)
class ForgettingVerdict:
    """The outcome of replaying a receipt: status, the findings that failed it, and how it was signed."""

    status: ForgettingStatus
    findings: tuple[str, ...]
    signature: str
    sender: str | None = None

    @property
    def ok(self) -> bool:
        """True for ``verified`` and ``recorded`` (exit 0); False for ``failed`` (exit 2)."""
        return self.status != "failed"

    def render(self) -> str:
        """Human-readable lines ending in ``FORGETTING VERIFIED``, ``FORGETTING RECORDED`` or ``FORGETTING FAILED``."""
        lines = [f"signature: {self.signature}" + (f" (sender {self.sender[:16]}…)" if self.sender else "")]
        lines += [f"  FINDING: {finding}" for finding in self.findings]
        if self.status == "recorded":
            lines.append("a key rotation destroyed the replay key: the tombstones and destruction are recorded")
        lines.append(f"FORGETTING {self.status.upper()}")
        return "\n".join(lines)


def _check_reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip() or len(reason) > _MAX_REASON:
        raise InvalidDrawer(f"forget reason must be a non-empty string of at most {_MAX_REASON} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in reason):
        raise InvalidDrawer("forget reason must not contain control characters")
    return reason


def _check_ids(ids: Sequence[str]) -> list[str]:
    if isinstance(ids, str):
        raise InvalidDrawer("forget takes a sequence of drawer ids, not one string")
    wanted = list(ids)
    if not wanted:
        raise InvalidDrawer("forget needs at least one drawer id")
    for drawer_id in wanted:
        try:
            validate_drawer_id(drawer_id)
        except InvalidInput as error:
            raise InvalidDrawer(str(error)) from None
    if len(set(wanted)) != len(wanted):
        raise InvalidDrawer("forget names the same drawer twice")
    return wanted


def _heads_at(context: VaultContext, rows: Sequence[AuditRow], *heights: int) -> dict[int, bytes]:
    wanted, head, found = set(heights), GENESIS, {}
    if 0 in wanted:
        found[0] = GENESIS
    for position, row in enumerate(rows, start=1):
        head = chain_step(context.keys, head, row)
        if position in wanted:
            found[position] = head
    return found


def forget(
    target: VaultStore | VaultContext,
    ids: Sequence[str],
    *,
    signer: SigningIdentity | None = None,
    reason: str = "operator",
    admission_ruling: bool = False,
) -> ForgetReceipt:
    """Destroy ``ids`` through the chain and return the receipt (`DrawerNotFound`, `RecordTampered`, `ChainBroken`).

    ``admission_ruling=True`` is for an admission ``deny`` only: it is the one door that may destroy a
    drawer resident in the quarantine wing. A drawer that fails its HMAC is refused (its fingerprint
    would attest to bytes nobody wrote). Nothing is destroyed unless every id verifies. ONE transaction
    holds the tombstones, their ``delete/<id>`` records and the ``forget/<digest>`` record: a crash leaves
    either the drawers and no receipt record, or neither.
    """
    context = _context_of(target)
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: forget is refused")
    wanted, why = _check_ids(ids), _check_reason(reason)
    with audited(context) as records:
        receipt = forget_within(context, records, wanted, signer=signer, reason=why, admission_ruling=admission_ruling)
    # SQLite's secure_delete zeroes the destroyed cells (content, embedding, token matrix) in the pages this
    # commit wrote to the WAL, but the older WAL frames and the main file's copies of those pages still hold the
    # bytes until a checkpoint copies the zeroed pages over them and the WAL restarts: do it now, not at some
    # later close (a reader's open snapshot can hold it back; the next checkpoint then completes it).
    context.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for _ in wanted:  # the delete path's signals, after the commit as it emits them
        obs.increment(names.DRAWER_DELETES_TOTAL)
        obs.emit(names.EVENT_DRAWER_DELETED, vault=context.vault_id)
    return receipt


def forget_within(
    context: VaultContext,
    records: list[AuditRow],
    ids: Sequence[str],
    *,
    signer: SigningIdentity | None = None,
    reason: str = "operator",
    admission_ruling: bool = False,
) -> ForgetReceipt:
    """`forget` inside the CALLER's open `audited` transaction (an admission deny rules in the same commit).

    Verifies and destroys ``ids``, appends their ``delete/<id>`` records and the ``forget/<digest>`` record
    to ``records`` (after whatever the caller already appended: the heads fold the committed head through
    those pending records, exactly as the commit will), and returns the receipt — void unless the caller's
    transaction commits.
    """
    if not context.connection.in_transaction:
        raise InvalidDrawer("forget_within must run inside a write transaction")
    wanted, why = _check_ids(ids), _check_reason(reason)
    # Decide nothing on a chain that does not replay (the one label door): the whole trail, in this snapshot,
    # so a row relabelled beneath a handle that already replayed refuses BEFORE anything is destroyed.
    label_guard(context).replayed_rows()
    forgotten = []
    for drawer_id in wanted:
        row = context.connection.execute(SELECT_BY_ID, (drawer_id,)).fetchone()
        if row is None:
            raise DrawerNotFound(f"no drawer {drawer_id} in vault {context.vault_id!r}")
        drawer = verified_drawer(context, row[0], bytes(row[1]), bytes(row[2]), bytes(row[3]))
        if drawer.wing == QUARANTINE_WING and not admission_ruling:
            raise InvalidDrawer(f"drawer {drawer_id} is in {QUARANTINE_WING!r}: rule on it with admission deny")
        forgotten.append(ForgottenDrawer(drawer_id, hashlib.sha256(drawer.content.encode("utf-8")).hexdigest()))
    head, start = committed_head(context)
    for pending in records:
        head = chain_step(context.keys, head, pending)
    start += len(records)
    # The quarantine wing was refused above, in this same transaction, unless this is a ruling.
    tombstones = delete_within(context, wanted, context.now())
    before = head
    for tombstone in tombstones:
        head = chain_step(context.keys, head, tombstone)
    body = ReceiptBody(
        vault=context.vault_id,
        generation=context.manifest.generation,
        forgotten=tuple(forgotten),
        interval_start=start,
        interval_end=start + len(tombstones),
        head_before=before.hex(),
        head_after=head.hex(),
        at=context.now(),
        reason=why,
    )
    record = AuditRow(body.label, compute_tag(context.keys, body.label, body.canonical(), b""), body.at)
    records += [*tombstones, record]
    return ForgetReceipt(body, body.interval_end + 1, _sign(body, signer) if signer is not None else None)


def _sign(body: ReceiptBody, signer: SigningIdentity) -> dict[str, Any]:
    # The signing stack (nacl.signing, pqcrypto) loads with the first signed or checked receipt, not with
    # every store command that imports this module (issue 18 §4).
    from undercroft_vault import BundleManifest, sign_bundle_manifest

    claims = BundleManifest.describe(
        body.canonical(),
        scope=f"forget:{body.vault}",
        trust_claim="operator",
        expires_at=_NEVER,
        counts={"drawers": len(body.forgotten)},
        provenance={"record": body.label},
    )
    signed: dict[str, Any] = json.loads(sign_bundle_manifest(claims, signer))
    return signed


def _check_signature(
    body: ReceiptBody, attestation: dict[str, Any] | None, pinned_sender: str | None, findings: list[str]
) -> tuple[str, str | None]:
    if attestation is None:
        if pinned_sender is not None:
            findings.append("a sender was pinned but the receipt is unsigned")
        return "unsigned", None
    from undercroft_vault import verify_bundle_manifest

    try:
        verdict = verify_bundle_manifest(
            json.dumps(attestation).encode("ascii"),
            body.canonical(),
            now=datetime.now(UTC),
            pinned_sender=pinned_sender,
        )
    except (SignatureRefused, UnicodeEncodeError) as error:
        findings.append(f"signature refused: {error}")
        return "refused", None
    if verdict.manifest.scope != f"forget:{body.vault}":
        findings.append(f"signature scope {verdict.manifest.scope!r} is not this vault's forget scope")
    if verdict.status == "unattested":
        if pinned_sender is not None:
            findings.append("a sender was pinned but the receipt is unsigned")
        return "unsigned", None
    return verdict.status, verdict.sender


def _structural(
    context: VaultContext, body: ReceiptBody, height: int, rows: Sequence[AuditRow], findings: list[str]
) -> None:
    ids = [d.id for d in body.forgotten]
    if body.vault != context.vault_id:
        findings.append(f"receipt names vault {body.vault!r}, this is {context.vault_id!r}")
    if not 0 <= body.interval_start <= body.interval_end <= len(rows) or body.interval_end - body.interval_start != len(
        ids
    ):
        findings.append(f"tombstone interval {body.interval_start}..{body.interval_end} is not in this audit trail")
    else:
        labels = [row.record_id for row in rows[body.interval_start : body.interval_end]]
        if labels != [f"delete/{drawer_id}" for drawer_id in ids]:
            findings.append("the audit trail does not hold these tombstones at the receipt's interval")
    if not body.interval_end < height <= len(rows) or rows[height - 1].record_id != body.label:
        findings.append("no forget record for this receipt body at its recorded height: edited or forged")
    tombstones = {r[0] for r in context.connection.execute("SELECT drawer_id FROM tombstones")}
    for drawer_id in ids:
        if context.connection.execute("SELECT 1 FROM drawers WHERE id = ?", (drawer_id,)).fetchone() is not None:
            findings.append(f"drawer {drawer_id} is present after its recorded destruction (resurrected)")
        if drawer_id not in tombstones:
            findings.append(f"drawer {drawer_id} has no tombstone")


def _replay(
    context: VaultContext, body: ReceiptBody, height: int, rows: Sequence[AuditRow], findings: list[str]
) -> None:
    heads = _heads_at(context, rows, body.interval_start, body.interval_end)
    if heads.get(body.interval_start, b"").hex() != body.head_before:
        findings.append("head before the tombstones does not replay under this vault's key")
    if heads.get(body.interval_end, b"").hex() != body.head_after:
        findings.append("head after the tombstones does not replay under this vault's key")
    record = rows[height - 1]
    if not constant_time_equal(record.tag, compute_tag(context.keys, body.label, body.canonical(), b"")):
        findings.append("the forget record's tag does not verify under this vault's key")
    stored = {r[0]: bytes(r[1]) for r in context.connection.execute("SELECT drawer_id, tag FROM tombstones")}
    for offset, forgotten in enumerate(body.forgotten):
        tombstone = rows[body.interval_start + offset]
        written = [r.tag for r in rows[: body.interval_start] if r.record_id == f"drawer/{forgotten.id}"]
        expected = (
            compute_tag(context.keys, tombstone.record_id, tombstone.at.encode("ascii"), written[-1])
            if written
            else b""
        )
        if not written or not constant_time_equal(expected, tombstone.tag):
            findings.append(f"tombstone of {forgotten.id} does not replay from its drawer's last write")
        elif forgotten.id in stored and not constant_time_equal(stored[forgotten.id], tombstone.tag):
            findings.append(f"tombstone row of {forgotten.id} differs from its audit record")


def verify_forgetting(
    target: VaultStore | VaultContext, receipt: ForgetReceipt | bytes | str, *, pinned_sender: str | None = None
) -> ForgettingVerdict:
    """Replay a receipt against this vault: ``verified``, ``recorded`` (key rotated since) or ``failed``.

    A malformed document raises `InvalidReceipt` (bad input, exit 1); a chain that does not replay raises
    `ChainBroken` (exit 2). A read: nothing is written.
    """
    context = _context_of(target)
    parsed = receipt if isinstance(receipt, ForgetReceipt) else ForgetReceipt.from_json(receipt)
    body, height = parsed.body, parsed.record_height
    findings: list[str] = []
    if parsed.record_label not in (None, body.label):
        findings.append("the receipt body was edited: its digest is not the record label it names")
    connection = context.connection
    connection.execute("BEGIN")  # one snapshot for every check
    try:
        rows = label_guard(context).replayed_rows()
        _structural(context, body, height, rows, findings)
        generation = context.manifest.generation
        status: ForgettingStatus = "verified"
        if body.generation > generation:
            findings.append(f"receipt names key generation {body.generation}; this vault is at {generation}")
        elif body.generation < generation:
            status = "recorded"
        elif not findings:
            _replay(context, body, height, rows, findings)
    finally:
        connection.execute("COMMIT")
    signature, sender = _check_signature(body, parsed.attestation, pinned_sender, findings)
    return ForgettingVerdict("failed" if findings else status, tuple(findings), signature, sender)

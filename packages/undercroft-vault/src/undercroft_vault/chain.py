"""The audit-chain arithmetic (version 2), anchor placement, and the unkeyed witness digest.

Step: ``h_i = HMAC-SHA256(chain, "undercroft.chain.v2" ‖ lp(h_{i-1}) ‖ lp(record_id_i) ‖ lp(tag_i) ‖ lp(at_i))``
where ``lp`` is a 4-byte big-endian length followed by the bytes, ids and times are UTF-8, and
``h_0`` is `GENESIS` (32 zero bytes). The witness digest is unkeyed and bound to the row count, so it
survives key rotation (which re-steps every head) and a rewind below the witnessed height cannot hide:
``SHA-256("undercroft.witness.v1" ‖ lp(record_id) ‖ lp(tag) ‖ lp(at) … ‖ u64(count))``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from undercroft_vault._internal.encoding import lp, u64
from undercroft_vault.errors import ChainBroken, InvalidVaultInput, RollbackDetected
from undercroft_vault.vaultkeys import VaultKeys

__all__ = [
    "CHAIN_DOMAIN",
    "GENESIS",
    "HEAD_LENGTH",
    "WITNESS_DOMAIN",
    "Anchor",
    "AnchorPosition",
    "AuditRow",
    "Witness",
    "chain_step",
    "check_witness",
    "locate_anchor",
    "reconcile",
    "replay",
    "witness_digest",
]

CHAIN_DOMAIN = b"undercroft.chain.v2"
HEAD_LENGTH = 32
#: The head of an empty chain.
GENESIS = bytes(HEAD_LENGTH)
WITNESS_DOMAIN = b"undercroft.witness.v1"


@dataclass(frozen=True)
class AuditRow:
    """The preserved bytes of one audit row: its record label, its tag and its time, as stored."""

    record_id: str
    tag: bytes
    at: str


@dataclass(frozen=True)
class Anchor:
    """A rollback anchor: the chain head after `count` audit rows."""

    head: bytes
    count: int

    def __post_init__(self) -> None:
        """Refuse a malformed anchor before it is compared with anything."""
        if len(self.head) != HEAD_LENGTH:
            raise InvalidVaultInput(f"anchor head must be {HEAD_LENGTH} bytes, got {len(self.head)}")
        if self.count < 0:
            raise InvalidVaultInput(f"anchor count must not be negative, got {self.count}")


class AnchorPosition(Enum):
    """Where an anchor sits in a replayed chain."""

    EQUAL = "equal"  # the anchor is the current head
    BEHIND = "behind"  # strictly earlier in the chain: a crash artifact, healed by fast-forward
    ABSENT = "absent"  # not in the chain at all: a rollback or a fork


@dataclass(frozen=True)
class Witness:
    """What an external witness keeps: the audit row count and the unkeyed digest of those rows."""

    count: int
    digest: bytes


def chain_step(keys: VaultKeys, previous: bytes, row: AuditRow) -> bytes:
    """One v2 step under the vault's chain key: the head after appending `row` to `previous`."""
    message = CHAIN_DOMAIN + lp(previous) + lp(row.record_id.encode("utf-8")) + lp(row.tag) + lp(row.at.encode("utf-8"))
    return hmac.digest(keys.chain.buffer(), message, "sha256")


def replay(keys: VaultKeys, rows: Iterable[AuditRow], *, start: bytes = GENESIS) -> bytes:
    """Fold `rows` from `start`; returns the resulting head (`start` itself for no rows)."""
    head = start
    for row in rows:
        head = chain_step(keys, head, row)
    return head


def locate_anchor(keys: VaultKeys, rows: Iterable[AuditRow], anchor: Anchor) -> AnchorPosition:
    """Replay `rows` and say whether `anchor` is the final head, strictly behind it, or absent."""
    head, count, matched = GENESIS, 0, anchor.count == 0 and hmac.compare_digest(anchor.head, GENESIS)
    for row in rows:
        head = chain_step(keys, head, row)
        count += 1
        if count == anchor.count and hmac.compare_digest(head, anchor.head):
            matched = True
    if not matched:
        return AnchorPosition.ABSENT
    return AnchorPosition.EQUAL if count == anchor.count else AnchorPosition.BEHIND


def reconcile(keys: VaultKeys, rows: Iterable[AuditRow], db_head: bytes, anchor: Anchor) -> AnchorPosition:
    """The open-time check: the rows must reproduce `db_head` (else `ChainBroken`), then place `anchor`."""
    materialised = list(rows)
    replayed = replay(keys, materialised)
    if not hmac.compare_digest(replayed, db_head):
        raise ChainBroken(
            f"audit-chain head: {len(materialised)} audit rows of vault {keys.vault_id!r} do not "
            "reproduce the stored head; audit rows were edited, removed or inserted"
        )
    return locate_anchor(keys, materialised, anchor)


def witness_digest(rows: Iterable[AuditRow]) -> Witness:
    """The unkeyed, count-bound digest over the rows' preserved (record_id, tag, at) bytes."""
    digest = hashlib.sha256(WITNESS_DOMAIN)
    count = 0
    for row in rows:
        digest.update(lp(row.record_id.encode("utf-8")) + lp(row.tag) + lp(row.at.encode("utf-8")))
        count += 1
    digest.update(u64(count))
    return Witness(count=count, digest=digest.digest())


def check_witness(rows: Iterable[AuditRow], witness: Witness) -> int:
    """Check the first `witness.count` rows still reproduce the witness; returns writes since it.

    Raises `RollbackDetected` when fewer rows remain than were witnessed or their digest differs.
    Rows appended after the witness are not judged: they are writes since the witness.
    """
    materialised = list(rows)
    if len(materialised) < witness.count:
        raise RollbackDetected(
            f"the audit log holds {len(materialised)} rows but {witness.count} were witnessed: "
            "rolled back or erased below the witnessed height"
        )
    found = witness_digest(materialised[: witness.count])
    if not hmac.compare_digest(found.digest, witness.digest):
        raise RollbackDetected(
            f"the first {witness.count} audit rows no longer match the witness: rewritten or rolled back"
        )
    return len(materialised) - witness.count

"""One audited write transaction for any tagged table beside the drawers, and the handle checks before it.

Rows and their audit records commit together with the advanced chain head, and the manifest anchor is written
after the commit — exactly as a drawer write through the choke point: both use `chain_append`.
Governance, the knowledge graph and the other memory surfaces all write through this one helper.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from undercroft_vault import AuditRow, BlindIndex

from undercroft_store.errors import ReadOnlyStore, StoreClosed
from undercroft_store.kernel._internal.chain_append import append_in_transaction, commit_and_anchor
from undercroft_store.kernel._internal.context import VaultContext

__all__ = ["audited", "check_writable", "open_blind", "readable"]


def readable(context: VaultContext) -> VaultContext:
    """Refuse a closed handle."""
    if context.closed:
        raise StoreClosed(f"vault {context.vault_id!r} is closed")
    return context


def check_writable(context: VaultContext) -> None:
    """Refuse a closed or read-only handle before any work is done."""
    readable(context)
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: writes are refused")


@contextmanager
def audited(context: VaultContext) -> Iterator[list[AuditRow]]:
    """``BEGIN IMMEDIATE``; the body appends `AuditRow`s; they are chained and committed with its rows."""
    check_writable(context)
    connection = context.connection
    records: list[AuditRow] = []
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield records
        append_in_transaction(context, records)
        commit_and_anchor(context, len(records))
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


@contextmanager
def open_blind(context: VaultContext) -> Iterator[BlindIndex]:
    """The vault's blind index, opened from its sealed secret and wiped on exit."""
    row = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()
    blind = BlindIndex.open_sealed(context.sealer, bytes(row[0]))
    try:
        yield blind
    finally:
        blind.wipe()

"""The replay check governance readers run before deciding from an audit label.

Until the label guard (``label_guard.py``, governance part A) lands, forgetting, retention and the
witness call this: the audit rows must reproduce the committed head and height under this handle's
keys, or the reader refuses with an integrity verdict naming ``undercroft verify``.
"""

from __future__ import annotations

from undercroft_vault import AuditRow, ChainBroken, constant_time_equal, replay

from undercroft_store._internal.context import VaultContext
from undercroft_store._internal.opening import read_audit_rows

__all__ = ["replayed_rows"]


def replayed_rows(context: VaultContext) -> list[AuditRow]:
    """Every audit row, after checking they replay to the committed head; `ChainBroken` otherwise."""
    rows = read_audit_rows(context.connection)
    stored = context.connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
    if (
        stored is None
        or len(rows) != int(stored[1])
        or not constant_time_equal(replay(context.keys, rows), bytes(stored[0]))
    ):
        raise ChainBroken(
            f"vault {context.vault_id!r}: the audit chain does not authenticate its own labels "
            "(the rows do not replay to the committed head); run undercroft verify"
        )
    return rows

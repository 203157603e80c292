"""The egress record every export leaves on the audit chain, through the store's egress API.

Governance part B owns ``undercroft_store.governance.read_audit`` and its ``record_egress``. It is looked up when an
export runs (not imported at start-up), so this module also works in a tree where it has not landed: the
export then says on stderr that no record was written — an export never claims an audit it did not make.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from undercroft_store import VaultStore

__all__ = ["record_export"]


def record_export(
    store: VaultStore, *, surface: str, recipient: str | None, counts: Mapping[str, int], digest: str
) -> str | None:
    """Append the ``egress/export`` record (before any byte leaves); None when written, else why not."""
    try:
        module = importlib.import_module("undercroft_store.governance.read_audit")
    except ImportError:
        return (
            "egress audit record NOT written: the store's egress API (undercroft_store.governance.read_audit) is absent"
        )
    module.record_egress(
        store, "export", surface=surface, recipient=recipient, counts=dict(counts), manifest_digest=digest
    )
    return None

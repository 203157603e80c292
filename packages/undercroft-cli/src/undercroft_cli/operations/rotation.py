"""Key rotation: what ``undercroft vault rotate`` and ``POST /v1/vaults/{id}/rotate`` do, said once (MCP
deliberately has no rotate tool: an operator surface).

Fresh salt and keys, every sealed blob, tag and fingerprint re-keyed and the chain re-folded in one transaction,
with a two-phase manifest swap. It needs the only handle: the caller closes its own first (the server answers 409
for the vault ``/mcp`` holds). A vault that fails verify on a leg the rotation would rewrite is refused as an
integrity verdict, before anything is re-keyed.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from undercroft_core.embedder import Embedder
from undercroft_store import Palace
from undercroft_store.integrity.rotation import RotationReport, rotate_vault

__all__ = ["rotate_keys", "rotation_record"]


def rotate_keys(palace: Palace, vault: str, embedder: Embedder) -> RotationReport:
    """Re-key ``vault`` (opened with ``embedder``); the report."""
    return rotate_vault(palace, vault, embedder)


def rotation_record(report: RotationReport) -> dict[str, Any]:
    """``{vault, generation_before, generation_after, drawers, embeddings, tombstones_preserved,
    audit_rows_refolded, rekey_records, chain_records, seconds}``."""
    return asdict(report)

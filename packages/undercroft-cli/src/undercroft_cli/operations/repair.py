"""The repair every surface runs: what ``undercroft repair`` and ``POST /v1/vaults/{id}/repair`` do, said once
(MCP deliberately has no repair tool: remediation rewrites the vault's integrity material, an operator act).

Backfill embeddings, fingerprints and FTS rows, re-embed a forced embedder swap, vacuum, verify — and, when the
embedder is served (its words leave for a remote model), append one ``egress/embed/repair`` record stamped with
the surface that asked, counted from the requests the embedder actually sent (an aborted repair records what
left). The adapter supplies how the handle is prepared (the late encoder) and how progress is shown.
"""

from __future__ import annotations

from collections.abc import Callable

from undercroft_core.embedder import Embedder
from undercroft_store import Palace, VaultStore
from undercroft_store.integrity.repair import Progress, RepairReport, repair_vault

from undercroft_cli._internal.egress import served_egress

__all__ = ["repair"]


def repair(
    palace: Palace,
    vault: str,
    embedder: Embedder,
    *,
    surface: str,
    tokens: bool = False,
    prepare: Callable[[VaultStore], None] | None = None,
    progress: Progress | None = None,
) -> RepairReport:
    """Repair ``vault`` with ``embedder``; ``tokens`` also builds the missing or stale token matrices.

    The report's ``ok`` is the verify that closes the repair (an integrity verdict when false).
    """
    return repair_vault(
        palace,
        vault,
        embedder,
        progress=progress,
        after=served_egress(embedder, surface=surface),
        prepare=prepare,
        tokens=tokens,
    )

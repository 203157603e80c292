"""Attested forgetting: what ``undercroft forget`` and ``POST /v1/vaults/{id}/forget`` do, said once (MCP
deliberately has no forget tool: an operator surface; the receipt is checked by ``verify-forgetting``, which
MCP does carry).

The act destroys the named drawers through the audit chain and returns the erasure receipt; the record both
surfaces answer is ``{ids, out, receipt}``, the receipt inline unless the CLI wrote it to ``--out`` (``out`` is
always ``null`` over /v1: the receipt travels in the body). Pass ``receipt`` as it stands to verify-forgetting.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from undercroft_store.governance.forgetting import ForgetReceipt, forget
from undercroft_store.store import VaultStore
from undercroft_vault import SigningIdentity

__all__ = ["forget_drawers", "forget_record"]


def forget_drawers(
    store: VaultStore, ids: Sequence[str], *, reason: str, signer: SigningIdentity | None = None
) -> ForgetReceipt:
    """Destroy drawers ``ids`` through the chain (``reason`` recorded, ``signer`` signing); the receipt. An id
    that is not a drawer of this vault raises the store's refusal and destroys nothing."""
    return forget(store, list(ids), signer=signer, reason=reason)


def forget_record(receipt: ForgetReceipt, *, out: Path | None = None) -> dict[str, object]:
    """``{ids, out, receipt}``: the ids destroyed, and the receipt document inline unless it was written to
    ``out``."""
    return {
        "ids": list(receipt.ids),
        "out": None if out is None else str(out),
        "receipt": None if out is not None else receipt.to_dict(),
    }

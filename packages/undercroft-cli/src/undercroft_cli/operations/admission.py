"""The admission queue and its rulings: what ``undercroft admission list|allow|deny`` and
``GET|POST /v1/vaults/{id}/admission`` do, said once (MCP deliberately has no admission tool: an operator surface).

A queue record is the entry's labels, signal codes and offsets plus its destination's state now — never a word
of the held text. ``allow`` re-files the text to the id it aimed at (refused if that destination moved since);
``deny`` destroys it through attested forgetting and carries the receipt.
"""

from __future__ import annotations

from typing import Any, Final

from undercroft_store.governance.rulings import Ruling, allow, deny, list_admissions
from undercroft_store.store import VaultStore
from undercroft_vault import SigningIdentity

from undercroft_cli.operations.values import ValueRefused

__all__ = ["VERDICTS", "admission_queue", "rule_on"]

VERDICTS: Final = ("allow", "deny")
"""The two rulings an operator gives a queued write."""


def admission_queue(store: VaultStore) -> list[dict[str, Any]]:
    """Every verified queue entry, oldest first, as records (one ``read/admission-queue`` record)."""
    return [item.to_dict() for item in list_admissions(store)]


def rule_on(store: VaultStore, slot: str, verdict: str, *, signer: SigningIdentity | None = None) -> Ruling:
    """Rule ``verdict`` on queue entry ``slot``; ``signer`` signs a deny's receipt. ``ValueRefused`` for a verdict
    that is neither ``allow`` nor ``deny`` (nothing is ruled); the store's refusals pass through."""
    if verdict == "allow":
        return allow(store, slot)
    if verdict == "deny":
        return deny(store, slot, signer=signer)
    raise ValueRefused("allow or deny", verdict)

"""Retention policies and the attested sweep: what ``undercroft retention list|set|sweep`` and
``GET|POST /v1/vaults/{id}/retention`` and ``POST …/retention/sweep`` do, said once (MCP deliberately has no
retention tool: an operator surface).

A policy is ``{wing, room, max_age_seconds, at}``. The listing names every scope whose row fails its tag or is not
its newest assignment (``failed``: applied nowhere). A sweep destroys what the verified policies expire through
attested forgetting and answers ``ok: false`` — a 200 on /v1, exit 2 on the CLI — when a policy row or a drawer
failed verification, having destroyed everything it could decide.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from undercroft_store.governance.retention import SweepReport, list_retention, parse_max_age, set_retention, sweep
from undercroft_store.store import VaultStore
from undercroft_vault import SigningIdentity

__all__ = ["retention_policies", "set_policy", "sweep_record", "sweep_retention"]


def retention_policies(store: VaultStore) -> dict[str, Any]:
    """``{policies: [policy], failed: [scope finding]}``: every verified policy by scope, and each failing row
    named (a non-empty ``failed`` is an integrity verdict the caller reports)."""
    listing = list_retention(store)
    return {"policies": [p.to_dict() for p in listing.policies], "failed": list(listing.failed)}


def set_policy(store: VaultStore, wing: str, room: str | None, max_age: int | str) -> dict[str, object]:
    """Declare (or replace) the policy of ``wing`` / ``wing/room``: ``max_age`` in seconds, or a duration such as
    ``90d``, ``12h``, ``2w`` (the store's ``InvalidInput`` otherwise); the policy's record."""
    seconds = max_age if isinstance(max_age, int) else parse_max_age(max_age)
    return set_retention(store, wing, room, max_age=seconds).to_dict()


def sweep_retention(store: VaultStore, *, signer: SigningIdentity | None = None) -> SweepReport:
    """Run one attested sweep (``signer`` signs its receipt); the report, ``ok`` or not."""
    return sweep(store, signer=signer)


def sweep_record(report: SweepReport, *, out: Path | None = None) -> dict[str, object]:
    """``{ok, examined, forgotten, undecided, failed_policies, tampered_drawers, receipt, out}``: the receipt
    inline unless it was written to ``out`` (then ``out`` names the file; ``null`` when there was no receipt)."""
    written = out is not None and report.receipt is not None
    return {
        "ok": report.ok,
        "examined": report.examined,
        "forgotten": list(report.forgotten),
        "undecided": report.undecided,
        "failed_policies": list(report.failed_policies),
        "tampered_drawers": list(report.tampered_drawers),
        "receipt": None if report.receipt is None or out is not None else report.receipt.to_dict(),
        "out": str(out) if written else None,
    }

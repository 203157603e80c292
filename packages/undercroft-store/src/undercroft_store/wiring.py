"""The store's composition root: every feature plugged into the kernel's seams, in one place.

The kernel's write choke point, verify and rotation must reach features that stand above them (the
admission screen, each feature's verify leg, re-key hook and repair step). They call through `kernel.seams`; this
module — imported by the package itself, above every layer — is the one place that fills those seams, so
no kernel or integrity module imports a feature, and a new feature's hooks are added here, visibly.

The admission screen (``governance.quarantine``: its detector, pattern tables and numpy similarity),
retention's resealer and the candidate tier's verify leg, repair step and rotation hook (the search package) are
wired through thin forwarders that import their module at the first call: every
command imports this package, and a search, a listing or ``serve-mcp``'s start never screens a write, so
they do not pay for the screen's import (issue 18 §4). A write still cannot skip it: the forwarder is what
is installed, and it imports and runs the real screen before anything lands — except where the screen is off
for the handle (``UNDERCROFT_ADMISSION`` off, no rate, no gate installed), whose answer (the batch unchanged,
nothing counted) is known without loading the detector's pattern tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from undercroft_config import settings
from undercroft_config.values import Admission

from undercroft_store.integrity.tokens import token_leg
from undercroft_store.integrity.verify import verify_vault
from undercroft_store.kernel import fde_tables, seams, snapshot_table, tier_tables, token_codebook, token_table
from undercroft_store.kernel._internal.governance import has_per_handle
from undercroft_store.kernel.trust import reseal_trust_rows
from undercroft_store.memory.kg.rotation import RESEAL_HOOKS
from undercroft_store.memory.kg.verify import check_surfaces
from undercroft_store.memory.kg.window_migration import migrate_kg_windows

if TYPE_CHECKING:
    from undercroft_vault import AuditRow

    from undercroft_store.kernel._internal.context import VaultContext

__all__: list[str] = []


def _quarantine() -> ModuleType:
    from undercroft_store.governance import quarantine  # the first screened write or queue check pays for it

    return quarantine


def _screen_is_off(context: VaultContext) -> bool:
    """True when the screen cannot act on this handle: no gate built or installed on it, and the environment
    declares ``UNDERCROFT_ADMISSION`` off with no ``UNDERCROFT_ADMISSION_RATE`` — the gate `quarantine` would
    build then passes every batch through unread and counts nothing (`AdmissionPolicy.screening`, `record`)."""
    if has_per_handle(context, "admission-gate"):
        return False
    return settings.admission() is Admission.OFF and settings.admission_rate() is None


class _Screen:
    """The admission screen as installed: a call imports `governance.quarantine` (once) and runs it, unless the
    screen is off for this handle (`_screen_is_off`), where the screen's answer is known without its import."""

    def divert(
        self, context: VaultContext, batch: list[object]
    ) -> tuple[list[object], Callable[[str], list[AuditRow]] | None, dict[str, seams.Diverted]]:
        """`governance.quarantine.divert`."""
        if _screen_is_off(context):
            return batch, None, {}  # quarantine.divert's own answer with the screen off: the batch, unchanged
        diverted: tuple[list[object], Callable[[str], list[AuditRow]] | None, dict[str, seams.Diverted]]
        diverted = _quarantine().divert(context, batch)
        return diverted

    def record_commits(self, context: VaultContext, writers: Sequence[str]) -> None:
        """`governance.quarantine.record_commits`."""
        if not _screen_is_off(context):
            _quarantine().record_commits(context, writers)


def _check_queue_rows(context: VaultContext, rows: list[AuditRow]) -> list[str]:
    found: list[str] = _quarantine().check_queue_rows(context, rows)
    return found


def _reseal_queue_rows(rekeying: seams.Rekeying) -> list[tuple[str, bytes]]:
    resealed: list[tuple[str, bytes]] = _quarantine().reseal_queue_rows(rekeying)
    return resealed


def _reseal_retention(rekeying: seams.Rekeying) -> list[tuple[str, bytes]]:
    from undercroft_store.governance.retention import reseal_retention  # only a rotation needs it

    return reseal_retention(rekeying)


def _tiers() -> ModuleType:
    from undercroft_store.search.tiers import integrity  # the search package: verify, repair and rotation only

    return integrity


def _fde() -> ModuleType:
    from undercroft_store.search.tiers import fde_integrity  # the FDE tier's legs: verify, repair, rotation

    return fde_integrity


def _tier_leg(context: VaultContext, rows: list[AuditRow]) -> list[str]:
    # One leg for every candidate tier stored at rest: the PQ tables' findings, then the FDE tables'.
    found: list[str] = _tiers().tier_leg(context, rows) + _fde().fde_findings(context)
    return found


def _rebuild_tier(context: VaultContext) -> str | None:
    lines = [line for line in (_tiers().rebuild_tier(context), _fde().rebuild_fde(context)) if line is not None]
    return "; ".join(lines) if lines else None


def _drop_fde_on_rotation(rekeying: seams.Rekeying) -> list[tuple[str, bytes]]:
    dropped: list[tuple[str, bytes]] = _fde().drop_on_rotation(rekeying)
    return dropped


def _drop_tier_on_rotation(rekeying: seams.Rekeying) -> list[tuple[str, bytes]]:
    dropped: list[tuple[str, bytes]] = _tiers().drop_on_rotation(rekeying)
    return dropped


seams.install_write_screen(_Screen())
seams.install_verifier(verify_vault)
seams.register_verify_leg(seams.VerifyLeg("queue_failures", _check_queue_rows))
seams.register_verify_leg(seams.VerifyLeg("surfaces", check_surfaces))
seams.register_verify_leg(seams.VerifyLeg("index_tier", _tier_leg))
seams.register_verify_leg(seams.VerifyLeg("tokens", token_leg))
seams.register_repair_step("index_tier", _rebuild_tier)
seams.register_verify_leg(seams.VerifyLeg("search_snapshot", snapshot_table.snapshot_leg))
seams.register_repair_step("search_snapshot", snapshot_table.repair_snapshot)
seams.register_open_migration("kg_windows", migrate_kg_windows)
for _table, _hook in {
    **RESEAL_HOOKS,
    "retention_policy": _reseal_retention,
    "admission_queue": _reseal_queue_rows,
    "wing_trust": reseal_trust_rows,
    **dict.fromkeys(tier_tables.TIER_TABLES, _drop_tier_on_rotation),  # derived: dropped, rebuilt under the new keys
    **dict.fromkeys(fde_tables.FDE_TABLES, _drop_fde_on_rotation),  # derived as well: dropped, rebuilt
    snapshot_table.SNAPSHOT_TABLE: snapshot_table.drop_on_rotation,  # derived: dropped, rebuilt at the next open
    token_table.TOKEN_TABLE: token_table.reseal_on_rotation,  # re-sealed: a matrix costs a model forward
    token_codebook.CODEBOOK_TABLE: token_codebook.reseal_on_rotation,  # re-sealed: its PQ rows decode against it
}.items():
    seams.register_resealer(_table, _hook)

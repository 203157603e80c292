"""The store's composition root: every feature plugged into the kernel's seams, in one place.

The kernel's write choke point, verify and rotation must reach features that stand above them (the
admission screen, each feature's verify leg, re-key hook and repair step). They call through `kernel.seams`; this
module — imported by the package itself, above every layer — is the one place that fills those seams, so
no kernel or integrity module imports a feature, and a new feature's hooks are added here, visibly.
"""

from __future__ import annotations

from undercroft_store.governance import quarantine
from undercroft_store.governance.retention import reseal_retention
from undercroft_store.integrity.verify import verify_vault
from undercroft_store.kernel import seams, snapshot_table
from undercroft_store.kernel.trust import reseal_trust_rows
from undercroft_store.memory.kg.rotation import RESEAL_HOOKS
from undercroft_store.memory.kg.verify import check_surfaces
from undercroft_store.memory.kg.window_migration import migrate_kg_windows
from undercroft_store.search.tiers import integrity as tiers

__all__: list[str] = []

seams.install_write_screen(quarantine)
seams.install_verifier(verify_vault)
seams.register_verify_leg(seams.VerifyLeg("queue_failures", quarantine.check_queue_rows))
seams.register_verify_leg(seams.VerifyLeg("surfaces", check_surfaces))
seams.register_verify_leg(seams.VerifyLeg("index_tier", tiers.tier_leg))
seams.register_repair_step("index_tier", tiers.rebuild_tier)
seams.register_open_migration("kg_windows", migrate_kg_windows)
for _table, _hook in {
    **RESEAL_HOOKS,
    "retention_policy": reseal_retention,
    "admission_queue": quarantine.reseal_queue_rows,
    "wing_trust": reseal_trust_rows,
    **dict.fromkeys(tiers.TIER_TABLES, tiers.drop_on_rotation),  # derived: dropped, rebuilt under the new keys
    snapshot_table.SNAPSHOT_TABLE: snapshot_table.drop_on_rotation,  # derived: dropped, rebuilt at the next open
}.items():
    seams.register_resealer(_table, _hook)

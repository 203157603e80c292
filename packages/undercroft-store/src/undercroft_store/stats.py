"""`stats`: the shape of one vault, read in one pass (the /v1 stats fields this store can answer today)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from undercroft_config import settings
from undercroft_core.vocabulary import QUARANTINE_WING

from undercroft_store.kernel import fde_tables
from undercroft_store.kernel._internal.chain_append import committed_head
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.heals import recorded_heals
from undercroft_store.kernel._internal.identity import recorded_identity
from undercroft_store.kernel._internal.meta_at_rest import label_name
from undercroft_store.kernel.label_guard import label_guard_replays
from undercroft_store.kernel.tier_tables import read_generation
from undercroft_store.kernel.token_codebook import read_generation as read_token_generation
from undercroft_store.kernel.token_table import count_rows

__all__ = ["CeilingReport", "VaultStats", "vault_stats"]


@dataclass(frozen=True)
class CeilingReport:
    """The chain height against the declared ceiling (None: no ceiling declared)."""

    chain_records: int
    ceiling: int | None

    @property
    def over(self) -> bool:
        """True when a ceiling is declared and the height exceeds it. Nothing is ever deleted or refused."""
        return self.ceiling is not None and self.chain_records > self.ceiling

    def render(self) -> str:
        """The ``audit ceiling:`` line of stats."""
        if self.ceiling is None:
            return f"audit ceiling:  off ({self.chain_records} records)"
        state = "OVER" if self.over else "under"
        return f"audit ceiling:  {self.chain_records} / {self.ceiling} ({state}; reported, never enforced)"


@dataclass(frozen=True)
class VaultStats:
    """Records and drawers (one count, two names), wings and rooms (quarantine excluded), the chain, posture.

    ``chain_records`` is the audit-chain height; ``writes`` is the same number under its deprecated name.
    ``embed_failures`` counts the zero vectors this handle's embedder degraded to since the vault opened;
    ``rerank_failures`` the cross-encoder scores degraded since the stage was attached and ``late_failures``
    the late encoder's empty matrices (both 0 when the stage is not attached); ``token_matrices`` the late
    stage's stored matrices.
    ``chain_ceiling`` is ``UNDERCROFT_AUDIT_CEILING`` (None when undeclared) and ``chain_over_ceiling`` the
    verdict on it — reported, never enforced; ``chain_replays`` counts this handle's full audit-chain replays
    by the label guard (one in steady state; a rising count is a second writer under a long-lived handle).
    ``heals`` is the heal log: what writable opens repaired (an anchor found behind, a staged rotation
    promoted), newest last, kept after the open that healed (``unhealed`` is this handle's open only).
    """

    vault: str
    level: str
    records: int
    drawers: int
    quarantined: int
    wings: dict[str, int]
    rooms: dict[str, int]
    chain_records: int
    writes: int
    head: str
    db_bytes: int
    read_only: bool
    embed_failures: int
    embedder: str | None
    unhealed: list[str] = field(default_factory=list)
    chain_ceiling: int | None = None
    chain_over_ceiling: bool = False
    chain_replays: int = 0
    heals: list[str] = field(default_factory=list)  # the heal log (meta.heals): what writable opens repaired
    index_generation: int | None = None  # the PQ tier's codebook generation at rest (None: no tier stored)
    rerank_failures: int = 0
    late_failures: int = 0
    token_matrices: int = 0  # the late stage's stored matrices (`kernel.token_table`; 0: the stage never ran)
    token_codebook_generation: int | None = None  # their PQ codebook's generation (None: none trained)
    fde_generation: int | None = None  # the FDE tier's parameter generation at rest (None: no tier stored)

    def taxonomy(self) -> dict[str, dict[str, int]]:
        """Wing → room → drawers, from the ``wing/room`` counts (the quarantine wing's rooms excluded)."""
        tree: dict[str, dict[str, int]] = {wing: {} for wing in sorted(self.wings)}
        for key, count in sorted(self.rooms.items()):
            wing, _, room = key.partition("/")
            tree.setdefault(wing, {})[room] = count
        return tree

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return asdict(self)

    def render(self) -> str:
        """Human-readable lines for the CLI."""
        lines = [
            f"vault:          {self.vault} ({self.level}{', read-only' if self.read_only else ''})",
            f"drawers:        {self.drawers} (quarantined {self.quarantined})",
            f"wings:          {len(self.wings)}  rooms: {len(self.rooms)}",
        ]
        lines += [f"  {wing}: {count}" for wing, count in sorted(self.wings.items())]
        lines += [
            f"chain records:  {self.chain_records}",
            f"chain head:     {self.head}",
            f"chain replays:  {self.chain_replays}",
            CeilingReport(self.chain_records, self.chain_ceiling).render(),
            f"db bytes:       {self.db_bytes}",
            f"embedder:       {self.embedder or '(none recorded yet)'}",
            f"embed failures: {self.embed_failures}",
            f"rerank failures: {self.rerank_failures}",
            f"late failures:  {self.late_failures}",
            f"token matrices: {self.token_matrices}"
            + (
                f" (PQ codebook generation {self.token_codebook_generation})"
                if self.token_codebook_generation is not None
                else ""
            ),
            f"unhealed:       {len(self.unhealed)}",
        ]
        lines += [f"  {line}" for line in self.unhealed]
        if self.index_generation is not None:
            lines.append(f"index tier:     pq codebook generation {self.index_generation}")
        if self.fde_generation is not None:
            lines.append(f"fde tier:       parameter generation {self.fde_generation}")
        lines.append(f"heals logged:   {len(self.heals)}")
        lines += [f"  {line}" for line in self.heals]
        return "\n".join(lines)


def vault_stats(context: VaultContext, unhealed: list[str]) -> VaultStats:
    """Count everything in one read transaction so the numbers reconcile."""
    connection = context.connection
    connection.execute("BEGIN")
    try:
        rooms: dict[str, int] = {}
        wings: dict[str, int] = {}
        quarantined = 0
        groups = connection.execute("SELECT wing, room, count(*) FROM drawers GROUP BY wing, room").fetchall()
        for stored_wing, stored_room, count in groups:
            # A sealed vault's columns hold blind values: the names come from the handle's label memo.
            wing, room = label_name(context, "wing", stored_wing), label_name(context, "room", stored_room)
            if wing == QUARANTINE_WING:
                quarantined += int(count)
                continue
            wings[wing] = wings.get(wing, 0) + int(count)
            rooms[f"{wing}/{room}"] = int(count)
        head, height = committed_head(context)  # a missing chain_meta row is ChainBroken (exit 2)
        identity = recorded_identity(context)
        heals = recorded_heals(connection)
        index_generation = _index_generation(context)
        token_matrices = count_rows(connection)
        token_codebook_generation = read_token_generation(connection)
        fde_generation = fde_tables.read_generation(connection)
    finally:
        connection.execute("COMMIT")
    drawers = sum(wings.values()) + quarantined
    ceiling = settings.audit_ceiling()
    db_bytes = sum(p.stat().st_size for p in context.vault_dir.glob("vault.db*") if p.is_file())
    return VaultStats(
        vault=context.vault_id,
        level=context.manifest.level,
        records=drawers,
        drawers=drawers,
        quarantined=quarantined,
        wings=wings,
        rooms=rooms,
        chain_records=int(height),
        writes=int(height),
        head=bytes(head).hex(),
        db_bytes=db_bytes,
        read_only=context.read_only,
        embed_failures=context.embedder.embed_failures - context.embed_failures_at_open,
        embedder=identity,
        unhealed=unhealed,
        chain_ceiling=ceiling,
        chain_over_ceiling=CeilingReport(int(height), ceiling).over,
        chain_replays=label_guard_replays(context),
        heals=heals,
        index_generation=index_generation,
        rerank_failures=_rerank_failures(context),
        late_failures=_late_failures(context),
        token_matrices=token_matrices,
        token_codebook_generation=token_codebook_generation,
        fde_generation=fde_generation,
    )


def _late_failures(context: VaultContext) -> int:
    """The attached late encoder's empty matrices since it was attached to this handle (0: none attached)."""
    encoder = context.late_encoder
    return 0 if encoder is None else encoder.late_failures - context.late_failures_at_attach


def _rerank_failures(context: VaultContext) -> int:
    """The attached cross-encoder's degraded scores since it was attached to this handle (0: none attached)."""
    encoder = context.cross_encoder
    return 0 if encoder is None else encoder.rerank_failures - context.rerank_failures_at_attach


def _index_generation(context: VaultContext) -> int | None:
    """The PQ tier's stored codebook generation (kernel.tier_tables)."""
    return read_generation(context.connection)

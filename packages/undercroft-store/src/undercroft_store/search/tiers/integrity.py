"""The PQ tier in verify, repair and rotation: a failed seal is named, repair rebuilds, rotation drops.

* `tier_findings` — the verify leg: every stored artifact and code row opened under its own domain; each that
  fails (altered bytes, a blob moved to another seq or generation, a generation counter edited in clear) is one
  finding. Rows that merely lag the drawers (another handle wrote since the tier last synced) are not findings:
  the tier is derived, and the next search's diff re-codes them.
* `rebuild_tier` — repair's leg: the tables are emptied and built again from the verified embeddings under the
  next codebook generation (nothing at rest is trusted).
* `drop_on_rotation` — the rotation hook (registered in `undercroft_store.wiring` for both tables): the
  tier's rows are deleted inside the rotation's own transaction, the generation counter kept; the next search
  builds the next generation under the new keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from undercroft_vault import AuditRow

from undercroft_store.kernel import tier_tables as tables
from undercroft_store.kernel._internal.context import VaultContext

if TYPE_CHECKING:
    from undercroft_store.kernel.seams import Rekeying

__all__ = ["TIER_TABLES", "drop_on_rotation", "rebuild_tier", "tier_findings", "tier_leg"]

#: The tables the rotation hook covers.
TIER_TABLES = tables.TIER_TABLES


def tier_findings(context: VaultContext) -> list[str]:
    """One line per tier artifact or code row that fails its seal or tag (empty: clean, or no tier stored)."""
    connection = context.connection
    if not tables.tables_exist(connection):
        return []
    envelope = tables.Envelope(context)
    stored = tables.read_artifacts(connection, envelope)
    if stored is None:
        rows = int(connection.execute(f"SELECT count(*) FROM {tables.ROWS_TABLE}").fetchone()[0])  # noqa: S608
        return [f"{rows} code row(s) stored without a codebook generation"] if rows else []
    findings = [
        f"{tables.META_TABLE} {name} of generation {stored.generation} fails its seal" for name in stored.failed
    ]
    if not stored.failed and stored.header is None:
        rows = int(connection.execute(f"SELECT count(*) FROM {tables.ROWS_TABLE}").fetchone()[0])  # noqa: S608
        return [f"{rows} code row(s) stored without a codebook (generation {stored.generation})"] if rows else []
    if stored.generation < 0:
        return [f"{tables.META_TABLE} generation is not a decimal counter", *findings[1:]]
    coded = connection.execute(f"SELECT seq, blob FROM {tables.ROWS_TABLE} ORDER BY seq").fetchall()  # noqa: S608
    domains = [tables.row_domain(stored.generation, int(seq)) for seq, _ in coded]
    for (seq, _), plain in zip(coded, envelope.open_each(domains, [bytes(blob) for _, blob in coded]), strict=True):
        if plain is None:
            findings.append(f"{tables.ROWS_TABLE} code row of seq {int(seq)} fails its seal")
    return findings


def tier_leg(context: VaultContext, _rows: list[AuditRow]) -> list[str]:
    """The verify leg as the kernel's seam calls it (`kernel.seams.VerifyLeg`): the tier has no audit records."""
    return tier_findings(context)


def rebuild_tier(context: VaultContext) -> str | None:
    """Empty the tier's tables and build them again (None: this vault has no tier stored)."""
    from undercroft_store.search.tiers.pq import PQTier  # the tier imports the store façade

    connection = context.connection
    if context.read_only or not tables.tables_exist(connection):
        return None
    generation = max(tables.read_generation(connection) or 0, 0)  # kept: the build takes the next one
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(f"DELETE FROM {tables.ROWS_TABLE}")  # noqa: S608
        connection.execute(f"DELETE FROM {tables.META_TABLE}")  # noqa: S608
        connection.execute(
            f"INSERT INTO {tables.META_TABLE} (name, blob) VALUES ('generation', ?)",  # noqa: S608
            (str(generation).encode("ascii"),),
        )
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    tier = PQTier()
    tier.prepare_context(context, None)
    if tier.generation is None:
        return f"index tier emptied (generation {generation}); below the training size, it rebuilds as the vault grows"
    return f"index tier rebuilt: codebook generation {tier.generation}, {len(tier.coded())} code rows"


def drop_on_rotation(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's hook: delete every tier row under the old keys, keep the generation counter (no audit echo)."""
    connection = rekeying.connection
    held = connection.execute(f"SELECT count(*) FROM {tables.META_TABLE} WHERE name != 'generation'").fetchone()[0]  # noqa: S608
    if not held and connection.execute(f"SELECT 1 FROM {tables.ROWS_TABLE} LIMIT 1").fetchone() is None:  # noqa: S608
        return []  # already emptied (the hook runs once per tier table): nothing under the old keys
    row = connection.execute(f"SELECT blob FROM {tables.META_TABLE} WHERE name = 'generation'").fetchone()  # noqa: S608
    try:
        generation = int(bytes(row[0]).decode("ascii")) if row is not None else 0
    except (UnicodeDecodeError, ValueError):
        generation = 0
    connection.execute(f"DELETE FROM {tables.ROWS_TABLE}")  # noqa: S608
    connection.execute(f"DELETE FROM {tables.META_TABLE}")  # noqa: S608
    connection.execute(
        f"INSERT INTO {tables.META_TABLE} (name, blob) VALUES ('generation', ?)",  # noqa: S608
        (str(generation).encode("ascii"),),  # kept: the next build takes the next one
    )
    return []

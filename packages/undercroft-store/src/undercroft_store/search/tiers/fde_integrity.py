"""The FDE tier in verify, repair and rotation: a failed seal is named, repair rebuilds, rotation drops.

* `fde_findings` — joined to the ``index_tier`` verify leg (`undercroft_store.wiring`): the parameters and every
  row opened under their own domains; each that fails (altered bytes, a row moved to another drawer's seq, a
  row of another generation, a generation counter edited in clear, a row whose drawer is gone — the write
  path drops a row with its drawer, so an orphan is evidence) is one finding. Rows that merely lag the drawers'
  marks are not findings: the tier is derived, and the next search's diff encodes them again.
* `rebuild_fde` — repair's leg: every row is deleted; parameters that open cleanly are kept (the tier's
  shape is persisted per vault), failed ones are dropped so the next build draws a new generation. With a
  late encoder attached the rows are built again from the stored token matrices at once.
* `drop_on_rotation` — the rotation hook of both tables: rows and parameters deleted inside the rotation's
  own transaction, the generation counter kept; the next search builds the next generation under the new keys
  (from the declared ``UNDERCROFT_FDE_*`` shape, or the encoder's own).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from undercroft_config import settings
from undercroft_core.errors import InvalidInput
from undercroft_core.fde import FdeEncoder
from undercroft_vault import Domain

from undercroft_store.kernel import fde_tables as tables
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel.tier_tables import Envelope

if TYPE_CHECKING:
    from undercroft_store.kernel.seams import Rekeying

__all__ = ["FDE_TABLES", "drop_on_rotation", "fde_findings", "rebuild_fde"]

#: The tables the rotation hook covers.
FDE_TABLES = tables.FDE_TABLES


def _count(context: VaultContext) -> int:
    return int(context.connection.execute(f"SELECT count(*) FROM {tables.ROWS_TABLE}").fetchone()[0])  # noqa: S608


def fde_findings(context: VaultContext) -> list[str]:
    """One line per FDE artifact or row that fails its seal or tag (empty: clean, or no tier stored)."""
    connection = context.connection
    if not tables.tables_exist(connection):
        return []
    envelope = Envelope(context)
    stored = tables.read_params(connection, envelope)
    if stored is None:
        count = _count(context)
        return [f"{count} FDE row(s) stored without a parameter generation"] if count else []
    if stored.generation < 0:
        return [f"{tables.META_TABLE} generation is not a decimal counter"]
    if stored.failed:
        return [f"{tables.META_TABLE} params of generation {stored.generation} fails its seal"]
    if stored.params is None:
        count = _count(context)
        return [f"{count} FDE row(s) stored without parameters (generation {stored.generation})"] if count else []
    try:
        length = FdeEncoder.from_bytes(stored.params).parameters.output_dimension
    except InvalidInput:
        return [f"{tables.META_TABLE} params of generation {stored.generation} are not FDE parameters"]
    rows = connection.execute(
        f"SELECT r.seq, d.id, r.blob FROM {tables.ROWS_TABLE} r LEFT JOIN drawers d ON d.seq = r.seq "  # noqa: S608
        "ORDER BY r.seq"
    ).fetchall()
    findings = [f"{tables.ROWS_TABLE} row of seq {int(seq)} has no drawer (orphan)" for seq, i, _ in rows if i is None]
    held = [(int(seq), str(drawer_id), bytes(blob)) for seq, drawer_id, blob in rows if drawer_id is not None]
    opened = envelope.open_each([Domain.fde_tokens(drawer_id) for _, drawer_id, _ in held], [b for _, _, b in held])
    for (seq, _, _), plain in zip(held, opened, strict=True):
        if plain is None:
            findings.append(f"{tables.ROWS_TABLE} row of seq {seq} fails its seal")
        elif tables.unpack_row(plain, stored.generation, length) is None:
            findings.append(f"{tables.ROWS_TABLE} row of seq {seq} is not a row of generation {stored.generation}")
    return findings


def rebuild_fde(context: VaultContext) -> str | None:
    """Empty the rows (and failed parameters) and, with a late encoder attached, build them again (None: this
    vault has no FDE tier stored)."""
    from undercroft_store.search.tiers.fde import FdeOptions, FdeTier  # the tier imports the store façade

    connection = context.connection
    if context.read_only or not tables.tables_exist(connection):
        return None
    envelope = Envelope(context)
    stored = tables.read_params(connection, envelope)
    generation = 0 if stored is None else max(stored.generation, 0)
    keep = None if stored is None or stored.failed else stored.params
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(f"DELETE FROM {tables.ROWS_TABLE}")  # noqa: S608
        tables.write_params(connection, envelope, generation, keep)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    if context.late_encoder is None:
        return f"FDE tier emptied (generation {generation}); the next fde search rebuilds it"
    tier = FdeTier(FdeOptions(**settings.fde_parameters(), **settings.fde_compression()))
    tier.prepare_context(context, None)
    return f"FDE tier rebuilt: generation {tier.generation}, {len(tier.rows())} rows, {len(tier.bare)} without a matrix"


def drop_on_rotation(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's hook: delete every FDE blob under the old keys, keep the generation counter (no audit echo)."""
    connection = rekeying.connection
    held = connection.execute(f"SELECT count(*) FROM {tables.META_TABLE} WHERE name != 'generation'").fetchone()[0]  # noqa: S608
    if not held and connection.execute(f"SELECT 1 FROM {tables.ROWS_TABLE} LIMIT 1").fetchone() is None:  # noqa: S608
        return []  # already emptied (the hook runs once per table)
    generation = max(tables.read_generation(connection) or 0, 0)
    connection.execute(f"DELETE FROM {tables.ROWS_TABLE}")  # noqa: S608
    connection.execute(f"DELETE FROM {tables.META_TABLE}")  # noqa: S608
    connection.execute(
        f"INSERT INTO {tables.META_TABLE} (name, blob) VALUES ('generation', ?)",  # noqa: S608
        (str(generation).encode("ascii"),),
    )
    return []

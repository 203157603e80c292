"""Export and import: what ``undercroft export|import`` and ``GET|POST /v1/vaults/{id}/export|import`` do, said once.

An export is the vault's decrypted JSONL (docs/cli.md) and one ``egress/export`` record on the audit chain, written
before a byte leaves: an export that cannot be audited does not happen. A read-only handle cannot append, so
`audit_export` answers why no record was written and the adapter says so beside the bytes (the CLI on standard
error, /v1 in ``X-Undercroft-Warning``). An import parses the whole document before it writes, re-stamps every
drawer with the importing surface, writes through the admission screen, and refuses whole an import that would
change a drawer held for an admission ruling (``_internal.transfer_io``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from undercroft_store import VaultStore

from undercroft_cli._internal.egress import record_export
from undercroft_cli._internal.meter import Meter, quiet
from undercroft_cli._internal.transfer_io import (
    ImportReport,
    PendingImport,
    collect_export,
    import_export_bytes,
    read_import,
    write_import,
)

__all__ = [
    "READ_ONLY_EGRESS",
    "Export",
    "ImportReport",
    "PendingImport",
    "audit_export",
    "collect",
    "import_bytes",
    "import_pending",
    "read_import",
]

READ_ONLY_EGRESS = "read-only engine: this export's egress record was not written"
"""What a read-only handle's export says instead of recording its egress."""


@dataclass(frozen=True, slots=True)
class Export:
    """A collected export: the JSONL bytes, the manifest's counts and the bytes' SHA-256 (hex)."""

    jsonl: bytes
    counts: dict[str, int]
    digest: str


def collect(store: VaultStore, *, with_id_key: bool = False, meter: Meter = quiet) -> Export:
    """Every drawer (with its embedding and token matrix), KG entity and fact and tunnel of ``store``, as JSONL.

    ``with_id_key`` carries the vault's id key too (counted in the manifest): whoever holds the bytes can then
    compute this vault's blind values. ``meter`` draws the work (the CLI's bar; a request draws nothing).
    """
    jsonl, counts = collect_export(store, with_id_key=with_id_key, meter=meter)
    return Export(jsonl, counts, hashlib.sha256(jsonl).hexdigest())


def audit_export(store: VaultStore, export: Export, *, surface: str, recipient: str | None) -> str | None:
    """Append the export's egress record (call it before a byte leaves); ``None`` when written, else why not.

    ``recipient`` is the sealed bundle's recipient (its public encoding), ``None`` for plain JSONL.
    """
    if store.read_only:
        return READ_ONLY_EGRESS
    return record_export(store, surface=surface, recipient=recipient, counts=export.counts, digest=export.digest)


def import_bytes(
    store: VaultStore, data: bytes, name: str, *, added_by: str, adopt: bool = False, meter: Meter = quiet
) -> ImportReport:
    """Import an undercroft JSONL export held in memory (``name`` is what its messages call it).

    ``adopt`` takes the export's id key first (the vault must be empty). A malformed line, or a drawer that
    would change one held for an admission ruling, refuses the import whole (``InvalidExport``).
    """
    return import_export_bytes(store, data, name, added_by=added_by, adopt=adopt, meter=meter)


def import_pending(
    store: VaultStore, pending: PendingImport, *, added_by: str, adopt: bool = False, meter: Meter = quiet
) -> ImportReport:
    """Write an import read from a file (`read_import`: a JSONL export, a sealed bundle or a MemPalace export
    directory, parsed whole before the vault opened) into ``store``; refusals as `import_bytes`."""
    return write_import(store, pending, added_by=added_by, adopt=adopt, meter=meter)

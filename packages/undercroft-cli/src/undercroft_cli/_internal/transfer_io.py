"""Export and import against an open store: collecting the records, and writing them back through the screen."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from undercroft_core import Drawer
from undercroft_core.external_embedder import EXTERNAL_PREFIX
from undercroft_core.ids import ID_RECIPE_APPEND, ID_RECIPE_SOURCE
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import Bypass, BypassReason, DrawerWrite, Screen, VaultStore
from undercroft_store.governance.read_audit import InternalRead, silent
from undercroft_store.kernel.id_key import adopt_id_key, export_id_key
from undercroft_store.kernel.token_table import content_digest, supplied_current, unpack_matrix
from undercroft_store.memory.kg.graph import FactInput, KnowledgeGraph
from undercroft_store.memory.tunnels import create_tunnel, list_tunnels

from undercroft_cli._internal.filing import BATCH_SIZE, FilingReport, utc_now
from undercroft_cli._internal.mempalace_export import is_mempalace_export, read_mempalace_export
from undercroft_cli._internal.meter import Meter, quiet
from undercroft_cli._internal.transfer_format import (
    EXPORT_FORMAT,
    ID_KEY_TYPE,
    ExportFile,
    InvalidExport,
    drawer_from_record,
    drawer_record,
    manifest_line,
    parse_export,
    tokens_from_record,
    unframe_sealed,
)

__all__ = ["ImportReport", "PendingImport", "collect_export", "import_export_bytes", "read_import", "write_import"]

_ADDED_BY = "cli"
_BUNDLE_MAGIC = b"UNDERCROFT-BUNDLE-"
_ENTITY_PAGE = 1000


def _line(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False).encode("utf-8") + b"\n"


def collect_export(
    store: VaultStore, *, with_id_key: bool = False, meter: Meter = quiet
) -> tuple[bytes, dict[str, int]]:
    """The whole vault as export JSONL (manifest line first) and its counts; drawers in write order.

    ``with_id_key`` adds the vault's id key right after the manifest (counted as ``id_key``), so an import
    that adopts it into a new vault keeps every drawer id (`undercroft_store.kernel.id_key`)."""
    matrix = store.iter_embeddings()
    where = {drawer_id: i for i, drawer_id in enumerate(matrix.ids)}
    seqs = [int(s) for s in store.scope_seqs(include_quarantine=True)]
    body: list[bytes] = []
    matrices = 0
    with meter(len(seqs), "exporting") as bar, silent(store, InternalRead.EXPORT):
        for start in range(0, len(seqs), BATCH_SIZE):
            chunk = seqs[start : start + BATCH_SIZE]
            artifacts = store.token_artifacts(chunk)
            for drawer in store.hydrate(chunk):
                i = where.get(drawer.id)
                scale = float(matrix.scales[i]) if i is not None and matrix.scales[i] > 0 else None
                codes = matrix.codes[i].tolist() if scale is not None and i is not None else None
                tokens = _current_artifact(artifacts.get(drawer.id), drawer.content)
                matrices += tokens is not None
                body.append(_line(drawer_record(drawer, scale, codes, tokens)))
            bar.update(min(BATCH_SIZE, len(seqs) - start))
    graph = KnowledgeGraph(store)
    entities: list[dict[str, Any]] = []
    with silent(store, InternalRead.EXPORT):  # the export's egress record is its audit, not one read per page
        while True:
            page = graph.entities(limit=_ENTITY_PAGE, offset=len(entities))
            entities += [{"type": "kg_entity", "name": e.name, "created_at": e.created_at} for e in page]
            if len(page) < _ENTITY_PAGE:
                break
        facts = [{"type": "kg_fact", "fact": fact.to_dict()} for fact in graph.timeline()]
    tunnels = [{"type": "tunnel", "tunnel": tunnel.to_dict()} for tunnel in list_tunnels(store)]
    counts = {"drawers": len(body), "kg_entities": len(entities), "kg_facts": len(facts), "tunnels": len(tunnels)}
    if matrices:  # bound by the egress record and the bundle manifest with the rest of the counts
        counts["token_matrices"] = matrices
    carried = [{"type": ID_KEY_TYPE, "key": export_id_key(store)}] if with_id_key else []
    if carried:
        counts[ID_KEY_TYPE] = 1
    manifest = {
        "format": EXPORT_FORMAT,
        "vault": store.name,
        "level": store.level,
        "embedder": store.stats().embedder,
        "exported_at": utc_now(),
        "counts": counts,
    }
    rest = b"".join(_line(item) for item in [*entities, *facts, *tunnels])
    head = _line(manifest_line(manifest)) + b"".join(_line(item) for item in carried)
    return head + b"".join(body) + rest, counts


def _current_artifact(plain: bytes | None, content: str) -> bytes | None:
    """A stored matrix worth exporting: one made from exactly this verified content (a stale one is not)."""
    opened = None if plain is None else unpack_matrix(plain)
    return plain if opened is not None and opened.digest == content_digest(content) else None


@dataclass
class ImportReport:
    """What an import did: drawer outcomes, facts and tunnels added, the bundle's attestation, notes."""

    source_format: str
    drawers: int = 0
    filing: FilingReport = field(default_factory=FilingReport)
    facts: int = 0
    tunnels: int = 0
    attestation: str | None = None
    sender: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Token matrices stored by copy from the lines, and those refused (forged, of other content, of another
    #: encoder or width: the write path encoded those drawers instead).
    tokens_copied: int = 0
    tokens_refused: int = 0
    #: True when the export's id key was adopted (every drawer id kept as the source had it).
    id_key_adopted: bool = False

    def to_dict(self) -> dict[str, object]:
        """JSON-ready report."""
        return {
            "format": self.source_format,
            "drawers": self.drawers,
            **self.filing.to_dict(),
            "facts": self.facts,
            "tunnels": self.tunnels,
            "attestation": self.attestation,
            "sender": self.sender,
            "notes": self.notes,
            "tokens": {"copied": self.tokens_copied, "refused": self.tokens_refused},
            "id_key_adopted": self.id_key_adopted,
        }


def _open_sealed(data: bytes, identity: str, sender: str | None, report: ImportReport) -> bytes:
    from undercroft_vault import open_bundle, parse_identity, verify_bundle_manifest

    key = parse_identity(identity)
    try:
        opened = open_bundle(key, data)
    finally:
        key.wipe()
    document, jsonl = unframe_sealed(opened.payload)
    verdict = verify_bundle_manifest(document, jsonl, now=datetime.now(UTC), pinned_sender=sender)
    report.attestation, report.sender = str(verdict.status), verdict.sender
    return jsonl


def _place_append(store: VaultStore, drawer: Drawer, used: set[int]) -> Drawer:
    """Keep an append id when it is free here (or already holds these words); else take a fresh index."""
    with silent(store, InternalRead.WRITE_DECISION):  # where the import files this drawer; nothing is shown
        existing = store.hydrate([drawer.id])
    if not existing or existing[0].content == drawer.content:
        used.add(drawer.chunk_index)
        return drawer
    index = store.allocate_append_indices(1)
    return replace(drawer, id=store.drawer_ids.append(drawer.wing, drawer.room, index), chunk_index=index)


def _write(store: VaultStore, items: list[DrawerWrite], report: FilingReport) -> None:
    plain = [item for item in items if item.drawer.wing != QUARANTINE_WING]
    held = [item for item in items if item.drawer.wing == QUARANTINE_WING]
    for batch, screening in ((plain, Screen()), (held, Bypass(BypassReason.ALREADY_DIVERTED))):
        if not batch:
            continue
        for item, result in zip(batch, store.write(batch, screening=screening), strict=True):
            if result.outcome == "created":
                report.created += 1
            elif result.outcome == "updated":
                report.updated += 1
            elif result.outcome == "deduped":
                report.unchanged += 1
            else:
                report.quarantined += 1
                report.diverted.append((item.drawer.id, result.id))


def _spare_the_review_queue(store: VaultStore, drawers: list[Drawer], placed: list[Drawer], wheres: list[str]) -> None:
    """Refuse the import (nothing written yet) when a drawer would change one held for an admission ruling.

    A row awaiting a ruling changes only through the ruling: an import over it would replace the evidence the
    ruling is about (and file the replacement outside the queue). A drawer counts as aimed at a resident when
    the export names the resident's id or the import would place it there. The held row itself, exported and
    imported again unchanged, changes nothing and passes. The residents are read verified (a forged row raises).
    """
    with silent(store, InternalRead.POLICY_FENCE):
        seqs = [int(seq) for seq in store.scope_seqs(wing=QUARANTINE_WING)]
        held = {drawer.id: drawer for drawer in store.hydrate_many(seqs).values()}
    if not held:
        return
    for named, drawer, where in zip(drawers, placed, wheres, strict=True):
        for aimed in dict.fromkeys((named.id, drawer.id)):
            resident = held.get(aimed)
            if resident is None or (drawer.wing == QUARANTINE_WING and drawer.content == resident.content):
                continue
            raise InvalidExport(
                f"{where}: {aimed} awaits an admission ruling in this vault; rule on it "
                "(undercroft admission allow|deny, or POST …/admission) before importing over it"
            )


def _import_drawers(
    store: VaultStore,
    drawers: list[Drawer],
    vectors: list[Any],
    report: ImportReport,
    tokens: list[bytes | None] | None = None,
    wheres: list[str] | None = None,
    meter: Meter = quiet,
) -> dict[str, str]:
    """Write ``drawers`` in batches; returns the id map, old id → new id, of every drawer whose id changed.

    An id changes when the two vaults derive ids differently (a keyed ``hmac-v1`` vault and a public
    ``sha256-v1`` one, or two keyed vaults with different keys: every id is re-derived under this vault's
    recipe) or when an append drawer's index is taken here. The map rewrites every reference an export
    carries — a drawer's ``supersedes`` link here, a fact's source drawer in the caller — so links survive."""
    moved: dict[str, str] = {}
    used: set[int] = set()
    placed_all: list[Drawer] = []
    ids = store.drawer_ids
    for drawer in drawers:
        # Re-derived under this vault's recipe first (a quarantine resident's slot too: its index is kept).
        rekeyed = drawer if drawer.expected_id(ids) == drawer.id else replace(drawer, id=drawer.expected_id(ids))
        movable = drawer.id_recipe == ID_RECIPE_APPEND and drawer.wing != QUARANTINE_WING
        placed = _place_append(store, rekeyed, used) if movable else rekeyed
        if placed.id != drawer.id:
            moved[drawer.id] = placed.id
        placed_all.append(placed)
    _spare_the_review_queue(store, drawers, placed_all, wheres or [drawer.id for drawer in drawers])
    pending: list[DrawerWrite] = []
    matrices = tokens if tokens is not None else [None] * len(drawers)
    with meter(len(drawers), "importing") as bar:
        for placed, vector, matrix in zip(placed_all, vectors, matrices, strict=True):
            if placed.supersedes in moved:
                placed = replace(placed, supersedes=moved[placed.supersedes])
            # The matrix names no id (content digest + encoder): a re-derived id takes it under its own domain.
            pending.append(DrawerWrite(placed, vector, matrix))
            if len(pending) >= BATCH_SIZE:
                _write(store, pending, report.filing)
                bar.update(len(pending))
                pending = []
        _write(store, pending, report.filing)
        bar.update(len(pending))
    if used:  # later saves must not be handed an index an imported drawer holds
        first = store.allocate_append_indices(1)
        if max(used) >= first:
            store.allocate_append_indices(max(used) - first + 1)
    report.drawers = len(drawers)
    return moved


def _adopt(store: VaultStore, parsed: ExportFile, name: str, report: ImportReport, adopt: bool) -> None:
    """Adopt the export's id key when asked (refused unless it carries one and this vault is empty); a key
    carried but not asked for is left unused, and the report says so."""
    if adopt:
        if parsed.id_key is None:
            raise InvalidExport(f"{name}: --adopt-id-key, but the export carries no id key (export --with-id-key)")
        adopt_id_key(store, parsed.id_key)
        report.id_key_adopted = True
        report.notes.append("adopted the export's id key: every drawer id is the source vault's")
    elif parsed.id_key is not None:
        report.notes.append(
            "the export carries its vault's id key; not adopted (to keep every drawer id, import into a new, "
            "empty vault with --adopt-id-key): ids are derived under this vault's own key"
        )


def _external_importable(parsed: ExportFile, name: str, declared: object, here: str, same_space: bool) -> None:
    """An external: vault cannot embed: every drawer must arrive with a vector of its own space. Checked over
    the whole export before anything (the id key included) is written."""
    if not same_space:
        raise InvalidExport(
            f"{name}: this vault stores caller-supplied vectors ({here}) and cannot embed, but the export's drawers "
            f"are in {declared!r}: import it into a vault of that space"
        )
    for record in parsed.drawers:
        if not isinstance(record.get("embedding"), dict):
            raise InvalidExport(
                f"{name}: line {record['_line']}: a drawer without its embedding, and this vault ({here}) cannot "
                "embed one"
            )


def _import_export(
    store: VaultStore,
    parsed: ExportFile,
    name: str,
    report: ImportReport,
    *,
    added_by: str = _ADDED_BY,
    adopt: bool = False,
    meter: Meter = quiet,
) -> None:
    declared = parsed.manifest.get("embedder")
    here = store.embedder.identity.label  # the vault's own space (an external: vault's, when it recorded one)
    # The hash embedder is deterministic: re-embedding reproduces the exported int8 bytes exactly, where a
    # supplied float vector would be re-quantised (same direction, other bytes). Another space is re-embedded.
    same_space = declared == here and not here.startswith("undercroft-hash")
    if here.startswith(EXTERNAL_PREFIX):
        _external_importable(parsed, name, declared, here, same_space)
    _adopt(store, parsed, name, report, adopt)
    if declared is not None and declared != here:
        report.notes.append(f"embedder {declared!r} differs from this vault's {here!r}: drawers re-embedded")
    drawers: list[Drawer] = []
    vectors: list[Any] = []
    matrices: list[bytes | None] = []
    carried = 0
    wheres: list[str] = []
    for record in parsed.drawers:
        where = f"{name}: line {record['_line']}"
        wheres.append(where)
        drawers.append(drawer_from_record(record.get("drawer"), added_by=added_by, where=where))
        embedding = record.get("embedding")
        if same_space and isinstance(embedding, dict):
            codes = np.asarray(embedding.get("codes"), dtype=np.float64)
            vectors.append(codes * float(embedding.get("scale", 0.0)))
        else:
            vectors.append(None)
        matrix, present = tokens_from_record(record)
        matrices.append(matrix)
        carried += present
    _count_token_copies(store, drawers, matrices, carried, report)
    moved = _import_drawers(store, drawers, vectors, report, matrices, wheres, meter)
    graph = KnowledgeGraph(store)
    inputs: list[FactInput] = []
    for record in parsed.facts:
        fact = record.get("fact")
        if not isinstance(fact, dict) or not all(
            isinstance(fact.get(k), str) for k in ("subject", "predicate", "object")
        ):
            raise InvalidExport(f"{name}: line {record['_line']}: a kg_fact needs string subject, predicate, object")
        span = fact.get("source_span")
        source = fact.get("source_drawer")
        inputs.append(
            FactInput(
                fact["subject"],
                fact["predicate"],
                fact["object"],
                valid_from=fact.get("valid_from"),
                valid_to=fact.get("valid_to"),
                confidence=float(fact.get("confidence", 1.0)),
                source_drawer=moved.get(source, source) if source else None,
                source_span=(int(span[0]), int(span[1])) if span else None,
                extractor=fact.get("extractor"),
                grounding=fact.get("grounding", "unevaluated"),
            )
        )
    if inputs:
        report.facts = len(graph.add_many(inputs))
    existing = {(t.from_wing, t.from_room, t.to_wing, t.to_room, t.label) for t in list_tunnels(store)}
    for record in parsed.tunnels:
        t = record.get("tunnel")
        if not isinstance(t, dict) or not all(isinstance(t.get(k), str) for k in ("from_wing", "to_wing", "label")):
            raise InvalidExport(f"{name}: line {record['_line']}: a tunnel needs string from_wing, to_wing, label")
        key = (t.get("from_wing"), t.get("from_room"), t.get("to_wing"), t.get("to_room"), t.get("label"))
        if key not in existing:
            create_tunnel(
                store, t["from_wing"], t["to_wing"], t["label"], from_room=t.get("from_room"), to_room=t.get("to_room")
            )
            report.tunnels += 1


def _count_token_copies(
    store: VaultStore, drawers: list[Drawer], matrices: list[bytes | None], carried: int, report: ImportReport
) -> None:
    """How many carried matrices the write path will store by copy (its own check, `supplied_current`, is the
    one that decides); the rest are refused and their drawers encoded. Notes say why, never silently."""
    if not carried:
        return
    encoder = store.late_encoder
    if encoder is None:
        report.notes.append(
            f"the export carries {carried} token matrices; no late stage is declared here "
            "(UNDERCROFT_RERANKER=colbert|colbert-ort): not stored"
        )
        return
    report.tokens_copied = sum(
        supplied_current(matrix, encoder.name, encoder.dimension, drawer.content)
        for drawer, matrix in zip(drawers, matrices, strict=True)
    )
    report.tokens_refused = carried - report.tokens_copied
    if report.tokens_refused:
        report.notes.append(
            f"{report.tokens_refused} token matrices are not this content's under {encoder.name!r} "
            "(forged, stale, another drawer's, or another encoder's): those drawers were encoded afresh"
        )


def _import_mempalace(store: VaultStore, root: Path, report: ImportReport, added_by: str, meter: Meter) -> None:
    filed_at = utc_now()
    drawers = [
        Drawer(
            id=store.drawer_ids.source(item.wing, item.room, f"mempalace:{item.id}", 0),
            content=item.content,
            wing=item.wing,
            room=item.room,
            chunk_index=0,
            id_recipe=ID_RECIPE_SOURCE,
            added_by=added_by,
            filed_at=filed_at,
            source_file=f"mempalace:{item.id}",
            content_date=item.content_date,
        )
        for item in read_mempalace_export(root)
    ]
    _import_drawers(store, drawers, [None] * len(drawers), report, meter=meter)


def import_export_bytes(
    store: VaultStore, data: bytes, name: str, *, added_by: str, adopt: bool = False, meter: Meter = quiet
) -> ImportReport:
    """Import an undercroft JSONL export held in memory into the open ``store``, stamped ``added_by``.

    The whole document is parsed before anything is written: a malformed line refuses the import whole.
    """
    parsed = parse_export(data, name)
    report = ImportReport("undercroft-jsonl")
    _import_export(store, parsed, name, report, added_by=added_by, adopt=adopt, meter=meter)
    return report


@dataclass
class PendingImport:
    """An import read from its file and not yet written: its report so far and what it carries."""

    report: ImportReport
    name: str
    parsed: ExportFile | None = None
    mempalace: Path | None = None


def read_import(path: Path, *, identity: str | None, sender: str | None, adopt: bool = False) -> PendingImport:
    """Read an export file, a sealed bundle (opened with ``identity``, its signer pinned by ``sender``) or a
    MemPalace export directory, parsed whole before any vault is opened (``adopt``: the export's id key is to be
    taken, which a MemPalace export lacks)."""
    if path.is_dir():
        if not is_mempalace_export(path):
            raise InvalidExport(f"{path}: a directory, but not a MemPalace export (no 'index.md' table of contents)")
        if adopt:
            raise InvalidExport(f"{path}: --adopt-id-key, but a MemPalace export carries no id key")
        return PendingImport(ImportReport("mempalace-markdown"), str(path), mempalace=path)
    data = path.read_bytes()
    sealed = data.startswith(_BUNDLE_MAGIC)
    report = ImportReport("undercroft-bundle" if sealed else "undercroft-jsonl")
    if sealed:
        if identity is None:
            raise InvalidExport(f"{path.name}: a sealed bundle: give --identity to open it")
        data = _open_sealed(data, identity, sender, report)
    elif identity is not None:
        raise InvalidExport(f"{path.name}: not a sealed bundle, but --identity was given")
    return PendingImport(report, path.name, parsed=parse_export(data, path.name))


def write_import(
    store: VaultStore, pending: PendingImport, *, added_by: str, adopt: bool = False, meter: Meter = quiet
) -> ImportReport:
    """Write ``pending`` into the open ``store``, stamped ``added_by``; its report, completed."""
    if pending.mempalace is not None:
        _import_mempalace(store, pending.mempalace, pending.report, added_by, meter)
    else:
        assert pending.parsed is not None, "a pending import carries an export or a MemPalace directory"
        _import_export(store, pending.parsed, pending.name, pending.report, added_by=added_by, adopt=adopt, meter=meter)
    return pending.report

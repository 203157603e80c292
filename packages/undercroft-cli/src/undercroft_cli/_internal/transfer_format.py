"""The export file: a leading manifest line, then one JSON object per drawer, fact and tunnel (lossless, decrypted).

Line 1 ``{"undercroft_manifest": {"format": "undercroft.export.v1", "vault", "level", "embedder", "exported_at",
"counts": {"drawers", …}}}`` (the documents' ``undercroft_manifest.counts.drawers``; the flat manifest line of
older exports, the same keys at the top level, is still read); then
``{"type": "drawer", "drawer": {...every stored field...}, "embedding": {"scale", "codes"} | null,
"tokens": "<base64>"}`` (``tokens``, present only when the late stage stored a current matrix: the matrix's
plaintext form, `undercroft_store.kernel.token_table.pack_matrix` — encoder name, content digest, shape,
int8 codes — decrypted like the embedding and covered like every line by the export's manifest digest),
``{"type": "kg_entity", ...}``, ``{"type": "kg_fact", "fact": {...}}``, ``{"type": "tunnel", "tunnel": {...}}``.
An export made to keep its drawer ids in a copy (``export --with-id-key``) also carries, right after the
manifest, ``{"type": "id_key", "key": "<base64>"}`` — the vault's blind-index secret
(`undercroft_store.kernel.id_key`) — and counts it (``counts.id_key`` = 1): at most one, and only where declared.
A sealed export wraps the same bytes with its manifest document: ``MAGIC ‖ u32(len(document)) ‖ document ‖
jsonl``, the whole sealed to the recipient, so the attestation travels inside the envelope.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import Any

from undercroft_core import Drawer
from undercroft_core.drawer import Occurrence, TimeMention
from undercroft_core.errors import InvalidInput

from undercroft_cli.errors import Error

__all__ = [
    "EXPORT_FORMAT",
    "ID_KEY_TYPE",
    "MANIFEST_KEY",
    "SEALED_MAGIC",
    "ExportFile",
    "InvalidExport",
    "drawer_from_record",
    "drawer_record",
    "export_manifest",
    "frame_sealed",
    "manifest_line",
    "parse_export",
    "tokens_from_record",
    "unframe_sealed",
]

#: The first line's ``format`` value.
EXPORT_FORMAT = "undercroft.export.v1"
#: The key the first line nests its manifest under.
MANIFEST_KEY = "undercroft_manifest"
#: The first bytes of a sealed export's plaintext (inside the bundle).
SEALED_MAGIC = b"UNDERCROFT-EXPORT-SEALED-1\n"
_RECORD_TYPES = ("drawer", "kg_entity", "kg_fact", "tunnel", "id_key")
#: The record type that carries a vault's id key.
ID_KEY_TYPE = "id_key"
_SKIPPED_FIELDS = ("entities",)  # in memory only: never stored, so never exported


class InvalidExport(Error, InvalidInput):
    """The file is not an export this version reads; the message names the line."""


@dataclass(frozen=True)
class ExportFile:
    """A parsed export: its manifest line and its records by type, in file order."""

    manifest: dict[str, Any]
    drawers: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    entities: list[dict[str, Any]]
    tunnels: list[dict[str, Any]]
    #: The source vault's id key (base64), when the export carries one.
    id_key: str | None = None


def drawer_record(
    drawer: Drawer, scale: float | None, codes: Iterable[int] | None, tokens: bytes | None = None
) -> dict[str, Any]:
    """One drawer line: every stored field (occurrences and time mentions as stored), its int8 embedding and,
    when given, its token matrix's plaintext (base64)."""
    body: dict[str, Any] = {}
    for spec in fields(Drawer):
        if spec.name in _SKIPPED_FIELDS:
            continue
        value = getattr(drawer, spec.name)
        if spec.name in ("occurrences", "time_mentions"):
            value = [item.at_rest() for item in value]
        body[spec.name] = value
    embedding = None if scale is None or codes is None else {"scale": scale, "codes": [int(c) for c in codes]}
    record: dict[str, Any] = {"type": "drawer", "drawer": body, "embedding": embedding}
    if tokens is not None:
        record["tokens"] = base64.b64encode(tokens).decode("ascii")
    return record


def tokens_from_record(record: dict[str, Any]) -> tuple[bytes | None, bool]:
    """``(matrix plaintext or None, whether the line carried a tokens value)`` — a value that is not strict
    base64 yields None with True: the importer re-encodes that drawer (never trusts, never fails on it)."""
    value = record.get("tokens")
    if value is None:
        return None, False
    if not isinstance(value, str):
        return None, True
    try:
        return base64.b64decode(value, validate=True), True
    except (binascii.Error, ValueError):
        return None, True


def drawer_from_record(body: object, *, added_by: str, where: str) -> Drawer:
    """The drawer a line describes, ``added_by`` re-stamped with the importing surface."""
    if not isinstance(body, dict):
        raise InvalidExport(f"{where}: 'drawer' must be an object")
    known = {spec.name for spec in fields(Drawer)} - set(_SKIPPED_FIELDS)
    unknown = sorted(set(body) - known)
    if unknown:
        raise InvalidExport(f"{where}: unknown drawer field(s) {', '.join(unknown)}")
    values = dict(body)
    try:
        values["occurrences"] = tuple(Occurrence(**item) for item in values.get("occurrences") or ())
        values["time_mentions"] = tuple(TimeMention(**item) for item in values.get("time_mentions") or ())
        values["added_by"] = added_by
        return Drawer(**values)
    except (TypeError, InvalidInput) as error:
        raise InvalidExport(f"{where}: {error}") from None


def _lines(data: bytes, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidExport(f"{name}: byte {error.start}: not valid UTF-8") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidExport(f"{name}: line {number} column {error.colno}: invalid JSON: {error.msg}") from None
        if not isinstance(value, dict):
            raise InvalidExport(f"{name}: line {number}: expected a JSON object")
        yield number, value


def manifest_line(manifest: dict[str, Any]) -> dict[str, Any]:
    """The export's first line: ``manifest`` nested under :data:`MANIFEST_KEY`."""
    return {MANIFEST_KEY: manifest}


def export_manifest(line: dict[str, Any]) -> dict[str, Any]:
    """The manifest a first line carries: nested under :data:`MANIFEST_KEY`, or flat (older exports)."""
    nested = line.get(MANIFEST_KEY)
    return nested if isinstance(nested, dict) else line


def parse_export(data: bytes, name: str) -> ExportFile:
    """Parse an export's bytes; ``InvalidExport`` names the line of the first problem."""
    lines = _lines(data, name)
    first = next(lines, None)
    if first is None:
        raise InvalidExport(f"{name}: empty file: not an undercroft export")
    number, line = first
    manifest = export_manifest(line)
    if manifest.get("format") != EXPORT_FORMAT:
        raise InvalidExport(
            f"{name}: line {number}: not an undercroft export (expected format {EXPORT_FORMAT!r}, "
            f"got {manifest.get('format')!r})"
        )
    parsed = ExportFile(manifest, [], [], [], [])
    buckets = {"drawer": parsed.drawers, "kg_fact": parsed.facts, "kg_entity": parsed.entities}
    buckets["tunnel"] = parsed.tunnels
    keys: list[tuple[int, object]] = []
    for number, record in lines:
        kind = record.get("type")
        if kind not in _RECORD_TYPES:
            raise InvalidExport(f"{name}: line {number}: unknown record type {kind!r}")
        if kind == ID_KEY_TYPE:
            keys.append((number, record.get("key")))
            continue
        buckets[str(kind)].append({**record, "_line": number})
    parsed = _with_id_key(parsed, keys, name)
    declared = manifest.get("counts", {}).get("drawers")
    if declared is not None and declared != len(parsed.drawers):
        raise InvalidExport(
            f"{name}: the manifest counts {declared} drawer(s) but the file holds {len(parsed.drawers)}"
        )
    return parsed


def _with_id_key(parsed: ExportFile, keys: list[tuple[int, object]], name: str) -> ExportFile:
    """The id key line checked against the manifest's count: exactly as many as declared (0 or 1), a string."""
    declared = parsed.manifest.get("counts", {}).get(ID_KEY_TYPE, 0)
    if declared not in (0, 1) or len(keys) != declared:
        raise InvalidExport(f"{name}: the manifest counts {declared!r} id key(s) but the file holds {len(keys)}")
    if not keys:
        return parsed
    number, key = keys[0]
    if not isinstance(key, str) or not key:
        raise InvalidExport(f"{name}: line {number}: an id_key record needs a base64 string 'key'")
    return ExportFile(parsed.manifest, parsed.drawers, parsed.facts, parsed.entities, parsed.tunnels, key)


def frame_sealed(document: bytes, jsonl: bytes) -> bytes:
    """The plaintext of a sealed export: magic, the manifest document's length and bytes, then the JSONL."""
    return SEALED_MAGIC + struct.pack(">I", len(document)) + document + jsonl


def unframe_sealed(plaintext: bytes) -> tuple[bytes, bytes]:
    """``(manifest document, jsonl)`` from an opened bundle's plaintext."""
    if not plaintext.startswith(SEALED_MAGIC) or len(plaintext) < len(SEALED_MAGIC) + 4:
        raise InvalidExport("the bundle opened but does not hold an undercroft export")
    start = len(SEALED_MAGIC)
    (length,) = struct.unpack(">I", plaintext[start : start + 4])
    document = plaintext[start + 4 : start + 4 + length]
    if len(document) != length:
        raise InvalidExport("the bundle's manifest document is truncated")
    return document, plaintext[start + 4 + length :]

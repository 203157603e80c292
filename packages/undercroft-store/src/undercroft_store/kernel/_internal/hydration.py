"""Batched verified hydration: one SELECT for many rows, the HMAC checked and the content opened in a tight
loop, and a trusted rebuild of each drawer from its verified meta.

The tag is computed over the exact bytes at rest (id, meta, content) before anything is opened, so a row that
passes it is byte for byte what the write choke point validated and sealed. Re-running every field check of
`Drawer.__post_init__` (and re-encoding the meta to prove it canonical) on such a row re-proves what the key
holder already proved; the rebuild here skips those checks but keeps the parse strict — duplicate keys, a
missing or unknown key, another ``meta_version`` or a value of the wrong type is still refused, as
`RecordTampered`, because a verified row that does not parse is not a row this code wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, Final, TypeVar

from undercroft_core.drawer import (
    META_AT_REST_FIELDS,
    META_VERSION,
    OCCURRENCE_AT_REST_FIELDS,
    TIME_MENTION_AT_REST_FIELDS,
    Drawer,
    Occurrence,
    TimeMention,
)
from undercroft_vault import Domain, IntegrityFailure, compute_tag, constant_time_equal

from undercroft_store.errors import RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_cache import opened_meta
from undercroft_store.kernel._internal.reading import SERVED_COLUMNS, check_served, report_tamper, served_row

__all__ = ["BATCH_ROWS", "hydrate_many", "trusted_drawer"]

#: Bound parameters per SELECT (well under SQLite's limit; larger batches gain nothing measurable).
BATCH_ROWS: Final = 500

_META_KEYS: Final = frozenset(META_AT_REST_FIELDS)
_MENTION_KEYS: Final = frozenset(TIME_MENTION_AT_REST_FIELDS)
_OCCURRENCE_KEYS: Final = frozenset(OCCURRENCE_AT_REST_FIELDS)
_REQUIRED_TEXT: Final = ("added_by", "filed_at", "id_recipe", "room", "wing")
_OPTIONAL_TEXT: Final = (
    "agent",
    "channel",
    "content_date",
    "hall",
    "intended_room",
    "intended_wing",
    "kind",
    "session",
    "source_file",
    "supersedes",
    "updated_at",
)
_DRAWER_FIELDS: Final = tuple(item.name for item in fields(Drawer))
_T = TypeVar("_T")


class _Unparsable(ValueError):
    """A verified meta that is not in the at-rest shape."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise _Unparsable("meta at rest repeats a key")
    return document


def _integer(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Unparsable(f"{what} must be an integer")
    return value


def _text(value: object, what: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise _Unparsable(f"{what} must be a string")
    return value


def _build(cls: type[_T], values: dict[str, Any]) -> _T:
    # Frozen slots dataclasses: set each slot directly, skipping __post_init__ (the tag proved the values).
    instance = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(instance, name, value)
    return instance


def _records(value: object, keys: frozenset[str], what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) and item.keys() == keys for item in value):
        raise _Unparsable(f"{what} at rest must be an array of objects with exactly the keys {sorted(keys)}")
    return value


def _mention(item: dict[str, Any]) -> TimeMention:
    return _build(
        TimeMention,
        {
            "start": _integer(item["start"], "mention start"),
            "end": _integer(item["end"], "mention end"),
            "resolved": _text(item["resolved"], "mention resolved"),
            "resolved_end": _text(item["resolved_end"], "mention resolved_end", optional=True),
            "kind": _text(item["kind"], "mention kind"),
            "text": None,
        },
    )


def _occurrence(item: dict[str, Any]) -> Occurrence:
    return _build(
        Occurrence,
        {
            "filed_at": _text(item["filed_at"], "occurrence filed_at"),
            "content_date": _text(item["content_date"], "occurrence content_date", optional=True),
        },
    )


def trusted_drawer(drawer_id: str, content: str, meta: bytes) -> Drawer:
    """Rebuild a drawer whose row has just passed its HMAC tag: strict structure and types, no re-validation.

    Raises ``ValueError`` (never returns a partial drawer) when the meta is not in the at-rest shape.
    """
    try:
        document = json.loads(meta, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as error:
        raise _Unparsable(f"meta at rest is not JSON: {error}") from None
    if not isinstance(document, dict) or document.keys() != _META_KEYS:
        raise _Unparsable("meta at rest does not have exactly the at-rest keys")
    if _integer(document["meta_version"], "meta_version") != META_VERSION:
        raise _Unparsable(f"unsupported meta_version {document['meta_version']!r}")
    values: dict[str, Any] = {"id": drawer_id, "content": content, "entities": ()}
    for key in _REQUIRED_TEXT:
        values[key] = _text(document[key], key)
    for key in _OPTIONAL_TEXT:
        values[key] = _text(document[key], key, optional=True)
    values["chunk_index"] = _integer(document["chunk_index"], "chunk_index")
    values["normalize_version"] = _integer(document["normalize_version"], "normalize_version")
    values["occurrences"] = tuple(
        _occurrence(item) for item in _records(document["occurrences"], _OCCURRENCE_KEYS, "occurrences")
    )
    values["time_mentions"] = tuple(
        _mention(item) for item in _records(document["time_mentions"], _MENTION_KEYS, "time mentions")
    )
    if values.keys() != set(_DRAWER_FIELDS):  # a new Drawer field must be wired here, never left unset
        raise _Unparsable("the at-rest shape does not cover every drawer field")
    return _build(Drawer, values)


def _verified(
    context: VaultContext, drawer_id: str, meta: bytes, content: bytes, tag: bytes, seq: int | None = None
) -> Drawer:
    expected = compute_tag(context.keys, drawer_id, meta, content)
    if not constant_time_equal(expected, tag):
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r} fails its HMAC tag: run undercroft verify"
        )
    try:
        plain = context.sealer.open(Domain.content(drawer_id), content) if context.sealed else content
        return trusted_drawer(drawer_id, plain.decode("utf-8"), opened_meta(context, seq, drawer_id, meta, tag))
    except (IntegrityFailure, ValueError) as error:  # UnicodeDecodeError is a ValueError
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r} verifies but does not open: {error}"
        ) from None


#: Verified rows a handle remembers for `hydrate_many` before it starts over (a RAM bound: a few MB).
VERIFIED_ROWS: Final = 4_096


def _verified_once(context: VaultContext, seq: int, row: tuple[str, bytes, bytes, bytes]) -> Drawer:
    """`_verified`, unless this handle verified these exact bytes under these exact keys already.

    HMAC, decryption and parsing are deterministic in (keys, id, meta, content, tag): bytes equal to bytes that
    passed are the same verdict, so the stored drawer is served. Any byte that differs — a tamper, an update,
    a re-key — misses and is verified from scratch. The served-row rule still runs on every read.
    """
    held = context.verified_rows.get(seq)
    if held is not None and held[0] is context.keys and held[1] == row:
        return held[2]
    drawer = _verified(context, *row, seq=seq)
    if len(context.verified_rows) >= VERIFIED_ROWS:
        context.verified_rows.clear()
    context.verified_rows[seq] = (context.keys, row, drawer)
    return drawer


def hydrate_many(context: VaultContext, seqs: Sequence[int]) -> dict[int, Drawer]:
    """Verified drawers by ``seq``, in the order given (repeats once); seqs no longer present are skipped.

    Every row is read in one snapshot per batch and verified before it is opened, then held to the served-row
    rule (`reading.check_served`: clear mirrors equal to the covered meta, no id written back after its
    recorded destruction); any failure raises `RecordTampered` and nothing is returned.
    """
    wanted = list(dict.fromkeys(int(seq) for seq in seqs))
    rows: dict[int, Sequence[Any]] = {}
    connection = context.connection
    for first in range(0, len(wanted), BATCH_ROWS):
        batch = wanted[first : first + BATCH_ROWS]
        marks = ",".join("?" * len(batch))
        sql = f"SELECT {SERVED_COLUMNS} FROM drawers WHERE seq IN ({marks})"  # noqa: S608 - marks only
        for row in connection.execute(sql, batch):
            rows[int(row[0])] = row
    result: dict[int, Drawer] = {}
    served: list[tuple[Drawer, Sequence[Any]]] = []
    for seq in wanted:
        row = rows.get(seq)
        if row is not None:
            drawer = result[seq] = _verified_once(context, seq, served_row(context, row))
            served.append((drawer, row))
    check_served(context, served)
    return result

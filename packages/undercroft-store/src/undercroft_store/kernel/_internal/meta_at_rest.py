"""Drawer metadata at rest: on a sealed vault, keyed blind labels in the clear columns and a sealed meta blob.

An hmac-only vault stores its metadata as it always did (plaintext by the operator's choice). A sealed vault
stores, per drawer row:

* ``wing``, ``room``, ``kind``, ``supersedes`` — the columns SQL compares for equality (scope, fence, floor,
  delete, dedup) — as blind values: truncated HMAC-SHA256 under the vault's long-lived blind-index secret
  (`undercroft_vault.BlindIndex`, the one the knowledge graph uses, stored sealed in ``meta.blind_secret``,
  re-sealed by rotation and never regenerated), one kind string per column so equal words in two columns
  do not read as equal. Equality between rows stays visible; the words do not.
* ``meta_json`` — the canonical meta (names, source_file, added_by, hall, dates, mentions, claims, the
  diversion's intended destination) sealed under its own AAD domain ``{id}/meta`` (`Domain.drawer_meta`),
  stored base64 (the tag message refuses a 0x1F byte in the meta).

The row's HMAC tag covers the bytes AT REST (id, sealed meta, sealed content), exactly as it already covered
the sealed content, so every tag check stays a byte check before anything is opened; the meta is opened
after the tag passed. The blind value of a name is deterministic under the never-rotated secret, so the
forward memo (name → blind) and the reverse one (blind → name, learned from names this handle wrote or
opened) never go stale and are bounded only by the number of distinct labels.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from undercroft_core.drawer import Drawer
from undercroft_vault import BlindIndex, Domain, IntegrityFailure, OpenFailed, Sealer, compute_tag, constant_time_equal

from undercroft_store.errors import RecordTampered
from undercroft_store.kernel._internal.context import VaultContext

__all__ = [
    "KG_WINDOWS_KEY",
    "KG_WINDOWS_SEALED",
    "LABEL_FIELDS",
    "METADATA_KEY",
    "METADATA_SEALED",
    "NAMES_KEY",
    "blind_index",
    "covered_labels",
    "label_name",
    "open_meta",
    "open_surface_meta",
    "register_names",
    "reseal_meta",
    "reseal_surface_meta",
    "scope_label_namer",
    "seal_meta",
    "seal_metas",
    "seal_surface_meta",
    "stored_label",
    "stored_labels",
]

#: The ``meta`` key that says a sealed vault's metadata is at rest in this shape (absent: clear, pre-issue-29).
METADATA_KEY: Final = "metadata"
METADATA_SEALED: Final = b"sealed-v1"
#: The ``meta`` key of the sealed label registry (`register_names`).
NAMES_KEY: Final = "label_names"
#: The ``meta`` key that says a sealed vault's knowledge-graph facts are sealed beyond their words
#: (`memory.kg.facts`): ``sealed-v2``, the windows and the details sealed. ``sealed-v1`` (windows only) and an
#: absent key (clear) are older shapes, brought to ``sealed-v2`` by `memory.kg.window_migration` on a writable open.
KG_WINDOWS_KEY: Final = "kg_windows"
KG_WINDOWS_SEALED: Final = b"sealed-v2"
#: The drawer columns that hold a label (clear on hmac-only, blind on sealed), in column order.
LABEL_FIELDS: Final = ("wing", "room", "kind", "supersedes")
# Memo entries one handle keeps (distinct labels: wings, rooms, kinds; supersedes links are not memoised).
_MEMO: Final = 65_536
_MEMOISED: Final = frozenset({"wing", "room", "kind"})
# Label tuples one handle keeps for the served-row rule (`covered_labels`) before it starts over: a RAM bound.
_COVERED: Final = 4_096


def blind_index(context: VaultContext) -> BlindIndex:
    """The vault's blind index, opened once per handle from ``meta.blind_secret`` (wiped at close)."""
    if context.blind is None:
        row = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()
        if row is None:
            raise RecordTampered(f"vault {context.vault_id!r} has no blind-index secret: run undercroft verify")
        try:
            context.blind = BlindIndex.open_sealed(context.sealer, bytes(row[0]))
        except IntegrityFailure as error:
            raise RecordTampered(f"vault {context.vault_id!r}: the blind-index secret does not open: {error}") from None
    return context.blind


def stored_label(context: VaultContext, field: str, value: str | None) -> str | None:
    """What the ``field`` column holds for `value`: the value itself on hmac-only, its blind value on sealed."""
    if value is None or not context.metadata_sealed:
        return value
    key = (field, value)
    found = context.label_memo.get(key)
    if found is None:
        found = blind_index(context).blind(field, value)
        if field in _MEMOISED and len(context.label_memo) < _MEMO:
            context.label_memo[key] = found
            context.label_names[(field, found)] = value
    return found


def stored_labels(context: VaultContext, drawer: Drawer) -> tuple[str | None, str | None, str | None, str | None]:
    """The four label columns of `drawer`'s row, in `LABEL_FIELDS` order."""
    return (
        stored_label(context, "wing", drawer.wing),
        stored_label(context, "room", drawer.room),
        stored_label(context, "kind", drawer.kind),
        stored_label(context, "supersedes", drawer.supersedes),
    )


def covered_labels(context: VaultContext, drawer: Drawer) -> tuple[bytes | None, ...]:
    """`stored_labels` of `drawer` as the bytes its row's columns must hold: what the served-row rule compares.

    Memoised per handle by the four names, so a served hit costs one lookup. The memo belongs to the keys,
    blind index and metadata shape it was computed under: a rotation (new `VaultKeys`), an adopted id key (new
    `BlindIndex`) or the metadata migration starts it over, so no label computed under other keys is reused."""
    under = (context.keys, blind_index(context) if context.metadata_sealed else None)
    memo = context.covered_memo
    if memo is None or memo[0] is not under[0] or memo[1] is not under[1]:
        memo = context.covered_memo = (*under, {})
    names = (drawer.wing, drawer.room, drawer.kind, drawer.supersedes)
    found = memo[2].get(names)
    if found is None:
        found = tuple(None if label is None else label.encode("utf-8") for label in stored_labels(context, drawer))
        if len(memo[2]) >= _COVERED:
            memo[2].clear()
        memo[2][names] = found
    return found


def seal_meta(context: VaultContext, drawer_id: str, plain: bytes) -> bytes:
    """The ``meta_json`` bytes to store: sealed under ``{id}/meta`` on a sealed vault (base64), else `plain`.

    Base64, because the tag message separates its fields with 0x1F and refuses a meta holding that byte: the
    stored text is what the tag covers, unchanged at every tag check."""
    if not context.metadata_sealed:
        return plain
    return binascii.b2a_base64(context.sealer.seal(Domain.drawer_meta(drawer_id), plain), newline=False)


def seal_metas(context: VaultContext, drawer_ids: Sequence[str], plains: Sequence[bytes]) -> list[bytes]:
    """`seal_meta` over a write batch: each meta under its own ``{id}/meta`` domain and nonce, in one
    `Sealer.seal_many` call (the same at-rest shape)."""
    if not context.metadata_sealed:
        return list(plains)
    domains = [Domain.drawer_meta(drawer_id) for drawer_id in drawer_ids]
    return [binascii.b2a_base64(blob, newline=False) for blob in context.sealer.seal_many(domains, plains)]


def open_meta(context: VaultContext, drawer_id: str, stored: bytes) -> bytes:
    """The canonical meta of a row whose tag already passed (`IntegrityFailure` when a sealed blob does not open)."""
    if not context.metadata_sealed:
        return stored
    try:
        blob = binascii.a2b_base64(stored, strict_mode=True)
    except binascii.Error:
        raise OpenFailed("a sealed meta is not base64") from None
    return context.sealer.open(Domain.drawer_meta(drawer_id), blob)


def reseal_meta(old: Sealer, new: Sealer, drawer_id: str, stored: bytes) -> bytes:
    """Rotation: a stored sealed meta opened under `old` and sealed again under `new` (same at-rest shape)."""
    domain = Domain.drawer_meta(drawer_id)
    try:
        blob = binascii.a2b_base64(stored, strict_mode=True)
    except binascii.Error:
        raise OpenFailed("a sealed meta is not base64") from None
    return binascii.b2a_base64(new.seal(domain, old.open(domain, blob)), newline=False)


def _load_registry(context: VaultContext) -> dict[tuple[str, str], str]:
    """The stored registry (``meta.label_names``: blind → name per field, sealed under ``labels``), re-read."""
    row = context.connection.execute("SELECT value FROM meta WHERE key = ?", (NAMES_KEY,)).fetchone()
    found: dict[tuple[str, str], str] = {}
    if row is not None:
        try:
            document = json.loads(context.sealer.open(Domain.label_names(), bytes(row[0])))
        except (IntegrityFailure, ValueError):
            raise RecordTampered(f"vault {context.vault_id!r}: the label registry does not open") from None
        for field, names in document.items():
            for blind, name in names.items():
                # A registry entry is only a hint until it re-derives: one that does not is never used.
                if stored_label(context, field, name) == blind:
                    found[(field, blind)] = name
    context.registry = found
    context.label_names.update(found)
    return found


def register_names(context: VaultContext, pairs: Iterable[tuple[str, str]]) -> None:
    """Inside the caller's write transaction: record ``(field, name)`` pairs not yet in the label registry.

    The registry lets a sealed vault name a blind value no drawer row carries (a trust or retention scope, a
    wing emptied since) and names every label without opening rows. Nothing is written when every pair is
    already known (the common case: one set lookup per pair)."""
    if not context.metadata_sealed:
        return
    registry = context.registry if context.registry is not None else _load_registry(context)
    wanted = {(field, str(stored_label(context, field, name))): name for field, name in pairs}
    if all(key in registry for key in wanted):
        return
    registry = _load_registry(context)  # under the caller's write lock: another handle may have added some
    registry.update(wanted)
    context.label_names.update(wanted)
    document: dict[str, dict[str, str]] = {}
    for (field, blind), name in sorted(registry.items()):
        document.setdefault(field, {})[blind] = name
    sealed = context.sealer.seal(Domain.label_names(), json.dumps(document, sort_keys=True).encode("utf-8"))
    context.connection.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (NAMES_KEY, sealed),
    )


def label_name(context: VaultContext, field: str, stored: str, *, legacy: bool = False) -> str:
    """The name a stored label stands for: itself on hmac-only; on sealed, from the memo, the registry or one
    verified row.

    A row fallback reads one drawer carrying the blind value, checks its tag, opens its meta and proves the
    name blinds to the stored value (a row whose column disagrees with its covered meta is `RecordTampered`).
    ``legacy``: a value nothing names is a label written in the clear before the migration (trust, retention
    rows the migration could not rewrite), returned as found; otherwise `KeyError`.
    """
    if not context.metadata_sealed:
        return stored
    known = context.label_names.get((field, stored))
    if known is not None:
        return known
    known = _load_registry(context).get((field, stored))
    if known is not None:
        return known
    if field not in _MEMOISED:
        raise ValueError(f"label_name serves {sorted(_MEMOISED)}, not {field!r}")
    row = context.connection.execute(
        f"SELECT id, meta_json, content, tag FROM drawers WHERE {field} = ? LIMIT 1",  # noqa: S608 - fixed column
        (stored,),
    ).fetchone()
    if row is None:
        if legacy:
            return stored
        raise KeyError(stored)
    drawer_id, meta, content, tag = str(row[0]), bytes(row[1]), bytes(row[2]), bytes(row[3])
    if not constant_time_equal(compute_tag(context.keys, drawer_id, meta, content), tag):
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r} fails its HMAC tag: run undercroft verify"
        )
    try:
        name = json.loads(open_meta(context, drawer_id, meta)).get(field)
    except (IntegrityFailure, ValueError, AttributeError):
        name = None
    if not isinstance(name, str) or stored_label(context, field, name) != stored:
        raise RecordTampered(
            f"record {drawer_id} in vault {context.vault_id!r}: its {field} column disagrees with its covered meta: "
            "run undercroft verify"
        )
    return name


def seal_surface_meta(context: VaultContext, record_id: str, plain: bytes) -> bytes:
    """A memory-surface row's stored meta: sealed under ``surface/{id}/meta`` (base64) on a sealed vault."""
    if not context.metadata_sealed:
        return plain
    return binascii.b2a_base64(context.sealer.seal(Domain.surface_meta(record_id), plain), newline=False)


def open_surface_meta(context: VaultContext, record_id: str, stored: bytes) -> bytes:
    """A surface row's meta whose tag already passed: opened when sealed; a clear JSON meta (``{``, never a
    base64 character) is a row written before the migration, read as it is."""
    if not context.metadata_sealed or stored.startswith(b"{"):
        return stored
    try:
        blob = binascii.a2b_base64(stored, strict_mode=True)
    except binascii.Error:
        raise OpenFailed("a sealed surface meta is not base64") from None
    return context.sealer.open(Domain.surface_meta(record_id), blob)


def reseal_surface_meta(old: Sealer, new: Sealer, record_id: str, stored: bytes) -> bytes:
    """Rotation: a sealed surface meta re-sealed under `new` (a clear legacy one is returned unchanged)."""
    if stored.startswith(b"{"):
        return stored
    domain = Domain.surface_meta(record_id)
    try:
        blob = binascii.a2b_base64(stored, strict_mode=True)
    except binascii.Error:
        raise OpenFailed("a sealed surface meta is not base64") from None
    return binascii.b2a_base64(new.seal(domain, old.open(domain, blob)), newline=False)


def scope_label_namer(context: VaultContext) -> Callable[[str], str]:
    """``prefix/<wing key>[/<room key>]`` → the same label with the names (a finding a person reads).

    On hmac-only the label is returned as it is. A key nothing names (a forged row) is shown as found."""

    def named(label: str) -> str:
        if not context.metadata_sealed:
            return label
        prefix, _, rest = label.partition("/")
        wing, _, room = rest.partition("/")
        try:
            parts = [label_name(context, "wing", wing, legacy=True)]
            if room:
                parts.append(label_name(context, "room", room, legacy=True))
        except RecordTampered:
            return label
        return "/".join([prefix, *parts])

    return named

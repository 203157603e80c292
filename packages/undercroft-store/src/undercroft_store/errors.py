"""Typed errors of `undercroft_store`.

Three families, so every surface maps them to an exit code without reading messages:

* bad input (`InvalidDrawer`, `InvalidVaultName`, `EmbeddingRefused` — each an
  `undercroft_core.errors.InvalidInput`): refused before anything was written — exit 1;
* run failures (`VaultNotFound`, `VaultExists`, `ReadOnlyStore`, `SchemaMismatch`, `EmbedderMismatch`,
  `StoreClosed`): the request cannot be served as declared — exit 1;
* integrity verdicts (`StoreIntegrityError` and its subclasses, plus the vault's `ChainBroken` and
  `ManifestTampered` re-exported here): something at rest failed verification — exit 2.
"""

from __future__ import annotations

from undercroft_core.errors import IntegrityError, InvalidInput, UndercroftError
from undercroft_vault.errors import ChainBroken, ManifestTampered

__all__ = [
    "AppendCollision",
    "BackupMismatch",
    "BackupNotFound",
    "BackupRefused",
    "CallerRequired",
    "ChainBroken",
    "DatabaseMalformed",
    "DatabaseMissing",
    "DrawerNotFound",
    "EmbedderMismatch",
    "EmbeddingRefused",
    "Error",
    "IndexDamaged",
    "InvalidDrawer",
    "InvalidVaultName",
    "LateStageMissing",
    "ManifestTampered",
    "MirrorUnavailable",
    "NothingToRemember",
    "PlaintextPushRefused",
    "ReadOnlyStore",
    "RecordTampered",
    "RotationInProgress",
    "RotationRefused",
    "RotationUnsupported",
    "SchemaMismatch",
    "StoreClosed",
    "StoreIntegrityError",
    "StrayDatabase",
    "VaultExists",
    "VaultInUse",
    "VaultNotFound",
]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_store`."""


class InvalidDrawer(Error, InvalidInput):
    """A drawer write was refused at the choke point (id shape, names, kind, content bound, type)."""


class CallerRequired(InvalidDrawer, TypeError):
    """A write through the Python facade named no ``added_by``: who writes is a required argument, by design.

    A `TypeError` too, since to a Python caller it is a missing argument; an `InvalidDrawer` (exit 1) to a surface."""


class NothingToRemember(InvalidDrawer):
    """`VaultStore.remember` was given text that normalises to nothing (empty or whitespace only)."""


class InvalidVaultName(Error, InvalidInput):
    """A vault name is not both a safe name and a valid vault id."""


class EmbeddingRefused(Error, InvalidInput):
    """A caller-supplied vector has the wrong dimension, shape or a non-finite value."""


class VaultNotFound(Error):
    """No vault of that name exists in this palace."""


class VaultExists(Error):
    """A vault of that name already exists."""


class ReadOnlyStore(Error):
    """A write was attempted on a store opened read-only."""


class SchemaMismatch(Error):
    """The database's schema version is not the one this build writes (a read-only open cannot migrate)."""


class EmbedderMismatch(Error):
    """The embedder offered is not the vault's recorded one (set UNDERCROFT_FORCE_EMBEDDER=1, then repair)."""


class StoreClosed(Error):
    """The store (or palace) was closed and its keys wiped."""


class StoreIntegrityError(Error, IntegrityError):
    """Base of the store's own integrity verdicts (exit 2 / HTTP 409)."""


class RecordTampered(StoreIntegrityError):
    """A stored record failed its HMAC tag or its sealed blob failed to open: never partial data."""


class DatabaseMissing(StoreIntegrityError):
    """A vault manifest exists but its vault.db does not: "empty" is not "absent"."""


class AppendCollision(StoreIntegrityError):
    """A fresh append save would land on an id that already holds a drawer (or its tombstone): nothing is written.

    Append indices only ever grow, so a collision means ``meta.append_counter`` was moved back (edited, or a
    restored older database row): `undercroft repair` restores it from the drawers that exist.
    """


class IndexDamaged(StoreIntegrityError):
    """A SQLite index disagrees with its table: a scoped read would silently miss rows (`repair` rebuilds it)."""


class DrawerNotFound(Error):
    """No live drawer has that id in this vault."""


class VaultInUse(Error):
    """Another connection holds the vault open: rotation and restore need the only handle."""


class RotationInProgress(VaultInUse):
    """A key rotation holds the vault exclusively and did not finish within the open's bounded wait (exit 1)."""


class StrayDatabase(StoreIntegrityError):
    """The vault directory holds both vault.db and the pre-1.5 palace.db: one is a stray copy (exit 2)."""


class RotationUnsupported(Error):
    """The database holds a table the rotation path does not know: re-keying it would break it silently."""


class RotationRefused(StoreIntegrityError):
    """Rotation refused to re-key a vault failing verify on a leg it would rewrite (evidence would be destroyed)."""


class BackupRefused(StoreIntegrityError):
    """A snapshot (being archived or restored) fails verify: it is not archived, not restored."""


class BackupNotFound(Error):
    """No backup of that id exists for the vault."""


class BackupMismatch(Error):
    """The backup belongs to another vault (its manifest names another vault id)."""


class DatabaseMalformed(StoreIntegrityError):
    """vault.db's bytes are not what this build writes: text that is not UTF-8, a schema object whose SQL is
    not this build's, or a schema SQLite cannot even report (tampering or the disk; never a version skew)."""


class MirrorUnavailable(Error):
    """A remote-index request cannot be served: no mirror was pushed, it holds another embedding space, the
    backend failed, or a push was refused (plaintext not permitted). A run failure (exit 1): a remote index is
    an untrusted accelerator, so nothing it does or fails to do is an integrity verdict."""


class PlaintextPushRefused(MirrorUnavailable, InvalidInput):
    """``index push`` of an hmac-only vault without ``--allow-plaintext``: its at-rest content IS the plaintext."""


class LateStageMissing(Error):
    """``repair --tokens`` on a handle with no late encoder attached (``UNDERCROFT_RERANKER`` is not
    ``colbert``/``colbert-ort``): refused before anything is written, a run failure (exit 1)."""

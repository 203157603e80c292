"""Undercroft's per-vault SQLite store: the write choke point, verified reads, reconciliation, verify, stats."""

from undercroft_store import wiring  # noqa: F401 - fills the kernel's seams (admission, verify legs, resealers)
from undercroft_store.errors import (
    AppendCollision,
    CallerRequired,
    ChainBroken,
    DatabaseMissing,
    DrawerNotFound,
    EmbedderMismatch,
    EmbeddingRefused,
    Error,
    IndexDamaged,
    InvalidDrawer,
    InvalidVaultName,
    ManifestTampered,
    ReadOnlyStore,
    RecordTampered,
    SchemaMismatch,
    StoreClosed,
    StoreIntegrityError,
    VaultExists,
    VaultNotFound,
)
from undercroft_store.facade import Memory, Palace
from undercroft_store.kernel.schema import SCHEMA_VERSION
from undercroft_store.kernel.screening import Bypass, BypassReason, Screen, Screening
from undercroft_store.kernel.verdict import VerifyReport
from undercroft_store.kernel.writes import MAX_CONTENT_BYTES, DrawerWrite, WriteResult
from undercroft_store.palace import DEFAULT_VAULT, VaultStatus
from undercroft_store.stats import VaultStats
from undercroft_store.store import EmbeddingMatrix, VaultStore

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_VAULT",
    "MAX_CONTENT_BYTES",
    "SCHEMA_VERSION",
    "AppendCollision",
    "Bypass",
    "BypassReason",
    "CallerRequired",
    "ChainBroken",
    "DatabaseMissing",
    "DrawerNotFound",
    "DrawerWrite",
    "EmbedderMismatch",
    "EmbeddingMatrix",
    "EmbeddingRefused",
    "Error",
    "IndexDamaged",
    "InvalidDrawer",
    "InvalidVaultName",
    "ManifestTampered",
    "Memory",
    "Palace",
    "ReadOnlyStore",
    "RecordTampered",
    "SchemaMismatch",
    "Screen",
    "Screening",
    "StoreClosed",
    "StoreIntegrityError",
    "VaultExists",
    "VaultNotFound",
    "VaultStats",
    "VaultStatus",
    "VaultStore",
    "VerifyReport",
    "WriteResult",
    "__version__",
]

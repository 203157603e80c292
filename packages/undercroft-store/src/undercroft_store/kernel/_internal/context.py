"""The state one opened vault shares between its modules (store, writes, verify, rotation, backup)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from undercroft_core.drawer import Drawer
from undercroft_core.embedder import Embedder
from undercroft_core.ids import PUBLIC_DRAWER_IDS, DrawerIds
from undercroft_core.model_roles import CrossEncoder, LateEncoder
from undercroft_vault import BlindIndex, Manifest, Sealer, VaultKeys

from undercroft_store.kernel._internal.vault_lock import VaultLock

__all__ = ["VaultContext", "format_instant", "utc_now"]

# The keys and blind index a covered-label memo was computed under, and its entries (names -> column bytes).
_CoveredMemo = tuple[VaultKeys, BlindIndex | None, dict[tuple[str | None, ...], tuple[bytes | None, ...]]]


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(UTC)


def format_instant(moment: datetime) -> str:
    """A UTC instant as ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` (the audit ``at`` and drawer timestamps)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class VaultContext:
    """One open vault: its connection, keys, sealer, manifest and posture. Private to this distribution."""

    vault_id: str
    vault_dir: Path
    connection: sqlite3.Connection
    keys: VaultKeys
    sealer: Sealer
    manifest: Manifest
    embedder: Embedder
    read_only: bool
    clock: Callable[[], datetime] = utc_now
    force_embedder: bool = False
    generation: int = 0
    data_version: int = 0
    embed_failures_at_open: int = 0
    # The rescore stage's cross-encoder, attached by the composition root (None: no stage), and its failure
    # count when attached: a process-wide model is shared by every vault, so each handle counts its own.
    cross_encoder: CrossEncoder | None = None
    rerank_failures_at_attach: int = 0
    # The late-interaction stage's encoder (None: no stage): every write stores each drawer's token matrix
    # (`kernel.token_table`) and searches rescore by MaxSim over the stored matrices (`search.late`).
    late_encoder: LateEncoder | None = None
    late_failures_at_attach: int = 0
    late_backend: str = "onnx"  # the runtime label of late_failures_total (onnx: colbert, ort: colbert-ort)
    # UNDERCROFT_TOK_PQ_MIN, read at attach: past this many stored matrices a write trains the token codebook
    # and every matrix is PQ-coded from then on (`kernel.token_codebook`).
    late_pq_min: int = 256
    late_pq_next: int = 0  # the stored-matrix count this handle next tries to train at (after a try that could not)
    unhealed: list[str] = field(default_factory=list)
    healed: list[str] = field(default_factory=list)
    # Records the manifest anchor was behind when this handle's open re-anchored it: reported once, by the first
    # `read_audit.close_window` on the handle (that call's own lag is 0, the open having closed the window).
    open_anchor_lag: int = 0
    # Append indices this handle allocated and has not yet written: a write of one must create, never replace.
    fresh_appends: set[int] = field(default_factory=set)
    # seq -> (keys, the row's verified bytes, the drawer they gave): a batched read of bytes identical to bytes
    # already verified under the same keys serves the same drawer without re-deriving it (`hydration`).
    verified_rows: dict[int, tuple[VaultKeys, tuple[str, bytes, bytes, bytes], Drawer]] = field(default_factory=dict)
    # The blind-index secret (sealed vaults: opened once, wiped at close) and the label memos
    # (`meta_at_rest`): name -> blind value, and the reverse for the names this handle has seen.
    metadata_sealed: bool = False  # meta.metadata = sealed-v1: blind labels + sealed meta (`meta_at_rest`)
    kg_windows_sealed: bool = False  # meta.kg_windows = sealed-v2: facts' windows and details sealed (`kg.facts`)
    # fact id -> (the row's tag, its opened window): a sealed window opened once per tag (`kg._internal.rows`).
    kg_window_cache: dict[str, tuple[bytes, tuple[str | None, str | None]]] = field(default_factory=dict)
    blind: BlindIndex | None = None
    # The vault's drawer-id recipe (`ids_at_rest`): keyed (hmac-v1) on sealed vaults created since issue 29.
    drawer_ids: DrawerIds = PUBLIC_DRAWER_IDS
    label_memo: dict[tuple[str, str], str] = field(default_factory=dict)
    label_names: dict[tuple[str, str], str] = field(default_factory=dict)
    registry: dict[tuple[str, str], str] | None = None  # the stored label registry as last read (None: not yet)
    # (keys, blind index, names -> covered column bytes) for the served-row rule (`meta_at_rest.covered_labels`):
    # valid only while the handle holds those very keys and blind index.
    covered_memo: _CoveredMemo | None = None
    # seq -> (tag, opened meta) of every row, per generation (`meta_cache`): sealed metadata decrypted once.
    meta_cache: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)
    meta_cache_generation: int | None = None
    scope_index_checked: bool = False  # the per-handle scope-index guard ran clean (`_internal/structure.py`)
    closed: bool = False
    lock: VaultLock | None = None  # the vault directory lock this context holds until it closes

    @property
    def sealed(self) -> bool:
        """True for a sealed vault (content and embeddings encrypted), False for hmac-only."""
        return self.manifest.level == "sealed"

    @property
    def db_path(self) -> Path:
        """The vault database file."""
        return self.vault_dir / "vault.db"

    def now(self) -> str:
        """The injected clock's current instant, formatted."""
        return format_instant(self.clock())

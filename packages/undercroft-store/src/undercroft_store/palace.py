"""`Palace`: the home directory, its master key and the vault lifecycle (create, list, status, delete, open).

Layout: ``$UNDERCROFT_HOME`` (default ``~/.undercroft``, mode 0700) holds ``master.key`` (or ``kdf.salt``
for a passphrase installation) and ``vaults/<name>/{vault.db, vault.json}``; directories are 0700 and
key, manifest and database files 0600. A pre-existing home is narrowed to owner-only when key material or
the first vault is created in it; a home that already holds a vault is never chmod'ed. The master key is
read (or, in a fresh installation on a writable palace, created) on first need and wiped by `close()`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from undercroft_config import settings
from undercroft_core.embedder import Embedder
from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_vault import MasterKey, SecretBytes, open_master_key, validate_vault_id
from undercroft_vault.manifest import LEVELS, Level
from undercroft_vault.masterkey import narrow_home

from undercroft_store.errors import InvalidVaultName, StoreClosed, VaultExists, VaultNotFound
from undercroft_store.kernel import seams
from undercroft_store.kernel._internal.context import utc_now
from undercroft_store.kernel._internal.identity import check_identity
from undercroft_store.kernel._internal.meta_migration import migrate_metadata
from undercroft_store.kernel._internal.opening import DB_FILE, create_vault_files, open_context, wipe_quietly
from undercroft_store.kernel._internal.sqlite import connect_read_only
from undercroft_store.kernel._internal.vault_lock import VaultLock
from undercroft_store.store import VaultStore

__all__ = ["DEFAULT_VAULT", "Palace", "VaultStatus"]

#: The vault `init` creates and commands use when none is named.
DEFAULT_VAULT = "default"
_VAULTS = "vaults"


@dataclass(frozen=True)
class VaultStatus:
    """A vault's on-disk status without opening its keys: files present, level claimed, sizes."""

    name: str
    path: Path
    has_manifest: bool
    has_database: bool
    db_bytes: int
    staged_rotation: bool


def check_vault_name(name: object) -> str:
    """A vault name must be a safe name AND a vault id (1–64 of letters, digits, ``.``, ``_``, ``-``)."""
    try:
        validate_name(name, what="vault")
        return validate_vault_id(name)  # type: ignore[arg-type]
    except InvalidInput as error:
        raise InvalidVaultName(str(error)) from None


class Palace:
    """A palace home directory. Use as a context manager; `close()` wipes the master key."""

    def __init__(
        self,
        home: Path,
        *,
        passphrase: str | None = None,
        read_only: bool = False,
        force_embedder: bool = False,
        clock: Callable[[], datetime] = utc_now,
        random_bytes: Callable[[int], bytes] = os.urandom,
    ) -> None:
        """Bind to ``home``; nothing is read or created until a vault is created or opened."""
        self.home = Path(home).expanduser()
        self.read_only = read_only
        self.force_embedder = force_embedder
        self._passphrase = passphrase
        self._clock = clock
        self._random = random_bytes
        self._master: MasterKey | None = None
        self._closed = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, read_only: bool = False) -> Self:
        """A palace from ``UNDERCROFT_HOME``, ``UNDERCROFT_PASSPHRASE`` and ``UNDERCROFT_FORCE_EMBEDDER``."""
        secret = settings.passphrase(env)
        return cls(
            settings.home(env),
            passphrase=None if secret is None else secret.reveal(),
            read_only=read_only,
            force_embedder=settings.force_embedder(env),
        )

    # --- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Wipe the master key (idempotent)."""
        self._closed = True
        if self._master is not None:
            self._master.wipe()
            self._master = None

    def __enter__(self) -> Self:
        """Use as a context manager."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Wipe on leaving the ``with`` block."""
        self.close()

    def vault_dir(self, name: str) -> Path:
        """The directory of vault ``name`` (validated; it may not exist)."""
        return self.home / _VAULTS / check_vault_name(name)

    def _master_key(self) -> SecretBytes:
        if self._closed:
            raise StoreClosed(f"palace {self.home} is closed")
        if self._master is None:
            self._master = open_master_key(
                self.home,
                passphrase=self._passphrase,
                vaults_exist=bool(self.list_vaults()),
                may_create=not self.read_only,
                random_bytes=self._random,
            )
        return self._master.secret

    def init(self, *, level: Level = "sealed") -> bool:
        """Create the master key and the ``default`` vault if absent; True when the vault was created."""
        if DEFAULT_VAULT in self.list_vaults():
            self._master_key()
            return False
        self.create_vault(DEFAULT_VAULT, level=level)
        return True

    def create_vault(self, name: str, *, level: Level = "sealed") -> Path:
        """Create vault ``name`` (sealed by default, or hmac-only): database first, manifest second."""
        if level not in LEVELS:
            raise InvalidVaultName(f"unknown vault level {level!r}: expected one of {', '.join(LEVELS)}")
        if self.read_only:
            raise StoreClosed("a read-only palace cannot create a vault")
        directory = self.vault_dir(name)
        if directory.exists():
            raise VaultExists(f"vault {name!r} already exists at {directory}")
        first = not self.list_vaults()
        master = self._master_key()
        if first:
            # The key may predate this call (its creator narrowed the home then); a first vault narrows again
            # in case the home was widened since. A home that already holds vaults is never chmod'ed.
            narrow_home(self.home)
        (self.home / _VAULTS).mkdir(mode=0o700, exist_ok=True)
        if first:
            (self.home / _VAULTS).chmod(0o700)
        create_vault_files(directory, name, level, master, self._random)
        return directory

    def list_vaults(self) -> list[str]:
        """Names of every vault with a manifest, sorted."""
        root = self.home / _VAULTS
        if not root.is_dir():
            return []
        return sorted(entry.name for entry in root.iterdir() if (entry / "vault.json").is_file())

    def status(self, name: str) -> VaultStatus:
        """On-disk status of vault ``name``; `VaultNotFound` when neither file exists."""
        directory = self.vault_dir(name)
        manifest, database = directory / "vault.json", directory / DB_FILE
        if not manifest.exists() and not database.exists():
            raise VaultNotFound(f"no vault named {name!r} in {self.home}")
        size = sum(p.stat().st_size for p in directory.glob(DB_FILE + "*") if p.is_file())
        return VaultStatus(
            name, directory, manifest.exists(), database.exists(), size, (directory / "vault.json.next").exists()
        )

    def delete_vault(self, name: str) -> None:
        """Delete vault ``name`` and every file in its directory (irreversible)."""
        if self.read_only:
            raise StoreClosed("a read-only palace cannot delete a vault")
        directory = self.vault_dir(name)
        if not directory.is_dir():
            raise VaultNotFound(f"no vault named {name!r} in {self.home}")
        shutil.rmtree(directory)

    def recorded_embedder(self, name: str) -> str | None:
        """The embedder identity vault ``name`` recorded (None before its first write), read without its keys.

        The label is a routing hint for the opener (which embedder to offer), never a trust decision: the
        open checks the offered identity against the same row, and a vector space swapped by an edit of it
        yields a mismatch or vectors the vault's HMACs still cover."""
        database = self.vault_dir(name) / DB_FILE
        if not database.is_file():
            raise VaultNotFound(f"no vault named {name!r} in {self.home}")
        try:
            opened = connect_read_only(database)
        except sqlite3.DatabaseError:
            return None  # not a database this hint can read: the open itself gives the verdict, in its words
        try:
            row = opened.connection.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        except sqlite3.DatabaseError:
            return None
        finally:
            opened.connection.close()
        return None if row is None else bytes(row[0]).decode("utf-8", "replace")

    def open_vault(self, name: str, embedder: Embedder, *, read_only: bool = False) -> VaultStore:
        """Open and reconcile vault ``name`` with ``embedder`` (read-only when asked or when the palace is).

        The handle holds the vault's shared lock until it closes: it waits (bounded) while a key rotation
        holds the vault, then refuses with `RotationInProgress` (exit 1).
        """
        return self._open_vault_holding(name, embedder, read_only=read_only, lock=None)

    def _open_vault_holding(
        self, name: str, embedder: Embedder, *, read_only: bool, lock: VaultLock | None
    ) -> VaultStore:
        """`open_vault`, adopting an already-held vault lock when ``lock`` is given (rotation's exclusive one)."""
        directory = self.vault_dir(name)
        if not (directory / "vault.json").is_file():
            raise VaultNotFound(f"no vault named {name!r} in {self.home}")
        posture = read_only or self.read_only
        context = open_context(
            directory,
            name,
            self._master_key(),
            embedder,
            read_only=posture,
            clock=self._clock,
            force_embedder=self.force_embedder,
            lock=lock,
        )
        try:
            migrate_metadata(context)  # a pre-issue-29 sealed vault: once, before any drawer is read
            seams.open_migration("kg_windows")(context)  # sealed KG windows (memory.kg.window_migration)
            check_identity(context)
        except BaseException:
            wipe_quietly(context)
            raise
        return VaultStore(context)

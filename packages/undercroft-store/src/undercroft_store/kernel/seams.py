"""The seams features plug into, so the kernel and integrity never import a feature.

Three registries, filled once by the store's composition root (`undercroft_store.wiring`) when the
package is imported, and read by the code that must reach every feature:

- the **write screen** (`install_write_screen` / `write_screen`): the admission screen the write choke point
  runs on every screened write. Nothing installed means writes refuse (`SeamMissing`): a choke point that
  silently skipped admission would let a poisoned write land unscreened.
- the **verify legs** (`register_verify_leg` / `verify_legs`): each feature's check of its own tables
  against the audit chain; verify runs them all and refuses when a declared leg is missing.
- the **resealers** (`register_resealer` / `resealers`): each tagged table's re-key hook, run inside a key
  rotation's one transaction (`Rekeying`); rotation refuses a vault whose non-empty table has none.

- the **repair steps** (`register_repair_step` / `repair_step`): a feature's rebuild of its derived tables,
  run by repair after the drawers are sound (the candidate tier's, `search.tiers.integrity.rebuild_tier`).

Plus the **verifier** behind `VaultStore.verify` (`install_verifier` / `verifier`), so the façade does not
import the integrity package that stands on it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from undercroft_vault import AuditRow, Sealer, VaultKeys

from undercroft_store.errors import Error
from undercroft_store.kernel._internal.context import VaultContext

if TYPE_CHECKING:  # the write items and the report are kernel types too; only annotations need them
    from undercroft_store.kernel.verdict import VerifyReport

__all__ = [
    "Diverted",
    "OpenMigration",
    "Rekeying",
    "RepairStep",
    "Resealer",
    "SeamMissing",
    "VerifyLeg",
    "WriteScreen",
    "install_verifier",
    "install_write_screen",
    "open_migration",
    "register_open_migration",
    "register_repair_step",
    "register_resealer",
    "register_verify_leg",
    "repair_step",
    "resealers",
    "verifier",
    "verify_legs",
    "write_screen",
]


class SeamMissing(Error):
    """A feature the kernel must call was never wired: the operation refuses rather than skip it."""


@dataclass(frozen=True, slots=True)
class Diverted:
    """One diverted write as the choke point reports it: the id it aimed at and the signal codes that
    diverted it (the closed ``SIGNAL_VOCAB`` codes only: never the flagged text, never its offsets)."""

    intended_id: str
    signals: tuple[str, ...]


class WriteScreen(Protocol):
    """The admission screen as the write choke point calls it (`governance.quarantine` provides it)."""

    def divert(
        self, context: VaultContext, batch: list[object]
    ) -> tuple[list[object], Callable[[str], list[AuditRow]] | None, dict[str, Diverted]]:
        """The batch to write, the in-transaction hook (queue rows + records), and slot -> `Diverted`."""
        ...

    def record_commits(self, context: VaultContext, writers: Sequence[str]) -> None:
        """After a screened commit: count each committed write toward its writer's rate."""
        ...


@dataclass(frozen=True)
class VerifyLeg:
    """A feature's verify leg: ``run(context, audit_rows)`` is stored on ``VerifyReport.<field>``."""

    field: str
    run: Callable[[VaultContext, list[AuditRow]], object]


@dataclass(frozen=True)
class Rekeying:
    """What a table's reseal hook receives, inside the rotation's ONE open transaction.

    A hook re-seals its table's sealed columns (open under ``old_sealer``, seal under ``new_sealer``),
    verifies and re-computes each row's tag under ``new_keys``, updates the rows through ``connection``
    (never committing), and returns ``(audit_label, new_tag)`` for every row whose tag an audit record
    echoes: rotation appends those as re-key records, so each row's newest record carries its current
    tag. A row whose tag fails under ``old_keys`` must raise an `IntegrityError`: rotation refuses.
    """

    connection: sqlite3.Connection
    vault_id: str
    sealed: bool
    old_keys: VaultKeys
    new_keys: VaultKeys
    old_sealer: Sealer
    new_sealer: Sealer
    metadata_sealed: bool = False  # the vault's metadata is at rest sealed (`kernel._internal.meta_at_rest`)


#: A table's reseal hook (see `Rekeying`).
Resealer = Callable[[Rekeying], list[tuple[str, bytes]]]

#: A feature's repair step: rebuild its derived tables on an open writable context; a line for the report,
#: or None when the vault holds nothing of the feature.
RepairStep = Callable[[VaultContext], str | None]

#: A feature's at-open migration: run on every opened context before it is handed out (writable: migrate;
#: read-only: say what is pending on ``context.unhealed``), named so a required one can be checked.
OpenMigration = Callable[[VaultContext], None]

_screen: list[WriteScreen] = []
_open_migrations: dict[str, OpenMigration] = {}
_legs: dict[str, VerifyLeg] = {}
_resealers: dict[str, Resealer] = {}
_repair_steps: dict[str, RepairStep] = {}
_verifier: list[Callable[..., VerifyReport]] = []


def install_write_screen(screen: WriteScreen) -> None:
    """Install the admission screen (once; a second, different screen is a wiring error)."""
    if _screen and _screen[0] is not screen:
        raise SeamMissing("a different write screen is already installed")
    _screen[:] = [screen]


def write_screen() -> WriteScreen:
    """The installed admission screen; `SeamMissing` when none is (the write refuses, nothing lands)."""
    if not _screen:
        raise SeamMissing("no admission screen is wired into the write choke point; the write is refused")
    return _screen[0]


def register_verify_leg(leg: VerifyLeg) -> None:
    """Register a feature's verify leg under the report field it fills (one leg per field)."""
    if leg.field in _legs and _legs[leg.field] is not leg:
        raise SeamMissing(f"a verify leg for {leg.field!r} is already registered")
    _legs[leg.field] = leg


def verify_legs(required: Sequence[str]) -> list[VerifyLeg]:
    """The registered legs in field order; `SeamMissing` names every required field no leg fills."""
    missing = [name for name in required if name not in _legs]
    if missing:
        raise SeamMissing(f"verify legs not wired: {', '.join(missing)}; verify refuses to report a partial verdict")
    return [_legs[name] for name in required]


def register_resealer(table: str, hook: Resealer) -> None:
    """Register the re-key hook of one tagged table."""
    if table in _resealers and _resealers[table] is not hook:
        raise SeamMissing(f"a resealer for table {table!r} is already registered")
    _resealers[table] = hook


def resealers() -> Mapping[str, Resealer]:
    """table -> re-key hook, as registered (read-only view)."""
    return dict(_resealers)


def register_repair_step(name: str, step: RepairStep) -> None:
    """Register a feature's repair step under the report field it fills."""
    if name in _repair_steps and _repair_steps[name] is not step:
        raise SeamMissing(f"a repair step for {name!r} is already registered")
    _repair_steps[name] = step


def repair_step(name: str) -> RepairStep:
    """The repair step registered under ``name``; `SeamMissing` when none is (repair refuses a partial run)."""
    if name not in _repair_steps:
        raise SeamMissing(f"repair step {name!r} is not wired; repair refuses to report a partial run")
    return _repair_steps[name]


def register_open_migration(name: str, migration: OpenMigration) -> None:
    """Register a feature's at-open migration under ``name`` (run in registration order)."""
    if name in _open_migrations and _open_migrations[name] is not migration:
        raise SeamMissing(f"an open migration named {name!r} is already registered")
    _open_migrations[name] = migration


def open_migration(name: str) -> OpenMigration:
    """The migration registered under ``name``; `SeamMissing` when none is (the open refuses: a vault must
    never be handed out half-migrated because a feature was not wired)."""
    if name not in _open_migrations:
        raise SeamMissing(f"open migration {name!r} is not wired; the open is refused")
    return _open_migrations[name]


def install_verifier(run: Callable[..., VerifyReport]) -> None:
    """Install the function behind `VaultStore.verify` (``run(context, deep=...)``)."""
    _verifier[:] = [run]


def verifier() -> Callable[..., VerifyReport]:
    """The installed verifier; `SeamMissing` when none is."""
    if not _verifier:
        raise SeamMissing("no verifier is wired into the store; verify refuses")
    return _verifier[0]

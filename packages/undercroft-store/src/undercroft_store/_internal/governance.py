"""Private helpers shared by the governance modules: per-handle state, one audited transaction, the blind index."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from undercroft_vault import AuditRow, BlindIndex

from undercroft_store._internal.context import VaultContext
from undercroft_store.errors import ReadOnlyStore, StoreClosed
from undercroft_store.writes import _advance, _commit_and_anchor

__all__ = ["audited", "check_writable", "context_of", "open_blind", "per_handle", "set_per_handle"]

T = TypeVar("T")
# (kind, id(context)) -> (weak reference to the context, state). A context is an unhashable dataclass, so it
# cannot key a WeakKeyDictionary; the weak reference's callback drops the entry when the handle goes away.
_STATE: dict[tuple[str, int], tuple[weakref.ref[VaultContext], Any]] = {}


def _remember(context: VaultContext, key: tuple[str, int], value: object, state: dict[Any, Any] = _STATE) -> None:
    def drop(ref: weakref.ref[VaultContext]) -> None:
        entry = state.get(key)
        if entry is not None and entry[0] is ref:  # a later handle may reuse the id: drop only our own entry
            del state[key]

    _STATE[key] = (weakref.ref(context, drop), value)


def per_handle(context: VaultContext, kind: str, factory: Callable[[], T]) -> T:
    """The `kind` state of this handle, built by `factory` on first use and dropped with the handle."""
    key = (kind, id(context))
    entry = _STATE.get(key)
    if entry is not None and entry[0]() is context:
        state: T = entry[1]
        return state
    made = factory()
    _remember(context, key, made)
    return made


def set_per_handle(context: VaultContext, kind: str, value: object) -> None:
    """Replace this handle's `kind` state (tests and surfaces installing a configured gate)."""
    _remember(context, (kind, id(context)), value)


def context_of(store: object) -> VaultContext:
    """The open context behind a `VaultStore` (or a context itself); `StoreClosed` when closed."""
    context = store if isinstance(store, VaultContext) else getattr(store, "_context", None)
    if not isinstance(context, VaultContext):
        raise TypeError(f"expected a VaultStore, got {type(store).__name__}")
    if context.closed:
        raise StoreClosed(f"vault {context.vault_id!r} is closed")
    return context


def check_writable(context: VaultContext) -> None:
    """Refuse a read-only handle before any work is done."""
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: writes are refused")


@contextmanager
def audited(context: VaultContext) -> Iterator[list[AuditRow]]:
    """``BEGIN IMMEDIATE``; the body appends `AuditRow`s; they are chained and committed with its rows."""
    check_writable(context)
    connection = context.connection
    records: list[AuditRow] = []
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield records
        head, height = _advance(context, records)
        _commit_and_anchor(context, head, height, len(records))
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


@contextmanager
def open_blind(context: VaultContext) -> Iterator[BlindIndex]:
    """The vault's blind index, opened from its sealed secret and wiped on exit."""
    row = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()
    blind = BlindIndex.open_sealed(context.sealer, bytes(row[0]))
    try:
        yield blind
    finally:
        blind.wipe()

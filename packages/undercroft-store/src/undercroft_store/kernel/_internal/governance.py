"""Private helpers shared by the governance modules: per-handle state, one audited transaction, the blind index."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from undercroft_store.errors import StoreClosed
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.transaction import audited, check_writable, open_blind

__all__ = ["audited", "check_writable", "context_of", "has_per_handle", "open_blind", "per_handle", "set_per_handle"]

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


def has_per_handle(context: VaultContext, kind: str) -> bool:
    """Whether this handle holds `kind` state already (built or installed), without building it."""
    entry = _STATE.get((kind, id(context)))
    return entry is not None and entry[0]() is context


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

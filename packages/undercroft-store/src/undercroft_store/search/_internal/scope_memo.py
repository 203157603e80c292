"""Scope resolution reads the same label queries on every search: remember each answer for one generation."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from undercroft_store.store import VaultStore

__all__ = ["ScopeMemo"]


class ScopeMemo:
    """`VaultStore.scope_seqs` answers memoised per store generation (any committed write drops them all).

    Anything else is read from the store itself, so a scope hook that needs another reader still works.
    """

    def __init__(self, store: VaultStore) -> None:
        """Wrap ``store``; nothing is read yet."""
        self._store = store
        self._generation: int | None = None
        self._answers: dict[tuple[str | None, str | None, str | None, bool], NDArray[np.int64]] = {}

    def scope_seqs(
        self,
        *,
        wing: str | None = None,
        room: str | None = None,
        kind: str | None = None,
        include_quarantine: bool = False,
    ) -> NDArray[np.int64]:
        """The store's answer, read once per generation (a read-only view: callers never mutate it)."""
        generation = self._store.generation
        if generation != self._generation:
            self._answers = {}
            self._generation = generation
        key = (wing, room, kind, include_quarantine)
        found = self._answers.get(key)
        if found is None:
            found = self._store.scope_seqs(wing=wing, room=room, kind=kind, include_quarantine=include_quarantine)
            found.setflags(write=False)
            self._answers[key] = found
        return found

    def __getattr__(self, name: str) -> Any:
        """Everything but ``scope_seqs`` is the store's own."""
        return getattr(self._store, name)

"""Scope resolution reads the same label queries on every search: remember each answer for one generation, and
carry it to the next by the seqs the handle's change feed names (`change_feed`) instead of re-reading it."""

from __future__ import annotations

from typing import Any, Final

import numpy as np
from numpy.typing import NDArray
from undercroft_core.vocabulary import QUARANTINE_WING

from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.search._internal.change_feed import change_feed
from undercroft_store.store import VaultStore

__all__ = ["ScopeMemo"]

_Key = tuple[str | None, str | None, str | None, bool]
#: A change naming more seqs than this re-reads every answer instead of patching it.
_PATCH_MAX: Final = 2_000


def _admits(key: _Key, wing: str, room: str, kind: str | None, quarantine: str) -> bool:
    """Whether a row with these stored columns is in the scope ``key`` (`VaultStore.scope_seqs`'s clauses).

    ``key`` holds the stored forms (blind values on a sealed vault) and ``quarantine`` the review wing's."""
    want_wing, want_room, want_kind, include_quarantine = key
    if want_wing is None and not include_quarantine and wing == quarantine:
        return False
    return (
        (want_wing is None or wing == want_wing)
        and (want_room is None or room == want_room)
        and (want_kind is None or kind == want_kind)
    )


class ScopeMemo:
    """`VaultStore.scope_seqs` answers memoised per store generation: a move the change feed accounts for
    patches each answer with the named rows' clear columns; any other move drops them all.

    Anything else is read from the store itself, so a scope hook that needs another reader still works.
    """

    def __init__(self, store: VaultStore) -> None:
        """Wrap ``store``; nothing is read yet."""
        self._store = store
        self._generation: int | None = None
        self._position: int | None = None
        self._answers: dict[_Key, NDArray[np.int64]] = {}

    def _follow(self, generation: int) -> None:
        feed = change_feed(self._store)
        named, position = feed.since(self._position) if feed is not None else (None, None)
        answers, self._answers = self._answers, {}
        if named is not None and answers and len(named) <= _PATCH_MAX:
            rows = self._rows(named)
            gone = np.fromiter(named, dtype=np.int64, count=len(named))
            quarantine = str(stored_label(self._store._context, "wing", QUARANTINE_WING))
            for key, old in answers.items():
                wing_key, room_key, kind_key, with_queue = key
                stored: _Key = (
                    self._stored("wing", wing_key), self._stored("room", room_key), self._stored("kind", kind_key),
                    with_queue,
                )  # fmt: skip
                fresh = sorted(
                    seq for seq, (wing, room, kind) in rows.items() if _admits(stored, wing, room, kind, quarantine)
                )
                kept = old[~np.isin(old, gone)] if len(gone) else old
                # fresh seqs were all removed from kept above: no repeats; appends (higher seqs) need no sort
                patched = np.concatenate((kept, np.asarray(fresh, dtype=np.int64))) if fresh else kept.copy()
                if fresh and len(kept) and fresh[0] < kept[-1]:
                    patched.sort()
                patched.setflags(write=False)
                self._answers[key] = patched
        self._generation, self._position = generation, position

    def _stored(self, column: str, value: str | None) -> str | None:
        """A label as the column stores it (its blind value on a sealed vault): what the rows are compared with."""
        return None if value is None else str(stored_label(self._store._context, column, value))

    def _rows(self, seqs: set[int]) -> dict[int, tuple[str, str, str | None]]:
        connection = readable(self._store._context).connection
        ordered = sorted(seqs)
        found: dict[int, tuple[str, str, str | None]] = {}
        for first in range(0, len(ordered), 500):
            batch = ordered[first : first + 500]
            sql = f"SELECT seq, wing, room, kind FROM drawers WHERE seq IN ({','.join('?' * len(batch))})"  # noqa: S608
            found.update((int(seq), (wing, room, kind)) for seq, wing, room, kind in connection.execute(sql, batch))
        return found

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
            self._follow(generation)
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

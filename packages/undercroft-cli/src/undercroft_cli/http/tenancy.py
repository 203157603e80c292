"""One handle per vault, opened lazily, cached (bounded), and used by one worker thread at a time.

The HTTP server's event loop never touches a store: every request's store work runs in a worker thread (a
pool sized for the machine) holding that vault's lock, so one vault's requests are serialised — the handle's
SQLite connection and caches are single-threaded — while another vault's run beside them. Writes from other
processes are serialised by the store's own choke point and vault lock. An idle handle may be closed to keep
the cache bounded; the ``--vault`` vault (the one ``/mcp`` serves) is pinned. Operations that need the only
handle (rotate, restore, delete) close the cached one first, under the same lock.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import anyio
import anyio.to_thread
from undercroft_core.embedder import Embedder
from undercroft_store import Palace
from undercroft_store.governance.admission import Advisor

from undercroft_cli._internal.composition import attach_reranker, install_advisor, vault_embedder
from undercroft_cli.mcp.tools import ToolSession

if TYPE_CHECKING:
    from undercroft_cli.http.live import Live

__all__ = ["MAX_OPEN_HANDLES", "SURFACE", "Handle", "Tenancy", "worker_count"]

T = TypeVar("T")

SURFACE = "v1"
"""The handler-stamped ``added_by`` of every /v1 write (MCP over HTTP stamps ``mcp``, as stdio does)."""

MAX_OPEN_HANDLES = 64
"""Cached vault handles beyond which the least recently used idle one is closed."""


def worker_count() -> int:
    """Store worker threads: two per core, at least four (SQLite releases the GIL for I/O and hashing)."""
    return max(4, 2 * (os.cpu_count() or 1))


@dataclass
class Handle:
    """One vault's lock and, while open, its session (store, embedder, posture, surface stamp)."""

    name: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    session: ToolSession | None = None
    pinned: bool = False


class Tenancy:
    """The palace's vault handles for one serve-http process (read-only when the process is)."""

    def __init__(
        self,
        palace: Palace,
        embedder: Embedder,
        *,
        read_only: bool,
        pinned: str | None = None,
        max_open: int = MAX_OPEN_HANDLES,
        advisor: Advisor | None = None,
    ) -> None:
        """Serve ``palace``'s vaults with ``embedder``; ``pinned`` is the ``--vault`` vault, never evicted."""
        self.palace = palace
        self.embedder = embedder
        self.read_only = read_only
        self.pinned = pinned
        self.max_open = max_open
        self.advisor = advisor  # the tier-2 admission advisor, in front of every handle's writes when declared
        self._handles: OrderedDict[str, Handle] = OrderedDict()
        self._table = threading.Lock()  # guards _handles, never held across store work
        self._limiter = anyio.CapacityLimiter(worker_count())
        self.palace_lock = threading.Lock()  # vault creation, deletion and listing
        self.live: Live | None = None  # the telemetry build's broker and sampler (http.live), else None

    def _handle(self, name: str) -> Handle:
        with self._table:
            handle = self._handles.get(name)
            if handle is None:
                handle = Handle(name, pinned=name == self.pinned)
                self._handles[name] = handle
            self._handles.move_to_end(name)
            return handle

    def embedder_for(self, name: str) -> Embedder:
        """The vault's own external space when it recorded one, else the server's embedder."""
        return vault_embedder(self.palace, name, self.embedder)

    def _open(self, handle: Handle) -> ToolSession:
        if handle.session is None:
            embedder = self.embedder_for(handle.name)
            store = self.palace.open_vault(handle.name, embedder, read_only=self.read_only)
            install_advisor(store, self.advisor)
            attach_reranker(store)  # one process-wide model: each vault's handle counts its own failures
            handle.session = ToolSession(store, embedder, read_only=self.read_only, surface=SURFACE)
            self._evict_idle()
        return handle.session

    def _evict_idle(self) -> None:
        """Close least recently used handles that nobody is using while more than ``max_open`` are open."""
        with self._table:
            open_handles = [h for h in self._handles.values() if h.session is not None]
        excess = len(open_handles) - self.max_open
        for handle in open_handles:
            if excess <= 0:
                break
            if handle.pinned or not handle.lock.acquire(blocking=False):
                continue
            try:
                self._close(handle)
                excess -= 1
            finally:
                handle.lock.release()

    @staticmethod
    def _close(handle: Handle) -> None:
        if handle.session is not None:
            session, handle.session = handle.session, None
            session.store.close()

    @contextmanager
    def session(self, name: str) -> Iterator[ToolSession]:
        """The vault's session, opened if needed, held exclusively by this thread for the block."""
        handle = self._handle(name)
        with handle.lock:
            yield self._open(handle)

    @contextmanager
    def closed(self, name: str) -> Iterator[None]:
        """Hold ``name``'s lock with its cached handle closed (rotation, restore and delete need the only handle)."""
        handle = self._handle(name)
        with handle.lock:
            self._close(handle)
            yield

    def open_vaults(self) -> list[str]:
        """The vaults whose handle is open now (least recently used first)."""
        with self._table:
            return [name for name, handle in self._handles.items() if handle.session is not None]

    async def run(self, work: Callable[[], T]) -> T:
        """Run blocking store ``work`` on a worker thread (the event loop never waits on SQLite)."""
        return await anyio.to_thread.run_sync(work, limiter=self._limiter)

    def close(self) -> None:
        """Close every cached handle (server shutdown)."""
        with self._table:
            handles = list(self._handles.values())
        for handle in handles:
            with handle.lock:
                self._close(handle)

"""`UndercroftClient` and `AsyncUndercroftClient`: the typed /v1 clients, built only through the transport policy.

Every route is a `Call` described once in `EngineCalls` (``client.calls``); ``client.send(call)`` sends it and
returns its typed result or raises the one error class the reply is. The everyday routes are also methods of the
client itself (``client.search(...)``). Both clients are policed like every outward path: https to any host,
http only to loopback, a CA pin replaces the public roots, refused at construction, no override.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from undercroft_net._internal.engine_calls import EventParser, interpret, prepare_stream
from undercroft_net.client import policed_async_client, policed_client
from undercroft_net.engine.calls import Call, EngineCalls
from undercroft_net.engine.models import SearchResult, StreamFrame, VaultCreated, VerifyReport, WriteOutcome
from undercroft_net.engine.replies import Drawer, ForgetReceipt, ImportCounts, VaultStats
from undercroft_net.policy import load_pin, police

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "AsyncUndercroftClient", "UndercroftClient"]

T = TypeVar("T")

DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024 * 1024
"""The largest reply the clients accept (an export of a large vault); above it nothing is returned."""


def _settings(url: str, token: str | None, ca: str | Path | None, variable: str) -> tuple[Any, dict[str, str]]:
    pin = None if ca is None else load_pin(ca, variable=f"{variable}_CA")
    endpoint = police(url, variable=variable, pin=pin)
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return endpoint, headers


class _Client:
    def __init__(self, assertion_secret: str | None, clock: Callable[[], float]) -> None:
        self.calls = EngineCalls(assertion_secret=assertion_secret, clock=clock)
        """Every route's `Call`: ``client.send(client.calls.kg_query("acme", "alice"))``."""
        self._secret, self._clock = assertion_secret, clock


class UndercroftClient(_Client):
    """A synchronous client of one engine's /v1 surface."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        assertion_secret: str | None = None,
        ca: str | Path | None = None,
        timeout: float = 60.0,
        variable: str = "UNDERCROFT_ENGINE_URL",
        clock: Callable[[], float] = time.time,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        """Connect to ``url`` with the bearer ``token``; mint per-vault assertions with ``assertion_secret``.

        ``ca`` pins the engine's root (a PEM file: it replaces the public roots); ``variable`` names the URL's
        declaration in a refusal's message.
        """
        super().__init__(assertion_secret, clock)
        endpoint, headers = _settings(url, token, ca, variable)
        self._http = policed_client(endpoint, timeout=timeout, headers=headers, max_response_bytes=max_response_bytes)

    def send(self, call: Call[T]) -> T:
        """Send ``call``; its typed result, or the error class its reply is."""
        request = call.request
        response = self._http.request(
            request.method, request.path, params=request.query, content=request.content, headers=request.headers
        )
        return call.convert(interpret(request, response.status_code, response.content))

    def stream(self, vault: str) -> Iterator[StreamFrame]:
        """``GET /v1/vaults/{vault}/stream``: the vault's live events, as they happen, until the server ends the
        stream or the caller stops iterating (heartbeats are read and skipped; a refusal raises its error)."""
        request = prepare_stream(vault, secret=self._secret, clock=self._clock)
        with self._http.stream(request.method, request.path, headers=request.headers) as response:
            if response.status_code != 200:
                interpret(request, response.status_code, response.read())
            parser = EventParser()
            for line in response.iter_lines():
                frame = parser.feed(line)
                if frame is not None:
                    yield StreamFrame(*frame)

    def create_vault(self, vault: str, *, level: str | None = None, embedder: str | None = None) -> VaultCreated:
        """Create a vault (see `EngineCalls.create_vault`)."""
        return self.send(self.calls.create_vault(vault, level=level, embedder=embedder))

    def save(self, vault: str, text: str, **fields: Any) -> WriteOutcome:
        """Save a drawer; `Quarantined` when diverted (see `EngineCalls.save`)."""
        return self.send(self.calls.save(vault, text, **fields))

    def search(self, vault: str, query: str, **fields: Any) -> SearchResult:
        """Search a vault (see `EngineCalls.search`)."""
        return self.send(self.calls.search(vault, query, **fields))

    def get_drawer(self, vault: str, drawer_id: str) -> Drawer:
        """One whole drawer."""
        return self.send(self.calls.get_drawer(vault, drawer_id))

    def stats(self, vault: str) -> VaultStats:
        """The vault's stats."""
        return self.send(self.calls.stats(vault))

    def verify(self, vault: str) -> VerifyReport:
        """Verify the vault; `IntegrityError` when it fails."""
        return self.send(self.calls.verify(vault))

    def export(self, vault: str, *, with_id_key: bool = False) -> bytes:
        """The vault's NDJSON export (``with_id_key``: with its id key, for a copy that keeps drawer ids)."""
        return self.send(self.calls.export(vault, with_id_key=with_id_key))

    def import_export(self, vault: str, ndjson: bytes, *, adopt_id_key: bool = False) -> ImportCounts:
        """Import an export into ``vault`` (``adopt_id_key``: take its id key first; the vault must be empty)."""
        return self.send(self.calls.import_export(vault, ndjson, adopt_id_key=adopt_id_key))

    def forget(self, vault: str, ids: Sequence[str], *, reason: str | None = None) -> ForgetReceipt:
        """Destroy drawers through the chain; the receipt."""
        return self.send(self.calls.forget(vault, ids, reason=reason))

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> UndercroftClient:
        """Use as a context manager."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Close on leaving the ``with`` block."""
        self.close()


class AsyncUndercroftClient(_Client):
    """The asyncio twin of `UndercroftClient`: the same calls, awaited."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        assertion_secret: str | None = None,
        ca: str | Path | None = None,
        timeout: float = 60.0,
        variable: str = "UNDERCROFT_ENGINE_URL",
        clock: Callable[[], float] = time.time,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        """See `UndercroftClient`."""
        super().__init__(assertion_secret, clock)
        endpoint, headers = _settings(url, token, ca, variable)
        self._http = policed_async_client(
            endpoint, timeout=timeout, headers=headers, max_response_bytes=max_response_bytes
        )

    async def send(self, call: Call[T]) -> T:
        """Send ``call``; its typed result, or the error class its reply is."""
        request = call.request
        response = await self._http.request(
            request.method, request.path, params=request.query, content=request.content, headers=request.headers
        )
        return call.convert(interpret(request, response.status_code, response.content))

    async def stream(self, vault: str) -> AsyncIterator[StreamFrame]:
        """The async twin of `UndercroftClient.stream`: the vault's live events as they happen."""
        request = prepare_stream(vault, secret=self._secret, clock=self._clock)
        async with self._http.stream(request.method, request.path, headers=request.headers) as response:
            if response.status_code != 200:
                interpret(request, response.status_code, await response.aread())
            parser = EventParser()
            async for line in response.aiter_lines():
                frame = parser.feed(line)
                if frame is not None:
                    yield StreamFrame(*frame)

    async def create_vault(self, vault: str, *, level: str | None = None, embedder: str | None = None) -> VaultCreated:
        """Create a vault."""
        return await self.send(self.calls.create_vault(vault, level=level, embedder=embedder))

    async def save(self, vault: str, text: str, **fields: Any) -> WriteOutcome:
        """Save a drawer; `Quarantined` when diverted."""
        return await self.send(self.calls.save(vault, text, **fields))

    async def search(self, vault: str, query: str, **fields: Any) -> SearchResult:
        """Search a vault."""
        return await self.send(self.calls.search(vault, query, **fields))

    async def get_drawer(self, vault: str, drawer_id: str) -> Drawer:
        """One whole drawer."""
        return await self.send(self.calls.get_drawer(vault, drawer_id))

    async def stats(self, vault: str) -> VaultStats:
        """The vault's stats."""
        return await self.send(self.calls.stats(vault))

    async def verify(self, vault: str) -> VerifyReport:
        """Verify the vault; `IntegrityError` when it fails."""
        return await self.send(self.calls.verify(vault))

    async def export(self, vault: str, *, with_id_key: bool = False) -> bytes:
        """The vault's NDJSON export (``with_id_key``: with its id key, for a copy that keeps drawer ids)."""
        return await self.send(self.calls.export(vault, with_id_key=with_id_key))

    async def import_export(self, vault: str, ndjson: bytes, *, adopt_id_key: bool = False) -> ImportCounts:
        """Import an export into ``vault`` (``adopt_id_key``: take its id key first; the vault must be empty)."""
        return await self.send(self.calls.import_export(vault, ndjson, adopt_id_key=adopt_id_key))

    async def forget(self, vault: str, ids: Sequence[str], *, reason: str | None = None) -> ForgetReceipt:
        """Destroy drawers through the chain; the receipt."""
        return await self.send(self.calls.forget(vault, ids, reason=reason))

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncUndercroftClient:
        """Use as an async context manager."""
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Close on leaving the ``async with`` block."""
        await self.aclose()

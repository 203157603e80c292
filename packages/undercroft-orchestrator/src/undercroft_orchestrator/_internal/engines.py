"""The hop to the engines: every URL through undercroft-net's transport policy, every request signed for one vault.

An instance URL is policed when it is registered (cleartext beyond loopback is refused then, not at the first
request), and again by the policed client on every request. ``UNDERCROFT_ORCH_ENGINE_CA`` is loaded once, at
start, and replaces the public roots for every engine. Each call carries the engine's bearer and, when the
engine was registered with one, a fresh per-vault assertion minted for exactly the vault the call addresses.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, NoReturn
from urllib.parse import quote

from undercroft_net import CaPin, Endpoint, TransportRefused, police
from undercroft_net import Error as NetError
from undercroft_net.client import policed_async_client
from undercroft_net.engine.assertion import ASSERTION_HEADER, mint_assertion

from undercroft_orchestrator._internal.meter import Meter
from undercroft_orchestrator._internal.state import Instance
from undercroft_orchestrator.errors import EngineFailed, Refused

__all__ = ["PALACE_SCOPE", "Engines", "Health", "police_instance_url", "raise_for"]

PALACE_SCOPE = "*"
"""The vault an assertion names for palace-wide calls (listing vaults)."""

_STREAM_BOUND = 64 * 1024 * 1024 * 1024  # an export is streamed through; the engine bounds imports itself
_JSON_BOUND = 64 * 1024 * 1024


def police_instance_url(name: str, url: str, pin: CaPin | None) -> Endpoint:
    """``url`` accepted by the transport policy for instance ``name``, or `Refused` with the policy's reason."""
    try:
        return police(url.rstrip("/"), variable=f"instance {name!r} URL", pin=pin)
    except TransportRefused as refused:
        raise Refused(str(refused)) from None


class Health:
    """One instance's health: ``healthy | unhealthy | unreachable | refused`` and the reason when not healthy."""

    def __init__(self, name: str, state: str, reason: str | None = None) -> None:
        """Record the verdict."""
        self.name, self.state, self.reason = name, state, reason

    def as_dict(self) -> dict[str, object]:
        """The admin plane's JSON shape."""
        shape: dict[str, object] = {"name": self.name, "healthy": self.state == "healthy", "state": self.state}
        if self.reason is not None:
            shape["reason"] = self.reason
        return shape


class Engines:
    """Policed clients to the registered engines, one per instance, built on first use."""

    def __init__(self, pin: CaPin | None, *, timeout: float = 60.0, meter: Meter | None = None) -> None:
        """``pin`` is the loaded ``UNDERCROFT_ORCH_ENGINE_CA`` (``None``: the public roots)."""
        self.pin = pin
        self.timeout = timeout
        self.meter = meter or Meter()
        self._clients: dict[tuple[str, str], Any] = {}

    def _client(self, instance: Instance) -> Any:
        key = (instance.name, instance.url)
        client = self._clients.get(key)
        if client is None:
            endpoint = police_instance_url(instance.name, instance.url, self.pin)
            client = policed_async_client(
                endpoint, timeout=self.timeout, max_response_bytes=_STREAM_BOUND, retries=1, max_redirects=0
            )
            self._clients[key] = client
        return client

    async def aclose(self) -> None:
        """Close every client."""
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    @staticmethod
    def _headers(instance: Instance, vault: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        headers = dict(extra or {})
        if instance.bearer:
            headers["Authorization"] = f"Bearer {instance.bearer}"
        if instance.assertion_secret:
            headers[ASSERTION_HEADER] = mint_assertion(instance.assertion_secret, vault, time.time())
        return headers

    @staticmethod
    def path(vault: str, subpath: str = "") -> str:
        """``/v1/vaults/{vault}/{subpath}``, every segment percent-encoded (a segment cannot smuggle a slash)."""
        tail = "/".join(quote(part, safe="") for part in subpath.split("/")) if subpath else ""
        return f"/v1/vaults/{quote(vault, safe='')}" + (f"/{tail}" if tail else "")

    async def send(
        self,
        instance: Instance,
        vault: str,
        method: str,
        path: str,
        *,
        query: bytes = b"",
        content: bytes | AsyncIterator[bytes] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send one request for ``vault`` and return the streaming response (the caller closes it).

        Raises `EngineFailed` (status 0) when the engine cannot be reached or the policy refuses the hop.
        """
        client = self._client(instance)
        url = path + (f"?{query.decode('latin-1')}" if query else "")
        request = client.build_request(method, url, content=content, headers=self._headers(instance, vault, headers))
        try:
            response = await client.send(request, stream=True)
        except TransportRefused as refused:
            self.meter.engine("refused")
            raise EngineFailed(f"the hop to instance {instance.name!r} is refused: {refused}", kind="refused") from None
        except NetError as error:
            raise EngineFailed(
                f"instance {instance.name!r} answered outside the policy: {error}", kind="refused"
            ) from None
        except Exception as error:  # httpx's transport errors: this module may not import httpx to name them
            if type(error).__module__.split(".")[0] not in ("httpx", "httpcore", "anyio", "ssl"):
                raise
            if _certificate_refused(error):
                self.meter.engine("refused")
                pinned = "the pinned UNDERCROFT_ORCH_ENGINE_CA" if self.pin is not None else "the public roots"
                message = (
                    f"the hop to instance {instance.name!r} is refused: its certificate does not verify against "
                    f"{pinned}"
                )
                raise EngineFailed(message, kind="refused") from None
            self.meter.engine("unreachable")
            message = f"instance {instance.name!r} is unreachable: {type(error).__name__}"
            raise EngineFailed(message, kind="unreachable") from None
        self.meter.engine("ok" if response.status_code < 400 else "error")
        return response

    async def call(
        self,
        instance: Instance,
        vault: str,
        method: str,
        subpath: str = "",
        *,
        body: object = None,
        content: bytes | AsyncIterator[bytes] | None = None,
        query: bytes = b"",
        path: str | None = None,
    ) -> tuple[int, Any]:
        """One JSON call: ``(status, decoded body)``; `EngineFailed` for any status ≥ 400."""
        headers = {}
        if body is not None:
            content = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        response = await self.send(
            instance, vault, method, path or self.path(vault, subpath), query=query, content=content, headers=headers
        )
        try:
            raw = await response.aread()
        finally:
            await response.aclose()
        if len(raw) > _JSON_BOUND:
            raise EngineFailed(f"instance {instance.name!r} answered {len(raw)} bytes, above the JSON bound")
        decoded = _decode(raw)
        if response.status_code >= 400:
            _fail(response.status_code, decoded, instance.name, f"{method} {subpath or path}")
        return response.status_code, decoded

    async def health(self, instance: Instance) -> Health:
        """Probe ``/healthz`` and a credentialed palace call: the four-way verdict."""
        try:
            police_instance_url(instance.name, instance.url, self.pin)
        except Refused as refused:
            return Health(instance.name, "refused", str(refused))
        try:
            status, body = await self.call(instance, PALACE_SCOPE, "GET", path="/healthz")
            if not (isinstance(body, dict) and body.get("ok") is True):
                return Health(instance.name, "unhealthy", f"/healthz answered {status} without ok")
            await self.call(instance, PALACE_SCOPE, "GET", path="/v1/vaults")
        except EngineFailed as failed:
            if failed.kind != "status":
                return Health(instance.name, failed.kind, str(failed))
            if failed.status == 401:
                return Health(instance.name, "unhealthy", "the engine refused the orchestrator's credentials (401)")
            return Health(instance.name, "unhealthy", str(failed))
        return Health(instance.name, "healthy")

    async def holds(self, instance: Instance, vault: str) -> bool:
        """True when ``instance`` reports holding ``vault`` (its stats answer 200; 404 is no)."""
        try:
            await self.call(instance, vault, "GET", "stats")
        except EngineFailed as failed:
            if failed.status == 404:
                return False
            raise
        return True


def _certificate_refused(error: BaseException) -> bool:
    """Whether a transport failure was a certificate verdict (this process declining to speak, not an outage)."""
    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            return False
        if type(seen).__name__ == "SSLCertVerificationError" or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def raise_for(response: Any, instance: str, what: str) -> NoReturn:
    """Read an error response's body (bounded) and raise it as `EngineFailed`."""
    raw = b""
    async for chunk in response.aiter_raw():
        raw += chunk
        if len(raw) > _JSON_BOUND:
            break
    _fail(response.status_code, _decode(raw), instance, what)


def _fail(status: int, decoded: Any, instance: str, what: str) -> NoReturn:
    raise EngineFailed(
        f"instance {instance!r} answered {status} to {what}: {_summary(decoded)}", status=status, body=decoded
    )


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")[:2000]


def _summary(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("error") or body.get("detail") or json.dumps(body)[:300])
    return str(body)[:300]

"""The policed HTTP clients: httpx sync and async clients that can only be built through the transport policy.

What a policed client guarantees, whoever holds it:

* It was built from an :class:`~undercroft_net.policy.Endpoint` that :func:`~undercroft_net.policy.police`
  accepted, and it is re-policed at construction (a hand-made ``Endpoint`` gains nothing).
* Every request it sends — the first, an absolute URL passed to ``get()``, each redirect hop — is policed
  again in its transport, and none may step from the declared https endpoint down to http. A refused
  redirect raises :class:`~undercroft_net.errors.TransportRefused`; it is never followed.
* TLS verifies against the endpoint's CA pin alone when one is declared, else certifi's public roots — never
  a root, proxy or key-log file taken from the environment (``trust_env=False``; a proxy is an argument,
  policed like any outward URL).
* Finite timeouts always; a body above ``max_response_bytes`` raises
  :class:`~undercroft_net.errors.ResponseTooLarge` and no prefix of it is ever returned. Bodies travel
  uncompressed (``Accept-Encoding: identity``) and an encoded one is refused, because a compressed body
  cannot be bounded before it is decoded.
* Retries happen only for idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) after a transport
  failure; a POST or PATCH is sent at most once, and a failed certificate check is never retried.
"""

from __future__ import annotations

import asyncio
import math
import ssl
import time
from collections.abc import AsyncIterator, Iterator, Mapping

import httpx

from undercroft_net.errors import ResponseRefused, ResponseTooLarge, TransportRefused
from undercroft_net.policy import Endpoint, _redact, police, ssl_context

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT_SECONDS",
    "IDEMPOTENT_METHODS",
    "policed_async_client",
    "policed_client",
]

DEFAULT_TIMEOUT_SECONDS = 10.0
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
DEFAULT_RETRIES = 2
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
_BACKOFF_SECONDS = 0.05
_MAX_RETRIES = 10


class _Guard:
    """The per-request checks both transports share: police the URL, bound the response."""

    def __init__(self, endpoint: Endpoint, max_response_bytes: int) -> None:
        self.endpoint = endpoint
        self.bound = max_response_bytes

    def check_request(self, request: httpx.Request) -> None:
        url = str(request.url)
        if self.endpoint.scheme == "https" and request.url.scheme != "https":
            rule = "a request from an https endpoint (a redirect) may not use http"
            raise TransportRefused(self.endpoint.variable, _redact(url.split("?", 1)[0]), rule)
        target = police(url, variable=self.endpoint.variable, pin=self.endpoint.pin)
        if request.url.raw_host.decode("ascii", "replace").lower() != target.host:
            # The policy's parser and httpx's must agree on the host they rule on and connect to (raw_host: the
            # ASCII form httpx connects to; .host would show an xn-- name decoded).
            raise TransportRefused(self.endpoint.variable, target.origin, "URL parsers disagree about the host")

    def check_response(self, response: httpx.Response, request: httpx.Request) -> None:
        url = self.url(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise ResponseRefused(
                f"response from {url} refused: Content-Encoding {encoding!r} was not requested "
                "(a compressed body cannot be bounded before it is decoded)"
            )
        declared = response.headers.get("content-length")
        if request.method.upper() == "HEAD":
            return  # a HEAD answer declares the length of a body it does not carry
        if declared is not None and declared.strip().isdigit() and int(declared) > self.bound:
            raise ResponseTooLarge(url, self.bound, int(declared))

    def url(self, request: httpx.Request) -> str:
        return str(request.url.copy_with(query=None))


class _BoundedStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, bound: int, url: str) -> None:
        self._inner, self._bound, self._url = inner, bound, url

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        for chunk in self._inner:
            seen += len(chunk)
            if seen > self._bound:
                raise ResponseTooLarge(self._url, self._bound)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _AsyncBoundedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, bound: int, url: str) -> None:
        self._inner, self._bound, self._url = inner, bound, url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._bound:
                raise ResponseTooLarge(self._url, self._bound)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _certificate_failure(error: BaseException) -> bool:
    """Whether a transport error was a TLS verdict (retrying cannot change it)."""
    seen: BaseException | None = error
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _attempts(request: httpx.Request, retries: int) -> int:
    replayable = isinstance(request.stream, httpx.ByteStream)
    return retries + 1 if request.method.upper() in IDEMPOTENT_METHODS and replayable else 1


class _PolicedTransport(httpx.BaseTransport):
    def __init__(self, guard: _Guard, inner: httpx.HTTPTransport, retries: int) -> None:
        self._guard, self._inner, self._retries = guard, inner, retries

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._guard.check_request(request)
        attempts = _attempts(request, self._retries)
        for attempt in range(attempts):
            try:
                response = self._inner.handle_request(request)
            except httpx.TransportError as error:
                if attempt + 1 >= attempts or _certificate_failure(error):
                    raise
                time.sleep(_BACKOFF_SECONDS * 2**attempt)
                continue
            try:
                self._guard.check_response(response, request)
            except BaseException:
                response.close()
                raise
            assert isinstance(response.stream, httpx.SyncByteStream)
            bounded = _BoundedStream(response.stream, self._guard.bound, self._guard.url(request))
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=bounded,
                extensions=response.extensions,
                request=request,
            )
        raise AssertionError("unreachable: the last attempt returns or raises")

    def close(self) -> None:
        self._inner.close()


class _AsyncPolicedTransport(httpx.AsyncBaseTransport):
    def __init__(self, guard: _Guard, inner: httpx.AsyncHTTPTransport, retries: int) -> None:
        self._guard, self._inner, self._retries = guard, inner, retries

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._guard.check_request(request)
        attempts = _attempts(request, self._retries)
        for attempt in range(attempts):
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.TransportError as error:
                if attempt + 1 >= attempts or _certificate_failure(error):
                    raise
                await asyncio.sleep(_BACKOFF_SECONDS * 2**attempt)
                continue
            try:
                self._guard.check_response(response, request)
            except BaseException:
                await response.aclose()
                raise
            assert isinstance(response.stream, httpx.AsyncByteStream)
            bounded = _AsyncBoundedStream(response.stream, self._guard.bound, self._guard.url(request))
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=bounded,
                extensions=response.extensions,
                request=request,
            )
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def aclose(self) -> None:
        await self._inner.aclose()


def _settings(
    endpoint: Endpoint, timeout: float, max_response_bytes: int, retries: int, proxy: Endpoint | None
) -> tuple[Endpoint, httpx.Timeout, httpx.Proxy | None]:
    if not isinstance(endpoint, Endpoint):
        raise TypeError(f"a policed client is built from an Endpoint police() accepted, got {type(endpoint).__name__}")
    endpoint = police(endpoint.url, variable=endpoint.variable, pin=endpoint.pin)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"timeout must be a finite number of seconds above 0, got {timeout!r}")
    if isinstance(max_response_bytes, bool) or not isinstance(max_response_bytes, int) or max_response_bytes < 1:
        raise ValueError(f"max_response_bytes must be a positive integer, got {max_response_bytes!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= _MAX_RETRIES:
        raise ValueError(f"retries must be an integer in 0..{_MAX_RETRIES}, got {retries!r}")
    declared_proxy = None
    if proxy is not None:
        if not isinstance(proxy, Endpoint):
            raise TypeError(f"a proxy is declared as an Endpoint that police() accepted, got {type(proxy).__name__}")
        proxy = police(proxy.url, variable=proxy.variable, pin=proxy.pin)
        context = ssl_context(proxy.pin) if proxy.scheme == "https" else None
        declared_proxy = httpx.Proxy(proxy.origin, ssl_context=context)
    return endpoint, httpx.Timeout(float(timeout)), declared_proxy


def _redirects(max_redirects: int) -> int:
    if isinstance(max_redirects, bool) or not isinstance(max_redirects, int) or not 0 <= max_redirects <= 20:
        raise ValueError(f"max_redirects must be an integer in 0..20, got {max_redirects!r}")
    return max_redirects


def _headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    merged = dict(headers or {})
    if any(key.lower() == "accept-encoding" for key in merged):
        raise ValueError("Accept-Encoding is fixed to identity: a compressed body cannot be bounded before decoding")
    merged["Accept-Encoding"] = "identity"
    return merged


def policed_client(
    endpoint: Endpoint,
    *,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    retries: int = DEFAULT_RETRIES,
    proxy: Endpoint | None = None,
    headers: Mapping[str, str] | None = None,
    max_redirects: int = 5,
) -> httpx.Client:
    """A synchronous ``httpx.Client`` for ``endpoint`` (its ``base_url``), policed as this module describes.

    ``timeout`` bounds connect, read, write and pool waits (seconds, finite); ``retries`` counts extra
    attempts of an idempotent request after a transport failure; ``proxy`` is a declared proxy endpoint
    (never one from the environment). Close the client when done (it is a context manager).
    """
    endpoint, limits, declared_proxy = _settings(endpoint, timeout, max_response_bytes, retries, proxy)
    inner = httpx.HTTPTransport(verify=ssl_context(endpoint.pin), trust_env=False, proxy=declared_proxy, retries=0)
    transport = _PolicedTransport(_Guard(endpoint, max_response_bytes), inner, retries)
    return httpx.Client(
        base_url=endpoint.url,
        transport=transport,
        timeout=limits,
        trust_env=False,
        follow_redirects=True,
        max_redirects=_redirects(max_redirects),
        headers=_headers(headers),
    )


def policed_async_client(
    endpoint: Endpoint,
    *,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    retries: int = DEFAULT_RETRIES,
    proxy: Endpoint | None = None,
    headers: Mapping[str, str] | None = None,
    max_redirects: int = 5,
) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` twin of :func:`policed_client`, with the same guarantees and arguments."""
    endpoint, limits, declared_proxy = _settings(endpoint, timeout, max_response_bytes, retries, proxy)
    inner = httpx.AsyncHTTPTransport(verify=ssl_context(endpoint.pin), trust_env=False, proxy=declared_proxy, retries=0)
    transport = _AsyncPolicedTransport(_Guard(endpoint, max_response_bytes), inner, retries)
    return httpx.AsyncClient(
        base_url=endpoint.url,
        transport=transport,
        timeout=limits,
        trust_env=False,
        follow_redirects=True,
        max_redirects=_redirects(max_redirects),
        headers=_headers(headers),
    )

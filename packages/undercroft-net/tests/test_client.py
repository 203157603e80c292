"""The policed clients against real loopback servers: TLS with a throw-away CA, bounds, redirects, retries.

No mocks: every test opens real sockets on 127.0.0.1 (the ``loopback`` marker) and the TLS handshakes are real.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from pathlib import Path

import httpx
import pytest
from undercroft_net import (
    Endpoint,
    ResponseRefused,
    ResponseTooLarge,
    TransportRefused,
    load_pin,
    police,
    policed_async_client,
    policed_client,
)

pytestmark = pytest.mark.loopback

VAR = "UNDERCROFT_TEST_URL"
PIN_VAR = "UNDERCROFT_TEST_CA"
BIG = 64 * 1024


def _verification_failure(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _pinned(url: str, pin_path: Path, **options: object) -> httpx.Client:
    endpoint = police(url, variable=VAR, pin=load_pin(pin_path, variable=PIN_VAR))
    return policed_client(endpoint, **options)  # type: ignore[arg-type]


# --- TLS for real -------------------------------------------------------------------------------------------


def test_the_pinned_client_connects(tls_server, pin_file: Path) -> None:  # type: ignore[no-untyped-def]
    with _pinned(tls_server.url, pin_file) as client:
        response = client.get("/ok")
    assert response.status_code == 200 and response.content == b"hello"
    assert tls_server.seen[0][2]["Accept-Encoding"] == "identity"


def test_the_pinned_client_checks_the_hostname_too(tls_server, pin_file: Path) -> None:  # type: ignore[no-untyped-def]
    port = tls_server.url.rsplit(":", 1)[1]
    with _pinned(f"https://localhost:{port}", pin_file) as client:
        assert client.get("/ok").content == b"hello"
    with _pinned(f"https://127.0.0.2:{port}", pin_file, retries=0) as client:
        with pytest.raises(httpx.ConnectError):  # nothing listens there, or the name would not match
            client.get("/ok")


def test_an_unpinned_client_refuses_the_self_signed_chain(tls_server) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(tls_server.url, variable=VAR)) as client:
        with pytest.raises(httpx.ConnectError) as caught:
            client.get("/ok")
    assert _verification_failure(caught.value)
    assert tls_server.seen == []


def test_a_pin_for_another_ca_refuses(tls_server, other_pin_file: Path) -> None:  # type: ignore[no-untyped-def]
    with _pinned(tls_server.url, other_pin_file) as client:
        with pytest.raises(httpx.ConnectError) as caught:
            client.get("/ok")
    assert _verification_failure(caught.value)
    assert tls_server.seen == []


def test_the_environment_adds_no_root_and_no_key_log(  # type: ignore[no-untyped-def]
    tls_server, pin_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keylog = tmp_path / "keys.log"
    monkeypatch.setenv("SSL_CERT_FILE", str(pin_file))
    monkeypatch.setenv("SSL_CERT_DIR", str(pin_file.parent))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pin_file))
    monkeypatch.setenv("SSLKEYLOGFILE", str(keylog))
    with policed_client(police(tls_server.url, variable=VAR)) as client:
        with pytest.raises(httpx.ConnectError) as caught:
            client.get("/ok")
    assert _verification_failure(caught.value)
    with _pinned(tls_server.url, pin_file) as client:
        assert client.get("/ok").content == b"hello"
    assert not keylog.exists()


def test_no_proxy_is_taken_from_the_environment(  # type: ignore[no-untyped-def]
    http_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = socket.create_server(("127.0.0.1", 0))
    proxy = f"http://127.0.0.1:{dead.getsockname()[1]}"
    dead.close()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with policed_client(police(http_server.url, variable=VAR)) as client:
        assert client.get("/ok").content == b"hello"


# --- construction ------------------------------------------------------------------------------------------


def test_a_hand_made_endpoint_is_policed_again() -> None:
    forged = Endpoint(VAR, "http://example.com:80/", "http", "example.com", 80, True)
    with pytest.raises(TransportRefused, match="cleartext http"):
        policed_client(forged)
    with pytest.raises(TransportRefused, match="cleartext http"):
        policed_async_client(forged)
    with pytest.raises(TypeError):
        policed_client("http://127.0.0.1:1")  # type: ignore[arg-type]


def test_a_declared_proxy_is_policed() -> None:
    endpoint = police("https://example.com", variable=VAR)
    forged = Endpoint("UNDERCROFT_TEST_PROXY", "http://proxy.example:3128/", "http", "proxy.example", 3128, True)
    with pytest.raises(TransportRefused) as caught:
        policed_client(endpoint, proxy=forged)
    assert caught.value.variable == "UNDERCROFT_TEST_PROXY"


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": 0},
        {"timeout": -1},
        {"timeout": float("inf")},
        {"timeout": None},
        {"max_response_bytes": 0},
        {"retries": -1},
        {"retries": 11},
        {"headers": {"accept-encoding": "gzip"}},
        {"max_redirects": -1},
        {"max_redirects": 21},
    ],
)
def test_weakening_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        policed_client(police("https://example.com", variable=VAR), **options)  # type: ignore[arg-type]


# --- every request is policed: absolute URLs and redirects -------------------------------------------------


def test_an_absolute_url_to_a_refused_host_never_connects(http_server) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(http_server.url, variable=VAR)) as client:
        with pytest.raises(TransportRefused, match="cleartext http"):
            client.get("http://example.com/")
        with pytest.raises(TransportRefused, match="userinfo"):
            client.get("http://127.0.0.1@example.com/")


def test_an_allowed_redirect_is_followed(http_server) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(http_server.url, variable=VAR)) as client:
        response = client.get("/redirect?to=/ok")
    assert response.content == b"hello" and [s[1] for s in http_server.seen] == ["/redirect?to=/ok", "/ok"]


def test_a_redirect_to_a_refused_host_is_refused_not_followed(http_server) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(http_server.url, variable=VAR)) as client:
        with pytest.raises(TransportRefused, match="cleartext http") as caught:
            client.get("/redirect?to=http://evil.example/steal")
    assert caught.value.variable == VAR
    assert len(http_server.seen) == 1


def test_an_https_to_http_redirect_is_refused(  # type: ignore[no-untyped-def]
    tls_server, http_server, pin_file: Path
) -> None:
    with _pinned(tls_server.url, pin_file) as client:
        with pytest.raises(TransportRefused, match="may not use http"):
            client.get(f"/redirect?to={http_server.url}/ok")
    assert http_server.seen == []
    assert len(tls_server.seen) == 1


# --- bounded responses ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/big", "/big-chunked"])
def test_a_body_above_the_bound_is_refused_whole(http_server, path: str) -> None:  # type: ignore[no-untyped-def]
    endpoint = police(http_server.url, variable=VAR)
    with policed_client(endpoint, max_response_bytes=BIG - 1) as client:
        with pytest.raises(ResponseTooLarge) as caught:
            client.get(path)
        assert caught.value.bound == BIG - 1
        received = bytearray()
        with pytest.raises(ResponseTooLarge):  # streaming: a declared length refuses at once, else chunk by chunk
            with client.stream("GET", path) as response:
                for chunk in response.iter_bytes():
                    received.extend(chunk)
        assert len(received) < BIG
    with policed_client(endpoint, max_response_bytes=BIG) as client:  # exactly the bound is fine
        assert len(client.get(path).content) == BIG


def test_a_head_answer_declaring_a_large_body_is_not_refused(http_server) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(http_server.url, variable=VAR), max_response_bytes=10) as client:
        response = client.head("/big")
    assert response.status_code == 200 and response.headers["content-length"] == str(BIG) and response.content == b""


def test_a_compressed_body_is_refused(http_server) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(http_server.url, variable=VAR)) as client:
        with pytest.raises(ResponseRefused, match="Content-Encoding 'gzip'"):
            client.get("/gzip")


# --- retries and timeouts -------------------------------------------------------------------------------


def test_an_idempotent_request_is_retried(flaky) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(flaky.url, variable=VAR), retries=2) as client:
        assert client.get("/").content == b"ok"
    assert flaky.connections == 3


def test_a_post_is_never_retried(flaky) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(flaky.url, variable=VAR), retries=2) as client:
        with pytest.raises(httpx.TransportError):
            client.post("/", content=b"{}")
    assert flaky.connections == 1


def test_retries_zero_means_one_attempt(flaky) -> None:  # type: ignore[no-untyped-def]
    with policed_client(police(flaky.url, variable=VAR), retries=0) as client:
        with pytest.raises(httpx.TransportError):
            client.get("/")
    assert flaky.connections == 1


def test_a_silent_server_times_out() -> None:
    listener = socket.create_server(("127.0.0.1", 0))  # the kernel completes the handshake; nobody answers
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with policed_client(police(url, variable=VAR), timeout=0.3, retries=0) as client:
            started = time.monotonic()
            with pytest.raises(httpx.ReadTimeout):
                client.get("/")
            assert time.monotonic() - started < 3
    finally:
        listener.close()


# --- the async twin ----------------------------------------------------------------------------------------


def test_the_async_client_has_the_same_guarantees(  # type: ignore[no-untyped-def]
    tls_server, http_server, flaky, pin_file: Path
) -> None:
    async def scenario() -> None:
        pinned = police(tls_server.url, variable=VAR, pin=load_pin(pin_file, variable=PIN_VAR))
        async with policed_async_client(pinned) as client:
            assert (await client.get("/ok")).content == b"hello"
            with pytest.raises(TransportRefused, match="may not use http"):
                await client.get(f"/redirect?to={http_server.url}/ok")
        async with policed_async_client(police(tls_server.url, variable=VAR)) as client:
            with pytest.raises(httpx.ConnectError) as caught:
                await client.get("/ok")
            assert _verification_failure(caught.value)
        async with policed_async_client(police(http_server.url, variable=VAR), max_response_bytes=100) as client:
            with pytest.raises(ResponseTooLarge):
                await client.get("/big-chunked")
        async with policed_async_client(police(flaky.url, variable=VAR), retries=2) as client:
            with pytest.raises(httpx.TransportError):
                await client.post("/", content=b"{}")
            assert flaky.connections == 1
            assert (await client.get("/")).content == b"ok"
            assert flaky.connections == 3

    asyncio.run(scenario())


def test_the_request_guard_accepts_a_punycode_host_it_will_connect_to() -> None:
    """httpx shows an xn-- host decoded (.host) but connects to the ASCII form (.raw_host): the guard compares that."""
    from undercroft_net.client import _Guard

    endpoint = police("https://xn--bcher-kva.de/api", variable=VAR)
    guard = _Guard(endpoint, 10)
    guard.check_request(httpx.Request("GET", endpoint.url))  # no refusal, no socket
    with pytest.raises(TransportRefused, match="may not use http"):
        guard.check_request(httpx.Request("GET", "http://xn--bcher-kva.de/"))


def test_a_declared_proxy_is_the_one_used(http_server, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A loopback forward proxy declared as an argument carries the request; the environment's proxy does not."""
    import http.client
    import http.server
    import threading
    from urllib.parse import urlsplit

    seen: list[str] = []

    class Forward(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            seen.append(self.path)
            target = urlsplit(self.path)
            upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=5)
            upstream.request("GET", target.path)
            answer = upstream.getresponse()
            body = answer.read()
            upstream.close()
            self.send_response(answer.status)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Via", "test-proxy")
            self.end_headers()
            self.wfile.write(body)

    proxy_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    thread = threading.Thread(target=proxy_server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # would fail if it were honoured
    try:
        proxy = police(f"http://127.0.0.1:{proxy_server.server_address[1]}", variable="UNDERCROFT_TEST_PROXY")
        with policed_client(police(http_server.url, variable=VAR), proxy=proxy) as client:
            response = client.get("/ok")
        assert response.content == b"hello" and response.headers["via"] == "test-proxy"
        assert seen == [f"{http_server.url}/ok"]
    finally:
        proxy_server.shutdown()
        proxy_server.server_close()
        thread.join(timeout=5)

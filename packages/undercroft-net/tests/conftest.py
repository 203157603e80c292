"""Fixtures: throw-away TLS material (a CA, a server certificate it signs) and live loopback servers.

The net SOURCE never imports cryptography (the crypto-libraries contract); only these tests make certificates.
"""

from __future__ import annotations

import gzip
import http.server
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from tls_material import Authority, make_authority, make_server_files

__all__ = ["Authority", "make_authority", "make_server_files"]

# ---------------------------------------------------------------------------------------------------------------
# Live loopback servers (real sockets, real TLS): one handler, served over https and over plain http.
# ---------------------------------------------------------------------------------------------------------------

BIG = 64 * 1024


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    redirect_target = ""

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.seen.append((self.command, self.path, dict(self.headers)))  # type: ignore[attr-defined]
        path = self.path
        if path == "/ok":
            self._send(200, b"hello")
        elif path == "/big":
            self._send(200, b"x" * BIG)
        elif path == "/big-chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(BIG // 1024):
                self.wfile.write(b"400\r\n" + b"y" * 1024 + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/gzip":
            self._send(200, gzip.compress(b"z" * 100), {"Content-Encoding": "gzip"})
        elif path.startswith("/redirect?to="):
            self._send(302, b"", {"Location": path.removeprefix("/redirect?to=")})
        else:
            self._send(404, b"no such path")

    def do_HEAD(self) -> None:
        self.server.seen.append((self.command, self.path, dict(self.headers)))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(BIG))
        self.end_headers()

    do_POST = do_GET
    do_DELETE = do_GET


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, context: ssl.SSLContext | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        if context is not None:
            self.socket = context.wrap_socket(self.socket, server_side=True)

    def handle_error(self, request: object, client_address: object) -> None:  # refused handshakes are expected
        return


@dataclass
class Live:
    """A running loopback server: its base URL and what it saw."""

    url: str
    server: _Server

    @property
    def seen(self) -> list[tuple[str, str, dict[str, str]]]:
        return self.server.seen


def _serve(context: ssl.SSLContext | None, scheme: str) -> Iterator[Live]:
    server = _Server(context)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Live(f"{scheme}://127.0.0.1:{server.server_address[1]}", server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def authority() -> Authority:
    return make_authority("undercroft throw-away test CA")


@pytest.fixture(scope="session")
def other_authority() -> Authority:
    return make_authority("some other CA")


@pytest.fixture(scope="session")
def pem_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pins")


@pytest.fixture(scope="session")
def pin_file(authority: Authority, pem_dir: Path) -> Path:
    path = pem_dir / "root.crt"
    path.write_bytes(authority.pem())
    return path


@pytest.fixture(scope="session")
def other_pin_file(other_authority: Authority, pem_dir: Path) -> Path:
    path = pem_dir / "other.crt"
    path.write_bytes(other_authority.pem())
    return path


@pytest.fixture
def tls_server(authority: Authority, tmp_path: Path) -> Iterator[Live]:
    chain, key = make_server_files(authority, tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, key)
    yield from _serve(context, "https")


@pytest.fixture
def http_server() -> Iterator[Live]:
    yield from _serve(None, "http")


class FlakyServer:
    """A raw loopback server that drops the first ``drops`` connections after reading the request, then answers."""

    def __init__(self, drops: int) -> None:
        self.drops = drops
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        self._listener.settimeout(0.05)
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            with connection:
                self.connections += 1
                connection.settimeout(2)
                try:
                    connection.recv(65536)
                    if self.connections > self.drops:
                        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()


@pytest.fixture
def flaky() -> Iterator[FlakyServer]:
    server = FlakyServer(drops=2)
    yield server
    server.close()

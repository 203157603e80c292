"""Real remote-index servers for the tests, started once per pytest session (see the root conftest.py).

* Chroma: the ``chroma`` program of the PyPI ``chromadb`` package (a dev dependency, in the lock) on a free
  loopback port; a test needing it skips ONLY when that package is absent.
* Milvus Lite: the ``milvus-lite server`` gRPC server of the PyPI ``milvus-lite`` package (the
  ``undercroft-index[milvus]`` extra, in the dev group) on a free loopback port, for the CLI path through
  ``UNDERCROFT_MILVUS_URL``; the library tests open Milvus Lite in process from a ``.db`` file instead.
* pgvector: a real PostgreSQL 16 with the ``vector`` extension, from the PyPI ``pgserver`` wheel (a dev
  dependency: it carries both binaries), listening on a Unix socket in a fresh directory. As root, pgserver
  runs the server as its own unprivileged user, so the directory is made under ``/tmp`` (not pytest's
  0700 tree, which that user could not enter).
"""

from __future__ import annotations

import importlib.util
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "HostileChroma",
    "chroma_program",
    "free_port",
    "milvus_program",
    "pgserver_available",
    "serving_chroma",
    "serving_json",
    "serving_milvus",
    "serving_pgvector",
]


def free_port() -> int:
    """A port nothing listens on right now (127.0.0.1)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _beside_python(program: str, module: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return None
    return shutil.which(program, path=str(Path(sys.executable).parent))


def chroma_program() -> str | None:
    """The ``chroma`` executable beside this interpreter (None: chromadb is not installed)."""
    return _beside_python("chroma", "chromadb")


def milvus_program() -> str | None:
    """The ``milvus-lite`` executable beside this interpreter (None: milvus-lite is not installed)."""
    return _beside_python("milvus-lite", "milvus_lite")


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@contextmanager
def _serving(command: list[str], port: int, directory: Path, ready: object) -> Iterator[None]:
    log = (directory / "server.log").open("wb")
    server = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={"PATH": "/usr/bin:/bin", "ANONYMIZED_TELEMETRY": "False", "HOME": str(directory)},
    )
    try:
        deadline = time.monotonic() + 60
        while not ready(port):  # type: ignore[operator]
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not start: " + (directory / "server.log").read_text()[-2000:])
            time.sleep(0.1)
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _chroma_ready(port: int) -> bool:
    import httpx

    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def serving_chroma(program: str, directory: Path) -> Iterator[str]:
    """Run ``chroma run`` on a free loopback port with its data in ``directory``; yields the base URL."""
    port = free_port()
    command = [program, "run", "--path", str(directory / "db"), "--host", "127.0.0.1", "--port", str(port)]
    with _serving(command, port, directory, _chroma_ready):
        yield f"http://127.0.0.1:{port}"


def _milvus_ready(port: int) -> bool:
    """The gRPC service answers (a listening socket comes first; the service a moment later under load)."""
    if not _listening(port):
        return False
    from pymilvus import MilvusClient

    try:
        client = MilvusClient(uri=f"http://127.0.0.1:{port}", timeout=5, dedicated=True)  # leaves no shared channel
    except Exception:  # noqa: BLE001 - not answering yet, whatever pymilvus calls it
        return False
    try:
        client.list_collections()
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        client.close()


@contextmanager
def serving_milvus(program: str, directory: Path) -> Iterator[str]:
    """Run ``milvus-lite server`` on a free loopback port; yields its URL once its gRPC service answers."""
    port = free_port()
    command = [program, "server", "--data-dir", str(directory / "data"), "--host", "127.0.0.1", "--port", str(port)]
    with _serving(command, port, directory, _milvus_ready):
        yield f"http://127.0.0.1:{port}"


def pgserver_available() -> bool:
    """Whether the ``pgserver`` package (PostgreSQL + pgvector binaries) is installed."""
    return importlib.util.find_spec("pgserver") is not None


@contextmanager
def serving_pgvector() -> Iterator[tuple[str, Path]]:
    """A real PostgreSQL with pgvector in a fresh directory; yields a libpq DSN (Unix socket) and the data dir.

    The DSN names the socket directory as its host, the local case of the adapter's policy (no TLS needed).
    The server is stopped and its directory deleted on exit.
    """
    import tempfile
    import warnings

    directory = Path(tempfile.mkdtemp(prefix="uc-pg-", dir="/tmp"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: no XDG_RUNTIME_DIR on a CI box (its lock dir falls back)
        import pgserver

        server = pgserver.get_server(directory, cleanup_mode="delete")
    try:
        server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        yield f"host={directory} dbname=postgres user=postgres", directory
    finally:
        server.cleanup()
        shutil.rmtree(directory, ignore_errors=True)


class HostileChroma:
    """A compromised Chroma server: its collection claims ``space``; every query answers ``answer``.

    It speaks the v2 routes the Chroma adapter uses (collection describe/create, count, upsert, query, delete),
    so the adapter, the policy and the whole search path run for real against it.
    """

    def __init__(self, answer: list[object], space: str, count: int = 0) -> None:
        self.answer = answer
        self.space = space
        self.count = count
        self.queries: list[dict[str, object]] = []

    def handle(self, method: str, path: str, body: object) -> tuple[int, object]:
        tail = path.split("/collections", 1)[1] if "/collections" in path else ""
        collection = {
            "id": "3f1b0c9e-8a1d-4c1e-9b7a-2d2f3c4d5e6f",
            "name": "x",
            "metadata": {"undercroft_space": self.space},
        }
        if method in ("GET", "POST") and tail.count("/") <= 1 and not tail.endswith(("/count", "/query")):
            return 200, collection
        if tail.endswith("/count"):
            return 200, self.count
        if tail.endswith("/query"):
            self.queries.append(body)  # type: ignore[arg-type]
            return 200, {"ids": [self.answer], "distances": [[0.0] * len(self.answer)]}
        return 200, {}


@contextmanager
def serving_json(handler: object) -> Iterator[str]:
    """Serve ``handler.handle(method, path, body) -> (status, json)`` on a free loopback port; yields the URL."""
    import http.server
    import json
    import threading

    class _Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            status, answer = handler.handle(self.command, self.path, json.loads(raw) if raw else None)  # type: ignore[attr-defined]
            data = b"" if answer is None else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

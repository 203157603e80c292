"""Real remote-index servers for the tests, started once per pytest session (see the root conftest.py).

* Chroma: the ``chroma`` program of the PyPI ``chromadb`` package (a dev dependency, in the lock) on a free
  loopback port; a test needing it skips ONLY when that package is absent.
* Milvus Lite: the ``milvus-lite server`` gRPC server of the PyPI ``milvus-lite`` package (the
  ``undercroft-index[milvus]`` extra, in the dev group) on a free loopback port, for the CLI path through
  ``UNDERCROFT_MILVUS_URL``; the library tests open Milvus Lite in process from a ``.db`` file instead.
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

__all__ = ["chroma_program", "free_port", "milvus_program", "serving_chroma", "serving_milvus"]


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


@contextmanager
def serving_milvus(program: str, directory: Path) -> Iterator[str]:
    """Run ``milvus-lite server`` on a free loopback port; yields its URL."""
    port = free_port()
    command = [program, "server", "--data-dir", str(directory / "data"), "--host", "127.0.0.1", "--port", str(port)]
    with _serving(command, port, directory, _listening):
        yield f"http://127.0.0.1:{port}"

"""Fixtures of the remote-backend tests: a real Chroma server and Milvus Lite, and protocol-level fakes.

The Chroma server is the ``chroma`` program of the PyPI ``chromadb`` package (a dev dependency, in the
lock), started ONCE per session on a free loopback port and stopped at the end; the tests skip only when
that package is absent. Milvus Lite runs in process from a temporary ``.db`` file (``pymilvus`` +
``milvus-lite``, the ``milvus`` extra). Qdrant, Weaviate and pgvector servers cannot be installed here: their
fakes (`protocol_fakes`) speak the documented request and answer shapes, and the tests using them say
``protocol_level`` in their names.
"""

from __future__ import annotations

import importlib.util
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chroma_program() -> str | None:
    """The ``chroma`` executable beside this interpreter (None: chromadb is not installed)."""
    if importlib.util.find_spec("chromadb") is None:
        return None
    return shutil.which("chroma", path=str(Path(sys.executable).parent))


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Chroma server on 127.0.0.1 for the whole session: its base URL."""
    program = chroma_program()
    if program is None:
        pytest.skip("chromadb is not installed (it is a dev dependency: uv sync --locked installs it)")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma")
    log = (data / "server.log").open("wb")
    server = subprocess.Popen(
        [program, "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={"PATH": "/usr/bin:/bin", "ANONYMIZED_TELEMETRY": "False", "HOME": str(data)},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the chroma server did not start: " + (data / "server.log").read_text()[-2000:])
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def milvus_lite_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Milvus Lite file for the session (skips when the milvus extra is not installed)."""
    if importlib.util.find_spec("pymilvus") is None or importlib.util.find_spec("milvus_lite") is None:
        pytest.skip("pymilvus / milvus-lite are not installed (the undercroft-index[milvus] extra)")
    return str(tmp_path_factory.mktemp("milvus") / "mirror.db")

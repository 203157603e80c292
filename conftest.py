"""Session-wide fixtures shared by every package's tests: the real remote-index servers, started at most
once per pytest session and only when a test asks for one (tests/remote_servers.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
from remote_servers import chroma_program, milvus_program, serving_chroma, serving_milvus


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real Chroma server on 127.0.0.1 for the whole session: its base URL and its data directory."""
    program = chroma_program()
    if program is None:
        pytest.skip("chromadb is not installed (a dev dependency: uv sync --locked installs it)")
    directory = tmp_path_factory.mktemp("chroma")
    with serving_chroma(program, directory) as url:
        yield url, directory


@pytest.fixture(scope="session")
def chroma_url(chroma_server: tuple[str, Path]) -> str:
    """The session's Chroma server's base URL."""
    return chroma_server[0]


@pytest.fixture(scope="session")
def milvus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Milvus Lite gRPC server on 127.0.0.1 for the whole session: its URL."""
    program = milvus_program()
    if program is None:
        pytest.skip("milvus-lite is not installed (the undercroft-index[milvus] extra, in the dev group)")
    with serving_milvus(program, tmp_path_factory.mktemp("milvus-server")) as url:
        yield url

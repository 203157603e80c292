"""Fixtures: the offline MiniLM (skips when absent), a throw-away CA pinned by file, loopback model servers."""

from __future__ import annotations

import ssl
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from model_fixtures import MINILM_MISSING, minilm_embedder
from tls_material import Authority, make_authority, server_context


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The in-process MiniLM the test servers compute real vectors with (skips when it is not installed)."""
    embedder = minilm_embedder()
    if embedder is None:
        pytest.skip(MINILM_MISSING)
    return embedder


@pytest.fixture(scope="session")
def authority() -> Authority:
    return make_authority("undercroft llm test CA")


@pytest.fixture(scope="session")
def pin_file(authority: Authority, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pin") / "root.crt"
    path.write_bytes(authority.pem())
    return path


@pytest.fixture(scope="session")
def tls(authority: Authority, tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    return server_context(authority, tmp_path_factory.mktemp("server"))

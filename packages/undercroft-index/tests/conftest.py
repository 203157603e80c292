"""Fixtures of the remote-backend tests (the real servers are the root conftest's session fixtures).

Milvus Lite in process from a temporary ``.db`` file (``pymilvus`` + ``milvus-lite``, the ``milvus`` extra).
Qdrant and Weaviate servers cannot be installed here: their fakes (`protocol_fakes`) speak the
documented request and answer shapes, and the tests using them say ``protocol_level`` in their names.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def milvus_lite_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Milvus Lite file for the session (skips when the milvus extra is not installed)."""
    if importlib.util.find_spec("pymilvus") is None or importlib.util.find_spec("milvus_lite") is None:
        pytest.skip("pymilvus / milvus-lite are not installed (the undercroft-index[milvus] extra)")
    return str(tmp_path_factory.mktemp("milvus") / "mirror.db")

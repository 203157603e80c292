"""Fixtures: tiny generated ONNX models (tests/model_fixtures.py) and ort's role classes, so embed-onnx's
contract tests (re-collected by this directory's test modules) run against the tuned runtime too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from undercroft_embed_ort import OrtCrossEncoder, OrtEmbedder, OrtLateEncoder

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from model_fixtures import mismatched, tiny

__all__ = ["cross_class", "embedder_class", "late_class", "mismatched", "tiny"]


@pytest.fixture
def embedder_class() -> type[OrtEmbedder]:
    """The sentence embedder under test (a pool of 1 unless a test says otherwise)."""
    return OrtEmbedder


@pytest.fixture
def cross_class() -> type[OrtCrossEncoder]:
    """The cross-encoder under test."""
    return OrtCrossEncoder


@pytest.fixture
def late_class() -> type[OrtLateEncoder]:
    """The late encoder under test."""
    return OrtLateEncoder

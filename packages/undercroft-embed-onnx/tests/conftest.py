"""Fixtures: tiny generated ONNX models (tests/model_fixtures.py builds them; nothing is committed or downloaded)
and the role classes under test, which embed-ort's conftest replaces with its own to run this same contract."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from undercroft_embed_onnx import OnnxCrossEncoder, OnnxEmbedder, OnnxLateEncoder

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from model_fixtures import mismatched, tiny

__all__ = ["cross_class", "embedder_class", "late_class", "mismatched", "tiny"]


@pytest.fixture
def embedder_class() -> type[OnnxEmbedder]:
    """The sentence embedder under test."""
    return OnnxEmbedder


@pytest.fixture
def cross_class() -> type[OnnxCrossEncoder]:
    """The cross-encoder under test."""
    return OnnxCrossEncoder


@pytest.fixture
def late_class() -> type[OnnxLateEncoder]:
    """The late encoder under test."""
    return OnnxLateEncoder

"""Fixtures: tiny generated ONNX models (tests/model_fixtures.py builds them; nothing is committed or downloaded)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from model_fixtures import TinyModel, mismatched_pair, tiny_pair


@pytest.fixture
def tiny(tmp_path: Path) -> TinyModel:
    """A well-matched token model and tokenizer."""
    return tiny_pair(tmp_path)


@pytest.fixture
def mismatched(tmp_path: Path) -> TinyModel:
    """A token model one row short of its tokenizer (the poison word's id is past the table)."""
    return mismatched_pair(tmp_path)

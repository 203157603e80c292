"""Shared fixtures: a palace in a temporary home with a deterministic clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace


class StepClock:
    """A clock that advances one second per call, from a fixed instant."""

    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "palace"


@pytest.fixture
def palace(home: Path) -> Iterator[Palace]:
    with Palace(home, clock=StepClock()) as opened:
        opened.init()
        yield opened


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()

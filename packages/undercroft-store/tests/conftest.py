"""Shared fixtures: a palace in a temporary home with a deterministic clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.kernel._internal.meta_at_rest import stored_label


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


@pytest.fixture
def label_of(home: Path) -> Callable[..., str]:
    """What a label column (or audit-label tail) holds for a name: its blind value on a sealed vault.

    A raw edit of a row keyed by a label has to name the row as stored; an offline attacker copies the value
    from another row, a test derives it with the vault's key."""

    def label(value: str, field: str = "wing", vault: str = "default") -> str:
        with Palace(home) as palace, palace.open_vault(vault, HashEmbedder(), read_only=True) as store:
            return str(stored_label(store._context, field, value))

    return label

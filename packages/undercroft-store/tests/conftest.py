"""Shared fixtures: a palace in a temporary home with a deterministic clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import Palace
from undercroft_store.kernel._internal.meta_at_rest import stored_label


class StepClock:
    """A clock that advances one second per call, from a fixed instant."""

    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def _pin_public_recipe(patch: pytest.MonkeyPatch) -> None:
    from undercroft_core.ids import VAULT_ID_RECIPE_PUBLIC
    from undercroft_store.kernel._internal import ids_at_rest

    patch.setattr(ids_at_rest, "NEW_SEALED_RECIPE", VAULT_ID_RECIPE_PUBLIC)


@pytest.fixture(autouse=True, scope="module")
def _legacy_ids_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """``pytestmark = pytest.mark.legacy_ids``: sealed vaults created in the module (its module-scoped
    fixtures included) record the PUBLIC id recipe.

    Such a test builds drawers with core's `source_drawer_id`/`append_drawer_id` (the public ``sha256-v1``
    recipe, which every vault created before keyed ids uses) and asserts their ids: it tests the store under
    that recipe, exactly as an upgraded old vault runs. Every other test gets the keyed recipe of new vaults."""
    with pytest.MonkeyPatch.context() as patch:
        if request.node.get_closest_marker("legacy_ids") is not None:
            _pin_public_recipe(patch)
        yield


@pytest.fixture(autouse=True)
def _legacy_ids(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``@pytest.mark.legacy_ids`` on one test: as the module marker, for that test."""
    if request.node.get_closest_marker("legacy_ids") is not None:
        _pin_public_recipe(monkeypatch)


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


def appended_drawer(
    index: int, content: str, *, wing: str, room: str, filed_at: str = "2024-01-01T00:00:00Z", **extra: object
) -> Drawer:
    """A drawer as an API save files it (the ``append`` id recipe, ``added_by="test"``): the suites' test data."""
    return Drawer(
        id=append_drawer_id(wing, room, index),
        content=content,
        wing=wing,
        room=room,
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at=filed_at,
        **extra,  # type: ignore[arg-type]
    )

"""Palace and vault lifecycle: layout, permissions, create/list/status/delete, refusals."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import (
    InvalidVaultName,
    Palace,
    ReadOnlyStore,
    StoreClosed,
    VaultExists,
    VaultNotFound,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_init_creates_default_vault_with_private_modes(palace: Palace, home: Path) -> None:
    assert palace.list_vaults() == ["default"]
    vault = home / "vaults" / "default"
    assert _mode(home) == 0o700
    assert _mode(home / "vaults") == 0o700
    assert _mode(vault) == 0o700
    assert _mode(home / "master.key") == 0o600
    assert _mode(vault / "vault.db") == 0o600
    assert _mode(vault / "vault.json") == 0o600
    assert palace.init() is False  # idempotent


def test_create_list_status_delete(palace: Palace) -> None:
    palace.create_vault("work", level="hmac-only")
    assert palace.list_vaults() == ["default", "work"]
    status = palace.status("work")
    assert status.has_manifest and status.has_database and status.db_bytes > 0
    with pytest.raises(VaultExists, match="already exists"):
        palace.create_vault("work")
    palace.delete_vault("work")
    assert palace.list_vaults() == ["default"]
    with pytest.raises(VaultNotFound, match="no vault named 'work'"):
        palace.status("work")
    with pytest.raises(VaultNotFound):
        palace.delete_vault("work")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../x", "path separator"),
        ("", "empty"),
        (".hidden", "starts with '.'"),
        ("con", "reserved device name"),
        ("a b", "vault id"),
        ("x" * 65, "vault id"),
    ],
)
def test_bad_vault_names_are_refused(palace: Palace, name: str, message: str) -> None:
    with pytest.raises(InvalidVaultName, match=message):
        palace.create_vault(name)


def test_unknown_level_is_refused(palace: Palace) -> None:
    with pytest.raises(InvalidVaultName, match="unknown vault level 'open'"):
        palace.create_vault("x", level="open")  # type: ignore[arg-type]


def test_open_missing_vault(palace: Palace, embedder: HashEmbedder) -> None:
    with pytest.raises(VaultNotFound, match="no vault named 'nope'"):
        palace.open_vault("nope", embedder)


def test_read_only_palace_refuses_writes(palace: Palace, home: Path, embedder: HashEmbedder) -> None:
    with Palace(home, read_only=True) as reader:
        with pytest.raises(StoreClosed, match="read-only palace"):
            reader.create_vault("x")
        with reader.open_vault("default", embedder) as store:
            assert store.read_only
            with pytest.raises(ReadOnlyStore, match="open read-only"):
                store.remember("text", wing="w", room="r", added_by="cli")


def test_read_only_palace_never_creates_key_material(tmp_path: Path) -> None:
    with Palace(tmp_path / "empty", read_only=True) as reader:
        assert reader.list_vaults() == []
        with pytest.raises(VaultNotFound):
            reader.open_vault("default", HashEmbedder())
    assert not (tmp_path / "empty" / "master.key").exists()


def test_close_wipes_and_refuses(home: Path, embedder: HashEmbedder) -> None:
    palace = Palace(home)
    palace.init()
    store = palace.open_vault("default", embedder)
    store.close()
    with pytest.raises(StoreClosed):
        store.count()
    palace.close()
    with pytest.raises(StoreClosed):
        palace.open_vault("default", embedder)


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("umask_022")
@pytest.mark.parametrize("passphrase", [None, "hunter22"])
def test_init_narrows_a_pre_existing_0755_home_before_writing_key_material(
    tmp_path: Path, passphrase: str | None
) -> None:
    home = tmp_path / "made-by-hand"
    home.mkdir()
    (home / "vaults").mkdir()  # an empty vaults/ left by an installer
    assert _mode(home) == 0o755 and _mode(home / "vaults") == 0o755
    with Palace(home, passphrase=passphrase) as palace:
        assert palace.init() is True
    key = home / ("master.key" if passphrase is None else "kdf.salt")
    assert _mode(home) == 0o700 and _mode(home / "vaults") == 0o700 and _mode(key) == 0o600
    assert _mode(home / "vaults" / "default") == 0o700


@pytest.mark.usefixtures("umask_022")
def test_a_fresh_home_under_umask_022_is_0700(tmp_path: Path) -> None:
    home = tmp_path / "nested" / "palace"
    with Palace(home) as palace:
        palace.init()
    assert _mode(home) == 0o700 and _mode(home / "vaults") == 0o700 and _mode(home / "master.key") == 0o600


@pytest.mark.usefixtures("umask_022")
def test_the_first_vault_narrows_a_home_widened_after_its_key_was_made(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    with Palace(home) as palace:
        palace.init()
        palace.delete_vault("default")  # key material and no vault
    home.chmod(0o755)
    with Palace(home) as palace:
        palace.create_vault("work")
    assert _mode(home) == 0o700


@pytest.mark.usefixtures("umask_022")
def test_a_home_that_already_holds_vaults_is_never_chmoded(tmp_path: Path, embedder: HashEmbedder) -> None:
    home = tmp_path / "palace"
    with Palace(home) as palace:
        palace.init()
    home.chmod(0o755)  # the operator's decision (docs/store.md says how to narrow it)
    with Palace(home) as palace:
        assert palace.init() is False
        palace.create_vault("work")
        with palace.open_vault("work", embedder) as store:
            store.remember("kept private by its own 0600 files", wing="w", room="r", added_by="t")
        palace.delete_vault("work")
    assert _mode(home) == 0o755
    assert _mode(home / "master.key") == 0o600 and _mode(home / "vaults" / "default" / "vault.db") == 0o600

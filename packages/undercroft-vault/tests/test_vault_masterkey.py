"""The master key: creation, loading, and every contradiction refused before derivation."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from undercroft_vault import KeyDeclarationRefused, MasterKey, SecretBytes, open_master_key


def fixed(n: int) -> bytes:
    return bytes(range(n))


def test_key_file_created_0600_then_loaded(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    created = open_master_key(home, passphrase=None, vaults_exist=False, may_create=True, random_bytes=fixed)
    assert created.created and created.source == "file"
    path = home / "master.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes() == bytes(range(32))
    loaded = open_master_key(home, passphrase=None, vaults_exist=True, may_create=False)
    assert not loaded.created and loaded.secret == created.secret


def test_passphrase_installation_round_trip(tmp_path: Path) -> None:
    first = open_master_key(tmp_path, passphrase="hunter22", vaults_exist=False, may_create=True)
    assert first.source == "passphrase" and first.created
    assert len((tmp_path / "kdf.salt").read_bytes()) == 16
    assert stat.S_IMODE((tmp_path / "kdf.salt").stat().st_mode) == 0o600
    assert not (tmp_path / "master.key").exists()
    again = open_master_key(tmp_path, passphrase="hunter22", vaults_exist=True, may_create=False)
    assert again.secret == first.secret


def test_passphrase_over_key_file_names_both_readings(tmp_path: Path) -> None:
    open_master_key(tmp_path, passphrase=None, vaults_exist=False, may_create=True)
    with pytest.raises(KeyDeclarationRefused, match=r"passphrase is declared .* holds master\.key and no kdf\.salt"):
        open_master_key(tmp_path, passphrase="pw", vaults_exist=True, may_create=True)


def test_key_file_reading_over_passphrase_installation_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kdf.salt").write_bytes(bytes(16))
    with pytest.raises(KeyDeclarationRefused, match=r"no passphrase is declared .* holds kdf\.salt and no master\.key"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=True)
    assert not (tmp_path / "master.key").exists()


def test_missing_key_under_existing_vaults_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(KeyDeclarationRefused, match=r"holds existing vaults but neither master\.key nor kdf\.salt"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=True)
    assert list(tmp_path.iterdir()) == []


def test_read_only_open_never_creates(tmp_path: Path) -> None:
    with pytest.raises(KeyDeclarationRefused, match="may not create it"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=False, may_create=False)
    assert list(tmp_path.iterdir()) == []


def test_empty_passphrase_and_both_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyDeclarationRefused, match="passphrase is empty"):
        open_master_key(tmp_path, passphrase="", vaults_exist=False, may_create=True)
    (tmp_path / "master.key").write_bytes(bytes(32))
    (tmp_path / "kdf.salt").write_bytes(bytes(16))
    with pytest.raises(KeyDeclarationRefused, match=r"holds both master\.key"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=False)


def test_truncated_key_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "master.key").write_bytes(bytes(31))
    with pytest.raises(KeyDeclarationRefused, match="is 31 bytes; expected exactly 32"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=False)


def test_secret_bytes_wipe_and_repr() -> None:
    secret = SecretBytes(b"\x07" * 32)
    assert "07" not in repr(secret) and "32 bytes" in repr(secret)
    buffer = secret.buffer()
    with MasterKey(secret, "file", created=False):
        pass
    assert buffer == bytearray(32) and secret.wiped and "wiped" in repr(secret)
    with pytest.raises(ValueError, match="was wiped"):
        secret.reveal()

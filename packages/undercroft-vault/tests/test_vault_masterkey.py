"""The master key: creation, loading, and every contradiction refused before derivation."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from undercroft_vault import KeyDeclarationRefused, MasterKey, SecretBytes, derive_passphrase_key, open_master_key
from undercroft_vault import masterkey as masterkey_module
from undercroft_vault.masterkey import narrow_home


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
    (tmp_path / "master.key").chmod(0o600)
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


LOOSE = [
    (0o640, "group can read"),
    (0o604, "others can read"),
    (0o644, "group can read, others can read"),
    (0o620, "group can write"),
    (0o602, "others can write"),
    (0o610, "group can execute"),
    (0o666, "group can read, group can write, others can read, others can write"),
]


@pytest.mark.parametrize(("mode", "words"), LOOSE, ids=[f"{mode:04o}" for mode, _ in LOOSE])
def test_a_key_file_group_or_others_can_reach_is_refused_like_ssh(tmp_path: Path, mode: int, words: str) -> None:
    key = tmp_path / "master.key"
    key.write_bytes(bytes(range(32)))
    key.chmod(mode)
    expected = (
        f"master.key at {key} has mode {mode:04o} ({words}): key material other users can read or replace is "
        f"refused and nothing was derived; fix it with: chmod 600 {key}"
    )
    with pytest.raises(KeyDeclarationRefused, match=f"^{re.escape(expected)}$"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=False)
    assert stat.S_IMODE(key.stat().st_mode) == mode  # reported, never silently repaired
    key.chmod(0o600)  # the fix the message names works
    with open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=False) as loaded:
        assert loaded.secret == SecretBytes(bytes(range(32)))


@pytest.mark.parametrize(("mode", "words"), LOOSE[:3], ids=["0640", "0604", "0644"])
def test_a_loose_kdf_salt_is_refused_before_argon2_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int, words: str
) -> None:
    salt = tmp_path / "kdf.salt"
    salt.write_bytes(bytes(16))
    salt.chmod(mode)

    def no_derivation(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("argon2 ran over a refused salt")

    monkeypatch.setattr(masterkey_module, "hash_secret_raw", no_derivation)
    with pytest.raises(KeyDeclarationRefused, match=re.escape(f"kdf.salt at {salt} has mode {mode:04o} ({words})")):
        open_master_key(tmp_path, passphrase="hunter22", vaults_exist=True, may_create=False)
    with pytest.raises(KeyDeclarationRefused, match=re.escape(f"fix it with: chmod 600 {salt}")):
        open_master_key(tmp_path, passphrase="hunter22", vaults_exist=True, may_create=False)


@pytest.mark.parametrize("mode", [0o600, 0o400, 0o700], ids=["0600", "0400", "0700"])
def test_owner_only_modes_are_accepted(tmp_path: Path, mode: int) -> None:
    (tmp_path / "master.key").write_bytes(bytes(range(32)))
    (tmp_path / "master.key").chmod(mode)
    with open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=False) as loaded:
        assert loaded.source == "file" and loaded.secret == SecretBytes(bytes(range(32)))
    passphrase_home = tmp_path / "passphrase"
    passphrase_home.mkdir()
    (passphrase_home / "kdf.salt").write_bytes(bytes(16))
    (passphrase_home / "kdf.salt").chmod(mode)
    with open_master_key(passphrase_home, passphrase="hunter22", vaults_exist=True, may_create=False) as derived:
        assert derived.secret == derive_passphrase_key("hunter22", bytes(16))


def test_a_key_file_created_under_a_wide_umask_is_still_0600_and_loads(tmp_path: Path) -> None:
    previous = os.umask(0o000)
    try:
        open_master_key(tmp_path, passphrase=None, vaults_exist=False, may_create=True, random_bytes=fixed).wipe()
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "master.key").stat().st_mode) == 0o600
    open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=False).wipe()


def test_the_race_loser_reads_the_winners_key_through_the_same_mode_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def lose_the_race(path: Path, data: bytes, mode: int = 0o600) -> None:
        path.write_bytes(bytes(range(32)))
        path.chmod(0o644)  # the winner left it loose
        raise FileExistsError(path)

    monkeypatch.setattr(masterkey_module, "write_new_file", lose_the_race)
    with pytest.raises(KeyDeclarationRefused, match=r"has mode 0644 .*chmod 600"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=False, may_create=True, random_bytes=fixed)


@pytest.mark.parametrize(("before", "after"), [(0o755, 0o700), (0o750, 0o700), (0o711, 0o700), (0o777, 0o700)])
def test_key_creation_narrows_a_home_it_did_not_create(tmp_path: Path, before: int, after: int) -> None:
    home = tmp_path / "palace"
    home.mkdir()
    home.chmod(before)
    open_master_key(home, passphrase=None, vaults_exist=False, may_create=True, random_bytes=fixed).wipe()
    assert stat.S_IMODE(home.stat().st_mode) == after
    assert stat.S_IMODE((home / "master.key").stat().st_mode) == 0o600


def test_loading_a_key_never_touches_the_home_mode(tmp_path: Path) -> None:
    open_master_key(tmp_path, passphrase=None, vaults_exist=False, may_create=True).wipe()
    tmp_path.chmod(0o755)
    open_master_key(tmp_path, passphrase=None, vaults_exist=True, may_create=False).wipe()
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_narrow_home_reports_what_it_replaced(tmp_path: Path) -> None:
    fresh = tmp_path / "a" / "b"
    assert narrow_home(fresh) is None and stat.S_IMODE(fresh.stat().st_mode) == 0o700
    fresh.chmod(0o500)  # owner-only already: left as it is, never widened
    assert narrow_home(fresh) is None and stat.S_IMODE(fresh.stat().st_mode) == 0o500
    fresh.chmod(0o755)
    assert narrow_home(fresh) == 0o755 and stat.S_IMODE(fresh.stat().st_mode) == 0o700


def test_a_home_that_cannot_be_narrowed_refuses_before_any_key_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path.chmod(0o755)

    def refused(self: Path, mode: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(Path, "chmod", refused)
    expected = (
        f"{tmp_path} has mode 0755 and could not be narrowed to owner-only (Operation not permitted); no key "
        f"material was written: fix it with: chmod 700 {tmp_path}"
    )
    with pytest.raises(KeyDeclarationRefused, match=f"^{re.escape(expected)}$"):
        open_master_key(tmp_path, passphrase=None, vaults_exist=False, may_create=True)
    assert list(tmp_path.iterdir()) == []

"""The manifest: MAC, foreign ids, durable writes, staging and the two-phase rotation reopen."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from undercroft_vault import (
    GENESIS,
    Anchor,
    InvalidVaultInput,
    Manifest,
    ManifestTampered,
    RotationOutcome,
    SecretBytes,
    VaultKeys,
    derive_vault_keys,
    keycheck_marker,
    load_manifest,
    read_manifest,
    resolve_rotation,
    stage_manifest,
    write_manifest,
)

MASTER = SecretBytes(bytes(range(32)))
SALT = bytes(range(32, 64))
NEW_SALT = bytes(range(96, 128))


def fresh(tmp_path: Path) -> tuple[Manifest, VaultKeys]:
    keys = derive_vault_keys(MASTER, "alpha", SALT)
    manifest = Manifest.create("alpha", "sealed", SALT)
    write_manifest(tmp_path, manifest, keys)
    return manifest, keys


def test_write_read_round_trip_and_mode(tmp_path: Path) -> None:
    manifest, _ = fresh(tmp_path)
    assert stat.S_IMODE((tmp_path / "vault.json").stat().st_mode) == 0o600
    loaded, keys = read_manifest(tmp_path, vault_id="alpha", master=MASTER)
    assert loaded == manifest and loaded.anchor == Anchor(GENESIS, 0) and keys.vault_id == "alpha"
    assert [p.name for p in tmp_path.iterdir()] == ["vault.json"]  # no temp file left behind


@pytest.mark.parametrize(
    ("field", "value"),
    [("level", "hmac-only"), ("generation", 2), ("salt", "00" * 32), ("anchor", {"head": "11" * 32, "count": 0})],
)
def test_any_covered_field_edit_fails_the_mac(tmp_path: Path, field: str, value: object) -> None:
    fresh(tmp_path)
    document = json.loads((tmp_path / "vault.json").read_text())
    document[field] = value
    with pytest.raises(ManifestTampered, match="fails its MAC"):
        load_manifest(json.dumps(document).encode(), vault_id="alpha", master=MASTER)


def test_foreign_vault_and_wrong_key_are_integrity_verdicts(tmp_path: Path) -> None:
    fresh(tmp_path)
    data = (tmp_path / "vault.json").read_bytes()
    with pytest.raises(ManifestTampered, match="names vault 'alpha', but it was opened as vault 'beta'") as caught:
        load_manifest(data, vault_id="beta", master=MASTER)
    assert caught.value.error_class == "integrity"
    with pytest.raises(ManifestTampered, match="fails its MAC"):
        load_manifest(data, vault_id="alpha", master=SecretBytes(bytes(32)))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not json", "not valid JSON"),
        (b"{}", "must hold exactly the fields"),
        (
            b'{"format": 9, "vault_id": "a", "level": "sealed", "salt": "", "generation": 1, "anchor": {}, "mac": ""}',
            "format 9 is not 1",
        ),
    ],
)
def test_malformed_manifests_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(ManifestTampered, match=message):
        load_manifest(data, vault_id="alpha", master=MASTER)


def test_manifest_fields_are_validated() -> None:
    with pytest.raises(InvalidVaultInput, match="level 'plain' is not one of sealed, hmac-only"):
        Manifest.create("alpha", "plain", SALT)  # type: ignore[arg-type]
    with pytest.raises(InvalidVaultInput, match="salt must be 32 bytes"):
        Manifest.create("alpha", "sealed", b"short")
    keys_b = derive_vault_keys(MASTER, "beta", SALT)
    with pytest.raises(InvalidVaultInput, match="do not belong"):
        Manifest.create("alpha", "sealed", SALT).to_json(keys_b)


def rotate_stage(tmp_path: Path, manifest: Manifest) -> VaultKeys:
    new_keys = derive_vault_keys(MASTER, "alpha", NEW_SALT)
    staged = Manifest("alpha", manifest.level, NEW_SALT, manifest.generation + 1, manifest.anchor)
    stage_manifest(tmp_path, staged, new_keys)
    return new_keys


def test_no_rotation_staged(tmp_path: Path) -> None:
    _, keys = fresh(tmp_path)
    state = resolve_rotation(tmp_path, vault_id="alpha", master=MASTER, marker=keycheck_marker(keys, 1), writable=True)
    assert state.outcome is RotationOutcome.NONE and state.manifest.generation == 1


def test_crash_after_commit_promotes_on_writable_open(tmp_path: Path) -> None:
    manifest, _ = fresh(tmp_path)
    new_keys = rotate_stage(tmp_path, manifest)
    marker = keycheck_marker(new_keys, 2)  # the database committed the new generation
    read_only = resolve_rotation(tmp_path, vault_id="alpha", master=MASTER, marker=marker, writable=False)
    assert read_only.outcome is RotationOutcome.COMMITTED and read_only.staged_left_in_place
    assert (tmp_path / "vault.json.next").exists() and read_only.manifest.generation == 2
    state = resolve_rotation(tmp_path, vault_id="alpha", master=MASTER, marker=marker, writable=True)
    assert state.outcome is RotationOutcome.COMMITTED and state.keys.salt == NEW_SALT
    assert not (tmp_path / "vault.json.next").exists()
    assert read_manifest(tmp_path, vault_id="alpha", master=MASTER)[0].generation == 2


def test_crash_before_commit_discards_staged(tmp_path: Path) -> None:
    manifest, keys = fresh(tmp_path)
    rotate_stage(tmp_path, manifest)
    marker = keycheck_marker(keys, 1)
    state = resolve_rotation(tmp_path, vault_id="alpha", master=MASTER, marker=marker, writable=True)
    assert state.outcome is RotationOutcome.ABANDONED and state.manifest.generation == 1
    assert not (tmp_path / "vault.json.next").exists()


def test_marker_matching_neither_side_is_tampering(tmp_path: Path) -> None:
    manifest, _ = fresh(tmp_path)
    with pytest.raises(ManifestTampered, match=r"does not match generation 1 in vault\.json and no rotation"):
        resolve_rotation(tmp_path, vault_id="alpha", master=MASTER, marker=bytes(32), writable=False)
    rotate_stage(tmp_path, manifest)
    with pytest.raises(ManifestTampered, match=r"matches neither vault.json \(generation 1\) nor vault.json.next"):
        resolve_rotation(tmp_path, vault_id="alpha", master=MASTER, marker=bytes(32), writable=True)
    assert (tmp_path / "vault.json.next").exists()

"""Two-phase rotation bookkeeping: the keycheck marker and the reopen that decides which side committed.

A rotation stages `vault.json.next` under the new keys, then commits the re-keyed database together with
the new generation's keycheck marker, then promotes the staged file. A crash can stop it anywhere; the
reopen compares the database's marker with both manifests and adopts exactly one key generation.
"""

from __future__ import annotations

import contextlib
import hmac
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from undercroft_vault._internal.encoding import lp, u64
from undercroft_vault.errors import ManifestTampered
from undercroft_vault.keymaterial import SecretBytes
from undercroft_vault.manifest import (
    MANIFEST_FILE,
    STAGED_MANIFEST_FILE,
    Manifest,
    discard_staged_manifest,
    promote_staged_manifest,
    read_manifest,
)
from undercroft_vault.vaultkeys import VaultKeys

__all__ = ["RotationOutcome", "RotationState", "keycheck_marker", "resolve_rotation"]

_KEYCHECK_DOMAIN = b"undercroft.keycheck.v1"
_RESOLVE_ATTEMPTS = 3


class RotationOutcome(Enum):
    """What the reopen found and did about a staged manifest."""

    NONE = "none"  # no vault.json.next
    COMMITTED = "committed"  # the new generation committed: promoted (or honoured in memory, read-only)
    ABANDONED = "abandoned"  # the old generation is current: staged file discarded (or left, read-only)


@dataclass(frozen=True)
class RotationState:
    """The manifest and keys the vault opens under, and what happened to any staged rotation."""

    manifest: Manifest
    keys: VaultKeys
    outcome: RotationOutcome
    staged_left_in_place: bool


def keycheck_marker(keys: VaultKeys, generation: int) -> bytes:
    """The 32-byte marker the database stores beside a committed key generation."""
    message = _KEYCHECK_DOMAIN + lp(keys.vault_id.encode("ascii")) + lp(keys.salt) + u64(generation)
    return hmac.digest(keys.manifest.buffer(), message, "sha256")


def resolve_rotation(
    vault_dir: Path, *, vault_id: str, master: SecretBytes, marker: bytes, writable: bool
) -> RotationState:
    """Open `vault_dir` under the one key generation the database's `marker` says committed.

    A writable open promotes a committed staged manifest or discards an abandoned one; a read-only open
    honours the answer in memory and leaves the file exactly where it is. A marker matching neither side
    is `ManifestTampered`.
    """
    # Another writable open may promote (or discard) a staged manifest between our reads of the two files:
    # a mismatch seen while vault.json changed under us is retried, never reported as tampering.
    for _attempt in range(_RESOLVE_ATTEMPTS - 1):
        seen = (vault_dir / MANIFEST_FILE).read_bytes()
        try:
            return _resolve_once(vault_dir, vault_id, master, marker, writable)
        except (ManifestTampered, FileNotFoundError):
            if (vault_dir / MANIFEST_FILE).read_bytes() == seen:
                raise
    return _resolve_once(vault_dir, vault_id, master, marker, writable)


def _resolve_once(vault_dir: Path, vault_id: str, master: SecretBytes, marker: bytes, writable: bool) -> RotationState:
    current, current_keys = read_manifest(vault_dir, vault_id=vault_id, master=master)
    current_ok = hmac.compare_digest(keycheck_marker(current_keys, current.generation), marker)
    if not (vault_dir / STAGED_MANIFEST_FILE).exists():
        if not current_ok:
            current_keys.wipe()
            raise ManifestTampered(
                f"vault {vault_id!r}: the database's keycheck marker does not match generation "
                f"{current.generation} in vault.json and no rotation is staged"
            )
        return RotationState(current, current_keys, RotationOutcome.NONE, staged_left_in_place=False)
    if current_ok:
        if writable:
            discard_staged_manifest(vault_dir)
        return RotationState(current, current_keys, RotationOutcome.ABANDONED, staged_left_in_place=not writable)
    try:
        staged, staged_keys = read_manifest(vault_dir, vault_id=vault_id, master=master, staged=True)
    except BaseException:
        current_keys.wipe()
        raise
    if staged.generation != current.generation + 1 or not hmac.compare_digest(
        keycheck_marker(staged_keys, staged.generation), marker
    ):
        current_keys.wipe()
        staged_keys.wipe()
        raise ManifestTampered(
            f"vault {vault_id!r}: the database's keycheck marker matches neither vault.json "
            f"(generation {current.generation}) nor vault.json.next (generation {staged.generation})"
        )
    current_keys.wipe()
    if writable:
        with contextlib.suppress(FileNotFoundError):  # another writable open promoted it first
            promote_staged_manifest(vault_dir)
    return RotationState(staged, staged_keys, RotationOutcome.COMMITTED, staged_left_in_place=not writable)

"""Per-vault working keys: HKDF-SHA256(master, vault salt, "undercroft.v1/vault/<id>/<label>")."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from undercroft_vault.errors import InvalidVaultInput
from undercroft_vault.keymaterial import SecretBytes
from undercroft_vault.masterkey import MASTER_KEY_LENGTH
from undercroft_vault.names import validate_vault_id

__all__ = ["KEY_LABELS", "VAULT_SALT_LENGTH", "VaultKeys", "derive_vault_keys", "new_vault_salt"]

#: The five labels, in derivation order. `sample` is deliberately rotation-sensitive; `chain` keys the v2 step.
KEY_LABELS = ("enc", "mac", "manifest", "sample", "chain")
#: Bytes of a fresh vault salt (a rotation draws a new one, which moves every working key).
VAULT_SALT_LENGTH = 32


@dataclass(frozen=True)
class VaultKeys:
    """One vault's five working keys, bound to its id and salt. Never shared between vaults."""

    vault_id: str
    salt: bytes
    enc: SecretBytes
    mac: SecretBytes
    manifest: SecretBytes
    sample: SecretBytes
    chain: SecretBytes

    def wipe(self) -> None:
        """Zero all five key buffers."""
        for key in (self.enc, self.mac, self.manifest, self.sample, self.chain):
            key.wipe()

    def __enter__(self) -> VaultKeys:
        """Use as a context manager: the keys are wiped on exit."""
        return self

    def __exit__(self, *_exc: object) -> None:
        """Wipe on leaving the ``with`` block."""
        self.wipe()


def new_vault_salt(random_bytes: Callable[[int], bytes] = os.urandom) -> bytes:
    """Draw a fresh 32-byte vault salt (vault creation and every key rotation)."""
    salt = random_bytes(VAULT_SALT_LENGTH)
    if len(salt) != VAULT_SALT_LENGTH:
        raise InvalidVaultInput(f"random source returned {len(salt)} bytes, wanted {VAULT_SALT_LENGTH}")
    return salt


def derive_vault_keys(master: SecretBytes, vault_id: str, salt: bytes) -> VaultKeys:
    """Derive enc, mac, manifest, sample and chain keys for `vault_id` under `salt`."""
    validate_vault_id(vault_id)
    if len(master) != MASTER_KEY_LENGTH:
        raise InvalidVaultInput(f"master key must be {MASTER_KEY_LENGTH} bytes, got {len(master)}")
    if len(salt) != VAULT_SALT_LENGTH:
        raise InvalidVaultInput(f"vault salt must be {VAULT_SALT_LENGTH} bytes, got {len(salt)}")
    material = master.reveal()
    keys = {label: _hkdf(material, salt, f"undercroft.v1/vault/{vault_id}/{label}") for label in KEY_LABELS}
    return VaultKeys(vault_id=vault_id, salt=bytes(salt), **keys)


def _hkdf(material: bytes, salt: bytes, info: str) -> SecretBytes:
    derived = HKDF(algorithm=SHA256(), length=32, salt=salt, info=info.encode("ascii")).derive(material)
    return SecretBytes(derived, expected_length=32)

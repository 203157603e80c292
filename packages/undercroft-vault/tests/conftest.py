"""Shared fixtures for the vault tests: fixed keys for two vaults, so no test derives Argon2 needlessly."""

from __future__ import annotations

import pytest
from undercroft_vault import SecretBytes, VaultKeys, derive_vault_keys

MASTER = bytes(range(32))
SALT_A = bytes(range(32, 64))
SALT_B = bytes(range(64, 96))


@pytest.fixture(scope="session")
def keys_a() -> VaultKeys:
    """Keys of vault 'alpha'."""
    return derive_vault_keys(SecretBytes(MASTER), "alpha", SALT_A)


@pytest.fixture(scope="session")
def keys_b() -> VaultKeys:
    """Keys of vault 'beta' (same master, its own salt)."""
    return derive_vault_keys(SecretBytes(MASTER), "beta", SALT_B)

"""The vault-id name guard: every id that reaches a path, a key label or an AAD passes here first."""

from __future__ import annotations

import re

from undercroft_vault.errors import InvalidVaultInput

__all__ = ["MAX_VAULT_ID_LENGTH", "validate_vault_id"]

#: The longest vault id accepted, in characters (ids become directory names and HKDF labels).
MAX_VAULT_ID_LENGTH = 64

_VAULT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def validate_vault_id(vault_id: str) -> str:
    """Return `vault_id` unchanged if it is a safe vault name, else raise `InvalidVaultInput`.

    A safe name is 1-64 ASCII letters, digits, ``.``, ``_`` or ``-``, starting with a letter or digit,
    and is not ``.`` or ``..``: no path separator, no traversal, no control or unit-separator bytes.
    """
    if not isinstance(vault_id, str):
        raise InvalidVaultInput(f"vault id must be a string, got {type(vault_id).__name__}")
    if not vault_id:
        raise InvalidVaultInput("vault id must not be empty")
    if len(vault_id) > MAX_VAULT_ID_LENGTH:
        raise InvalidVaultInput(f"vault id is {len(vault_id)} characters; at most {MAX_VAULT_ID_LENGTH} are allowed")
    if "/" in vault_id or "\\" in vault_id:
        raise InvalidVaultInput(f"vault id {vault_id!r} contains a path separator")
    if vault_id in {".", ".."} or ".." in vault_id:
        raise InvalidVaultInput(f"vault id {vault_id!r} looks like a path traversal")
    if _VAULT_ID.fullmatch(vault_id) is None:
        raise InvalidVaultInput(
            f"vault id {vault_id!r} may use only ASCII letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return vault_id

"""Record tags and keyed fingerprints, both HMAC-SHA256 under the vault's mac key.

Tag message: ``record_id ‖ 0x1F ‖ meta_at_rest ‖ 0x1F ‖ at_rest`` — the documented ``id ␟ meta ␟ bytes``
with the ASCII unit separator. It is unambiguous because the id and the metadata are refused if they
contain 0x1F, so only the last field (the at-rest bytes) may; compact JSON escapes control characters,
so a store's metadata never needs one. Fingerprints are domain-separated from tags and truncated to
16 bytes: they reveal equality between rows, never content. Comparisons are constant-time.
"""

from __future__ import annotations

import hmac

from undercroft_vault.errors import InvalidVaultInput, TagMismatch
from undercroft_vault.vaultkeys import VaultKeys

__all__ = [
    "FINGERPRINT_LENGTH",
    "TAG_LENGTH",
    "UNIT_SEPARATOR",
    "compute_tag",
    "constant_time_equal",
    "fingerprint",
    "tag_message",
    "verify_tag",
]

TAG_LENGTH = 32
FINGERPRINT_LENGTH = 16
UNIT_SEPARATOR = b"\x1f"
_FINGERPRINT_DOMAIN = b"undercroft.fingerprint.v1\x00"


def tag_message(record_id: str, meta_at_rest: bytes, at_rest: bytes) -> bytes:
    """The exact bytes a record tag covers; refuses a separator inside the id or the metadata."""
    if not record_id:
        raise InvalidVaultInput("record id must not be empty")
    encoded_id = record_id.encode("utf-8")
    if UNIT_SEPARATOR in encoded_id:
        raise InvalidVaultInput(f"record id {record_id!r} contains the unit separator 0x1F")
    if UNIT_SEPARATOR in meta_at_rest:
        raise InvalidVaultInput("meta_at_rest contains the unit separator 0x1F; escape it (JSON does)")
    return encoded_id + UNIT_SEPARATOR + meta_at_rest + UNIT_SEPARATOR + at_rest


def compute_tag(keys: VaultKeys, record_id: str, meta_at_rest: bytes, at_rest: bytes) -> bytes:
    """HMAC-SHA256(mac, id ␟ meta_at_rest ␟ at_rest): the 32-byte tag stored beside a record."""
    return hmac.digest(keys.mac.buffer(), tag_message(record_id, meta_at_rest, at_rest), "sha256")


def verify_tag(keys: VaultKeys, record_id: str, meta_at_rest: bytes, at_rest: bytes, tag: bytes) -> None:
    """Raise `TagMismatch` unless `tag` is the record's tag; run before any content is returned."""
    expected = compute_tag(keys, record_id, meta_at_rest, at_rest)
    if not hmac.compare_digest(expected, tag):
        raise TagMismatch(f"record {record_id!r} in vault {keys.vault_id!r} fails its HMAC tag")


def fingerprint(keys: VaultKeys, data: bytes) -> bytes:
    """A keyed 16-byte fingerprint of `data` for duplicate detection (truncated HMAC under mac)."""
    return hmac.digest(keys.mac.buffer(), _FINGERPRINT_DOMAIN + data, "sha256")[:FINGERPRINT_LENGTH]


def constant_time_equal(left: bytes, right: bytes) -> bool:
    """Compare two tags, fingerprints or digests without leaking where they differ."""
    return hmac.compare_digest(left, right)

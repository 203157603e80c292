"""The vault manifest (`vault.json`): id, level, salt, key generation and the MAC'd rollback anchor.

The MAC is HMAC-SHA256 under the vault's manifest key over a fixed binary encoding (never over the JSON
text, whose spelling may vary)::

    "undercroft.manifest.v1" ‖ lp(vault_id) ‖ lp(level) ‖ lp(salt) ‖ u64(generation)
                             ‖ lp(anchor_head) ‖ u64(anchor_count)

The manifest key is derived from the salt the manifest itself carries, so reading is: parse, check the
vault id, derive keys, verify the MAC. A manifest naming another vault, failing its MAC, or malformed is
`ManifestTampered` (a wrong passphrase reads the same way: the MAC is the only evidence there is).
Writes are durable: temp file, fsync, atomic rename, directory fsync. Every write over an existing
manifest is a compare-and-swap (`swap_manifest`): it goes through only while the file on disk is still the
key generation the writer opened under, MAC-valid under the writer's keys — a handle that opened before a
rotation can never write the old generation back over the new one (`ManifestConflict`). The compare and
the rename are serialised by the caller (the store holds the database's write lock, and a rotation the
vault's exclusive lock), not by this module.
"""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from undercroft_vault._internal.durable import fsync_directory, write_durably
from undercroft_vault._internal.encoding import lp, u64
from undercroft_vault.chain import GENESIS, Anchor
from undercroft_vault.errors import InvalidVaultInput, ManifestConflict, ManifestTampered
from undercroft_vault.keymaterial import SecretBytes
from undercroft_vault.names import validate_vault_id
from undercroft_vault.vaultkeys import VAULT_SALT_LENGTH, VaultKeys, derive_vault_keys

__all__ = [
    "LEVELS",
    "MANIFEST_FILE",
    "MANIFEST_FORMAT",
    "MAX_COUNTER",
    "STAGED_MANIFEST_FILE",
    "Level",
    "Manifest",
    "current_manifest",
    "discard_staged_manifest",
    "load_manifest",
    "promote_staged_manifest",
    "read_manifest",
    "stage_manifest",
    "swap_manifest",
    "write_manifest",
]

MANIFEST_FILE = "vault.json"
STAGED_MANIFEST_FILE = "vault.json.next"
MANIFEST_FORMAT = 1
Level = Literal["sealed", "hmac-only"]
LEVELS: tuple[Level, ...] = ("sealed", "hmac-only")
_MAC_DOMAIN = b"undercroft.manifest.v1"
#: The largest generation or anchor count a manifest can carry (both are MAC'd as unsigned 64-bit integers).
MAX_COUNTER = 2**64 - 1
_FIELDS = {"format", "vault_id", "level", "salt", "generation", "anchor", "mac"}


@dataclass(frozen=True)
class Manifest:
    """The content of `vault.json`, without its MAC (computed from the keys on every write)."""

    vault_id: str
    level: Level
    salt: bytes
    generation: int
    anchor: Anchor

    @classmethod
    def create(cls, vault_id: str, level: Level, salt: bytes, *, generation: int = 1) -> Manifest:
        """A new vault's manifest: anchored at the empty chain (genesis, zero rows)."""
        return cls(vault_id, level, salt, generation, Anchor(GENESIS, 0))

    def __post_init__(self) -> None:
        """Refuse a malformed manifest before it can be MAC'd or written."""
        validate_vault_id(self.vault_id)
        if self.level not in LEVELS:
            raise InvalidVaultInput(f"vault level {self.level!r} is not one of {', '.join(LEVELS)}")
        if len(self.salt) != VAULT_SALT_LENGTH:
            raise InvalidVaultInput(f"vault salt must be {VAULT_SALT_LENGTH} bytes, got {len(self.salt)}")
        if not 1 <= self.generation <= MAX_COUNTER:
            raise InvalidVaultInput(f"key generation must be between 1 and 2**64-1, got {self.generation}")
        if self.anchor.count > MAX_COUNTER:
            raise InvalidVaultInput(f"anchor count must be below 2**64, got {self.anchor.count}")

    def with_anchor(self, anchor: Anchor) -> Manifest:
        """This manifest re-anchored at `anchor` (after a commit, or a healed crash)."""
        return replace(self, anchor=anchor)

    def mac(self, keys: VaultKeys) -> bytes:
        """The manifest MAC under `keys` (which must belong to this vault and salt)."""
        if keys.vault_id != self.vault_id or not hmac.compare_digest(keys.salt, self.salt):
            raise InvalidVaultInput(
                f"keys of vault {keys.vault_id!r} do not belong to the manifest of {self.vault_id!r} at this salt"
            )
        message = (
            _MAC_DOMAIN
            + lp(self.vault_id.encode("ascii"))
            + lp(self.level.encode("ascii"))
            + lp(self.salt)
            + u64(self.generation)
            + lp(self.anchor.head)
            + u64(self.anchor.count)
        )
        return hmac.digest(keys.manifest.buffer(), message, "sha256")

    def to_json(self, keys: VaultKeys) -> bytes:
        """The `vault.json` bytes, MAC included (sorted keys, one trailing newline)."""
        document = {
            "format": MANIFEST_FORMAT,
            "vault_id": self.vault_id,
            "level": self.level,
            "salt": self.salt.hex(),
            "generation": self.generation,
            "anchor": {"head": self.anchor.head.hex(), "count": self.anchor.count},
            "mac": self.mac(keys).hex(),
        }
        return (json.dumps(document, sort_keys=True, indent=2) + "\n").encode("ascii")


def load_manifest(data: bytes, *, vault_id: str, master: SecretBytes) -> tuple[Manifest, VaultKeys]:
    """Parse and verify manifest bytes for `vault_id`; returns the manifest and the keys it verified under."""
    validate_vault_id(vault_id)
    manifest, mac = _parse(data)
    if manifest.vault_id != vault_id:
        raise ManifestTampered(f"manifest names vault {manifest.vault_id!r}, but it was opened as vault {vault_id!r}")
    keys = derive_vault_keys(master, manifest.vault_id, manifest.salt)
    if not hmac.compare_digest(manifest.mac(keys), mac):
        keys.wipe()
        raise ManifestTampered(
            f"manifest of vault {vault_id!r} fails its MAC: edited offline, or the key (passphrase) is wrong"
        )
    return manifest, keys


def read_manifest(
    vault_dir: Path, *, vault_id: str, master: SecretBytes, staged: bool = False
) -> tuple[Manifest, VaultKeys]:
    """Read and verify `vault.json` (or `vault.json.next` when `staged`) in `vault_dir`."""
    path = vault_dir / (STAGED_MANIFEST_FILE if staged else MANIFEST_FILE)
    return load_manifest(path.read_bytes(), vault_id=vault_id, master=master)


def write_manifest(vault_dir: Path, manifest: Manifest, keys: VaultKeys) -> None:
    """Write `vault.json` durably (temp file, fsync, atomic rename, directory fsync)."""
    write_durably(vault_dir / MANIFEST_FILE, manifest.to_json(keys))


def current_manifest(vault_dir: Path, keys: VaultKeys, *, expected_generation: int) -> Manifest:
    """The manifest on disk, checked as still `expected_generation` and MAC-valid under `keys`.

    `ManifestConflict` (an integrity verdict) when the file names another vault, generation or salt, fails
    its MAC under `keys`, is malformed, or is gone: it was replaced while this handle held the vault open.
    """
    vault_id = keys.vault_id
    path = vault_dir / MANIFEST_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ManifestConflict(f"vault {vault_id!r}: vault.json vanished while the vault was open") from None
    try:
        current, mac = _parse(data)
    except ManifestTampered as error:
        raise ManifestConflict(f"vault {vault_id!r}: vault.json was replaced while open: {error}") from None
    if (
        current.vault_id != vault_id
        or current.generation != expected_generation
        or not hmac.compare_digest(current.salt, keys.salt)
        or not hmac.compare_digest(current.mac(keys), mac)
    ):
        raise ManifestConflict(
            f"vault {vault_id!r}: vault.json is no longer key generation {expected_generation} under this "
            f"handle's keys (it names generation {current.generation}); it was replaced while the vault was open"
        )
    return current


def swap_manifest(vault_dir: Path, manifest: Manifest, keys: VaultKeys, *, expected_generation: int) -> None:
    """Replace `vault.json` with `manifest` only if the file on disk is still `expected_generation` under `keys`.

    `ManifestConflict` (see `current_manifest`) and nothing written otherwise.
    """
    current_manifest(vault_dir, keys, expected_generation=expected_generation)
    write_durably(vault_dir / MANIFEST_FILE, manifest.to_json(keys))


def stage_manifest(vault_dir: Path, manifest: Manifest, keys: VaultKeys) -> None:
    """Phase one of a rotation: write `vault.json.next` durably under the NEW keys, before the commit."""
    write_durably(vault_dir / STAGED_MANIFEST_FILE, manifest.to_json(keys))


def promote_staged_manifest(vault_dir: Path) -> None:
    """Phase two, after the commit: atomically replace `vault.json` with `vault.json.next`."""
    (vault_dir / STAGED_MANIFEST_FILE).replace(vault_dir / MANIFEST_FILE)
    fsync_directory(vault_dir)


def discard_staged_manifest(vault_dir: Path) -> None:
    """Remove a staged `vault.json.next` whose rotation never committed (writable opens only)."""
    (vault_dir / STAGED_MANIFEST_FILE).unlink(missing_ok=True)
    fsync_directory(vault_dir)


def _parse(data: bytes) -> tuple[Manifest, bytes]:
    try:
        document = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ManifestTampered("manifest is not valid JSON: nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, and an integer past the digit limit
        raise ManifestTampered(f"manifest is not valid JSON: {exc}") from None
    if not isinstance(document, dict) or set(document) != _FIELDS:
        raise ManifestTampered(f"manifest must hold exactly the fields {', '.join(sorted(_FIELDS))}")
    if document["format"] != MANIFEST_FORMAT:
        raise ManifestTampered(f"manifest format {document['format']!r} is not {MANIFEST_FORMAT}")
    anchor = document["anchor"]
    if not isinstance(anchor, dict) or set(anchor) != {"head", "count"}:
        raise ManifestTampered("manifest anchor must hold exactly 'head' and 'count'")
    try:
        manifest = Manifest(
            vault_id=_typed(document, "vault_id", str),
            level=_typed(document, "level", str),
            salt=_hex(document, "salt"),
            generation=_typed(document, "generation", int),
            anchor=Anchor(_hex(anchor, "head"), _typed(anchor, "count", int)),
        )
    except InvalidVaultInput as exc:
        raise ManifestTampered(f"manifest is malformed: {exc}") from None
    return manifest, _hex(document, "mac")


def _typed(document: dict[str, Any], field: str, kind: type) -> Any:
    value = document[field]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ManifestTampered(f"manifest field {field!r} must be {kind.__name__}, got {type(value).__name__}")
    return value


def _hex(document: dict[str, Any], field: str) -> bytes:
    value = _typed(document, field, str)
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise ManifestTampered(f"manifest field {field!r} is not hex") from None

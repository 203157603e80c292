"""Typed errors of `undercroft_vault`.

Three families, so a surface can map each to its exit code without reading messages:

* bad input (`InvalidVaultInput`, an `undercroft_core.errors.InvalidInput`): refused before anything is
  derived, sealed or written — exit 1 / HTTP 400;
* run failures (`KeyDeclarationRefused`, `BundleRefused`, `SizeLimitExceeded`): the request cannot be
  served as declared — exit 1 / HTTP 4xx;
* integrity verdicts (`IntegrityFailure` and its subclasses, each an
  `undercroft_core.errors.IntegrityError`): something at rest or in transit failed verification —
  exit 2 / HTTP 409 with ``"class": "integrity"``.
"""

from __future__ import annotations

from undercroft_core.errors import IntegrityError, InvalidInput, UndercroftError

__all__ = [
    "BatchOpenFailed",
    "BundleOpenFailed",
    "BundleRefused",
    "ChainBroken",
    "Error",
    "IntegrityFailure",
    "InvalidVaultInput",
    "KeyDeclarationRefused",
    "ManifestConflict",
    "ManifestTampered",
    "OpenFailed",
    "RollbackDetected",
    "SignatureRefused",
    "SizeLimitExceeded",
    "TagMismatch",
]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_vault`."""


class InvalidVaultInput(Error, InvalidInput):
    """A name, id, key string, length or parameter was refused before any cryptography ran."""


class KeyDeclarationRefused(Error):
    """The declared key source contradicts the key files on disk; nothing was derived or written."""


class SizeLimitExceeded(Error):
    """A payload or a decoded frame exceeds the hard bound the sealing layer keeps (16 MiB)."""


class BundleRefused(Error):
    """A bundle was refused for its version or identity kind, before any decryption was attempted."""


class IntegrityFailure(Error, IntegrityError):
    """Base of the vault's integrity verdicts (exit 2 / HTTP 409)."""


class OpenFailed(IntegrityFailure):
    """A sealed blob failed to open: wrong vault, record, domain or key, or the bytes were altered."""


class BatchOpenFailed(OpenFailed):
    """One blob of a `Sealer.open_many` batch failed to open; ``index`` is its position in the batch."""

    def __init__(self, index: int, message: str) -> None:
        """Name the failing position and why."""
        super().__init__(message)
        self.index = index


class TagMismatch(IntegrityFailure):
    """A record's HMAC tag does not verify over its id, metadata and at-rest bytes."""


class ChainBroken(IntegrityFailure):
    """Replaying the audit rows does not reproduce the recorded chain head."""


class ManifestTampered(IntegrityFailure):
    """The manifest fails its MAC, names another vault, or is malformed."""


class ManifestConflict(ManifestTampered):
    """A manifest write found vault.json replaced (another generation or MAC) since the writer opened the vault."""


class BundleOpenFailed(IntegrityFailure):
    """An export bundle failed to open: altered, spliced, mis-addressed or truncated."""


class SignatureRefused(IntegrityFailure):
    """A signed bundle manifest was refused: bad or missing signature, unpinned sender, expiry, digest."""


class RollbackDetected(IntegrityFailure):
    """The audit rows no longer reproduce a witness: a rollback or rewrite at or below its height."""

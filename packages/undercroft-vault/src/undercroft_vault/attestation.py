"""Signed bundle manifests: who wrote a bundle, what it claims, and a payload digest always checked.

A document is JSON ``{"manifest": {...}, "signature": {...} | null}``. The signed message is
``"undercroft.bundle-manifest.v1" 0x00 scheme 0x00 ‖ lp(sender) ‖ canonical(manifest)`` where the
canonical form is compact sorted-key ASCII JSON. The scheme and the sender are inside the message, so
the Ed25519 half of a hybrid signature cannot be stripped off and passed as a legacy signature.

Verification, in order: the payload digest (unconditionally, signed or not); a signature naming no
sender is refused rather than skipped; the scheme must match the sender's kind; every half must verify;
a pinned sender must match; an expired manifest is refused. Unsigned documents read as ``unattested``
and are refused outright when a sender was pinned.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey
from pqcrypto.sign import ml_dsa_65

from undercroft_vault._internal.encoding import lp
from undercroft_vault.errors import InvalidVaultInput, SignatureRefused
from undercroft_vault.signing import Sender, SigningIdentity, parse_sender

__all__ = [
    "Attestation",
    "AttestationStatus",
    "BundleManifest",
    "sign_bundle_manifest",
    "unsigned_bundle_manifest",
    "verify_bundle_manifest",
]

AttestationStatus = Literal["hybrid", "legacy-ed25519", "unattested"]
_DOMAIN = b"undercroft.bundle-manifest.v1\x00"
_SCHEME_LEGACY = "ed25519"
_SCHEME_HYBRID = "ed25519+ml-dsa-65"
_MANIFEST_FIELDS = {"scope", "trust_claim", "expires_at", "counts", "provenance", "payload_digest"}


@dataclass(frozen=True)
class BundleManifest:
    """What a sender states about a bundle: scope, trust claim, expiry, counts, provenance, payload digest."""

    scope: str
    trust_claim: str
    expires_at: datetime
    counts: Mapping[str, int] = field(default_factory=dict)
    provenance: Mapping[str, str] = field(default_factory=dict)
    payload_digest: str = ""

    @classmethod
    def describe(
        cls,
        payload: bytes,
        *,
        scope: str,
        trust_claim: str,
        expires_at: datetime,
        counts: Mapping[str, int],
        provenance: Mapping[str, str],
    ) -> BundleManifest:
        """A manifest for `payload` (its SHA-256 digest filled in); `expires_at` must be timezone-aware."""
        return cls(scope, trust_claim, expires_at, dict(counts), dict(provenance), hashlib.sha256(payload).hexdigest())

    def __post_init__(self) -> None:
        """Refuse a naive expiry or malformed counts before anything is signed."""
        if self.expires_at.tzinfo is None:
            raise InvalidVaultInput("expires_at must be timezone-aware")
        if any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in self.counts.values()):
            raise InvalidVaultInput("counts must be non-negative integers")

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form."""
        return {
            "scope": self.scope,
            "trust_claim": self.trust_claim,
            "expires_at": self.expires_at.isoformat(),
            "counts": dict(self.counts),
            "provenance": dict(self.provenance),
            "payload_digest": self.payload_digest,
        }

    def canonical(self) -> bytes:
        """The exact bytes a signature covers (compact, sorted keys, ASCII)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


@dataclass(frozen=True)
class Attestation:
    """The verdict on a document that passed: its manifest, how it was attested, and by whom."""

    manifest: BundleManifest
    status: AttestationStatus
    sender: str | None


def _message(scheme: str, sender: str, manifest: BundleManifest) -> bytes:
    return _DOMAIN + scheme.encode("ascii") + b"\x00" + lp(sender.encode("ascii")) + manifest.canonical()


def sign_bundle_manifest(manifest: BundleManifest, identity: SigningIdentity) -> bytes:
    """The signed document (JSON bytes): Ed25519 alone for a legacy identity, both halves for a hybrid one."""
    sender = identity.sender().encode()
    scheme = _SCHEME_HYBRID if identity.hybrid else _SCHEME_LEGACY
    message = _message(scheme, sender, manifest)
    signature: dict[str, str] = {
        "scheme": scheme,
        "sender": sender,
        "ed25519": SigningKey(identity.ed25519_seed.reveal()).sign(message).signature.hex(),
    }
    if identity.mldsa_secret is not None:
        signature["ml_dsa_65"] = bytes(ml_dsa_65.sign(identity.mldsa_secret.reveal(), message)).hex()
    document = {"manifest": manifest.to_dict(), "signature": signature}
    return json.dumps(document, sort_keys=True, indent=2).encode("ascii")


def unsigned_bundle_manifest(manifest: BundleManifest) -> bytes:
    """The document for an export without a signing identity (imports read it as unattested)."""
    return json.dumps({"manifest": manifest.to_dict(), "signature": None}, sort_keys=True, indent=2).encode("ascii")


def verify_bundle_manifest(document: bytes, payload: bytes, *, now: datetime, pinned_sender: str | None) -> Attestation:
    """Verify a manifest document against `payload` at time `now`; `SignatureRefused` on any failure."""
    if now.tzinfo is None:
        raise InvalidVaultInput("now must be timezone-aware")
    parsed, signature = _parse(document)
    if not hmac.compare_digest(parsed.payload_digest, hashlib.sha256(payload).hexdigest()):
        raise SignatureRefused("payload digest does not match the manifest: the payload was altered or swapped")
    if signature is None:
        if pinned_sender is not None:
            raise SignatureRefused("a sender was pinned but the bundle manifest is unsigned")
        status: AttestationStatus = "unattested"
        sender_text: str | None = None
    else:
        sender, status = _check_signature(parsed, signature)
        sender_text = sender.encode()
        if pinned_sender is not None and not hmac.compare_digest(parse_sender(pinned_sender).encode(), sender_text):
            raise SignatureRefused(f"signed by sender {sender_text[:16]}…, not the pinned sender")
    if now >= parsed.expires_at:
        raise SignatureRefused(f"bundle manifest expired at {parsed.expires_at.isoformat()}")
    return Attestation(parsed, status, sender_text)


def _check_signature(manifest: BundleManifest, signature: Mapping[str, Any]) -> tuple[Sender, AttestationStatus]:
    sender_text = signature.get("sender")
    if not isinstance(sender_text, str) or not sender_text:
        raise SignatureRefused("the manifest carries a signature but names no sender; refused, not skipped")
    try:
        sender = parse_sender(sender_text)
    except InvalidVaultInput as exc:
        raise SignatureRefused(f"signature sender is malformed: {exc}") from None
    scheme = signature.get("scheme")
    expected = _SCHEME_HYBRID if sender.hybrid else _SCHEME_LEGACY
    if scheme != expected:
        raise SignatureRefused(f"signature scheme {scheme!r} does not match a {expected} sender")
    message = _message(expected, sender.encode(), manifest)
    try:
        VerifyKey(sender.ed25519).verify(message, bytes.fromhex(str(signature.get("ed25519", ""))))
    except (BadSignatureError, ValueError):
        raise SignatureRefused("the Ed25519 signature does not verify") from None
    if sender.mldsa is None:
        return sender, "legacy-ed25519"
    try:
        ml_dsa_65.verify(sender.mldsa, message, bytes.fromhex(str(signature.get("ml_dsa_65", ""))))
    except ValueError:  # pqcrypto's InvalidSignatureError is a ValueError, as is bad hex
        raise SignatureRefused("the ML-DSA-65 signature does not verify") from None
    return sender, "hybrid"


def _parse(document: bytes) -> tuple[BundleManifest, Mapping[str, Any] | None]:
    try:
        data = json.loads(document.decode("utf-8"))
        body, signature = data["manifest"], data["signature"]
        if not isinstance(body, dict) or set(body) != _MANIFEST_FIELDS:
            raise ValueError(f"manifest must hold exactly {', '.join(sorted(_MANIFEST_FIELDS))}")
        if signature is not None and not isinstance(signature, dict):
            raise ValueError("signature must be an object or null")
        manifest = BundleManifest(
            scope=str(body["scope"]),
            trust_claim=str(body["trust_claim"]),
            expires_at=datetime.fromisoformat(str(body["expires_at"])),
            counts=dict(body["counts"]),
            provenance=dict(body["provenance"]),
            payload_digest=str(body["payload_digest"]),
        )
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise SignatureRefused(f"bundle manifest document is malformed: {exc}") from None
    return manifest, signature

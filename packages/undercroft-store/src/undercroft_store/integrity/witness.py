"""The external witness: a small document, kept off the machine, that sees a GENUINE earlier state restored.

`emit_witness(target, *, signer=None) -> WitnessDocument` binds the audit row count and the vault library's
unkeyed, count-bound digest over the rows' preserved (record_id, tag, at) bytes (`witness_digest`), with
the chain head at that height and the key generation riding as corroboration. It is deliberately NOT a
head-only document: both chain steps are keyed, a rotation re-steps every head, and the offline attacker
holds the key.

`check_witness_document(target, document, *, pinned_sender=None) -> WitnessVerdict` answers ``ok`` when the
chain extends the witness (``writes_since`` rows appended above it) and raises `WitnessFailed` (an integrity
verdict, exit 2) when the vault was rolled back, erased or rewritten at or below the witnessed height — the
case verify is green on by construction. After a rotation the head no longer corroborates and the verdict
says so (``corroboration = "retired by rotation"``) without failing. Always a read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from undercroft_core.errors import InvalidInput
from undercroft_vault import (
    BundleManifest,
    RollbackDetected,
    SignatureRefused,
    SigningIdentity,
    Witness,
    check_witness,
    constant_time_equal,
    replay,
    sign_bundle_manifest,
    verify_bundle_manifest,
    witness_digest,
)

from undercroft_store.errors import Error, StoreIntegrityError
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.governance import context_of as _context_of
from undercroft_store.kernel.label_guard import label_guard
from undercroft_store.store import VaultStore

__all__ = [
    "WITNESS_FORMAT",
    "InvalidWitness",
    "WitnessDocument",
    "WitnessFailed",
    "WitnessVerdict",
    "check_witness_document",
    "emit_witness",
]

#: The ``format`` field of every witness document.
WITNESS_FORMAT = "undercroft.witness.v1"
_NEVER = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


class InvalidWitness(Error, InvalidInput):
    """A witness document that does not parse (bad input, exit 1)."""


class WitnessFailed(StoreIntegrityError):
    """The vault was rolled back, erased or rewritten below the witness, or the witness's signature failed."""


@dataclass(frozen=True)
class WitnessDocument:
    """What is kept off the machine: vault, row count, digest, head and generation at that height, when."""

    vault: str
    count: int
    digest: str
    head: str
    generation: int
    emitted_at: str
    attestation: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        """The signed part."""
        return {
            "format": WITNESS_FORMAT,
            "vault": self.vault,
            "count": self.count,
            "digest": self.digest,
            "head": self.head,
            "generation": self.generation,
            "emitted_at": self.emitted_at,
        }

    def canonical(self) -> bytes:
        """The exact bytes a signature covers."""
        return json.dumps(self.body(), sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")

    def to_json(self) -> str:
        """The document as written by ``witness emit``."""
        return json.dumps({**self.body(), "attestation": self.attestation}, sort_keys=True, indent=2)

    @classmethod
    def from_json(cls, document: bytes | str) -> WitnessDocument:
        """Parse; `InvalidWitness` on anything malformed."""
        try:
            data = json.loads(document)
        except (ValueError, UnicodeDecodeError) as error:
            raise InvalidWitness(f"witness is not JSON: {error}") from None
        if not isinstance(data, dict) or data.get("format") != WITNESS_FORMAT:
            raise InvalidWitness(f"witness must be a JSON object with format {WITNESS_FORMAT!r}")
        fields: dict[str, Any] = {}
        for key, kind in (("vault", str), ("count", int), ("digest", str), ("head", str), ("generation", int)):
            value = data.get(key)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise InvalidWitness(f"witness field {key!r} must be a {kind.__name__}")
            fields[key] = value
        for key in ("digest", "head"):
            try:
                if len(bytes.fromhex(fields[key])) != 32:
                    raise ValueError
            except ValueError:
                raise InvalidWitness(f"witness field {key!r} must be 64 hex characters") from None
        if fields["count"] < 0:
            raise InvalidWitness("witness count must not be negative")
        attestation = data.get("attestation")
        if attestation is not None and not isinstance(attestation, dict):
            raise InvalidWitness("witness attestation must be an object or null")
        return cls(**fields, emitted_at=str(data.get("emitted_at", "")), attestation=attestation)


@dataclass(frozen=True)
class WitnessVerdict:
    """A passing check: rows appended since, whether the head corroborates, how the witness was signed."""

    writes_since: int
    corroboration: str
    signature: str

    def render(self) -> str:
        """Lines ending in ``WITNESS OK``."""
        return "\n".join(
            [
                f"writes since the witness: {self.writes_since}",
                f"head corroboration:       {self.corroboration}",
                f"signature:                {self.signature}",
                "WITNESS OK",
            ]
        )


def emit_witness(target: VaultStore | VaultContext, *, signer: SigningIdentity | None = None) -> WitnessDocument:
    """The witness of the vault as it stands (a read; the chain must replay first)."""
    context = _context_of(target)
    connection = context.connection
    connection.execute("BEGIN")
    try:
        rows = label_guard(context).replayed_rows()
        head = replay(context.keys, rows)
    finally:
        connection.execute("COMMIT")
    witness = witness_digest(rows)
    document = WitnessDocument(
        vault=context.vault_id,
        count=witness.count,
        digest=witness.digest.hex(),
        head=head.hex(),
        generation=context.manifest.generation,
        emitted_at=context.now(),
    )
    if signer is None:
        return document
    claims = BundleManifest.describe(
        document.canonical(),
        scope=f"witness:{context.vault_id}",
        trust_claim="operator",
        expires_at=_NEVER,
        counts={"rows": witness.count},
        provenance={"digest": document.digest},
    )
    attestation: dict[str, Any] = json.loads(sign_bundle_manifest(claims, signer))
    return WitnessDocument(**{**document.__dict__, "attestation": attestation})


def _signature(document: WitnessDocument, pinned_sender: str | None) -> str:
    if document.attestation is None:
        if pinned_sender is not None:
            raise WitnessFailed("a sender was pinned but the witness is unsigned")
        return "unsigned"
    try:
        verdict = verify_bundle_manifest(
            json.dumps(document.attestation).encode("ascii"),
            document.canonical(),
            now=datetime.now(UTC),
            pinned_sender=pinned_sender,
        )
    except (SignatureRefused, UnicodeEncodeError) as error:
        raise WitnessFailed(f"witness signature refused: {error}") from None
    if verdict.manifest.scope != f"witness:{document.vault}":
        raise WitnessFailed(f"witness signature scope {verdict.manifest.scope!r} is not this vault's")
    return verdict.status if verdict.sender is None else f"{verdict.status} (sender {verdict.sender[:16]}…)"


def check_witness_document(
    target: VaultStore | VaultContext, document: WitnessDocument | bytes | str, *, pinned_sender: str | None = None
) -> WitnessVerdict:
    """Check the vault still extends ``document``; `WitnessFailed` (exit 2) on a rollback below it."""
    context = _context_of(target)
    witness = document if isinstance(document, WitnessDocument) else WitnessDocument.from_json(document)
    if witness.vault != context.vault_id:
        raise WitnessFailed(f"the witness names vault {witness.vault!r}, this is {context.vault_id!r}")
    signature = _signature(witness, pinned_sender)
    connection = context.connection
    connection.execute("BEGIN")
    try:
        rows = label_guard(context).replayed_rows()
    finally:
        connection.execute("COMMIT")
    try:
        since = check_witness(rows, Witness(witness.count, bytes.fromhex(witness.digest)))
    except RollbackDetected as error:
        raise WitnessFailed(f"vault {context.vault_id!r}: {error} (WITNESS FAILED)") from None
    generation = context.manifest.generation
    if generation != witness.generation:
        corroboration = f"retired by rotation (witnessed at key generation {witness.generation}, now {generation})"
    elif constant_time_equal(replay(context.keys, rows[: witness.count]), bytes.fromhex(witness.head)):
        corroboration = "head matches"
    else:
        raise WitnessFailed(f"vault {context.vault_id!r}: the head at the witnessed height does not corroborate")
    return WitnessVerdict(since, corroboration, signature)

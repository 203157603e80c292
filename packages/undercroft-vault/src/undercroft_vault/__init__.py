"""Undercroft's embeddable crypto layer: keys, sealing, tags, audit chain, manifest, export bundles.

Everything the store does to a byte at rest goes through these names; docs/vault.md is the guide.

The names load on first use (PEP 562), as :mod:`undercroft_core`'s do: a store that seals and opens drawers
never pays for the signing stack (``nacl.signing``, ``pqcrypto``) that only bundles and attestations use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from undercroft_core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from undercroft_vault.attestation import (
        Attestation,
        BundleManifest,
        sign_bundle_manifest,
        unsigned_bundle_manifest,
        verify_bundle_manifest,
    )
    from undercroft_vault.blindindex import BlindIndex
    from undercroft_vault.bundles import OpenedBundle, bundle_version, open_bundle, seal_bundle
    from undercroft_vault.chain import (
        GENESIS,
        Anchor,
        AnchorPosition,
        AuditRow,
        Witness,
        chain_step,
        check_witness,
        locate_anchor,
        reconcile,
        replay,
        witness_digest,
    )
    from undercroft_vault.domains import Domain, DomainKind
    from undercroft_vault.errors import (
        BatchOpenFailed,
        BundleOpenFailed,
        BundleRefused,
        ChainBroken,
        Error,
        IntegrityFailure,
        InvalidVaultInput,
        KeyDeclarationRefused,
        ManifestConflict,
        ManifestTampered,
        OpenFailed,
        RollbackDetected,
        SignatureRefused,
        SizeLimitExceeded,
        TagMismatch,
    )
    from undercroft_vault.integrity import compute_tag, constant_time_equal, fingerprint, verify_tag
    from undercroft_vault.keymaterial import SecretBytes
    from undercroft_vault.manifest import (
        Manifest,
        current_manifest,
        discard_staged_manifest,
        load_manifest,
        promote_staged_manifest,
        read_manifest,
        stage_manifest,
        swap_manifest,
        write_manifest,
    )
    from undercroft_vault.masterkey import MasterKey, derive_passphrase_key, open_master_key
    from undercroft_vault.names import validate_vault_id
    from undercroft_vault.recipients import Identity, Recipient, generate_identity, parse_identity, parse_recipient
    from undercroft_vault.rotation import RotationOutcome, RotationState, keycheck_marker, resolve_rotation
    from undercroft_vault.sealing import Sealer
    from undercroft_vault.signing import (
        Sender,
        SigningIdentity,
        generate_signing_identity,
        parse_sender,
        parse_signing_identity,
    )
    from undercroft_vault.vaultkeys import VaultKeys, derive_vault_keys, new_vault_salt

__version__ = "0.1.0"

__all__ = [
    "GENESIS",
    "Anchor",
    "AnchorPosition",
    "Attestation",
    "AuditRow",
    "BatchOpenFailed",
    "BlindIndex",
    "BundleManifest",
    "BundleOpenFailed",
    "BundleRefused",
    "ChainBroken",
    "Domain",
    "DomainKind",
    "Error",
    "Identity",
    "IntegrityFailure",
    "InvalidVaultInput",
    "KeyDeclarationRefused",
    "Manifest",
    "ManifestConflict",
    "ManifestTampered",
    "MasterKey",
    "OpenFailed",
    "OpenedBundle",
    "Recipient",
    "RollbackDetected",
    "RotationOutcome",
    "RotationState",
    "Sealer",
    "SecretBytes",
    "Sender",
    "SignatureRefused",
    "SigningIdentity",
    "SizeLimitExceeded",
    "TagMismatch",
    "VaultKeys",
    "Witness",
    "__version__",
    "bundle_version",
    "chain_step",
    "check_witness",
    "compute_tag",
    "constant_time_equal",
    "current_manifest",
    "derive_passphrase_key",
    "derive_vault_keys",
    "discard_staged_manifest",
    "fingerprint",
    "generate_identity",
    "generate_signing_identity",
    "keycheck_marker",
    "load_manifest",
    "locate_anchor",
    "new_vault_salt",
    "open_bundle",
    "open_master_key",
    "parse_identity",
    "parse_recipient",
    "parse_sender",
    "parse_signing_identity",
    "promote_staged_manifest",
    "read_manifest",
    "reconcile",
    "replay",
    "resolve_rotation",
    "seal_bundle",
    "sign_bundle_manifest",
    "stage_manifest",
    "swap_manifest",
    "unsigned_bundle_manifest",
    "validate_vault_id",
    "verify_bundle_manifest",
    "verify_tag",
    "witness_digest",
    "write_manifest",
]


#: Each exported name -> the submodule that defines it (a test checks it against ``__all__``).
_EXPORTS: dict[str, str] = {
    "Attestation": "undercroft_vault.attestation",
    "BundleManifest": "undercroft_vault.attestation",
    "sign_bundle_manifest": "undercroft_vault.attestation",
    "unsigned_bundle_manifest": "undercroft_vault.attestation",
    "verify_bundle_manifest": "undercroft_vault.attestation",
    "BlindIndex": "undercroft_vault.blindindex",
    "OpenedBundle": "undercroft_vault.bundles",
    "bundle_version": "undercroft_vault.bundles",
    "open_bundle": "undercroft_vault.bundles",
    "seal_bundle": "undercroft_vault.bundles",
    "GENESIS": "undercroft_vault.chain",
    "Anchor": "undercroft_vault.chain",
    "AnchorPosition": "undercroft_vault.chain",
    "AuditRow": "undercroft_vault.chain",
    "Witness": "undercroft_vault.chain",
    "chain_step": "undercroft_vault.chain",
    "check_witness": "undercroft_vault.chain",
    "locate_anchor": "undercroft_vault.chain",
    "reconcile": "undercroft_vault.chain",
    "replay": "undercroft_vault.chain",
    "witness_digest": "undercroft_vault.chain",
    "Domain": "undercroft_vault.domains",
    "DomainKind": "undercroft_vault.domains",
    "BatchOpenFailed": "undercroft_vault.errors",
    "BundleOpenFailed": "undercroft_vault.errors",
    "BundleRefused": "undercroft_vault.errors",
    "ChainBroken": "undercroft_vault.errors",
    "Error": "undercroft_vault.errors",
    "IntegrityFailure": "undercroft_vault.errors",
    "InvalidVaultInput": "undercroft_vault.errors",
    "KeyDeclarationRefused": "undercroft_vault.errors",
    "ManifestConflict": "undercroft_vault.errors",
    "ManifestTampered": "undercroft_vault.errors",
    "OpenFailed": "undercroft_vault.errors",
    "RollbackDetected": "undercroft_vault.errors",
    "SignatureRefused": "undercroft_vault.errors",
    "SizeLimitExceeded": "undercroft_vault.errors",
    "TagMismatch": "undercroft_vault.errors",
    "compute_tag": "undercroft_vault.integrity",
    "constant_time_equal": "undercroft_vault.integrity",
    "fingerprint": "undercroft_vault.integrity",
    "verify_tag": "undercroft_vault.integrity",
    "SecretBytes": "undercroft_vault.keymaterial",
    "Manifest": "undercroft_vault.manifest",
    "current_manifest": "undercroft_vault.manifest",
    "discard_staged_manifest": "undercroft_vault.manifest",
    "load_manifest": "undercroft_vault.manifest",
    "promote_staged_manifest": "undercroft_vault.manifest",
    "read_manifest": "undercroft_vault.manifest",
    "stage_manifest": "undercroft_vault.manifest",
    "swap_manifest": "undercroft_vault.manifest",
    "write_manifest": "undercroft_vault.manifest",
    "MasterKey": "undercroft_vault.masterkey",
    "derive_passphrase_key": "undercroft_vault.masterkey",
    "open_master_key": "undercroft_vault.masterkey",
    "validate_vault_id": "undercroft_vault.names",
    "Identity": "undercroft_vault.recipients",
    "Recipient": "undercroft_vault.recipients",
    "generate_identity": "undercroft_vault.recipients",
    "parse_identity": "undercroft_vault.recipients",
    "parse_recipient": "undercroft_vault.recipients",
    "RotationOutcome": "undercroft_vault.rotation",
    "RotationState": "undercroft_vault.rotation",
    "keycheck_marker": "undercroft_vault.rotation",
    "resolve_rotation": "undercroft_vault.rotation",
    "Sealer": "undercroft_vault.sealing",
    "Sender": "undercroft_vault.signing",
    "SigningIdentity": "undercroft_vault.signing",
    "generate_signing_identity": "undercroft_vault.signing",
    "parse_sender": "undercroft_vault.signing",
    "parse_signing_identity": "undercroft_vault.signing",
    "VaultKeys": "undercroft_vault.vaultkeys",
    "derive_vault_keys": "undercroft_vault.vaultkeys",
    "new_vault_salt": "undercroft_vault.vaultkeys",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, __all__)

"""Undercroft's embeddable crypto layer: keys, sealing, tags, audit chain, manifest, export bundles.

Everything the store does to a byte at rest goes through these names; docs/vault.md is the guide.
"""

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

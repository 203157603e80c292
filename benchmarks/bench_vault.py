"""Per-operation cost of the vault layer beside the raw primitives, measured in the same run.

    python benchmarks/bench_vault.py            # full run
    python benchmarks/bench_vault.py --smoke    # a few seconds: checks the instrument works

Each line prints the layer's cost, the raw baseline (libsodium XChaCha20-Poly1305 via PyNaCl, stdlib
HMAC-SHA256, zstd) and their ratio. The target is under 2x for 800-byte drawers on seal, open and tag.
"""

from __future__ import annotations

import argparse
import hmac
import os
import sys
import time
from collections.abc import Callable

import zstandard
from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt, crypto_aead_xchacha20poly1305_ietf_encrypt
from undercroft_vault import (
    GENESIS,
    AuditRow,
    Domain,
    Sealer,
    SecretBytes,
    chain_step,
    compute_tag,
    derive_vault_keys,
    generate_identity,
    open_bundle,
    seal_bundle,
)


def per_call(fn: Callable[[], object], repeats: int) -> float:
    """Best-of-three mean seconds per call."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny run, checks the instrument only")
    args = parser.parse_args()
    n = 200 if args.smoke else 20_000
    n_bundle = 5 if args.smoke else 300

    words = b"the drawer holds the exact words a user saved, verbatim, never summarised; "
    drawer = (words * 12)[:800]
    keys = derive_vault_keys(SecretBytes(os.urandom(32)), "bench", os.urandom(32))
    sealer = Sealer(keys)
    domain = Domain.content("drawer-0001")
    sealed = sealer.seal(domain, drawer)
    enc = keys.enc.reveal()
    mac = keys.mac.reveal()
    aad = sealer.aad(domain)
    zc, zd = zstandard.ZstdCompressor(level=3, write_content_size=True), zstandard.ZstdDecompressor()
    frame = zc.compress(drawer)
    raw_nonce = os.urandom(24)
    raw_ct = crypto_aead_xchacha20poly1305_ietf_encrypt(frame, aad, raw_nonce, enc)
    meta = b'{"wing":"w","room":"r","kind":"note"}'
    row = AuditRow("drawer-0001", os.urandom(32), "2026-01-01T00:00:00Z")
    message = b"drawer-0001\x1f" + meta + b"\x1f" + sealed

    def raw_seal() -> bytes:
        return crypto_aead_xchacha20poly1305_ietf_encrypt(zc.compress(drawer), aad, os.urandom(24), enc)

    def raw_open() -> bytes:
        return zd.decompress(crypto_aead_xchacha20poly1305_ietf_decrypt(raw_ct, aad, raw_nonce, enc))

    rows: list[tuple[str, float, float]] = [
        (
            "seal 800 B (zstd + XChaCha20-Poly1305)",
            per_call(lambda: sealer.seal(domain, drawer), n),
            per_call(raw_seal, n),
        ),
        ("open 800 B", per_call(lambda: sealer.open(domain, sealed), n), per_call(raw_open, n)),
        (
            "tag (HMAC-SHA256 id/meta/bytes)",
            per_call(lambda: compute_tag(keys, "drawer-0001", meta, sealed), n),
            per_call(lambda: hmac.digest(mac, message, "sha256"), n),
        ),
        (
            "chain step (v2)",
            per_call(lambda: chain_step(keys, GENESIS, row), n),
            per_call(lambda: hmac.digest(mac, GENESIS + row.tag, "sha256"), n),
        ),
    ]
    identity = generate_identity()
    recipient = identity.recipient()
    payload = os.urandom(64 * 1024)
    bundle = seal_bundle(recipient, payload)
    legacy = generate_identity(hybrid=False)
    raw_bundle = crypto_aead_xchacha20poly1305_ietf_encrypt(payload, b"", raw_nonce, enc)
    rows += [
        (
            "bundle v2 create (64 KiB)",
            per_call(lambda: seal_bundle(recipient, payload), n_bundle),
            per_call(lambda: crypto_aead_xchacha20poly1305_ietf_encrypt(payload, b"", os.urandom(24), enc), n_bundle),
        ),
        (
            "bundle v2 open (64 KiB)",
            per_call(lambda: open_bundle(identity, bundle), n_bundle),
            per_call(lambda: crypto_aead_xchacha20poly1305_ietf_decrypt(raw_bundle, b"", raw_nonce, enc), n_bundle),
        ),
        (
            "bundle v1 create (64 KiB)",
            per_call(lambda: seal_bundle(legacy.recipient(), payload), n_bundle),
            per_call(lambda: crypto_aead_xchacha20poly1305_ietf_encrypt(payload, b"", os.urandom(24), enc), n_bundle),
        ),
    ]
    print(f"bench_vault ({'smoke' if args.smoke else 'full'}: {n} calls per op, {n_bundle} per bundle op)")
    print(f"{'operation':42} {'layer':>10} {'raw':>10} {'ratio':>7}")
    for name, layer, raw in rows:
        print(f"{name:42} {layer * 1e6:8.2f}us {raw * 1e6:8.2f}us {layer / raw:6.2f}x")
    print("(bundle baselines are the bare AEAD: the gap is X25519 + ML-KEM-768 + HKDF, by design)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

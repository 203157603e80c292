"""Key rotation rate beside the raw per-drawer crypto it must do, measured in the same run.

    python benchmarks/bench_rotation.py            # 10k sealed drawers
    python benchmarks/bench_rotation.py --smoke    # 300 drawers: checks the instrument works

Figures: rotation of a sealed vault (drawers/s: verify, open + re-seal content and embedding, re-tag,
re-fingerprint, re-fold the chain, one transaction, manifest swap) beside the raw primitive cost of the
same crypto per drawer (open + seal of an 800-byte content and a 388-byte embedding, one HMAC tag, one
fingerprint) with no SQLite and no verify; and a backup create (online snapshot + verify of the copy).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from undercroft_core import Drawer, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.integrity.backup import create_backup
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_vault import Domain, Sealer, SecretBytes, compute_tag, derive_vault_keys, fingerprint

BATCH = 500
_WORDS = "the drawer holds the exact words a user saved verbatim never summarised about projects and people".split()


def _text(i: int) -> str:
    return f"memory {i}: " + " ".join(_WORDS[(i * 7 + k * 13) % len(_WORDS)] for k in range(110))


def _fill(palace: Palace, n: int) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        for start in range(0, n, BATCH):
            drawers = [
                Drawer(
                    id=store.drawer_ids.append("bench", f"room{i % 20}", i),
                    content=_text(i),
                    wing="bench",
                    room=f"room{i % 20}",
                    chunk_index=i,
                    id_recipe="append",
                    added_by="bench",
                    filed_at="2026-05-01T09:00:00Z",
                )
                for i in range(start, min(n, start + BATCH))
            ]
            store.write([DrawerWrite(d) for d in drawers], screening=Screen())


def raw_crypto(n: int) -> float:
    """Seconds for the per-drawer crypto alone: open+seal content and embedding, tag, fingerprint."""
    old = derive_vault_keys(SecretBytes(os.urandom(32)), "bench", os.urandom(32))
    new = derive_vault_keys(SecretBytes(os.urandom(32)), "bench", os.urandom(32))
    old_sealer, new_sealer = Sealer(old), Sealer(new)
    plain, vector = _text(1).encode(), os.urandom(388)
    content = old_sealer.seal(Domain.content("d"), plain)
    embedding = old_sealer.seal(Domain.embedding("d"), vector)
    started = time.perf_counter()
    for _ in range(n):
        text = old_sealer.open(Domain.content("d"), content)
        sealed = new_sealer.seal(Domain.content("d"), text)
        new_sealer.seal(Domain.embedding("d"), old_sealer.open(Domain.embedding("d"), embedding))
        compute_tag(old, "d", b"{}", content)
        compute_tag(new, "d", b"{}", sealed)
        fingerprint(new, text)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    n = 300 if args.smoke else 10_000
    with tempfile.TemporaryDirectory() as tmp, Palace(Path(tmp) / "palace") as palace:
        palace.init()
        _fill(palace, n)
        started = time.perf_counter()
        report = rotate_vault(palace, "default", HashEmbedder())
        rotation = time.perf_counter() - started
        started = time.perf_counter()
        create_backup(palace, "default", HashEmbedder())
        backup = time.perf_counter() - started
    raw = raw_crypto(n)
    print(f"drawers:                     {n} (sealed, hash embedder)")
    print(
        f"rotation:                    {rotation:.2f} s = {n / rotation:,.0f} drawers/s "
        f"(generation -> {report.generation_after})"
    )
    print(f"raw crypto per drawer:       {raw:.2f} s = {n / raw:,.0f} drawers/s (open+seal x2, 2 tags, fingerprint)")
    print(f"rotation / raw crypto:       {rotation / raw:.2f}x")
    print(f"backup create (+verify):     {backup:.2f} s = {n / backup:,.0f} drawers/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

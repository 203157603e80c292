"""End to end: ``UNDERCROFT_RETRIEVAL=pq|hnsw undercroft search`` on a sealed vault, driven as a subprocess.

The vault is filled through the library (1,100 drawers: above the tier's training size), then the real
program searches it: the needle comes back, the pq tier's sealed code rows are written at rest (no code or
needle word in clear), a flipped code-row byte makes ``verify`` exit 2 naming the row, ``repair`` rebuilds
it, and the fde tier without a ColBERT encoder refuses at start with exit 1 naming the variable to set.
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from undercroft_core import Drawer, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.search.tiers import PQTier

PROGRAM = Path(sys.executable).parent / "undercroft"
NEEDLE = "quokka zanzibar lantern protocol"
_WORDS = [f"{a}{b}{c}" for a in "bcdfgk" for b in "aeiou" for c in "lmnrst"]


def _run(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(home)
    env.update(extra)
    return subprocess.run([str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "palace"
    assert _run(home, "init").returncode == 0
    rng = random.Random(5)
    items = []
    with Palace.from_env({"UNDERCROFT_HOME": str(home)}) as palace:
        with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
            ids = store.drawer_ids  # the vault's own id recipe (keyed on a new sealed vault)
    for i in range(1100):
        wing, room = ("ops", "notes") if i == 900 else (f"w{i % 3}", f"r{i % 4}")
        text = NEEDLE if i == 900 else " ".join(rng.choices(_WORDS, k=12))
        drawer = Drawer(
            id=ids.append(wing, room, i),
            content=text,
            wing=wing,
            room=room,
            chunk_index=i,
            id_recipe="append",
            added_by="test",
            filed_at="2024-01-01T00:00:00Z",
        )
        items.append(DrawerWrite(drawer))
    with (
        Palace.from_env({"UNDERCROFT_HOME": str(home)}) as palace,
        palace.open_vault("default", HashEmbedder()) as store,
    ):
        store.write(items, screening=Screen())
    return home


def test_pq_search_persists_sealed_rows_and_verify_repair_know_them(home: Path) -> None:
    done = _run(home, "search", "quokka zanzibar", "--json", UNDERCROFT_RETRIEVAL="pq")
    assert done.returncode == 0, done.stderr
    assert NEEDLE in done.stdout
    db = home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(db) as raw:
        rows = int(raw.execute("SELECT count(*) FROM tier_pq_rows").fetchone()[0])
    assert rows == 1100
    assert "index tier:     pq codebook generation 1" in _run(home, "stats").stdout
    scoped = _run(home, "search", "quokka zanzibar", "--wing", "ops", "--json", UNDERCROFT_RETRIEVAL="pq")
    assert scoped.returncode == 0 and NEEDLE in scoped.stdout
    raw_bytes = b"".join(p.read_bytes() for p in db.parent.iterdir() if p.name.startswith("vault.db"))
    assert b"quokka" not in raw_bytes and b"zanzibar" not in raw_bytes
    # The plaintext of every code row (IVF list number + PQ code) and of the codebook: none of it in clear.
    with Palace.from_env({"UNDERCROFT_HOME": str(home)}, read_only=True) as palace:
        with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
            tier = PQTier()
            tier.prepare(store)
            assert tier.distrusted == [] and tier.encoded == 0  # loaded from the sealed rows, none re-coded
            codes, book = list(tier.coded().values()), tier.codebook
    assert len(codes) == 1100 and book is not None
    assert [code for code in codes if code in raw_bytes] == []
    assert book.codebook_bytes()[:64] not in raw_bytes and book.centroid_bytes()[:64] not in raw_bytes
    with sqlite3.connect(db) as raw:
        blob = bytearray(raw.execute("SELECT blob FROM tier_pq_rows WHERE seq = 42").fetchone()[0])
        blob[30] ^= 0x01
        raw.execute("UPDATE tier_pq_rows SET blob = ? WHERE seq = 42", (bytes(blob),))
    verdict = _run(home, "verify")
    assert verdict.returncode == 2 and "tier_pq_rows code row of seq 42 fails its seal" in verdict.stdout
    again = _run(home, "search", "quokka zanzibar", "--json", UNDERCROFT_RETRIEVAL="pq")
    assert again.returncode == 0 and NEEDLE in again.stdout  # the failed row is not trusted, the answer stands
    repaired = _run(home, "repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "index tier:            index tier rebuilt: codebook generation 2" in repaired.stdout
    assert _run(home, "verify").returncode == 0


def test_hnsw_search_answers_and_writes_no_tier_table(home: Path) -> None:
    done = _run(home, "search", "quokka zanzibar", UNDERCROFT_RETRIEVAL="hnsw")
    assert done.returncode == 0 and NEEDLE in done.stdout, done.stderr
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        tables = {row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {"tier_pq_rows", "tier_pq_meta"} & tables


def test_fde_refuses_at_start_naming_the_variable(home: Path) -> None:
    done = _run(home, "search", "quokka", UNDERCROFT_RETRIEVAL="fde")
    assert done.returncode == 1 and "declare UNDERCROFT_RERANKER=colbert" in done.stderr  # a run failure, never 2

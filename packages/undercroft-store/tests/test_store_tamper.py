"""Adversarial tests against the raw files: byte flips, deleted and reordered audit rows, restored files,
cross-vault blob moves, and a grep of a sealed vault's raw bytes for its content words."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import (
    ChainBroken,
    DatabaseMissing,
    ManifestTampered,
    Palace,
    RecordTampered,
)
from undercroft_vault import OpenFailed

WORDS = ["zebra", "quokka", "marmalade", "lighthouse", "saxophone", "avalanche"]


def _fill(palace: Palace, name: str = "default") -> list[str]:
    with palace.open_vault(name, HashEmbedder()) as store:
        return [
            store.remember(f"The {word} memory of {word}s.", wing="life", room="misc", added_by="t")[0].id
            for word in WORDS
        ]


def _raw(home: Path, name: str = "default") -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / name / "vault.db", isolation_level=None)


def _edit_meta(value: bytes, old: bytes, new: bytes) -> bytes:
    """`old` → `new` in a clear meta; in a sealed vault's meta (a base64 sealed blob) one character changed
    blindly, which is all an offline editor without the key can do."""
    if value.startswith(b"{"):
        assert old in value
        return value.replace(old, new)
    middle = len(value) // 2
    return value[:middle] + (b"A" if value[middle : middle + 1] != b"A" else b"B") + value[middle + 1 :]


def _flip(blob: bytes, at: int = -1) -> bytes:
    data = bytearray(blob)
    data[at] ^= 0x01
    return bytes(data)


@pytest.mark.parametrize("column", ["content", "tag", "meta_json"])
def test_flipped_drawer_bytes_are_detected(palace: Palace, home: Path, column: str) -> None:
    ids = _fill(palace)
    with _raw(home) as raw:
        value = raw.execute(f"SELECT {column} FROM drawers WHERE id = ?", (ids[2],)).fetchone()[0]
        if column == "meta_json":
            changed = _edit_meta(bytes(value), b'"room":"misc"', b'"room":"misd"')
        else:
            changed = _flip(bytes(value))
        raw.execute(f"UPDATE drawers SET {column} = ? WHERE id = ?", (changed, ids[2]))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(RecordTampered, match="fails its HMAC tag"):
            store.get(ids[2])
        assert store.get(ids[1]).content.startswith("The quokka")
        report = store.verify()
        assert report.tampered == [ids[2]] and not report.ok and report.audit_chain_ok
        assert "TAMPERED: " + ids[2] in report.render() and report.render().endswith("VERIFY FAILED")


def test_mirror_column_drift_is_reported(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with _raw(home) as raw:
        raw.execute("UPDATE drawers SET wing = 'work' WHERE id = ?", (ids[0],))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
        assert report.mirror_drift == [ids[0]] and not report.ok


def test_flipped_audit_row_under_a_current_anchor_is_verifys_verdict(palace: Palace, home: Path) -> None:
    """The anchor equals the stored head, so the open is Current and does not replay (by design): verify does."""
    _fill(palace)
    with _raw(home) as raw:
        tag = raw.execute("SELECT tag FROM audit WHERE seq = 3").fetchone()[0]
        raw.execute("UPDATE audit SET tag = ? WHERE seq = 3", (_flip(bytes(tag)),))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
        assert not report.audit_chain_ok and "do not reproduce" in report.chain_detail
        assert "audit chain:      BROKEN" in report.render()


def test_flipped_audit_row_breaks_the_chain_at_open(palace: Palace, home: Path) -> None:
    """When the open must replay (its anchor is behind the head: an older vault.json), a flipped bit in an
    audit row is ChainBroken at the OPEN, before anything is served — not left for a verify to find."""
    _fill(palace)
    manifest = home / "vaults" / "default" / "vault.json"
    old = manifest.read_bytes()
    with palace.open_vault("default", HashEmbedder()) as store:
        store.remember("later words", wing="life", room="misc", added_by="t")
    manifest.write_bytes(old)
    with _raw(home) as raw:
        tag = raw.execute("SELECT tag FROM audit WHERE seq = 3").fetchone()[0]
        raw.execute("UPDATE audit SET tag = ? WHERE seq = 3", (_flip(bytes(tag)),))
    with Palace(home) as reopened, pytest.raises(ChainBroken, match="do not reproduce the stored head"):
        reopened.open_vault("default", HashEmbedder())
    assert manifest.read_bytes() == old  # a refused open re-anchors nothing


@pytest.mark.parametrize("edit", ["delete", "reorder", "relabel"])
def test_deleted_reordered_or_relabelled_audit_rows_break_the_chain(palace: Palace, home: Path, edit: str) -> None:
    _fill(palace)
    with _raw(home) as raw:
        if edit == "delete":
            raw.execute("DELETE FROM audit WHERE seq = 2")
        elif edit == "reorder":
            first = raw.execute("SELECT record_id, tag, at FROM audit WHERE seq = 1").fetchone()
            second = raw.execute("SELECT record_id, tag, at FROM audit WHERE seq = 2").fetchone()
            raw.execute("UPDATE audit SET record_id = ?, tag = ?, at = ? WHERE seq = 1", second)
            raw.execute("UPDATE audit SET record_id = ?, tag = ?, at = ? WHERE seq = 2", first)
        else:
            raw.execute("UPDATE audit SET record_id = 'drawer/drawer_' || printf('%032d', 0) WHERE seq = 4")
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
        assert not report.audit_chain_ok and not report.ok


def test_truncated_chain_with_rewound_head_is_a_rollback(palace: Palace, home: Path) -> None:
    _fill(palace)
    vault = home / "vaults" / "default"
    early = vault.parent / "early"
    with palace.open_vault("default", HashEmbedder()) as store:
        store.remember("one more", wing="life", room="misc", added_by="t")
    shutil.copytree(vault, early)
    with palace.open_vault("default", HashEmbedder()) as store:
        store.remember("and another", wing="life", room="misc", added_by="t")
    # An older database restored beside the current manifest: the anchor is ahead of it → rollback.
    for suffix in ("", "-wal", "-shm"):
        (vault / f"vault.db{suffix}").unlink(missing_ok=True)
        if (early / f"vault.db{suffix}").exists():
            shutil.copy2(early / f"vault.db{suffix}", vault / f"vault.db{suffix}")
    with Palace(home) as reopened, pytest.raises(ManifestTampered, match="rolled back or forked"):
        reopened.open_vault("default", HashEmbedder())


def test_older_manifest_beside_current_db_heals_and_reports(palace: Palace, home: Path) -> None:
    _fill(palace)
    manifest = home / "vaults" / "default" / "vault.json"
    old = manifest.read_bytes()
    with palace.open_vault("default", HashEmbedder()) as store:
        store.remember("later words", wing="life", room="misc", added_by="t")
        store.remember("more later words", wing="life", room="misc", added_by="t")
    manifest.write_bytes(old)
    with Palace(home, read_only=True) as reader, reader.open_vault("default", HashEmbedder()) as store:
        assert any("2 record(s) behind" in line and "not re-anchored" in line for line in store.unhealed)
        assert store.verify().ok and store.verify().anchor == "behind by 2"
    assert manifest.read_bytes() == old  # a read-only open never heals
    with Palace(home) as writer, writer.open_vault("default", HashEmbedder()) as store:
        assert any("2 record(s) behind" in line and "re-anchored" in line for line in store.unhealed)
    with Palace(home) as writer, writer.open_vault("default", HashEmbedder()) as store:
        assert store.unhealed == ()


def test_edited_manifest_fails_its_mac(palace: Palace, home: Path) -> None:
    _fill(palace)
    manifest = home / "vaults" / "default" / "vault.json"
    manifest.write_text(manifest.read_text().replace('"sealed"', '"hmac-only"'))
    with Palace(home) as reopened, pytest.raises(ManifestTampered, match="fails its MAC"):
        reopened.open_vault("default", HashEmbedder())


def test_manifest_without_database_is_an_integrity_verdict(palace: Palace, home: Path) -> None:
    (home / "vaults" / "default" / "vault.db").unlink()
    with Palace(home) as reopened, pytest.raises(DatabaseMissing, match="is absent"):
        reopened.open_vault("default", HashEmbedder())
    with Palace(home, read_only=True) as reader, pytest.raises(DatabaseMissing):
        reader.open_vault("default", HashEmbedder())


def test_chain_head_edit_without_rows_is_chain_broken(palace: Palace, home: Path) -> None:
    _fill(palace)
    with _raw(home) as raw:
        raw.execute("DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)")
        raw.execute("UPDATE chain_meta SET height = height - 1")
    with Palace(home) as reopened, pytest.raises(ChainBroken, match="do not reproduce the stored head"):
        reopened.open_vault("default", HashEmbedder())


def test_a_flipped_committed_head_at_the_anchors_height_is_refused_at_open(palace: Palace, home: Path) -> None:
    """Same height, one bit of the stored head flipped: the open is not Current (the anchor's head differs), so it
    replays, and the rows do not reproduce the forged head."""
    _fill(palace)
    with _raw(home) as raw:
        head = bytearray(raw.execute("SELECT head FROM chain_meta WHERE id = 1").fetchone()[0])
        head[0] ^= 0x80
        raw.execute("UPDATE chain_meta SET head = ? WHERE id = 1", (bytes(head),))
    with Palace(home) as reopened, pytest.raises(ChainBroken, match="do not reproduce the stored head"):
        reopened.open_vault("default", HashEmbedder())


def test_blob_copied_from_another_vault_is_refused_by_the_cipher(palace: Palace, home: Path) -> None:
    palace.create_vault("other")
    ids_a = _fill(palace, "default")
    ids_b = _fill(palace, "other")
    with _raw(home, "default") as raw_a, _raw(home, "other") as raw_b:
        content, tag, meta = raw_a.execute(
            "SELECT content, tag, meta_json FROM drawers WHERE id = ?", (ids_a[0],)
        ).fetchone()
        raw_b.execute(
            "UPDATE drawers SET content = ?, tag = ?, meta_json = ? WHERE id = ?", (content, tag, meta, ids_b[0])
        )
    with Palace(home) as reopened, reopened.open_vault("other", HashEmbedder()) as store:
        with pytest.raises(RecordTampered):
            store.get(ids_b[0])
        sealer = store._context.sealer
        from undercroft_vault import Domain

        with pytest.raises(OpenFailed, match="wrong vault, record, domain or key"):
            sealer.open(Domain.content(ids_a[0]), bytes(content))


def test_sealed_vault_bytes_hold_no_content_word(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        for word in WORDS:
            store.remember(f"The {word} memory of {word}s.", wing="life", room="misc", added_by="t")
        store.delete(store.list_drawers(limit=1)[0].id)
        raw = b"".join(p.read_bytes() for p in (home / "vaults" / "default").iterdir() if p.is_file())
        for word in WORDS:
            assert word.encode() not in raw
            assert word.encode("utf-16-le") not in raw
    raw = b"".join(p.read_bytes() for p in (home / "vaults" / "default").iterdir() if p.is_file())
    for word in WORDS:
        assert word.encode() not in raw


def test_hmac_only_vault_keeps_plaintext_and_fts(palace: Palace, home: Path) -> None:
    palace.create_vault("plain", level="hmac-only")
    _fill(palace, "plain")
    with _raw(home, "plain") as raw:
        hits = raw.execute("SELECT rowid FROM drawers_fts WHERE drawers_fts MATCH 'zebra'").fetchall()
        assert len(hits) == 1

"""Raw-byte tests of the branches a plain tamper never reaches: a row that PASSES its HMAC but does not open
(strict and batched reads), and the audit-row count check at open.

A flipped ciphertext byte fails the tag first, so the "verifies but does not open" branch needs a row whose tag
was recomputed over the damaged bytes — what a writer with the key but a bug (or a confused restore) leaves.
The tag is recomputed here with the vault's own keys, exactly as the choke point computes it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import ChainBroken, Palace, RecordTampered
from undercroft_store.search import Searcher, SearchRequest
from undercroft_vault import AuditRow, compute_tag, replay

WORDS = ["zebra", "quokka", "marmalade", "lighthouse"]


def _fill(palace: Palace, name: str = "default") -> list[str]:
    with palace.open_vault(name, HashEmbedder()) as store:
        return [
            store.remember(f"The {word} memory of {word}s.", wing="life", room="misc", added_by="t")[0].id
            for word in WORDS
        ]


def _raw(home: Path, name: str = "default") -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / name / "vault.db", isolation_level=None)


def _retag(home: Path, drawer_id: str, content: bytes) -> None:
    """Store `content` for `drawer_id` under a tag recomputed with the vault's key (the row passes its HMAC)."""
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        keys = store._context.keys
        with _raw(home) as raw:
            meta = bytes(raw.execute("SELECT meta_json FROM drawers WHERE id = ?", (drawer_id,)).fetchone()[0])
            tag = compute_tag(keys, drawer_id, meta, content)
            raw.execute("UPDATE drawers SET content = ?, tag = ? WHERE id = ?", (content, tag, drawer_id))


def _content(home: Path, drawer_id: str) -> bytes:
    with _raw(home) as raw:
        return bytes(raw.execute("SELECT content FROM drawers WHERE id = ?", (drawer_id,)).fetchone()[0])


def _seq(home: Path, drawer_id: str) -> int:
    with _raw(home) as raw:
        return int(raw.execute("SELECT seq FROM drawers WHERE id = ?", (drawer_id,)).fetchone()[0])


def _edit_meta(value: bytes, old: bytes, new: bytes) -> bytes:
    """`old` → `new` in a clear meta; in a sealed vault's meta (a base64 sealed blob) one character changed
    blindly, which is all an offline editor without the key can do."""
    if value.startswith(b"{"):
        assert old in value
        return value.replace(old, new)
    middle = len(value) // 2
    return value[:middle] + (b"A" if value[middle : middle + 1] != b"A" else b"B") + value[middle + 1 :]


def _flip(blob: bytes, at: int) -> bytes:
    data = bytearray(blob)
    data[at] ^= 0x01
    return bytes(data)


def _assert_both_doors_refuse(home: Path, victim: str, neighbour: str, finding: str = "tampered") -> None:
    seq = _seq(home, victim)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(RecordTampered, match=f"record {victim} .* verifies but does not open"):
            store.get(victim)  # the strict door (reading.verified_drawer)
        with pytest.raises(RecordTampered, match=f"record {victim} .* verifies but does not open"):
            store.hydrate([victim])  # the served door, one row at a time
        with pytest.raises(RecordTampered, match=f"record {victim} .* verifies but does not open"):
            store.hydrate_many([_seq(home, neighbour), seq])  # the batched door (hydration._verified)
        assert store.get(neighbour).content.startswith("The ")  # the neighbour is still served
        report = store.verify()
        assert victim in getattr(report, finding) and not report.ok


@pytest.mark.parametrize("at", [0, 30, -1])
def test_a_retagged_ciphertext_that_does_not_open_is_record_tampered(palace: Palace, home: Path, at: int) -> None:
    """Nonce, body and MAC bytes of the seal: each flip, re-tagged, passes the HMAC and fails the cipher."""
    ids = _fill(palace)
    _retag(home, ids[1], _flip(_content(home, ids[1]), at))
    _assert_both_doors_refuse(home, ids[1], ids[0])


def test_another_drawers_ciphertext_retagged_is_refused_by_its_domain(palace: Palace, home: Path) -> None:
    """A sealed blob moved to another id under a valid tag: the AEAD domain (the id) refuses it."""
    ids = _fill(palace)
    _retag(home, ids[2], _content(home, ids[3]))
    _assert_both_doors_refuse(home, ids[2], ids[0])


def test_hmac_only_content_that_is_not_utf8_under_a_valid_tag_is_refused(home: Path) -> None:
    with Palace(home) as palace:
        palace.init(level="hmac-only")
        ids = _fill(palace)
    _retag(home, ids[0], b"\xff\xfe not text")
    # verify reads hmac-only content as stored bytes: what it reports is the fingerprint that no longer matches
    _assert_both_doors_refuse(home, ids[0], ids[1], finding="fingerprint_drift")


def test_an_audit_row_removed_under_a_recomputed_head_is_the_row_count_verdict_at_open(
    palace: Palace, home: Path
) -> None:
    """The head is made to match the remaining rows, the height is left: only the row count can say so.

    Without the count check the replay reproduces the forged head and the open blames the manifest instead.
    """
    _fill(palace)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store, _raw(home) as raw:
        height = int(raw.execute("SELECT height FROM chain_meta WHERE id = 1").fetchone()[0])
        raw.execute("DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)")
        audit = raw.execute("SELECT record_id, tag, at FROM audit ORDER BY seq").fetchall()
        rows = [AuditRow(record_id, bytes(tag), at) for record_id, tag, at in audit]
        raw.execute("UPDATE chain_meta SET head = ? WHERE id = 1", (replay(store._context.keys, rows),))
    assert len(rows) == height - 1
    with Palace(home) as reopened:
        wanted = f"holds {height - 1} audit rows but the committed head is at height {height}"
        with pytest.raises(ChainBroken, match=wanted):
            reopened.open_vault("default", HashEmbedder())


@pytest.mark.parametrize("column", ["content", "tag", "meta_json"])
def test_the_batched_read_checks_the_tag_before_it_opens_or_parses(palace: Palace, home: Path, column: str) -> None:
    """hydrate_many and search: a flipped bit is the HMAC verdict, never a cipher error or a forged field served.

    The meta edit touches ``added_by``, which no clear mirror repeats: only the tag can refuse it.
    """
    ids = _fill(palace)
    with _raw(home) as raw:
        value = bytes(raw.execute(f"SELECT {column} FROM drawers WHERE id = ?", (ids[1],)).fetchone()[0])
        if column == "meta_json":
            changed = _edit_meta(value, b'"added_by":"t"', b'"added_by":"u"')
        else:
            changed = _flip(value, len(value) // 2)
        raw.execute(f"UPDATE drawers SET {column} = ? WHERE id = ?", (changed, ids[1]))
    seq = _seq(home, ids[1])
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(RecordTampered, match=f"record {ids[1]} .* fails its HMAC tag"):
            store.hydrate_many([_seq(home, ids[0]), seq])
        with pytest.raises(RecordTampered, match=f"record {ids[1]} .* fails its HMAC tag"):
            Searcher(store, HashEmbedder()).search(SearchRequest("quokka memory"))
        assert store.hydrate_many([_seq(home, ids[0])])[_seq(home, ids[0])].content.startswith("The zebra")

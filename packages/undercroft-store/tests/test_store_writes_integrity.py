"""The write path decides from VERIFIED rows, and embeds only what it will write.

Every tamper here edits the raw database with sqlite3 (a byte flipped in a row's content, tag or meta,
a forged fingerprint, a forged mirror column), then writes the same drawer again through the store: a
row failing its tag is an integrity verdict and nothing is written; a column outside the tag can never
turn a real change into "unchanged" nor lift the quarantine backstop.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import undercroft_obs as obs
from undercroft_core import Drawer, HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_core.quantisation import QuantisedVectors
from undercroft_obs import names
from undercroft_store import Bypass, BypassReason, DrawerWrite, InvalidDrawer, Palace, RecordTampered, Screen
from undercroft_store.kernel.writes import write_drawers
from undercroft_vault import AuditRow, compute_tag, fingerprint

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids


def _drawer(index: int, content: str, *, wing: str = "life", room: str = "car", **extra: object) -> Drawer:
    return appended_drawer(index, content, wing=wing, room=room, **{"filed_at": "2026-05-01T09:00:00Z", **extra})


class _CountingEmbedder(HashEmbedder):
    """Records every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_int8(self, texts: list[str]) -> QuantisedVectors:
        self.texts.extend(texts)
        return super().embed_int8(texts)


def _db(home: Path, vault: str) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / vault / "vault.db")


def _edit_meta(value: bytes, old: bytes, new: bytes) -> bytes:
    """`old` → `new` in a clear meta; in a sealed vault's meta (a base64 sealed blob) one character changed
    blindly, which is all an offline editor without the key can do."""
    if value.startswith(b"{"):
        assert old in value
        return value.replace(old, new)
    middle = len(value) // 2
    return value[:middle] + (b"A" if value[middle : middle + 1] != b"A" else b"B") + value[middle + 1 :]


def _flip(blob: bytes, at: int) -> bytes:
    return blob[:at] + bytes([blob[at] ^ 0x01]) + blob[at + 1 :]


def _raw_state(home: Path, vault: str) -> tuple[object, ...]:
    with _db(home, vault) as db:
        rows = db.execute("SELECT * FROM drawers ORDER BY seq").fetchall()
        audit = db.execute("SELECT * FROM audit ORDER BY seq").fetchall()
        chain = db.execute("SELECT head, height FROM chain_meta").fetchone()
    manifest = (home / "vaults" / vault / "vault.json").read_bytes()
    return rows, audit, chain, manifest


def _tamper(home: Path, vault: str, drawer_id: str, column: str) -> None:
    with _db(home, vault) as db:
        # `column` is one of this test's parameters.
        [value] = db.execute(f"SELECT {column} FROM drawers WHERE id = ?", (drawer_id,)).fetchone()
        blob = bytes(value)
        # Meta: flip a letter inside the room value, so the JSON still parses (only the tag can tell).
        changed = _edit_meta(blob, b'"room":"car"', b'"room":"cas"') if column == "meta_json" else None
        changed = changed if changed is not None else _flip(blob, len(blob) // 2)
        db.execute(f"UPDATE drawers SET {column} = ? WHERE id = ?", (changed, drawer_id))


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
@pytest.mark.parametrize("column", ["content", "tag", "meta_json"])
@pytest.mark.parametrize("change", [False, True], ids=["same-words", "new-words"])
def test_a_tampered_row_refuses_the_write_and_nothing_is_written(
    palace: Palace, home: Path, level: str, column: str, change: bool
) -> None:
    palace.create_vault("v", level=level)  # type: ignore[arg-type]
    target = _drawer(0, "the original words")
    with palace.open_vault("v", HashEmbedder()) as store:
        store.write([DrawerWrite(target), DrawerWrite(_drawer(1, "a bystander"))], screening=Screen())
    _tamper(home, "v", target.id, column)
    before = _raw_state(home, "v")
    again = _drawer(0, "other words entirely" if change else "the original words")
    counting = _CountingEmbedder()
    with (
        palace.open_vault("v", counting) as store,
        obs.sink_installed(obs.RecordingSink()) as sink,
        pytest.raises(RecordTampered) as caught,
    ):
        store.write([DrawerWrite(_drawer(2, "a new drawer")), DrawerWrite(again)], screening=Screen())
    message = str(caught.value)
    assert isinstance(caught.value, IntegrityError)
    assert f"record {target.id} in vault 'v' fails its HMAC tag" in message
    assert "refuses to dedup against, update or replace it" in message
    assert "`undercroft verify` names the tampered record(s)" in message
    assert "restore from backup" in message
    assert _raw_state(home, "v") == before  # not the new drawer either: the batch wrote nothing
    assert counting.texts == []  # refused before anything was embedded
    assert sink.counter_total(names.HMAC_VERIFY_FAILURES_TOTAL, surface="drawer") == 1
    [event] = sink.events(names.EVENT_HMAC_FAIL)
    assert event["id"] == target.id and event["unverified"] is True
    with palace.open_vault("v", HashEmbedder()) as store:
        assert [line for line in store.verify().render().splitlines() if "TAMPERED" in line] == [
            f"  TAMPERED: {target.id}"
        ]


def test_a_forged_fingerprint_cannot_make_a_change_look_unchanged(palace: Palace, home: Path) -> None:
    target = _drawer(0, "the original words")
    with palace.open_vault("default", HashEmbedder()) as store:
        store.write([DrawerWrite(target)], screening=Screen())
        forged = fingerprint(store._context.keys, b"the replacement words")
    with _db(home, "default") as db:  # the fingerprint is outside the tag: the tag still verifies
        db.execute("UPDATE drawers SET fingerprint = ? WHERE id = ?", (forged, target.id))
    with palace.open_vault("default", HashEmbedder()) as store:
        [result] = store.write([DrawerWrite(_drawer(0, "the replacement words"))], screening=Screen())
        assert result.outcome == "updated"
        assert store.get(target.id).content == "the replacement words"
        assert store.verify().ok


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_the_backstop_reads_the_verified_wing_not_the_mirror(palace: Palace, home: Path, level: str) -> None:
    palace.create_vault("v", level=level)  # type: ignore[arg-type]
    resident = _drawer(0, "held words", wing="quarantine-pending", intended_wing="life", intended_room="car")
    with palace.open_vault("v", HashEmbedder()) as store:
        store.write([DrawerWrite(resident)], screening=Bypass(BypassReason.ALREADY_DIVERTED))
    with _db(home, "v") as db:  # the mirror column is outside the tag; the meta it copies is not
        db.execute("UPDATE drawers SET wing = 'life' WHERE id = ?", (resident.id,))
    before = _raw_state(home, "v")
    replaced = _drawer(0, "other words", wing="quarantine-pending", intended_wing="life", intended_room="car")
    with palace.open_vault("v", HashEmbedder()) as store:
        with pytest.raises(InvalidDrawer, match="is in 'quarantine-pending': it cannot be edited or replaced"):
            store.write([DrawerWrite(replaced)], screening=Bypass(BypassReason.ALREADY_DIVERTED))
    assert _raw_state(home, "v") == before


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_only_what_is_written_is_embedded(palace: Palace, level: str) -> None:
    palace.create_vault("v", level=level)  # type: ignore[arg-type]
    counting = _CountingEmbedder()
    with palace.open_vault("v", counting) as store:
        first = [DrawerWrite(_drawer(i, f"words {i}")) for i in range(6)]
        store.write(first, screening=Screen())
        assert counting.texts == [f"words {i}" for i in range(6)]
        counting.texts.clear()
        again = store.write(first, screening=Screen())
        assert [r.outcome for r in again] == ["deduped"] * 6 and counting.texts == []
        mixed = [
            DrawerWrite(_drawer(1, "words 1")),
            DrawerWrite(_drawer(2, "changed 2")),
            DrawerWrite(_drawer(3, "words 3", filed_at="2026-06-01T09:00:00Z")),  # a volatile field only
            DrawerWrite(_drawer(6, "new 6")),
            DrawerWrite(_drawer(4, "words 4", kind="decision")),  # a stable meta field: rewritten
        ]
        results = store.write(mixed, screening=Screen())
        assert [r.outcome for r in results] == ["deduped", "updated", "deduped", "created", "updated"]
        assert [r.seq for r in results] == [2, 3, 4, 8, 5]  # the update's upsert draws seq 7, kept as before
        assert counting.texts == ["changed 2", "new 6", "words 4"]
        assert store.get(results[4].id).kind == "decision"
        assert store.verify().ok


def test_merged_dates_are_a_change_and_known_dates_are_not(palace: Palace) -> None:
    from undercroft_core.drawer import Occurrence

    dated = (Occurrence("2026-05-01T09:00:00Z", None), Occurrence("2026-05-02T09:00:00Z", "2026-05-02"))
    with palace.open_vault("default", HashEmbedder()) as store:
        store.write([DrawerWrite(_drawer(0, "words", occurrences=dated))], screening=Screen())
        [known] = store.write([DrawerWrite(_drawer(0, "words", occurrences=dated[:1]))], screening=Screen())
        assert known.outcome == "deduped"
        more = (*dated, Occurrence("2026-05-03T09:00:00Z", None))
        [merged] = store.write([DrawerWrite(_drawer(0, "words", occurrences=more))], screening=Screen())
        assert merged.outcome == "updated" and len(store.get(merged.id).occurrences) == 3


def test_a_bad_supplied_vector_is_refused_even_when_its_drawer_dedups(palace: Palace) -> None:
    from undercroft_store import EmbeddingRefused

    with palace.open_vault("default", HashEmbedder()) as store:
        store.write([DrawerWrite(_drawer(0, "words"))], screening=Screen())
        with pytest.raises(EmbeddingRefused, match="write 0: the vector has dimension 3"):
            store.write([DrawerWrite(_drawer(0, "words"), vector=[1.0, 2.0, 3.0])], screening=Screen())


def _hook(
    action: Callable[[sqlite3.Connection], None], connection: sqlite3.Connection
) -> Callable[[str], list[AuditRow]]:
    def within(at: str) -> list[AuditRow]:
        action(connection)
        return []

    return within


def test_a_row_changed_under_the_lock_is_decided_again(palace: Palace) -> None:
    counting = _CountingEmbedder()
    with palace.open_vault("default", counting) as store:
        context = store._context
        target = _drawer(0, "words")
        store.write([DrawerWrite(target)], screening=Screen())
        counting.texts.clear()
        # Another writer removed the row after the unlocked decision ("unchanged"): it is now created,
        # its embedding computed under the lock.
        gone = _hook(lambda db: db.execute("DELETE FROM drawers WHERE id = ?", (target.id,)), context.connection)
        [result] = write_drawers(context, [DrawerWrite(target)], screening=Screen(), within=gone)
        assert result.outcome == "created" and counting.texts == ["words"]
        assert store.get(target.id).content == "words"
        # A row tampered after the unlocked decision is verified again under the lock: refused, rolled back.
        height = context.connection.execute("SELECT height FROM chain_meta").fetchone()[0]
        tag = bytes(context.connection.execute("SELECT tag FROM drawers WHERE id = ?", (target.id,)).fetchone()[0])
        forged = _hook(
            lambda db: db.execute("UPDATE drawers SET tag = ? WHERE id = ?", (_flip(tag, 0), target.id)),
            context.connection,
        )
        with pytest.raises(RecordTampered, match="fails its HMAC tag"):
            write_drawers(context, [DrawerWrite(target)], screening=Screen(), within=forged)
        assert context.connection.execute("SELECT height FROM chain_meta").fetchone()[0] == height
        assert bytes(context.connection.execute("SELECT tag FROM drawers").fetchone()[0]) == tag


def test_written_rows_and_audit_records_carry_the_same_tags(palace: Palace) -> None:
    palace.create_vault("plain", level="hmac-only")
    with palace.open_vault("plain", HashEmbedder()) as store:
        store.write([DrawerWrite(_drawer(i, f"words {i}")) for i in range(3)], screening=Screen())
        batch = [DrawerWrite(_drawer(i, f"words {i}" if i != 1 else "changed")) for i in range(4)]
        store.write(batch, screening=Screen())
        db = store._context.connection
        rows = {
            i: (bytes(m), bytes(c), bytes(t))
            for i, m, c, t in db.execute("SELECT id, meta_json, content, tag FROM drawers")
        }
        for drawer_id, (meta, content, tag) in rows.items():
            assert compute_tag(store._context.keys, drawer_id, meta, content) == tag
        audit = [(label, bytes(tag)) for label, tag in db.execute("SELECT record_id, tag FROM audit ORDER BY seq")]
        ids = [item.drawer.id for item in batch]
        assert [label for label, _ in audit] == [f"drawer/{i}" for i in (*ids[:3], ids[1], ids[3])]
        assert audit[-2:] == [(f"drawer/{ids[1]}", rows[ids[1]][2]), (f"drawer/{ids[3]}", rows[ids[3]][2])]

"""Key rotation: every blob and tag re-keyed, chain re-folded, crash-safe at each named point, refusals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import DrawerNotFound, Palace, VaultStore
from undercroft_store.errors import RotationRefused, RotationUnsupported, VaultInUse
from undercroft_store.integrity.rotation import CHECKPOINTS, rotate_vault
from undercroft_vault import BlindIndex, Domain, Sealer, read_manifest

WORDS = ["zebra", "quokka", "marmalade", "lighthouse", "saxophone", "avalanche"]


class Crash(Exception):
    """A simulated crash at a named point."""


def _fill(palace: Palace, name: str = "default") -> list[str]:
    with palace.open_vault(name, HashEmbedder()) as store:
        ids = [store.remember(f"The {w} memory of {w}s.", wing="life", room="misc", added_by="t")[0].id for w in WORDS]
        store.delete(ids[-1])
        return ids[:-1]


def _raw(home: Path, name: str = "default") -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / name / "vault.db", isolation_level=None)


def _snapshot(home: Path, name: str = "default") -> dict[str, list[tuple[object, ...]]]:
    raw = _raw(home, name)
    try:
        return {
            "drawers": raw.execute(
                "SELECT id, content, embedding, fingerprint, tag FROM drawers ORDER BY seq"
            ).fetchall(),
            "audit": raw.execute("SELECT record_id, tag, at FROM audit ORDER BY seq").fetchall(),
            "tombstones": raw.execute("SELECT drawer_id, tag, at FROM tombstones").fetchall(),
            "meta": raw.execute("SELECT key, value FROM meta ORDER BY key").fetchall(),
        }
    finally:
        raw.close()


def _read_every_tagged_row(store: VaultStore, ids: list[str]) -> None:
    """The post-rotation arm: every reader whose contract is 'tag-verified on the way out' answers cleanly."""
    assert [d.id for d in store.list_drawers(include_quarantine=True)] == list(reversed(ids))
    for drawer_id, word in zip(ids, WORDS, strict=False):
        assert store.get(drawer_id).content == f"The {word} memory of {word}s."
    assert [d.id for d in store.hydrate(ids)] == ids
    matrix = store.iter_embeddings()
    assert matrix.ids == ids and (matrix.scales > 0).all()
    context = store._context
    sealed = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()[0]
    BlindIndex.open_sealed(context.sealer, bytes(sealed)).wipe()
    report = store.verify()
    assert report.ok, report.render()


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_rotation_rekeys_everything_and_reads_back(home: Path, level: str) -> None:
    with Palace(home) as palace:
        palace.create_vault("v", level=level)  # type: ignore[arg-type]
        ids = _fill(palace, "v")
        before = _snapshot(home, "v")
        report = rotate_vault(palace, "v", HashEmbedder())
    assert (report.generation_before, report.generation_after, report.drawers) == (1, 2, len(ids))
    assert report.tombstones_preserved == 1 and report.audit_rows_refolded == len(before["audit"])
    after = _snapshot(home, "v")
    for old, new in zip(before["drawers"], after["drawers"], strict=True):
        assert old[0] == new[0]
        assert old[3] != new[3] and old[4] != new[4]  # fingerprint and tag re-keyed
        if level == "sealed":
            assert old[1] != new[1] and old[2] != new[2]  # content and embedding re-sealed
        else:
            assert old[1] == new[1] and old[2] == new[2]  # plaintext at rest stays byte-identical
    assert after["audit"][: len(before["audit"])] == before["audit"]  # audit tags preserved verbatim
    assert [r[0] for r in after["audit"][len(before["audit"]) :]] == [f"drawer/{i}" for i in ids]
    assert after["tombstones"] == before["tombstones"]
    old_meta, new_meta = dict(before["meta"]), dict(after["meta"])
    assert old_meta["keycheck"] != new_meta["keycheck"] and old_meta["blind_secret"] != new_meta["blind_secret"]
    manifest = json.loads((home / "vaults" / "v" / "vault.json").read_text())
    assert manifest["generation"] == 2 and manifest["anchor"]["count"] == len(after["audit"])
    assert not (home / "vaults" / "v" / "vault.json.next").exists()
    with Palace(home) as palace, palace.open_vault("v", HashEmbedder()) as store:
        assert store.unhealed == ()
        _read_every_tagged_row(store, ids)
        store.remember("after rotation", wing="life", room="misc", added_by="t")
        assert store.verify().ok


def test_blind_secret_is_the_same_secret_resealed(palace: Palace, home: Path) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        context = store._context
        blob = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()[0]
        before = BlindIndex.open_sealed(context.sealer, bytes(blob)).blind("entity", "Alice")
    rotate_vault(palace, "default", HashEmbedder())
    with palace.open_vault("default", HashEmbedder()) as store:
        context = store._context
        blob = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()[0]
        assert BlindIndex.open_sealed(context.sealer, bytes(blob)).blind("entity", "Alice") == before


def test_old_keys_no_longer_open_anything(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        old_keys = store._context.keys
        old_salt = bytes(old_keys.salt)
    rotate_vault(palace, "default", HashEmbedder())
    manifest, keys = read_manifest(home / "vaults" / "default", vault_id="default", master=palace._master_key())
    assert manifest.salt != old_salt and manifest.generation == 2
    from undercroft_vault import derive_vault_keys

    stale = Sealer(derive_vault_keys(palace._master_key(), "default", old_salt))
    raw = _raw(home)
    content = raw.execute("SELECT content FROM drawers WHERE id = ?", (ids[0],)).fetchone()[0]
    raw.close()
    from undercroft_vault import OpenFailed

    with pytest.raises(OpenFailed):
        stale.open(Domain.content(ids[0]), bytes(content))
    assert Sealer(keys).open(Domain.content(ids[0]), bytes(content)).startswith(b"The zebra")


def test_two_rotations_in_a_row(palace: Palace) -> None:
    ids = _fill(palace)
    rotate_vault(palace, "default", HashEmbedder())
    report = rotate_vault(palace, "default", HashEmbedder())
    assert report.generation_after == 3
    with palace.open_vault("default", HashEmbedder()) as store:
        _read_every_tagged_row(store, ids)


@pytest.mark.parametrize("point", CHECKPOINTS)
def test_crash_at_each_point_opens_under_exactly_one_generation(palace: Palace, home: Path, point: str) -> None:
    ids = _fill(palace)

    def crash(name: str) -> None:
        if name == point:
            raise Crash(name)

    with pytest.raises(Crash):
        rotate_vault(palace, "default", HashEmbedder(), checkpoint=crash)
    committed = CHECKPOINTS.index(point) >= CHECKPOINTS.index("committed")
    staged_left = point == "committed"
    assert (home / "vaults" / "default" / "vault.json.next").exists() == staged_left
    with Palace(home) as reopened:
        # a read-only open honours the staged rotation in memory and leaves the file in place
        with reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
            assert store._context.manifest.generation == (2 if committed else 1)
            assert store.verify().ok
        assert (home / "vaults" / "default" / "vault.json.next").exists() == staged_left
        with reopened.open_vault("default", HashEmbedder()) as store:
            assert store._context.manifest.generation == (2 if committed else 1)
            if staged_left:
                assert any("promoted" in line for line in store.unhealed)
            _read_every_tagged_row(store, ids)
    assert not (home / "vaults" / "default" / "vault.json.next").exists()
    assert json.loads((home / "vaults" / "default" / "vault.json").read_text())["generation"] == (2 if committed else 1)


def test_refuses_a_tampered_drawer_and_leaves_the_vault_untouched(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    raw = _raw(home)
    raw.execute("UPDATE drawers SET tag = zeroblob(32) WHERE id = ?", (ids[1],))
    raw.close()
    before = _snapshot(home)
    with pytest.raises(RotationRefused, match=f"TAMPERED: {ids[1]}"):
        rotate_vault(palace, "default", HashEmbedder())
    assert _snapshot(home) == before
    assert not (home / "vaults" / "default" / "vault.json.next").exists()


def test_refuses_a_broken_chain(palace: Palace, home: Path) -> None:
    _fill(palace)
    raw = _raw(home)
    raw.execute("UPDATE audit SET at = '2020-01-01T00:00:00.000000Z' WHERE seq = 2")
    raw.close()
    with Palace(home) as reopened, pytest.raises(RotationRefused, match="audit chain BROKEN"):
        rotate_vault(reopened, "default", HashEmbedder())


def test_refuses_a_stale_row_written_back(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        first = store.remember("version one", wing="life", room="misc", added_by="t")[0].id
        raw = _raw(home)
        old = raw.execute("SELECT meta_json, content, embedding, fingerprint, tag FROM drawers").fetchone()
        raw.close()
        from undercroft_core.drawer import Drawer
        from undercroft_store import DrawerWrite, Screen

        drawer = store.get(first)
        updated = Drawer.from_at_rest(first, "version two", drawer.meta_at_rest())
        store.write([DrawerWrite(updated)], screening=Screen())
    raw = _raw(home)
    raw.execute(
        "UPDATE drawers SET meta_json = ?, content = ?, embedding = ?, fingerprint = ?, tag = ? WHERE id = ?",
        (*old, first),
    )
    raw.close()
    with pytest.raises(RotationRefused, match="STALE"):
        rotate_vault(palace, "default", HashEmbedder())


def test_mirror_drift_does_not_block(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    raw = _raw(home)
    raw.execute("UPDATE drawers SET room = 'elsewhere' WHERE id = ?", (ids[0],))
    raw.close()
    report = rotate_vault(palace, "default", HashEmbedder())
    assert report.generation_after == 2


def test_refuses_while_another_handle_is_open(palace: Palace) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder(), read_only=True):
        with pytest.raises(VaultInUse, match="only handle"):
            rotate_vault(palace, "default", HashEmbedder())


def test_refuses_rows_in_a_table_nothing_rekeys_and_ignores_an_empty_one(palace: Palace, home: Path) -> None:
    _fill(palace)
    raw = _raw(home)
    raw.execute("CREATE TABLE mystery_policy (wing TEXT, tag BLOB)")
    raw.close()
    assert rotate_vault(palace, "default", HashEmbedder()).generation_after == 2  # empty: nothing to re-key
    raw = _raw(home)
    raw.execute("INSERT INTO mystery_policy VALUES ('life', zeroblob(32))")
    raw.close()
    with pytest.raises(RotationUnsupported, match="mystery_policy"):
        rotate_vault(palace, "default", HashEmbedder())


def test_a_registered_hook_rekeys_its_rows_and_echoes_audit_records(
    palace: Palace, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from undercroft_store.integrity import rotation
    from undercroft_store.kernel import seams
    from undercroft_vault import compute_tag

    _fill(palace)
    raw = _raw(home)
    raw.execute("CREATE TABLE probe_policy (wing TEXT PRIMARY KEY, tag BLOB)")
    raw.execute("INSERT INTO probe_policy VALUES ('life', zeroblob(32))")
    raw.close()
    seen: list[str] = []

    def reseal(rekeying: rotation.Rekeying) -> list[tuple[str, bytes]]:
        seen.append(rekeying.vault_id)
        tag = compute_tag(rekeying.new_keys, "probe/life", b"{}", b"")
        rekeying.connection.execute("UPDATE probe_policy SET tag = ?", (tag,))
        return [("probe/life", tag)]

    monkeypatch.setitem(seams._resealers, "probe_policy", reseal)  # as a feature registers it (wiring.py)
    report = rotate_vault(palace, "default", HashEmbedder())
    assert seen == ["default"] and report.rekey_records == 6
    raw = _raw(home)
    assert raw.execute("SELECT record_id FROM audit ORDER BY seq DESC LIMIT 1").fetchone()[0] == "probe/life"
    raw.close()


def test_empty_vault_rotates(palace: Palace) -> None:
    report = rotate_vault(palace, "default", HashEmbedder())
    assert (report.drawers, report.chain_records) == (0, 0)
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.verify().ok
        with pytest.raises(DrawerNotFound):
            store.get("drawer_" + "0" * 32)

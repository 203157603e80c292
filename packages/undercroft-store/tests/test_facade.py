"""The Python facade (docs/python-api.md): `Palace.open`, `Memory.search`, `Memory.remember`.

Bad input loses nothing: a remember without ``added_by`` raises `CallerRequired` (saying the caller is a
required argument) and the vault's drawer count and chain height are unchanged; a missing vault is only created
when asked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import CallerRequired, InvalidDrawer, Memory, Palace, VaultNotFound
from undercroft_store.search import InvalidSearch


def test_open_without_create_refuses_a_missing_vault_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(VaultNotFound, match=r"run `undercroft init` first.*create=True"):
        Palace.open(home)
    assert not (home / "vaults").exists()


def test_create_initialises_on_first_use_then_reopens(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Palace.open(home, create=True) as store:
        assert isinstance(store, Memory) and store.name == "default"
        [saved] = store.remember("We chose GraphQL over REST", wing="backend", room="decisions", added_by="app")
        assert saved.outcome == "created"
    assert (home / "master.key").is_file()
    with Palace.open(home) as store:  # no create needed now
        hits = store.search("graphql", wing="backend", limit=5).hits
        assert [h.id for h in hits] == [saved.id] and hits[0].content == "We chose GraphQL over REST"
        assert store.vault.get(saved.id).added_by == "app"


def test_a_named_vault_is_created_when_asked(tmp_path: Path) -> None:
    with Palace.open(tmp_path / "h", vault="notes", create=True) as store:
        store.remember("first note", added_by="app")
        assert store.vault.list_drawers(limit=5)[0].wing == "general"  # the CLI's defaults
    with Palace(tmp_path / "h") as palace:
        assert palace.list_vaults() == ["notes"]


@pytest.mark.parametrize("added_by", [None, "", "   ", 7])
def test_remember_without_a_caller_says_it_is_required_and_writes_nothing(tmp_path: Path, added_by: object) -> None:
    with Palace.open(tmp_path / "h", create=True) as store:
        store.remember("one", added_by="app")
        before = (store.vault.count(), store.vault.stats().chain_records)
        with pytest.raises(CallerRequired, match="the caller is a required argument, by design") as raised:
            if added_by is None:
                store.remember("two")
            else:
                store.remember("two", added_by=added_by)  # type: ignore[arg-type]
        assert isinstance(raised.value, TypeError) and isinstance(raised.value, InvalidDrawer)
        assert (store.vault.count(), store.vault.stats().chain_records) == before


def test_bad_search_arguments_raise_invalid_search(tmp_path: Path) -> None:
    with Palace.open(tmp_path / "h", create=True) as store:
        with pytest.raises(InvalidSearch):
            store.search("   ")
        with pytest.raises(InvalidSearch):
            store.search("x", limit=0)


def test_read_only_never_creates_and_refuses_writes(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFound):
        Palace.open(tmp_path / "h", create=True, read_only=True)
    with Palace.open(tmp_path / "h", create=True) as store:
        store.remember("kept", added_by="app")
    with Palace.open(tmp_path / "h", read_only=True) as store:
        assert store.vault.read_only
        assert store.search("kept").hits[0].content == "kept"


def test_home_none_reads_undercroft_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERCROFT_HOME", str(tmp_path / "env-home"))
    with Palace.open(create=True, embedder=HashEmbedder()) as store:
        store.remember("from the environment", added_by="app")
    assert (tmp_path / "env-home" / "vaults" / "default" / "vault.json").is_file()


def test_close_wipes_the_keys_and_later_use_refuses(tmp_path: Path) -> None:
    store = Palace.open(tmp_path / "h", create=True)
    store.close()
    with pytest.raises(Exception, match="closed"):
        store.remember("after close", added_by="app")

"""Per-agent diaries in their own wings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.memory.diaries import diary_agents, read_diary, write_diary
from undercroft_store.memory.kg.errors import InvalidSurfaceInput


@pytest.fixture
def store(palace: Palace, embedder: HashEmbedder) -> Iterator[VaultStore]:
    with palace.open_vault("default", embedder) as opened:
        yield opened


def test_write_read_agents(store: VaultStore) -> None:
    write_diary(store, "claude", "Started on the parser today.")
    write_diary(store, "claude", "Parser done; tests green.")
    write_diary(store, "gpt", "Reviewed the parser.", topic="reviews")
    entries = read_diary(store, "claude")
    assert [e.content for e in entries] == ["Parser done; tests green.", "Started on the parser today."]
    assert entries[0].wing == "diary-claude" and entries[0].agent == "claude"
    assert [e.content for e in read_diary(store, "claude", last=1)] == ["Parser done; tests green."]
    assert [e.room for e in read_diary(store, "gpt")] == ["reviews"]
    assert diary_agents(store) == {"claude": 2, "gpt": 1}
    assert read_diary(store, "nobody") == []


def test_bad_diary_input(store: VaultStore) -> None:
    with pytest.raises(InvalidSurfaceInput, match="a diary entry must not be empty"):
        write_diary(store, "claude", "  ")
    with pytest.raises(InvalidSurfaceInput, match="agent"):
        write_diary(store, "a/b", "text")
    with pytest.raises(InvalidSurfaceInput, match="last must be a positive integer, got 0"):
        read_diary(store, "claude", last=0)


def test_remember_records_the_agent_claim_and_refuses_empty_text_by_its_own_error(store: VaultStore) -> None:
    from undercroft_store.errors import InvalidDrawer, NothingToRemember

    (result,) = store.remember("Bought the oat milk.", wing="w", room="r", added_by="cli", agent="scout")
    (drawer,) = store.hydrate([result.id])
    assert (drawer.agent, drawer.added_by, drawer.content) == ("scout", "cli", "Bought the oat milk.")
    with pytest.raises(NothingToRemember, match="nothing to remember: the text is empty or whitespace"):
        store.remember(" \n\t ", wing="w", room="r", added_by="cli")
    assert issubclass(NothingToRemember, InvalidDrawer)  # callers catching the broader refusal still do
    (entry,) = write_diary(store, "scout", "Diary line.")
    (written,) = store.hydrate([entry.id])
    assert (written.agent, written.added_by, written.wing) == ("scout", "diary:scout", "diary-scout")

"""The signals the observability section names reach the obs shim — real events only, metadata only."""

from __future__ import annotations

from pathlib import Path

import pytest
import undercroft_obs as obs
from undercroft_core import HashEmbedder
from undercroft_obs import names
from undercroft_store import Palace
from undercroft_store.errors import RecordTampered
from undercroft_store.search import Searcher, SearchRequest

WORDS = ("marmalade lighthouse", "quokka saxophone")


def _flip_content_byte(home: Path, drawer_id: str) -> None:
    import sqlite3

    raw = sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)
    try:
        content = bytearray(raw.execute("SELECT content FROM drawers WHERE id = ?", (drawer_id,)).fetchone()[0])
        content[len(content) // 2] ^= 0x01
        raw.execute("UPDATE drawers SET content = ? WHERE id = ?", (bytes(content), drawer_id))
    finally:
        raw.close()


def test_writes_deletes_commits_searches_and_only_real_tamper_alarms(
    palace: Palace, home: Path, embedder: HashEmbedder
) -> None:
    with obs.sink_installed(obs.RecordingSink()) as sink:
        with palace.open_vault("default", embedder) as store:
            kept = store.remember(WORDS[0], wing="life", room="notes", added_by="t")[0].id
            gone = store.remember(WORDS[1], wing="life", room="notes", added_by="t")[0].id
            store.delete(gone)
            Searcher.from_settings(store, embedder, env={}).search(SearchRequest("lighthouse"))
            assert store.verify().ok
        # Everything so far was clean: not one integrity alarm.
        assert sink.counter_total(names.HMAC_VERIFY_FAILURES_TOTAL) == 0
        assert sink.counter_total(names.DRAWER_WRITES_TOTAL, outcome="created") == 2
        assert sink.counter_total(names.DRAWER_DELETES_TOTAL) == 1
        assert sink.counter_total(names.CHAIN_COMMITS_TOTAL) == 3  # two saves and one delete
        assert sink.counter_total(names.SEARCH_TOTAL) == 1
        assert len(sink.events(names.EVENT_DRAWER_DELETED)) == 1
        assert len(sink.events(names.EVENT_SEARCH)) == 1

        _flip_content_byte(home, kept)
        with palace.open_vault("default", embedder) as store, pytest.raises(RecordTampered):
            store.get(kept)
        assert sink.counter_total(names.HMAC_VERIFY_FAILURES_TOTAL, surface="drawer") == 1

    # Metadata only: no word of any drawer or query in any signal.
    for record in sink.records:
        for value in [record.name, *map(str, record.labels.values())]:
            for word in " ".join(WORDS).split():
                assert word not in value, (record.name, value)

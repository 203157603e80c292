"""A batched read serves a remembered drawer only for bytes identical to bytes it verified under the same keys.

Raw-byte tampers between two reads of one handle are still refused on the second read; a re-keyed handle and a
closed handle keep nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace, RecordTampered
from undercroft_store.integrity.rotation import rotate_context


def _flip(home: Path, column: str, seq: int) -> None:
    connection = sqlite3.connect(home / "vaults" / "default" / "vault.db")
    value = bytearray(connection.execute(f"SELECT {column} FROM drawers WHERE seq = ?", (seq,)).fetchone()[0])
    value[len(value) // 2] ^= 0x01
    connection.execute(f"UPDATE drawers SET {column} = ? WHERE seq = ?", (bytes(value), seq))
    connection.commit()
    connection.close()


@pytest.mark.parametrize("column", ["content", "meta_json", "tag"])
@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_a_tamper_after_a_remembered_read_is_refused(home: Path, column: str, level: str) -> None:
    with Palace(home) as palace:
        palace.init(level=level)
        with palace.open_vault("default", HashEmbedder()) as store:
            store.remember("the lighthouse keeper logs every storm", wing="life", room="sea", added_by="test")
            store.remember("the ferry leaves at nine", wing="life", room="sea", added_by="test")
            first = store.hydrate_many([1, 2])
            assert store.hydrate_many([1, 2]) == first  # served from the memo: same drawers
            assert store._context.verified_rows  # premise: the memo is in use
            _flip(home, column, 1)
            with pytest.raises(RecordTampered):
                store.hydrate_many([1, 2])


def test_rotation_and_close_drop_the_memo(home: Path) -> None:
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            store.remember("the lighthouse keeper logs every storm", wing="life", room="sea", added_by="test")
            store.hydrate_many([1])
            context = store._context
            assert context.verified_rows
            rotate_context(context, palace._master_key())
            assert context.verified_rows == {}
            after = store.hydrate_many([1])
            assert after[1].content == "the lighthouse keeper logs every storm"
        assert context.verified_rows == {}

"""A model swap's re-embed resumes after an interruption, and its progress marker cannot be forged forward."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from undercroft_core import HashEmbedder
from undercroft_core.embedder import EmbedderIdentity
from undercroft_core.hash_embedder import DegradingEmbedder
from undercroft_store import Palace
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.integrity.resume import RESUME_KEY

DRAWERS = 12


class Interrupted(BaseException):
    """Stands for a kill: not an Exception, so no embedder degrade catches it."""


class Counting(HashEmbedder):
    """A hash embedder under a foreign identity that counts what it embeds and can stop after ``stop_after``."""

    def __init__(self, stop_after: int | None = None) -> None:
        DegradingEmbedder.__init__(self, EmbedderIdentity("test-swap", 64))
        self.embedded: list[str] = []
        self.stop_after = stop_after

    embed_int8 = None  # type: ignore[assignment]  # the float path, through _embed_batch, like a model's

    def _embed_batch(self, texts: list[str]) -> NDArray[np.floating]:
        if self.stop_after is not None and len(self.embedded) >= self.stop_after:
            raise Interrupted
        self.embedded += texts
        return super()._embed_batch(texts)


def _filled(home: Path) -> None:
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            for n in range(DRAWERS):
                store.remember(f"note number {n}", wing="life", room="misc", added_by="t")


def _interrupt(home: Path) -> None:
    with Palace(home, force_embedder=True) as forced, pytest.raises(Interrupted):
        repair_vault(forced, "default", Counting(stop_after=8), batch=4)  # two batches commit, the third dies


def test_an_interrupted_swap_resumes_without_re_embedding_done_rows(home: Path) -> None:
    _filled(home)
    _interrupt(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        assert store.verify().ok  # still the hash vault by record, and verifiable mid-migration
    resumed = Counting()
    with Palace(home, force_embedder=True) as forced:
        report = repair_vault(forced, "default", resumed, batch=4)
    assert (report.embeddings_resumed, report.embeddings_reembedded) == (8, DRAWERS - 8), report.to_dict()
    assert len(resumed.embedded) == DRAWERS - 8 and "note number 0" not in resumed.embedded
    assert report.identity_recorded == "test-swap@64" and report.ok
    raw = sqlite3.connect(home / "vaults" / "default" / "vault.db")
    assert raw.execute("SELECT count(*) FROM meta WHERE key = ?", (RESUME_KEY,)).fetchone()[0] == 0
    raw.close()


@pytest.mark.parametrize("edit", ["forward", "garbage", "other-identity"])
def test_a_forged_marker_is_ignored_and_the_swap_starts_over(home: Path, edit: str) -> None:
    _filled(home)
    _interrupt(home)
    raw = sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)
    (value,) = raw.execute("SELECT value FROM meta WHERE key = ?", (RESUME_KEY,)).fetchone()
    body, _, mac = bytes(value).rpartition(b"\n")
    forged = {
        "forward": body.replace(body.rpartition(b"\n")[2], b"9999") + b"\n" + mac,  # claims every row is done
        "garbage": b"\xff\x00not a marker",
        "other-identity": body.replace(b"test-swap@64", b"someone-else@64") + b"\n" + mac,
    }[edit]
    raw.execute("UPDATE meta SET value = ? WHERE key = ?", (forged, RESUME_KEY))
    raw.close()
    again = Counting()
    with Palace(home, force_embedder=True) as forced:
        report = repair_vault(forced, "default", again, batch=4)
    assert report.embeddings_resumed == 0 and len(again.embedded) == DRAWERS and report.ok

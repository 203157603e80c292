"""`VaultStore.remember(vector=…)`: the caller's embedding of one drawer, stored as given; refused beside text
that chunks into more than one drawer, before anything is written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from undercroft_core.external_embedder import ExternalEmbedder
from undercroft_store import Palace
from undercroft_store.errors import InvalidDrawer


def test_remember_stores_the_supplied_vector(tmp_path: Path) -> None:
    with Palace(tmp_path) as palace:
        palace.create_vault("ext", level="sealed")
        with palace.open_vault("ext", ExternalEmbedder("probe", 4)) as store:
            [result] = store.remember("one short memory", wing="w", room="r", added_by="test", vector=[0, 3, 0, 4])
            matrix = store.iter_embeddings()
    assert result.outcome == "created"
    assert matrix.ids == [result.id]
    stored = matrix.codes[0].astype(np.float32) * matrix.scales[0]
    np.testing.assert_allclose(stored, [0.0, 3.0, 0.0, 4.0], atol=0.04)  # as given, within int8 quantisation


def test_remember_refuses_one_vector_for_text_that_splits(tmp_path: Path) -> None:
    long_text = "\n\n".join(f"paragraph {i} " + "words " * 120 for i in range(12))
    with Palace(tmp_path) as palace:
        palace.create_vault("ext", level="sealed")
        with palace.open_vault("ext", ExternalEmbedder("probe", 4)) as store:
            with pytest.raises(InvalidDrawer, match="describes one drawer, but the text chunks into"):
                store.remember(long_text, wing="w", room="r", added_by="test", vector=[1, 0, 0, 0])
            assert store.stats().drawers == 0

"""The RAM postings: drawers holding a query's rare terms join the pool whatever their cosine rank."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import HYDRATION_FLOOR, Lexicon, Searcher, SearchRequest
from undercroft_store.search.postings import Postings

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
FILLERS = 2_000
QUERY = "where does zqxv wqzz keep the lantern"
_WORDS = [f"{a}{b}{c}" for a in "bcdfg" for b in "aeiou" for c in "lmnrst"]


def _drawer(index: int, text: str) -> Drawer:
    return Drawer(
        id=append_drawer_id("w", f"r{index % 5}", index),
        content=text,
        wing="w",
        room=f"r{index % 5}",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
    )


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultStore]:
    rng = random.Random(5)
    # Fillers echo the query's common words (high cosine); the needle buries its rare name in other words.
    drawers = [
        _drawer(i, "where does she keep the lantern " + " ".join(rng.choices(_WORDS, k=4))) for i in range(FILLERS)
    ]
    drawers.append(_drawer(FILLERS, "zqxv wqzz " + " ".join(rng.choices(_WORDS, k=80))))
    with Palace(Path(tmp_path_factory.mktemp("postings"))) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            store.write([DrawerWrite(d) for d in drawers], screening=Screen())
            yield store


def _id(lexicon: Lexicon, term: str) -> int:
    found = lexicon.term_id(term)
    assert found is not None, term
    return found


def test_postings_invert_the_lexicon(vault: VaultStore) -> None:
    lexicon = Lexicon()
    seqs = vault.scope_seqs()
    postings = Postings.build(lexicon, vault, seqs)
    needle = postings.holders(_id(lexicon, "zqxv"))
    assert len(needle) == 1 and len(postings.holders(_id(lexicon, "lantern"))) == FILLERS
    assert postings.holders(-1).tolist() == [] and postings.holders(10**9).tolist() == []
    common = [_id(lexicon, term) for term in ("lantern", "where")]
    # Rarest first while each term's holders fit the budget; a common term stops the walk.
    assert postings.rare_holders([*common, _id(lexicon, "zqxv")], seqs, 256).tolist() == needle.tolist()
    assert postings.rare_holders(common, seqs, FILLERS).tolist() == seqs[:FILLERS].tolist()
    # Only members of the population are returned.
    assert postings.rare_holders([_id(lexicon, "zqxv")], seqs[:10], 256).tolist() == []


def test_a_needle_below_the_cosine_cut_still_ranks_first(vault: VaultStore) -> None:
    searcher = Searcher(vault, EMBEDDER)
    seqs, unit = searcher.cache.load(vault)
    query = EMBEDDER.embed([QUERY])[0]
    cosines = unit @ (query / np.linalg.norm(query))
    needle_row = len(seqs) - 1
    # Premise: the needle is far outside the cosine pool (the hydration size of a 5-hit page).
    assert int(np.sum(cosines > cosines[needle_row])) > HYDRATION_FLOOR
    result = searcher.search(SearchRequest(QUERY, limit=5))
    assert result.hits[0].content.startswith("zqxv wqzz") and result.pool == HYDRATION_FLOOR + 1
    # A committed write moves the generation: the postings are rebuilt and hold the new drawer too.
    rng = random.Random(6)
    vault.write([DrawerWrite(_drawer(FILLERS + 1, "zqxv " + " ".join(rng.choices(_WORDS, k=80))))], screening=Screen())
    assert searcher.search(SearchRequest(QUERY, limit=5)).pool == HYDRATION_FLOOR + 2
    named = searcher.search(SearchRequest("zqxv", limit=5))
    assert [hit.content.startswith("zqxv ") for hit in named.hits[:2]] == [True, True]


def test_postings_are_void_once_the_lexicon_drops_its_ids(vault: VaultStore) -> None:
    lexicon = Lexicon()
    postings = Postings.build(lexicon, vault, vault.scope_seqs())
    assert postings.current(lexicon, vault.generation) and not postings.current(lexicon, vault.generation + 1)
    lexicon.clear()  # term ids are re-interned from here: postings keyed by the old ids must not be read
    assert not postings.current(lexicon, vault.generation)


def test_a_remembered_population_mask_never_answers_for_another_population(vault: VaultStore) -> None:
    """The membership mask is remembered per read-only population (a scope answer reused by every search of a
    generation); a different population, or the same seqs in a writeable array, is answered for itself."""
    lexicon = Lexicon()
    seqs = vault.scope_seqs()
    postings = Postings.build(lexicon, vault, seqs)
    needle = [_id(lexicon, "zqxv")]
    held = postings.holders(needle[0]).tolist()
    whole = seqs.copy()
    whole.setflags(write=False)
    assert postings.rare_holders(needle, whole, 256).tolist() == held
    assert postings._membership is not None and postings._membership[0] is whole  # premise: remembered
    others = seqs[~np.isin(seqs, held)]
    others.setflags(write=False)
    assert postings.rare_holders(needle, others, 256).tolist() == []  # not the whole vault's mask
    writeable = seqs.copy()
    assert postings.rare_holders(needle, writeable, 256).tolist() == held
    assert postings._membership[0] is others  # a caller's own array may change: it is never remembered
    writeable[:] = np.sort(np.concatenate((others, others[: len(held)])))  # ascending, without the needle
    assert postings.rare_holders(needle, writeable, 256).tolist() == []

"""The registry against the seed document's inventory of UNDERCROFT_* names, counted in both directions."""

from __future__ import annotations

from pathlib import Path

import pytest
import undercroft_config as config

FIXTURE = Path(__file__).parent / "fixtures" / "seed_variables.txt"

#: Registered names the seed spells only in slash shorthand (UNDERCROFT_EMBED_URL/_MODEL/_API/_KEY/_DIM/_CA,
#: UNDERCROFT_COLBERT_MODEL/_QUERY_MODEL/…, UNDERCROFT_FDE_REPS/_KSIM/_DPROJ/_SEED,
#: UNDERCROFT_QDRANT_URL/_CHROMA_URL/_PGVECTOR_DSN/_MILVUS_URL/_WEAVIATE_URL), so grep cannot see them.
OURS = {
    "UNDERCROFT_EMBED_KEY",
    "UNDERCROFT_EMBED_DIM",
    "UNDERCROFT_COLBERT_QUERY_MODEL",
    "UNDERCROFT_FDE_KSIM",
    "UNDERCROFT_FDE_DPROJ",
    "UNDERCROFT_FDE_SEED",
    "UNDERCROFT_CHROMA_URL",
    "UNDERCROFT_MILVUS_URL",
    "UNDERCROFT_WEAVIATE_URL",
    # Not in the seed at all: the live stream's heartbeat (15 s there) as a test and operator knob.
    "UNDERCROFT_STREAM_HEARTBEAT_MS",
}


def _tokens() -> list[str]:
    return [line.strip() for line in FIXTURE.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _seed_names() -> set[str]:
    return {token for token in _tokens() if not token.endswith("_")}


def test_every_name_in_the_seed_is_registered() -> None:
    missing = _seed_names() - set(config.REGISTRY)
    assert not missing, f"unregistered: {sorted(missing)}"


def test_every_registered_name_is_in_the_seed_or_explicitly_ours() -> None:
    extra = set(config.REGISTRY) - _seed_names() - OURS
    assert not extra, f"registered but in no document: {sorted(extra)}"
    assert not (OURS & _seed_names()), "a name listed as ours is in the seed: drop it from OURS"


def test_every_family_prefix_names_registered_declarations() -> None:
    for prefix in (token for token in _tokens() if token.endswith("_")):
        assert any(name.startswith(prefix) for name in config.REGISTRY), prefix


def test_counts() -> None:
    assert len(_seed_names()) == 77
    assert len(config.REGISTRY) == 77 + len(OURS)


def test_fixture_matches_the_seed_when_it_is_present() -> None:
    # The seed lives beside the repository (shared/, the first ancestor holding it); without it this test
    # SKIPS with its reason, never passes having compared nothing.
    import re

    name = Path("shared") / "seeds" / "000_18d29bfad2fc0cf1.txt"
    seed = next((root / name for root in Path(__file__).resolve().parents if (root / name).is_file()), None)
    if seed is None:
        pytest.skip(f"the seed {name} is not beside this checkout (lay ../shared beside it)")
    found = set(re.findall(r"UNDERCROFT_[A-Z0-9_]*", seed.read_text(encoding="utf-8")))
    assert found == set(_tokens())

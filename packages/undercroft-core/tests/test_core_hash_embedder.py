"""The hash embedder: byte-reproducible (golden digests), equal to its stated recipe, int8 drift < 0.1 %."""

import hashlib
import itertools
import subprocess
import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from undercroft_core import (
    HASH_SEMANTIC_GATE,
    Embedder,
    HashEmbedder,
    InvalidInput,
    dequantise_int8,
    measure_admission_gate,
    quantise_int8,
)

TEXTS = [
    "We chose GraphQL over REST for the mobile API.",
    "Kinder spielen im Garten; das Kind lacht.",
    "бумага и бумаги",
    "كتب الطالب الدرس في المكتوب",
    "running run ran",
    "",
    "!!! ???",
]
# sha256 of HashEmbedder().embed(TEXTS).tobytes(): any change to the recipe must change the identity name.
GOLDEN_DIGEST = "8394a8375211c60a8d26f544166d1899eb25032f2cbc6867a062d406c9414245"

MASK = (1 << 64) - 1
M = 0x100000001B3


def _mix(z: int) -> int:
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & MASK
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _reference(text: str, dimension: int = 384) -> np.ndarray:
    """The recipe in docs/core.md, one feature at a time."""
    prepared = unicodedata.normalize("NFC", text.casefold())

    def is_word(c: str) -> bool:
        return unicodedata.category(c)[0] in "LMN"

    words, current = [], ""
    for c in prepared:
        if is_word(c):
            current += c
        elif current:
            words.append(current)
            current = ""
    if current:
        words.append(current)

    def word_hash(w: str) -> int:
        return sum((ord(c) + 1) * pow(M, i, 1 << 64) for i, c in enumerate(w)) & MASK

    features: list[tuple[int, float]] = []
    hashes = [word_hash(w) for w in words]
    features += [(_mix(h ^ 0x9E3779B97F4A7C15), 1.0) for h in hashes]
    features += [(_mix(((a * M + b) & MASK) ^ 0xC2B2AE3D27D4EB4F), 1.0) for a, b in itertools.pairwise(hashes)]
    padded = "\x00" + prepared + "\x00"
    for i in range(1, len(padded) - 1):
        if is_word(padded[i]):
            left = ord(padded[i - 1]) if is_word(padded[i - 1]) else 32
            right = ord(padded[i + 1]) if is_word(padded[i + 1]) else 32
            key = ((((left * M + ord(padded[i])) & MASK) * M + right) & MASK) ^ 0x165667B19E3779F9
            features.append((_mix(key), 0.5))
    vector = np.zeros(dimension)
    for h, weight in features:
        vector[h % dimension] += weight if h >> 63 == 0 else -weight
    norm = np.sqrt((vector * vector).sum())
    return (vector / norm if norm else vector).astype(np.float32)


def test_identity_and_protocol() -> None:
    embedder = HashEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.identity.label == "undercroft-hash-v3@384"
    assert embedder.semantic_admission_gate == 0.56
    assert embedder.semantic_floor == 0.0
    assert HashEmbedder(64).identity.label == "undercroft-hash-v3@64"


def test_matches_the_stated_recipe_exactly() -> None:
    matrix = HashEmbedder().embed(TEXTS)
    for row, text in zip(matrix, TEXTS, strict=True):
        assert row.tobytes() == _reference(text).tobytes()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60), min_size=1, max_size=4))
def test_batch_equals_one_by_one_equals_reference(texts: list[str]) -> None:
    embedder = HashEmbedder(64)
    batch = embedder.embed(texts)
    for row, text in zip(batch, texts, strict=True):
        assert row.tobytes() == embedder.embed([text])[0].tobytes() == _reference(text, 64).tobytes()


def test_golden_digest_in_a_fresh_interpreter() -> None:
    digest = hashlib.sha256(HashEmbedder().embed(TEXTS).tobytes()).hexdigest()
    assert digest == GOLDEN_DIGEST
    code = (
        "import hashlib; from undercroft_core import HashEmbedder; "
        f"print(hashlib.sha256(HashEmbedder().embed({TEXTS!r}).tobytes()).hexdigest())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == GOLDEN_DIGEST


def test_shape_norms_and_zero_for_wordless_text() -> None:
    matrix = HashEmbedder().embed(TEXTS)
    assert matrix.shape == (len(TEXTS), 384) and matrix.dtype == np.float32 and matrix.flags.c_contiguous
    norms = np.linalg.norm(matrix, axis=1)
    assert np.allclose(norms[:5], 1.0, atol=1e-6)
    assert norms[5] == 0.0 and norms[6] == 0.0
    assert HashEmbedder().embed([]).shape == (0, 384)


def test_surface_overlap_scores_and_morphology() -> None:
    e = HashEmbedder()
    a, b, c = e.embed(["I love running in the park", "Running in the park is what I love", "The tax office shut"])
    assert float(a @ b) > 0.6 > 0.3 > float(a @ c)
    lemmas = ["run", "walk", "paint", "jump", "cook", "print", "talk", "climb", "play", "read"]
    forms = e.embed([lemma + "ing" for lemma in lemmas])
    bases = e.embed(lemmas)
    similarity = bases @ forms.T
    assert float(np.diag(similarity).mean()) > 0.3 > float(similarity[~np.eye(len(lemmas), dtype=bool)].mean())
    # Case and composition do not matter; the words do.
    assert e.embed(["CAFÉ"])[0].tobytes() == e.embed(["cafe\u0301"])[0].tobytes()


def test_measured_gate_stays_under_the_declared_one() -> None:
    measured = measure_admission_gate(HashEmbedder())
    assert measured is not None and measured <= HASH_SEMANTIC_GATE


def _drift(floats: np.ndarray, restored: np.ndarray) -> np.ndarray:
    restored = restored.astype(np.float64)
    restored /= np.linalg.norm(restored, axis=1, keepdims=True)
    floats = floats.astype(np.float64)
    return np.abs(floats @ floats.T - restored @ restored.T)


def _drawers(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocabulary = [
        "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyzäéß"), size=rng.integers(2, 10))) for _ in range(3000)
    ]
    return [" ".join(rng.choice(vocabulary, size=rng.integers(3, 140)))[:800] for _ in range(count)]


def test_int8_cosine_drift_under_a_tenth_of_a_percent() -> None:
    embedder = HashEmbedder()
    texts = _drawers(300, 3)
    floats = embedder.embed(texts)
    drift = _drift(floats, dequantise_int8(embedder.embed_int8(texts)))
    assert drift.max() < 0.001
    # The generic per-vector quantiser, for vectors of any origin, is within 0.1 % on average.
    generic = _drift(floats, dequantise_int8(quantise_int8(floats)))
    assert generic.mean() < 0.001 and generic.max() < 0.005


def test_int8_form_is_exact_for_drawer_sized_text_and_falls_back_beyond() -> None:
    embedder = HashEmbedder()
    huge = "same " * 2000
    quantised = embedder.embed_int8([TEXTS[0], huge, ""])
    floats = embedder.embed([TEXTS[0], huge, ""])
    assert np.abs(dequantise_int8(quantised)[0] - floats[0]).max() < 1e-6
    assert int(np.abs(quantised.codes[1]).max()) == 127
    assert quantised.scales[2] == 0.0 and not quantised.codes[2].any()


@pytest.mark.parametrize("bad", ["text", [b"bytes"], [1], None])
def test_bad_batches_are_refused_not_degraded(bad: object) -> None:
    embedder = HashEmbedder()
    with pytest.raises(InvalidInput, match=r"^embed (takes a sequence of strings|input 0 is \w+, not a string)"):
        embedder.embed(bad)  # type: ignore[arg-type]
    assert embedder.embed_failures == 0


def test_a_batch_with_no_word_at_all_embeds_to_zero_vectors_not_an_error() -> None:
    """Only zero-width or blank text: no feature, so a zero vector (and no counted failure), never a crash."""
    embedder = HashEmbedder()
    quantised = embedder.embed_int8(["\u200b", "   ", "\u200b\u200b"])
    assert quantised.codes.shape == (3, embedder.dimension)
    assert not quantised.codes.any() and not quantised.scales.any()
    assert not embedder.embed(["\u200b"]).any()
    assert embedder.embed_failures == 0
    # Mixed with a real text, the real one is embedded exactly as alone.
    mixed = embedder.embed_int8(["\u200b", "plain words here"])
    alone = embedder.embed_int8(["plain words here"])
    assert (mixed.codes[1] == alone.codes[0]).all() and mixed.scales[1] == alone.scales[0]


def test_the_word_table_filled_on_demand_is_the_whole_bmp_table() -> None:
    """The BMP word-character table fills per code point seen (start-up, issue 18 §4); filled piecewise, in
    any order, it is exactly the table computed for every code point at once."""
    import unicodedata

    import numpy as np
    from undercroft_core._internal import feature_hashing as fh

    fh._bmp_tables.cache_clear()
    everything = np.arange(fh._BMP, dtype=np.uint32)
    expected = np.array([unicodedata.category(chr(cp))[0] in "LMN" for cp in range(fh._BMP)], dtype=np.bool_)
    fh._bmp_table(np.array([ord("a"), ord("ж"), ord(" "), 0x4E2D], dtype=np.uint32))
    for chunk in np.array_split(everything[::-1], 7):
        fh._bmp_table(chunk)
    assert np.array_equal(fh._bmp_table(everything), expected)
    fh._bmp_tables.cache_clear()
    assert np.array_equal(fh._word_mask(everything), expected)

"""MaxSim and MUVERA FDE: exact math, persisted parameters, and FDE top-100 containing the MaxSim top-10."""

import numpy as np
import pytest
from undercroft_core import FdeEncoder, FdeParameters, InvalidInput, maxsim, maxsim_many


def test_maxsim_matches_its_definition() -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((5, 8)).astype(np.float32)
    docs = [rng.standard_normal((n, 8)).astype(np.float32) for n in (1, 7, 0, 30)]
    expected = [sum(max(float(qi @ dj) for dj in d) for qi in q) if len(d) else 0.0 for d in docs]
    assert np.allclose(maxsim_many(q, docs), expected, atol=1e-4)
    assert maxsim(q, docs[1]) == pytest.approx(expected[1], abs=1e-4)
    assert maxsim(q, docs[2]) == 0.0
    with pytest.raises(InvalidInput, match="dimension 9"):
        maxsim(q, np.zeros((2, 9)))


def test_parameters_persist_byte_for_byte() -> None:
    encoder = FdeEncoder.from_seed(FdeParameters(16, repetitions=3, bits=2, projection=4, seed=9))
    blob = encoder.to_bytes()
    again = FdeEncoder.from_bytes(blob)
    assert again.to_bytes() == blob
    docs = [np.random.default_rng(1).standard_normal((5, 16)).astype(np.float32)]
    assert again.encode_documents(docs).tobytes() == encoder.encode_documents(docs).tobytes()
    assert encoder.parameters.output_dimension == 3 * 4 * 4
    with pytest.raises(InvalidInput, match="wrong length"):
        FdeEncoder.from_bytes(blob[:-4])
    with pytest.raises(InvalidInput, match="not a persisted FDE"):
        FdeEncoder.from_bytes(b"garbage!" + blob[8:])
    with pytest.raises(InvalidInput, match="bits must be an integer"):
        FdeParameters(16, bits=13)


def test_query_fde_dot_is_exact_maxsim_with_one_partition_and_identity_like_projection() -> None:
    # bits=0: one partition; a document's block is its mean, a query's its sum (the degenerate case).
    params = FdeParameters(4, repetitions=1, bits=0, projection=4, seed=0)
    encoder = FdeEncoder(params, np.zeros((1, 4, 0), np.float32), np.eye(4, dtype=np.float32)[None])
    q = np.array([[1, 0, 0, 0], [0, 1, 0, 0]], np.float32)
    d = np.array([[1, 1, 0, 0], [3, 1, 0, 0]], np.float32)
    assert float(encoder.encode_queries([q])[0] @ encoder.encode_documents([d])[0]) == pytest.approx(3.0)


def test_empty_partitions_are_filled_from_the_nearest_token() -> None:
    encoder = FdeEncoder.from_seed(FdeParameters(8, repetitions=2, bits=3, projection=4, seed=2))
    doc = np.random.default_rng(5).standard_normal((1, 8)).astype(np.float32)
    fde = encoder.encode_documents([doc, np.zeros((0, 8), np.float32)])
    blocks = fde[0].reshape(2, 8, 4)
    assert np.allclose(blocks, blocks[:, :1, :])  # one token: every partition carries its projection
    assert not fde[1].any()


def _clustered(rng: np.random.Generator, topics: np.ndarray, count: int, tokens: int) -> list[np.ndarray]:
    out = []
    for topic in rng.integers(0, len(topics), count):
        x = topics[topic][rng.integers(0, topics.shape[1], tokens)] + 0.8 * rng.standard_normal(
            (tokens, topics.shape[2])
        )
        out.append((x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32))
    return out


def test_fde_top100_contains_exact_maxsim_top10() -> None:
    rng = np.random.default_rng(7)
    topics = rng.standard_normal((100, 8, 32))
    documents = _clustered(rng, topics, 5000, 32)
    # 50 queries, not 200: the claim is about the corpus (top 100 of 5,000 = 2 %), and 50 of 50 held is the
    # same ">= 99 %" bar at a quarter of the exact-MaxSim cost (the test's larger half).
    queries = _clustered(rng, topics, 200, 8)[:50]  # the same first 50 queries the 200-query version drew
    encoder = FdeEncoder.from_seed(FdeParameters(32, seed=1))
    approximate = encoder.encode_queries(queries) @ encoder.encode_documents(documents).T
    contained = 0
    for index, query in enumerate(queries):
        exact_top10 = set(np.argsort(-maxsim_many(query, documents), kind="stable")[:10].tolist())
        fde_top100 = set(np.argsort(-approximate[index], kind="stable")[:100].tolist())
        contained += exact_top10 <= fde_top100
    assert contained == len(queries), f"{contained} of {len(queries)}"


def _reference_fde(encoder: FdeEncoder, matrix: np.ndarray, *, document: bool) -> np.ndarray:
    """The encoding written as the paper states it, one token and one partition at a time."""
    p = encoder.parameters
    blob = encoder.to_bytes()
    body = np.frombuffer(
        blob, dtype="<f4", offset=len(blob) - 4 * p.repetitions * p.dimension * (p.bits + p.projection)
    )
    hyperplanes = body[: p.repetitions * p.dimension * p.bits].reshape(p.repetitions, p.dimension, p.bits)
    projections = body[p.repetitions * p.dimension * p.bits :].reshape(p.repetitions, p.dimension, p.projection)
    blocks = []
    for r in range(p.repetitions):
        clusters = [sum(1 << j for j in range(p.bits) if float(token @ hyperplanes[r][:, j]) > 0) for token in matrix]
        projected = [token @ projections[r] for token in matrix]
        for partition in range(p.partitions):
            members = [projected[i] for i, c in enumerate(clusters) if c == partition]
            if members:
                total = np.sum(members, axis=0)
                blocks.append(total / len(members) if document else total)
            elif document and len(matrix):
                nearest = min(range(len(matrix)), key=lambda i: (bin(clusters[i] ^ partition).count("1"), i))
                blocks.append(projected[nearest])
            else:
                blocks.append(np.zeros(p.projection))
    return np.concatenate(blocks)


def test_fde_matches_a_token_by_token_reference_and_is_batch_independent() -> None:
    rng = np.random.default_rng(11)
    encoder = FdeEncoder.from_seed(FdeParameters(6, repetitions=3, bits=3, projection=5, seed=4))
    matrices = [rng.standard_normal((n, 6)).astype(np.float32) for n in (3, 0, 1, 9, 2)]
    documents = encoder.encode_documents(matrices)
    queries = encoder.encode_queries(matrices)
    assert documents.shape == queries.shape == (5, 3 * 8 * 5)
    assert documents.dtype == queries.dtype == np.float32
    for index, matrix in enumerate(matrices):
        assert np.allclose(documents[index], _reference_fde(encoder, matrix, document=True), atol=1e-4)
        assert np.allclose(queries[index], _reference_fde(encoder, matrix, document=False), atol=1e-4)
        # A row never depends on its neighbours in the batch (a stored row is encoded alone).
        assert np.allclose(encoder.encode_documents([matrix])[0], documents[index], atol=1e-5)
    assert encoder.encode_documents([]).shape == (0, 3 * 8 * 5)


def test_same_seed_same_encoder_other_seed_other_encoder() -> None:
    params = FdeParameters(16, repetitions=4, bits=2, projection=8, seed=123)
    assert FdeEncoder.from_seed(params).to_bytes() == FdeEncoder.from_seed(params).to_bytes()
    other = FdeEncoder.from_seed(FdeParameters(16, repetitions=4, bits=2, projection=8, seed=124))
    assert other.to_bytes()[32:] != FdeEncoder.from_seed(params).to_bytes()[32:]


def test_a_persisted_encoder_with_non_finite_parameters_is_refused() -> None:
    blob = bytearray(FdeEncoder.from_seed(FdeParameters(4, repetitions=1, bits=1, projection=2, seed=3)).to_bytes())
    blob[-4:] = np.array([np.nan], dtype="<f4").tobytes()
    with pytest.raises(InvalidInput, match="finite"):
        FdeEncoder.from_bytes(bytes(blob))
    with pytest.raises(InvalidInput, match="token matrices must be"):
        FdeEncoder.from_bytes(bytes(blob[:-4]) + b"\x00\x00\x80?").encode_documents([np.zeros((2, 5))])


def test_fde_dot_rank_correlates_with_maxsim_on_random_matrices() -> None:
    rng = np.random.default_rng(3)
    topics = rng.standard_normal((20, 4, 16))
    documents = _clustered(rng, topics, 300, 12)
    queries = _clustered(rng, topics, 10, 6)
    encoder = FdeEncoder.from_seed(FdeParameters(16, repetitions=10, bits=3, projection=8, seed=5))
    approximate = encoder.encode_queries(queries) @ encoder.encode_documents(documents).T
    # A query encoded with other random parameters: the same shapes, no relation to MaxSim (the control).
    stranger = FdeEncoder.from_seed(FdeParameters(16, repetitions=10, bits=3, projection=8, seed=6))
    control = stranger.encode_queries(queries) @ encoder.encode_documents(documents).T

    def spearman(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.corrcoef(np.argsort(np.argsort(a)), np.argsort(np.argsort(b)))[0, 1])

    exact = [maxsim_many(query, documents) for query in queries]
    measured = [spearman(exact[i], approximate[i]) for i in range(len(queries))]
    controls = [spearman(exact[i], control[i]) for i in range(len(queries))]
    # Measured at this seed: 0.64 to 0.80, mean 0.72 (ten queries over 300 documents).
    assert min(measured) > 0.55 and float(np.mean(measured)) > 0.65, measured
    assert float(np.mean(controls)) < 0.3, controls

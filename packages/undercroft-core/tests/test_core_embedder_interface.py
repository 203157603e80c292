"""The embedder interface: identity, counted degrade, external vectors, calibration, int8 packing."""

import math

import numpy as np
import pytest
from undercroft_core import (
    PROBE_PAIRS,
    DegradingEmbedder,
    Embedder,
    EmbedderIdentity,
    ExternalEmbedder,
    InvalidInput,
    calibrated_semantic_score,
    measure_admission_gate,
    measure_semantic_floor,
    pack_int8,
    unpack_int8,
)


class Flaky(DegradingEmbedder):
    """Fails on texts containing 'boom', returns NaN for 'nan', a wrong shape for 'shape'."""

    def __init__(self, gate: float | None = 0.5) -> None:
        super().__init__(EmbedderIdentity("flaky", 4))
        self._gate = gate

    @property
    def semantic_admission_gate(self) -> float | None:
        return self._gate

    @property
    def semantic_floor(self) -> float:
        return 0.0

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        if any("boom" in t for t in texts):
            raise RuntimeError("model exploded")
        if any("shape" in t for t in texts):
            return np.ones((len(texts), 3))
        rows = np.tile(np.array([1.0, 0.0, 0.0, 0.0]), (len(texts), 1))
        for i, t in enumerate(texts):
            if "nan" in t:
                rows[i, 0] = math.nan
        return rows


def test_failures_degrade_to_counted_zero_vectors_never_raise() -> None:
    embedder = Flaky()
    assert isinstance(embedder, Embedder)
    out = embedder.embed(["fine", "boom here", "also fine", "nan", "shape"])
    assert out.shape == (5, 4) and out.dtype == np.float32
    assert out[0, 0] == 1.0 and out[2, 0] == 1.0
    assert not out[1].any() and not out[3].any() and not out[4].any()
    assert embedder.embed_failures == 3
    assert embedder.last_failure is not None and "boom" not in embedder.last_failure
    embedder.embed(["boom"])
    assert embedder.embed_failures == 4


def test_identity_labels() -> None:
    assert EmbedderIdentity.parse("undercroft-hash-v3@384") == EmbedderIdentity("undercroft-hash-v3", 384)
    for bad in ["nodim", "a@0", "a@-1", "a@01", "a@b@3", "@3", "bad name@3", "a@9999999"]:
        with pytest.raises(InvalidInput):
            EmbedderIdentity.parse(bad)
    with pytest.raises(InvalidInput, match="dimension must be in"):
        EmbedderIdentity("x", 0)


def test_external_embedder_refuses_semantic_admission_and_bad_vectors() -> None:
    external = ExternalEmbedder.parse("external:acme-e5@4")
    assert isinstance(external, Embedder)
    assert external.identity.label == "external:acme-e5@4"
    assert external.semantic_admission_gate is None
    assert external.validate_vector([1, 2, 3, 4]).dtype == np.float32
    with pytest.raises(InvalidInput, match=r"vector has shape \(3,\).*needs \(4,\)"):
        external.validate_vector([1, 2, 3])
    with pytest.raises(InvalidInput, match="component 2 is not finite"):
        external.validate_vector([1, 2, math.nan, 4])
    with pytest.raises(InvalidInput, match="component 0 is not finite"):
        external.validate_vector([math.inf, 2, 3, 4])
    with pytest.raises(InvalidInput, match="overflows float32"):
        external.validate_vector([1e300, 2, 3, 4])
    with pytest.raises(InvalidInput, match="list of numbers"):
        external.validate_vector(["a", "b", "c", "d"])
    with pytest.raises(InvalidInput, match="supply a vector"):
        external.embed(["text"])
    for spec in ["external:x", "external:@4", "internal:x@4", "external:x@0", "external:a b@4"]:
        with pytest.raises(InvalidInput, match="external:<name>@<dim>"):
            ExternalEmbedder.parse(spec)


def test_probe_set_is_half_same_language() -> None:
    assert len(PROBE_PAIRS) == 14
    assert sum(1 for pair in PROBE_PAIRS if pair[0] == pair[2]) == 7


def test_a_probe_embedding_to_zero_refuses_the_gate() -> None:
    class Zero(Flaky):
        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            return np.zeros((len(texts), 4))

    assert measure_admission_gate(Zero()) is None
    assert measure_semantic_floor(Zero()) is None


def test_gate_is_worst_probe_plus_margin() -> None:
    # Every probe maps to the same direction: worst cosine 1.0, gate capped at 1.0; floor clamped to 0.98.
    assert measure_admission_gate(Flaky()) == 1.0
    assert measure_semantic_floor(Flaky()) == 0.98


@pytest.mark.parametrize("cos", [-1.0, -0.3, 0.0, 0.123456789, 0.56, 1.0])
def test_floor_zero_is_the_shipped_map_bit_for_bit(cos: float) -> None:
    assert calibrated_semantic_score(cos, 0.0) == (cos + 1.0) / 2.0


def test_calibrated_map_puts_the_floor_at_neutral() -> None:
    assert calibrated_semantic_score(0.5, 0.5) == 0.5
    assert calibrated_semantic_score(1.0, 0.5) == 1.0
    assert calibrated_semantic_score(-1.0, 0.5) == 0.0
    assert calibrated_semantic_score(0.75, 0.5) == 0.75
    with pytest.raises(InvalidInput, match="semantic floor"):
        calibrated_semantic_score(0.1, 0.99)


def test_pack_unpack_int8() -> None:
    vector = np.array([0.5, -0.25, 0.0, 1.0], dtype=np.float32)
    blob = pack_int8(vector)
    assert len(blob) == 8
    assert np.allclose(unpack_int8(blob, 4), vector, atol=1.0 / 254)
    assert unpack_int8(pack_int8(np.zeros(4)), 4).tolist() == [0.0] * 4
    with pytest.raises(InvalidInput, match="expected 8"):
        unpack_int8(blob[:-1], 4)
    with pytest.raises(InvalidInput, match="invalid scale"):
        unpack_int8(np.array([np.nan], dtype="<f4").tobytes() + b"\x00" * 4, 4)
    with pytest.raises(InvalidInput, match="non-finite"):
        pack_int8(np.array([np.inf, 0, 0, 0]))

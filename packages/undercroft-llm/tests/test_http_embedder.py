"""The served embedder against protocol-faithful loopback servers (Ollama, OpenAI-compatible, TEI), real MiniLM."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llm_servers import Behaviour, model_server
from undercroft_llm import PROBE_TEXT, EndpointUnusable, HttpEmbedder
from undercroft_net import TransportRefused, load_pin, police
from undercroft_obs import RecordingSink, names, sink_installed

pytestmark = pytest.mark.loopback

TEXTS = ["The cat sat on the mat.", "A feline rested on the rug.", "Quarterly revenue rose by nine percent."]


def _endpoint(url: str, pin: Path | None = None) -> Any:
    return police(
        url, variable="UNDERCROFT_EMBED_URL", pin=load_pin(pin, variable="UNDERCROFT_EMBED_CA") if pin else None
    )


@pytest.mark.parametrize("shape", ["ollama", "openai", "tei"])
def test_each_shape_is_probed_and_embeds_real_minilm_vectors(shape: str, minilm: Any) -> None:
    with model_server(shape, model="all-minilm", embed=minilm.embed) as server:
        embedder = HttpEmbedder(_endpoint(server.url), model=None if shape == "tei" else "all-minilm")
        assert embedder.api == shape and embedder.identity.label == "http:all-minilm@384"
        vectors = embedder.embed(TEXTS)
        embedder.close()
    np.testing.assert_allclose(vectors, minilm.embed(TEXTS), atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.3  # meaning, not surface
    assert embedder.embed_failures == 0 and embedder.texts_sent == len(TEXTS)
    posted = [s for s in server.seen if s.method == "POST"]
    assert PROBE_TEXT in server.posted_text()  # the probe sends a fixed phrase, never vault text
    probe_path = {"ollama": "/api/embed", "openai": "/v1/embeddings", "tei": "/embed"}[shape]
    assert posted[-1].path == probe_path


@pytest.mark.parametrize("shape", ["ollama", "openai", "tei"])
def test_over_tls_with_the_throwaway_ca_pinned(shape: str, minilm: Any, tls: Any, pin_file: Path) -> None:
    with model_server(shape, model="all-minilm", embed=minilm.embed, tls=tls) as server:
        embedder = HttpEmbedder(_endpoint(server.url, pin_file), model="all-minilm", api=shape)
        np.testing.assert_allclose(embedder.embed(TEXTS[:1]), minilm.embed(TEXTS[:1]), atol=1e-5)
        embedder.close()
        # The same server without the pin: certifi's public roots do not know the throw-away CA.
        with pytest.raises(EndpointUnusable, match="no embeddings shape answered"):
            HttpEmbedder(_endpoint(server.url), model="all-minilm", api=shape)


def test_the_policy_refuses_before_anything_is_sent(tmp_path: Path) -> None:
    with pytest.raises(TransportRefused, match="cleartext http is allowed only to loopback"):
        police("http://embeddings.example.com:11434", variable="UNDERCROFT_EMBED_URL")
    garbage = tmp_path / "garbage.crt"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n")
    with pytest.raises(TransportRefused, match="UNDERCROFT_EMBED_CA"):
        load_pin(garbage, variable="UNDERCROFT_EMBED_CA")


def test_declared_dimension_and_shape_skip_the_probe_and_a_wrong_dimension_refuses(minilm: Any) -> None:
    with model_server("ollama", model="m", embed=minilm.embed) as server:
        declared = HttpEmbedder(_endpoint(server.url), model="m", api="ollama", dimension=384)
        assert server.seen == [] and declared.dimension == 384  # nothing sent at construction
        declared.close()
        with pytest.raises(EndpointUnusable, match="UNDERCROFT_EMBED_DIM=512 but"):
            HttpEmbedder(_endpoint(server.url), model="m", dimension=512)
        with pytest.raises(EndpointUnusable, match="not found, try pulling it first"):
            HttpEmbedder(_endpoint(server.url), model="nomic-embed-text", api="ollama")


def test_batches_respect_the_batch_size(minilm: Any) -> None:
    with model_server("tei", model="m", embed=minilm.embed, behaviour=Behaviour(max_batch=4)) as server:
        embedder = HttpEmbedder(_endpoint(server.url), model="m", batch_size=4)
        texts = [f"note number {i} about the garden" for i in range(10)]
        vectors = embedder.embed(texts)
        sizes = [len(s.body["inputs"]) for s in server.seen if s.path == "/embed"][1:]  # after the probe
        embedder.close()
    assert sizes == [4, 4, 2] and embedder.embed_failures == 0
    np.testing.assert_allclose(vectors, minilm.embed(texts), atol=1e-5)


@pytest.mark.parametrize(
    "behaviour", [Behaviour(status=500), Behaviour(garbage=True), Behaviour(hang=3.0)], ids=["500", "garbage", "hang"]
)
def test_a_failed_embed_degrades_to_a_counted_zero_vector(minilm: Any, behaviour: Behaviour) -> None:
    with model_server("openai", model="m", embed=minilm.embed) as server:
        embedder = HttpEmbedder(_endpoint(server.url), model="m", timeout=0.5)
        server.behaviour.status, server.behaviour.garbage = behaviour.status, behaviour.garbage
        server.behaviour.hang = behaviour.hang
        sink = RecordingSink()
        started = time.monotonic()
        with sink_installed(sink):
            vectors = embedder.embed(TEXTS)
        elapsed = time.monotonic() - started
        server.behaviour.hang = 0.0
        embedder.close()
    assert vectors.shape == (3, 384) and not vectors.any()
    assert embedder.embed_failures == 3
    counted = [r for r in sink.records if r.name == names.EMBED_FAILURES_TOTAL]
    assert sum(r.value or 0 for r in counted) == 3 and {r.labels["backend"] for r in counted} == {"http"}
    # A hang costs one timeout (then the cool-down stops sending), not one per text.
    assert elapsed < (1.5 if behaviour.hang else 1.0)


def test_construction_warns_that_the_endpoint_reads_the_text(minilm: Any, caplog: pytest.LogCaptureFixture) -> None:
    with model_server("ollama", model="m", embed=minilm.embed) as server, caplog.at_level("WARNING"):
        HttpEmbedder(_endpoint(server.url), model="m").close()
    assert any("reads every text it embeds in plaintext" in r.getMessage() for r in caplog.records)


def test_an_unreachable_endpoint_refuses_at_construction() -> None:
    with pytest.raises(EndpointUnusable, match=r"UNDERCROFT_EMBED_URL=http://127\.0\.0\.1:9"):
        HttpEmbedder(_endpoint("http://127.0.0.1:9"), model="m", timeout=0.5)


@pytest.mark.parametrize("shape", ["ollama", "openai", "tei"])
def test_each_shape_without_the_offline_model(shape: str) -> None:
    """The same protocol drive with the hash embedder behind the server: runs where MiniLM is not installed."""
    from undercroft_core import HashEmbedder

    behind = HashEmbedder()
    with model_server(shape, model="hash", embed=behind.embed) as server:
        embedder = HttpEmbedder(_endpoint(server.url), model="hash", batch_size=2)
        assert embedder.api == shape and embedder.dimension == behind.dimension
        np.testing.assert_allclose(embedder.embed(TEXTS), behind.embed(TEXTS), atol=1e-6)
        embedder.close()


def test_a_bearer_travels_only_as_its_header(caplog: pytest.LogCaptureFixture) -> None:
    from undercroft_core import HashEmbedder

    with model_server("openai", model="m", embed=HashEmbedder().embed) as server, caplog.at_level("DEBUG"):
        HttpEmbedder(_endpoint(server.url), model="m", api="openai", key="sk-test-secret").close()
        HttpEmbedder(_endpoint(server.url), model="m", api="openai", key="").close()
    keyed, bare = ({k.lower(): v for k, v in seen.headers.items()} for seen in server.seen)
    assert keyed.get("authorization") == "Bearer sk-test-secret" and "authorization" not in bare
    assert "sk-test-secret" not in "\n".join(r.getMessage() for r in caplog.records)

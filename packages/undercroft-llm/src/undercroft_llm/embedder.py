"""The served embedder (``UNDERCROFT_EMBEDDER=http``): Ollama, OpenAI-compatible and TEI endpoints, policed.

Construction takes an :class:`~undercroft_net.Endpoint` the transport policy accepted (TLS, or cleartext to
loopback only; a CA pin replaces the public roots) and builds its client with
:func:`~undercroft_net.policed_client` — there is no other way out of this module. It then:

* probes the request shape when none is declared — Ollama ``POST /api/embed``, then OpenAI-compatible
  ``POST /v1/embeddings``, then TEI ``POST /embed`` — by embedding one fixed probe phrase (never vault text);
* takes the dimension from that probe unless one is declared (a declared one that disagrees refuses);
* warns, once, that the endpoint reads every text it embeds in plaintext (TLS protects the wire only).

``embed`` sends batches of ``batch_size`` texts. A failed request (transport, timeout, error status, a body of
the wrong shape) degrades that text to a counted zero vector — the drawer is still written, lexically
findable, semantically invisible until ``repair`` re-embeds it — and counts ``embed_failures_total{backend=
"http"}``. After a transport failure the endpoint is not retried for ``cooldown`` seconds, so an outage costs one
timeout, not one per text. ``texts_sent`` counts the texts of every ``embed`` call that put a request on the
wire (what a repair's ``egress/embed/repair`` record reports).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import undercroft_obs as obs
from numpy.typing import NDArray
from undercroft_core.calibration import measure_admission_gate, measure_semantic_floor
from undercroft_core.embedder import DegradingEmbedder, EmbedderIdentity
from undercroft_core.errors import InvalidInput
from undercroft_net import Endpoint, policed_client
from undercroft_obs import names

from undercroft_llm._internal.transport import get_json, openai_path, post_json
from undercroft_llm.errors import EndpointUnusable, ModelCallFailed

__all__ = ["EMBED_APIS", "PROBE_TEXT", "HttpEmbedder"]

#: The request shapes, in probing order.
EMBED_APIS: Final = ("ollama", "openai", "tei")
#: The one text a probe sends: fixed, never the vault's.
PROBE_TEXT: Final = "undercroft dimension probe"
_log = logging.getLogger("undercroft_llm")


def _vectors(api: str, document: Any, count: int) -> list[Any]:
    """The list of vectors in a documented answer shape, in input order (raises `ModelCallFailed`)."""
    if api == "ollama" and isinstance(document, dict) and isinstance(document.get("embeddings"), list):
        rows = document["embeddings"]
    elif api == "openai" and isinstance(document, dict) and isinstance(document.get("data"), list):
        data = document["data"]
        if not all(isinstance(item, dict) and isinstance(item.get("index"), int) for item in data):
            raise ModelCallFailed("the OpenAI-shaped answer has a data item without an integer index")
        ordered = sorted(data, key=lambda item: int(item["index"]))
        if [item["index"] for item in ordered] != list(range(len(ordered))):
            raise ModelCallFailed("the OpenAI-shaped answer's indexes are not 0..n-1")
        rows = [item.get("embedding") for item in ordered]
    elif api == "tei" and isinstance(document, list):
        rows = document
    else:
        raise ModelCallFailed(f"the answer is not the {api} embeddings shape")
    if len(rows) != count:
        raise ModelCallFailed(f"the endpoint answered {len(rows)} vectors for {count} texts")
    return list(rows)


class HttpEmbedder(DegradingEmbedder):
    """A served embedding model behind the transport policy; identity ``http:<model>``."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        model: str | None,
        api: str | None = None,
        key: str | None = None,
        dimension: int | None = None,
        timeout: float = 30.0,
        batch_size: int = 32,
        cooldown: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Police-built client, shape and dimension probed unless declared; raises `EndpointUnusable`."""
        if api is not None and api not in EMBED_APIS:
            raise EndpointUnusable(f"UNDERCROFT_EMBED_API={api!r} is not one of {', '.join(EMBED_APIS)}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        headers = {"Authorization": f"Bearer {key}"} if key else None
        self.endpoint = endpoint
        self._client = policed_client(endpoint, timeout=timeout, headers=headers, retries=0)
        self._batch = batch_size
        self._cooldown, self._clock = cooldown, clock
        self._open_until = 0.0
        self._sent = 0
        self._local = threading.local()
        self._calibration_lock = threading.Lock()
        self._gate: tuple[float | None] | None = None
        self._floor: float | None = None
        try:
            self.api, self.model, probed = self._probe(api, model, dimension)
            identity = EmbedderIdentity(f"http:{self.model}", dimension or probed)
        except InvalidInput as error:
            self._client.close()
            raise EndpointUnusable(f"UNDERCROFT_EMBED_MODEL: {error}") from None
        except BaseException:
            self._client.close()
            raise
        if dimension is not None and probed and probed != dimension:
            self._client.close()
            raise EndpointUnusable(
                f"UNDERCROFT_EMBED_DIM={dimension} but {endpoint.origin} answers {probed}-dimensional vectors"
            )
        super().__init__(identity)
        _log.warning(
            "the served embedder at %s reads every text it embeds in plaintext (TLS protects the wire, not the "
            "destination); an in-process embedder (onnx, ort) keeps text on this machine",
            endpoint.origin,
        )

    # --- construction -----------------------------------------------------------------------------------
    def _probe(self, api: str | None, model: str | None, dimension: int | None) -> tuple[str, str, int]:
        """The shape, the model name and the probed dimension (0 when both were declared: nothing is sent)."""
        if api is not None and dimension is not None and (model or api != "tei"):
            return api, str(model), 0
        tried: list[str] = []
        for shape in (api,) if api is not None else EMBED_APIS:
            name = model
            try:
                if name is None and shape == "tei":
                    info = get_json(self._client, self.endpoint, "info")
                    name = info.get("model_id") if isinstance(info, dict) else None
                    if not isinstance(name, str) or not name:
                        raise ModelCallFailed("TEI /info names no model_id")
                if name is None:
                    tried.append(f"{shape}: UNDERCROFT_EMBED_MODEL is unset")
                    continue
                vector = self._post(shape, name, [PROBE_TEXT])[0]
                return shape, name, len(vector)
            except ModelCallFailed as error:
                tried.append(f"{shape}: {error}")
        raise EndpointUnusable(
            f"UNDERCROFT_EMBED_URL={self.endpoint.origin}: no embeddings shape answered the probe "
            f"({'; '.join(tried)}); declare UNDERCROFT_EMBED_API and UNDERCROFT_EMBED_MODEL"
        )

    # --- requests ---------------------------------------------------------------------------------------
    def _post(self, api: str, model: str, texts: list[str]) -> list[list[float]]:
        body: dict[str, object]
        if api == "ollama":
            document = post_json(self._client, self.endpoint, "api/embed", {"model": model, "input": texts})
        elif api == "openai":
            body = {"model": model, "input": texts, "encoding_format": "float"}
            document = post_json(self._client, self.endpoint, openai_path(self.endpoint, "embeddings"), body)
        else:
            body = {"inputs": texts, "normalize": True, "truncate": True}
            document = post_json(self._client, self.endpoint, "embed", body)
        rows = _vectors(api, document, len(texts))
        for row in rows:
            if not isinstance(row, list) or not row or not all(isinstance(x, int | float) for x in row):
                raise ModelCallFailed("the endpoint answered a vector that is not a list of numbers")
        return rows

    def _embed_batch(self, texts: list[str]) -> NDArray[np.floating]:
        if self._clock() < self._open_until:
            raise ModelCallFailed(f"{self.endpoint.origin} failed moments ago; not retried for {self._cooldown}s")
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            self._local.attempted = True
            try:
                rows += self._post(self.api, self.model, texts[start : start + self._batch])
            except ModelCallFailed as error:
                if error.transport:  # no answer at all: stop sending for a while
                    self._open_until = self._clock() + self._cooldown
                raise
        matrix = np.asarray(rows, dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True) if matrix.ndim == 2 else None
        if norms is None:
            raise ModelCallFailed("the endpoint's vectors are not all of one length")
        normalised: NDArray[np.floating] = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        return normalised

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed a batch; failures become counted zero rows, never an exception (see the module docstring)."""
        self._local.attempted = False
        result = super().embed(texts)
        if getattr(self._local, "attempted", False) and not getattr(self._local, "calibrating", False):
            with self._lock:
                self._sent += len(result)
        return result

    def _record(self, count: int, reason: str) -> None:
        super()._record(count, reason)
        obs.increment(names.EMBED_FAILURES_TOTAL, count, backend="http")

    # --- reporting --------------------------------------------------------------------------------------
    @property
    def texts_sent(self) -> int:
        """Texts of every ``embed`` call that put at least one request on the wire, over this object's life."""
        return self._sent

    @property
    def destination(self) -> str:
        """``scheme://host:port`` of the endpoint: what an egress record names (a URL never carries userinfo)."""
        return self.endpoint.origin

    @property
    def semantic_admission_gate(self) -> float | None:
        """Measured once from core's probe pairs (worst + 0.06); None when a probe embedded to zero."""
        with self._calibration_lock:
            if self._gate is None:
                self._local.calibrating = True  # core's fixed probe pairs: not vault text, not counted as sent
                try:
                    self._gate = (measure_admission_gate(self),)
                finally:
                    self._local.calibrating = False
            return self._gate[0]

    @property
    def semantic_floor(self) -> float:
        """Measured once from core's probe pairs (their mean cosine); 0.0 when a probe embedded to zero."""
        with self._calibration_lock:
            if self._floor is None:
                self._local.calibrating = True
                try:
                    measured = measure_semantic_floor(self)
                finally:
                    self._local.calibrating = False
                self._floor = 0.0 if measured is None else measured
            return self._floor

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

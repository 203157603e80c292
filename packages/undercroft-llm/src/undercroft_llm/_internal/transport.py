"""One POST/GET through a policed client, with every failure mapped to `ModelCallFailed`.

httpx is only ever reached through the client undercroft_net built (the outbound-http contract forbids
importing it here), so its exceptions are caught by their base class and re-raised typed. A message names the
endpoint's origin, the path and the status — never a request body (drawer text) or a header (a bearer).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from undercroft_net import Endpoint, ResponseRefused, ResponseTooLarge, TransportRefused

from undercroft_llm.errors import ModelCallFailed

__all__ = ["error_text", "get_json", "openai_path", "post_json", "post_lines", "relative"]

#: The longest error message kept from a server's error body (its own words, not ours).
_MAX_ERROR_CHARS = 200


def relative(endpoint: Endpoint, path: str) -> str:
    """``path`` relative to the endpoint's base URL, so a declared path prefix (``/v1``, a gateway) is kept."""
    return path.lstrip("/")


def openai_path(endpoint: Endpoint, tail: str) -> str:
    """``v1/<tail>``, or ``<tail>`` when the declared URL already ends in ``/v1`` (how most gateways are named)."""
    path = endpoint.url.split("://", 1)[1].partition("/")[2].split("?", 1)[0].rstrip("/")
    return tail if path.endswith("v1") else f"v1/{tail}"


def error_text(body: bytes) -> str:
    """The error a model server put in its body, in the documented shapes (Ollama, OpenAI, TEI), shortened."""
    try:
        document = json.loads(body)
    except ValueError:
        return ""
    message: object = None
    if isinstance(document, Mapping):
        error = document.get("error")
        message = error.get("message") if isinstance(error, Mapping) else error
    if not isinstance(message, str):
        return ""
    return " ".join(message.split())[:_MAX_ERROR_CHARS]


@contextmanager
def _mapped(endpoint: Endpoint, path: str) -> Iterator[None]:
    try:
        yield
    except (TransportRefused, ResponseRefused, ResponseTooLarge) as error:
        raise ModelCallFailed(f"{endpoint.origin}/{path}: {error}", transport=True) from None
    except ModelCallFailed:
        raise
    except Exception as error:  # noqa: BLE001 — httpx's errors cannot be named here (outbound-http contract)
        raise ModelCallFailed(f"{endpoint.origin}/{path}: {type(error).__name__}", transport=True) from None


def _check(endpoint: Endpoint, path: str, status: int, body: bytes) -> None:
    if status >= 400:
        said = error_text(body)
        raise ModelCallFailed(f"{endpoint.origin}/{path} answered HTTP {status}" + (f": {said}" if said else ""))


def _decode(endpoint: Endpoint, path: str, body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise ModelCallFailed(f"{endpoint.origin}/{path} answered a body that is not JSON") from None


def post_json(client: Any, endpoint: Endpoint, path: str, document: Mapping[str, object]) -> Any:
    """POST ``document`` as JSON, return the decoded JSON answer (raises `ModelCallFailed`)."""
    with _mapped(endpoint, path):
        response = client.post(relative(endpoint, path), json=dict(document))
        body = response.read()
        _check(endpoint, path, response.status_code, body)
    return _decode(endpoint, path, body)


def get_json(client: Any, endpoint: Endpoint, path: str) -> Any:
    """GET ``path``, return the decoded JSON answer (raises `ModelCallFailed`)."""
    with _mapped(endpoint, path):
        response = client.get(relative(endpoint, path))
        body = response.read()
        _check(endpoint, path, response.status_code, body)
    return _decode(endpoint, path, body)


def post_lines(client: Any, endpoint: Endpoint, path: str, document: Mapping[str, object]) -> list[Any]:
    """POST and read a streamed NDJSON answer (Ollama's default), one decoded object per non-empty line."""
    objects: list[Any] = []
    with _mapped(endpoint, path), client.stream("POST", relative(endpoint, path), json=dict(document)) as response:
        if response.status_code >= 400:
            _check(endpoint, path, response.status_code, response.read())
        for line in response.iter_lines():
            if line.strip():
                try:
                    objects.append(json.loads(line))
                except ValueError:
                    raise ModelCallFailed(f"{endpoint.origin}/{path} streamed a line that is not JSON") from None
    return objects

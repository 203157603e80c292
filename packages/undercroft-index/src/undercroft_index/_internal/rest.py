"""A JSON-over-HTTP session on undercroft_net's policed client, shared by the REST backends.

Every failure becomes `BackendFailed` naming the backend and the step: a refused URL, a timeout (a hanging
backend is cut off by the client's finite timeout), a status outside what the step expects, a body that is
not JSON or larger than the bound. The body of an error answer is quoted only in part: it comes from an
untrusted server and may be arbitrarily long.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx
from undercroft_net import Endpoint, Error, policed_client

from undercroft_index.errors import BackendFailed

__all__ = ["DEFAULT_TIMEOUT", "MAX_ANSWER_BYTES", "RestSession"]

#: Seconds a backend gets for one request (connect, read, write).
DEFAULT_TIMEOUT = 10.0
#: The largest answer read from a backend (a query answer is ids; a describe is small).
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class RestSession:
    """One backend's policed JSON session (a context manager)."""

    def __init__(
        self,
        backend: str,
        endpoint: Endpoint,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Open the policed client for ``endpoint`` (re-policed there; a bad URL raises `BackendFailed`)."""
        self.backend = backend
        self.destination = endpoint.origin
        try:
            self._client = policed_client(
                endpoint,
                timeout=timeout,
                max_response_bytes=MAX_ANSWER_BYTES,
                retries=1,
                headers={"Content-Type": "application/json", **dict(headers or {})},
                max_redirects=0,
            )
        except Error as error:
            raise BackendFailed(f"{backend}: {error}") from None

    def call(
        self,
        method: str,
        path: str,
        step: str,
        body: object | None = None,
        *,
        ok: tuple[int, ...] = (200,),
        missing: tuple[int, ...] = (),
    ) -> Any:
        """Send one request; the decoded JSON answer (None for an empty body or a ``missing`` status)."""
        try:
            response = self._client.request(
                method, path, content=None if body is None else json.dumps(body, separators=(",", ":"))
            )
            raw = response.read()
        except Error as error:
            raise BackendFailed(f"{self.backend}: {step}: {error}") from None
        except httpx.TimeoutException:
            raise BackendFailed(f"{self.backend}: {step}: no answer from {self.destination} in time") from None
        except httpx.HTTPError as error:
            raise BackendFailed(f"{self.backend}: {step}: {self.destination} unreachable ({error})") from None
        if response.status_code in missing:
            return None
        if response.status_code not in ok:
            quoted = raw[:200].decode("utf-8", "replace")
            raise BackendFailed(f"{self.backend}: {step}: HTTP {response.status_code} from the server: {quoted!r}")
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise BackendFailed(f"{self.backend}: {step}: the answer is not JSON") from None

    def close(self) -> None:
        """Close the client."""
        self._client.close()

"""The LLM runtime of refine and the admission advisor: one chat completion through the policed client.

Two request shapes (``UNDERCROFT_LLM_API``): ``ollama`` — ``POST /api/chat``, streamed NDJSON as Ollama streams
by default, ``format: "json"``; ``openai`` — ``POST /v1/chat/completions`` with
``response_format: {"type": "json_object"}``. Temperature 0 in both. The client is built only from an
:class:`~undercroft_net.Endpoint` the transport policy accepted; a POST is sent at most once.
"""

from __future__ import annotations

from typing import Any, Final

from undercroft_net import Endpoint, policed_client

from undercroft_llm._internal.transport import get_json, openai_path, post_json, post_lines
from undercroft_llm.errors import EndpointUnusable, ModelCallFailed

__all__ = ["LLM_APIS", "ChatModel"]

#: The request shapes ``UNDERCROFT_LLM_API`` may name.
LLM_APIS: Final = ("ollama", "openai")


class ChatModel:
    """A served chat model: ``complete(system, user) -> str``; identity ``<api>:<model>``."""

    def __init__(
        self, endpoint: Endpoint, *, api: str, model: str, key: str | None = None, timeout: float = 60.0
    ) -> None:
        """Build the policed client (nothing is sent until `probe` or `complete`)."""
        if api not in LLM_APIS:
            raise EndpointUnusable(f"UNDERCROFT_LLM_API={api!r} is not one of {', '.join(LLM_APIS)}")
        if not isinstance(model, str) or not model.strip():
            raise EndpointUnusable("UNDERCROFT_LLM_MODEL names no model")
        self.endpoint, self.api, self.model = endpoint, api, model.strip()
        headers = {"Authorization": f"Bearer {key}"} if key else None
        self._client = policed_client(endpoint, timeout=timeout, headers=headers, retries=0)

    @property
    def identity(self) -> str:
        """Which model claims what it answers (a fact's extractor): ``<api>:<model>``."""
        return f"{self.api}:{self.model}"

    @property
    def destination(self) -> str:
        """``scheme://host:port`` of the runtime (what an egress record names; never userinfo)."""
        return self.endpoint.origin

    def probe(self) -> None:
        """Check that the runtime answers and serves the model (no vault text): raises `EndpointUnusable`."""
        try:
            if self.api == "ollama":
                post_json(self._client, self.endpoint, "api/show", {"model": self.model})
                return
            listed = get_json(self._client, self.endpoint, openai_path(self.endpoint, "models"))
        except ModelCallFailed as error:
            raise EndpointUnusable(f"UNDERCROFT_LLM_URL={self.endpoint.origin}: {error}") from None
        data = listed.get("data") if isinstance(listed, dict) else None
        ids = {item.get("id") for item in data if isinstance(item, dict)} if isinstance(data, list) else set()
        if self.model not in ids:
            raise EndpointUnusable(
                f"UNDERCROFT_LLM_MODEL={self.model!r} is not served by {self.endpoint.origin} (its /models list)"
            )

    def complete(self, system: str, user: str) -> str:
        """One completion of ``user`` under ``system``, the model asked for JSON; raises `ModelCallFailed`."""
        body: dict[str, object]
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        if self.api == "ollama":
            body = {
                "model": self.model,
                "messages": messages,
                "format": "json",
                "options": {"temperature": 0},
            }
            return _ollama_text(post_lines(self._client, self.endpoint, "api/chat", body))
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "stream": False,
        }
        answer = post_json(self._client, self.endpoint, openai_path(self.endpoint, "chat/completions"), body)
        return _openai_text(answer)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


def _ollama_text(chunks: list[Any]) -> str:
    """Concatenate a streamed /api/chat answer; an ``error`` line or no ``done: true`` is a failure."""
    parts: list[str] = []
    for chunk in chunks:
        if not isinstance(chunk, dict):
            raise ModelCallFailed("an /api/chat stream line is not an object")
        if "error" in chunk:
            raise ModelCallFailed(f"the runtime reported an error mid-stream: {str(chunk['error'])[:200]}")
        message = chunk.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        if chunk.get("done") is True:
            return "".join(parts)
    raise ModelCallFailed("the /api/chat stream ended without done: true")


def _openai_text(answer: Any) -> str:
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelCallFailed("the chat completion has no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ModelCallFailed("the chat completion's first choice has no text content")
    return content

"""Protocol-faithful loopback model servers for the served-model tests: Ollama, OpenAI-compatible and TEI.

Each speaks its API as the real server documents it — request bodies, answer bodies, Ollama's streamed NDJSON
``/api/chat`` (``stream`` defaults to true, as Ollama's does), and each server's own error shape — over plain
http or over TLS with a throw-away CA (tests/tls_material.py). Embeddings are computed by the embedder the test
hands in (the offline MiniLM where one is asked for, so vectors are real); chat answers come from a ``brain``
callable standing in for the model's judgement: ``brain(system, user) -> str`` (what a model would emit,
obedient or compromised as the test needs; assign ``server.brain`` to swap it on a running server).
``behaviour`` makes a server hang, fail with its documented error status, or answer garbage. Every request is
kept (``seen``) so a test can assert what was sent.
"""

from __future__ import annotations

import http.server
import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

Embed = Callable[[Sequence[str]], Any]
Brain = Callable[[str, str], str]
_CREATED = "2024-05-01T12:00:00.000000Z"


@dataclass
class Behaviour:
    """How the server misbehaves: ``hang`` seconds before answering, a forced ``status``, or ``garbage``."""

    hang: float = 0.0
    status: int | None = None
    garbage: bool = False
    max_batch: int = 32
    #: When set, the misbehaviour applies only to paths ending so (``/api/chat``: generation fails, /api/show works).
    only: str | None = None


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ModelServer:
    """A running loopback model server: its base URL, what it saw, and its knobs."""

    url: str
    shape: str
    model: str
    embed: Embed | None = None
    brain: Brain | None = None
    seen: list[Seen] = field(default_factory=list)
    behaviour: Behaviour = field(default_factory=Behaviour)

    def posted_text(self) -> str:
        """Every request body this server received, as one string (for what-left assertions)."""
        return "\n".join(json.dumps(item.body) for item in self.seen)


def _vectors(embed: Embed, texts: Sequence[str]) -> list[list[float]]:
    return [[float(x) for x in row] for row in embed(list(texts))]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return

    def _json(self, status: int, document: object, content_type: str = "application/json") -> None:
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _raw(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _error(self, status: int, message: str) -> None:
        """Each server's documented error shape."""
        shape = self.server.state.shape
        if shape == "openai":
            code = "model_not_found" if status == 404 else None
            kind = "invalid_request_error" if status < 500 else "server_error"
            self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})
        elif shape == "tei":
            self._json(status, {"error": message, "error_type": "Validation" if status < 500 else "Backend"})
        else:
            self._json(status, {"error": message})

    def _serve(self, method: str) -> None:
        state = self.server.state
        body = self._body() if method == "POST" else None
        state.seen.append(Seen(method, self.path, dict(self.headers), body))
        behaviour = state.behaviour
        if behaviour.only is not None and not self.path.split("?", 1)[0].endswith(behaviour.only):
            behaviour = Behaviour(max_batch=behaviour.max_batch)
        if behaviour.hang:
            time.sleep(behaviour.hang)
        if behaviour.status is not None:
            self._error(behaviour.status, "the model runner crashed" if behaviour.status >= 500 else "refused")
            return
        if behaviour.garbage:
            self._raw(200, b"<html>not what you asked for</html>")
            return
        route = getattr(self, f"_{state.shape}", None)
        assert route is not None
        route(method, self.path.split("?", 1)[0], body)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    # --- Ollama ---------------------------------------------------------------------------------------
    def _ollama(self, method: str, path: str, body: Any) -> None:
        state = self.server.state
        if method == "GET" and path == "/api/version":
            self._json(200, {"version": "0.5.7"})
        elif method == "GET" and path == "/api/tags":
            self._json(200, {"models": [{"name": f"{state.model}:latest", "model": f"{state.model}:latest"}]})
        elif method == "POST" and path in ("/api/embed", "/api/show", "/api/chat"):
            if not isinstance(body, dict) or not body.get("model"):
                self._error(400, "model is required")
            elif body["model"] not in (state.model, f"{state.model}:latest"):
                self._error(404, f'model "{body["model"]}" not found, try pulling it first')
            elif path == "/api/show":
                self._json(200, {"modelfile": "", "details": {"family": "test"}, "model_info": {}})
            elif path == "/api/embed":
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                if state.embed is None:
                    self._error(400, f'"{state.model}" does not support embeddings')
                    return
                self._json(
                    200,
                    {
                        "model": body["model"],
                        "embeddings": _vectors(state.embed, texts),
                        "total_duration": 1000,
                        "load_duration": 10,
                        "prompt_eval_count": len(texts),
                    },
                )
            else:
                self._ollama_chat(body)
        else:
            self._raw(404, b"404 page not found")  # Ollama's router answers unknown paths in plain text

    def _ollama_chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        messages = body.get("messages") or []
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        assert state.brain is not None
        answer = state.brain(system, user)
        if body.get("stream") is False:
            self._json(
                200,
                {
                    "model": body["model"],
                    "created_at": _CREATED,
                    "message": {"role": "assistant", "content": answer},
                    "done": True,
                    "done_reason": "stop",
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pieces = [answer[i : i + 7] for i in range(0, len(answer), 7)]
        lines = [
            {
                "model": body["model"],
                "created_at": _CREATED,
                "message": {"role": "assistant", "content": p},
                "done": False,
            }
            for p in pieces
        ]
        lines.append(
            {
                "model": body["model"],
                "created_at": _CREATED,
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": "stop",
                "total_duration": 1000,
                "eval_count": len(pieces),
            }
        )
        for line in lines:
            data = (json.dumps(line) + "\n").encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    # --- OpenAI-compatible (vLLM, llama.cpp server, LM Studio) ----------------------------------------
    def _openai(self, method: str, path: str, body: Any) -> None:
        state = self.server.state
        if method == "GET" and path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": state.model, "object": "model", "owned_by": "test"}]})
            return
        if method != "POST" or path not in ("/v1/embeddings", "/v1/chat/completions"):
            self._error(404, f"Invalid URL ({method} {path})")
            return
        if not isinstance(body, dict) or body.get("model") != state.model:
            model = body.get("model") if isinstance(body, dict) else None
            self._error(404, f"The model `{model}` does not exist or you do not have access to it.")
            return
        if path == "/v1/embeddings":
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else texts
            if state.embed is None:
                self._error(400, "this model does not support embeddings")
                return
            vectors = _vectors(state.embed, texts)
            # Out of order on purpose: a client must place each vector by its index.
            data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)][::-1]
            tokens = sum(len(t.split()) for t in texts)
            self._json(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": state.model,
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )
            return
        messages = body.get("messages") or []
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        assert state.brain is not None
        answer = state.brain(system, user)
        self._json(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 1714564800,
                "model": state.model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    # --- Text Embeddings Inference ---------------------------------------------------------------------
    def _tei(self, method: str, path: str, body: Any) -> None:
        state = self.server.state
        if method == "GET" and path == "/info":
            self._json(
                200,
                {
                    "model_id": state.model,
                    "model_dtype": "float32",
                    "max_client_batch_size": state.behaviour.max_batch,
                    "max_input_length": 512,
                    "version": "1.5.0",
                },
            )
        elif method == "POST" and path == "/embed":
            texts = body.get("inputs") if isinstance(body, dict) else None
            texts = [texts] if isinstance(texts, str) else texts
            if not isinstance(texts, list) or not texts:
                self._error(422, "`inputs` cannot be empty")
            elif len(texts) > state.behaviour.max_batch:
                self._error(413, f"batch size {len(texts)} > maximum allowed batch size {state.behaviour.max_batch}")
            else:
                assert state.embed is not None
                self._json(200, _vectors(state.embed, texts))
        else:
            self._raw(404, b"")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: ModelServer, context: ssl.SSLContext | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        if context is not None:
            self.socket = context.wrap_socket(self.socket, server_side=True)

    def handle_error(self, request: object, client_address: object) -> None:  # refused handshakes are expected
        return


@contextmanager
def model_server(
    shape: str,
    *,
    model: str = "test-model",
    embed: Embed | None = None,
    brain: Brain | None = None,
    tls: ssl.SSLContext | None = None,
    behaviour: Behaviour | None = None,
) -> Iterator[ModelServer]:
    """Serve ``shape`` (ollama | openai | tei) on 127.0.0.1 (TLS when ``tls`` is given) until the block exits."""
    assert shape in ("ollama", "openai", "tei")
    live = ModelServer("", shape, model, embed, brain, behaviour=behaviour or Behaviour())
    server = _Server(live, tls)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    live.url = f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    try:
        yield live
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def note_of(user: str) -> str:
    """The note inside the one ``<memory>`` block of a prompt, unescaped (what a model reads)."""
    from undercroft_net import unescape

    body = user.split(">", 1)[1].rsplit("</memory>", 1)[0]
    return unescape(body.strip("\n"))


def simple_extractor(system: str, user: str) -> str:
    """A deterministic stand-in for a model: ``X works at Y.`` / ``X lives in Y.`` sentences become facts."""
    import re

    if "security screen" in system:
        return json.dumps({"verdict": "safe"})
    note = note_of(user)
    facts = []
    for match in re.finditer(
        r"([A-Z][a-z]+) (works at|lives in|joined|founded) ([A-Z][A-Za-z]+(?: [A-Z][a-z]+)*)", note
    ):
        facts.append(
            {
                "subject": match.group(1),
                "predicate": match.group(2).replace(" ", "_"),
                "object": match.group(3),
                "evidence": match.group(0),
            }
        )
    return json.dumps({"facts": facts})

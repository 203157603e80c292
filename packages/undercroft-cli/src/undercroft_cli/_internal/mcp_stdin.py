"""The MCP server's stdin: a bounded, screening line reader in front of the SDK's stdio transport.

The SDK (``mcp.server.stdio``) reads stdin one unbounded line at a time and hands a line that fails to
validate to the session as an exception, which the session only logs: the client gets no reply and waits
out its timeout. This reader sits in front of it. Every line is screened with the SDK's own message
adapter before the SDK sees it; a line that is not UTF-8, not JSON (a lone ``\\ud800`` surrogate included)
or longer than :data:`MAX_LINE_BYTES` is answered with a JSON-RPC ``-32700`` parse error, JSON that is no
JSON-RPC message with ``-32600``, and the server keeps serving. The reply carries the request's id when it
can be read (so the waiting call fails at once), else ``null`` as JSON-RPC 2.0 prescribes.

Like the SDK's own transport, fd 0 is pointed at the null device while serving (a handler or child reading
stdin reads EOF, never the wire) and restored afterwards.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
from anyio.abc import ObjectSendStream
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, jsonrpc_message_adapter
from pydantic import ValidationError

__all__ = ["MAX_LINE_BYTES", "ScreenedLines", "claimed_stdin", "screen_line"]

#: The longest request line served. Far above any tool call (a drawer's content is bounded well below it);
#: past it a line is a memory attack, drained without being held and answered with a parse error.
MAX_LINE_BYTES = 16 * 1024 * 1024
_DRAIN_CHUNK = 1 << 20
# The id of a line too long to parse, read from its head: {"jsonrpc": "2.0", "id": 7, ... in either key order.
_HEAD_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,256}")\s*[,}]')


def _error(request_id: int | str | None, code: int, text: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=text))


def _id_of(document: Any) -> int | str | None:
    if isinstance(document, dict):
        found = document.get("id")
        if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
            return found
    return None


def _head_id(line: bytes) -> int | str | None:
    match = _HEAD_ID.match(line[:512])
    if match is None:
        return None
    token = match.group(1).decode("utf-8", "replace")
    return token[1:-1] if token.startswith('"') else int(token)


def screen_line(line: bytes) -> str | JSONRPCError | None:
    """One complete line: None when blank, its text when the SDK will accept it, else the error reply."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return _error(_head_id(line), PARSE_ERROR, f"Parse error: not UTF-8 (byte {error.start})")
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as refusal:
        malformed = any(error["type"] == "json_invalid" for error in refusal.errors())
    else:
        return text
    try:
        # Python's decoder accepts what the SDK's refuses (a lone surrogate, NaN): enough to find the id.
        document = json.loads(text)
    except (ValueError, RecursionError):
        document = None
    request_id = _id_of(document) if document is not None else _head_id(line)
    if malformed:
        if document is None:
            return _error(request_id, PARSE_ERROR, "Parse error: invalid JSON")
        return _error(request_id, PARSE_ERROR, "Parse error: JSON the protocol cannot carry (a lone surrogate?)")
    return _error(request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")


class ScreenedLines:
    """The lines of ``source`` the SDK will accept, as an async iterator of text; the rest are answered here.

    Pass it as ``stdio_server(stdin=...)`` and, once the transport yields its streams, hand the write
    stream to :meth:`answer_on`: replies go out through the SDK's own writer, in order with its own.
    """

    def __init__(self, source: BinaryIO, *, limit: int = MAX_LINE_BYTES) -> None:
        """Read ``source`` (binary, blocking) in lines of at most ``limit`` bytes."""
        self._source = source
        self._limit = limit
        self._ready = anyio.Event()
        self._replies: ObjectSendStream[SessionMessage] | None = None

    def answer_on(self, write_stream: ObjectSendStream[SessionMessage]) -> None:
        """Send error replies through ``write_stream`` (the transport's outgoing stream)."""
        self._replies = write_stream
        self._ready.set()

    def _read_line(self) -> tuple[bytes, bool]:
        """The next line (``b""`` at EOF) and whether it ran over the limit: then only its head is kept."""
        line = self._source.readline(self._limit + 1)
        if len(line) <= self._limit or line.endswith(b"\n"):
            return line, False
        head = line[:512]
        while line and not line.endswith(b"\n"):
            line = self._source.readline(_DRAIN_CHUNK)  # drained, never held
        return head, True

    async def _answer(self, reply: JSONRPCError) -> None:
        await self._ready.wait()
        if self._replies is not None:
            await self._replies.send(SessionMessage(reply))

    async def __aiter__(self) -> AsyncIterator[str]:
        """Yield each acceptable line; answer and skip every other one; stop at EOF."""
        while True:
            line, oversized = await anyio.to_thread.run_sync(self._read_line)
            if oversized:
                text = f"Parse error: request line longer than {self._limit} bytes"
                await self._answer(_error(_head_id(line), PARSE_ERROR, text))
                continue
            if not line:
                return
            screened = screen_line(line)
            if isinstance(screened, JSONRPCError):
                await self._answer(screened)
            elif screened is not None:
                yield screened


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The wire on a private duplicate of fd 0, fd 0 itself pointed at the null device until the block ends.

    Falls back to ``sys.stdin.buffer`` in place when stdin is no real descriptor (an embedding host).
    """
    try:
        wire = os.dup(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):
        yield sys.stdin.buffer
        return
    os.set_inheritable(wire, False)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # closefd=False: a reader thread can still block on the duplicate after the server returns.
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        os.dup2(wire, 0)

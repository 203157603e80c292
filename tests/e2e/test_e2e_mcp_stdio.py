"""End to end: raw bytes on the real ``undercroft serve-mcp``'s stdin get JSON-RPC errors, and it keeps serving.

A request holding a lone ``"\\ud800"`` escape, a line that is not JSON, bytes that are not UTF-8, JSON that is
no JSON-RPC message and a line past the 16 MiB bound are each answered at once (``-32700``, or ``-32600`` for
the well-formed non-message; the request's id when it can be read, else ``null``), and a valid request sent
afterwards is still answered — the SDK's own reader drops such lines silently and the client times out.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from undercroft_cli._internal.mcp_stdin import MAX_LINE_BYTES

PROGRAM = Path(sys.executable).parent / "undercroft"


class Wire:
    """The server's stdin and stdout, one JSON line each way."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, message: dict[str, Any]) -> None:
        self.send(json.dumps(message).encode() + b"\n")

    def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, "no reply within the timeout"
        return dict(json.loads(self.process.stdout.readline()))


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[Wire]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(tmp_path / "palace")
    subprocess.run([str(PROGRAM), "init"], env=env, capture_output=True, check=True, timeout=120)
    process = subprocess.Popen(
        [str(PROGRAM), "serve-mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    talk = Wire(process)
    talk.request(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
    )
    assert talk.receive(60)["id"] == 0
    talk.request({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield talk
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(30) == 0
    assert process.stderr is not None and b"Traceback" not in process.stderr.read()


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


LONE_SURROGATE = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"undercroft_save","arguments":{"content":"\\ud800","wing":"w","room":"r"}}}\n'  # noqa: E501
CASES = [
    ("lone surrogate", LONE_SURROGATE, 1, -32700),
    ("invalid JSON", b'{"jsonrpc":"2.0","id":2,"method":\n', 2, -32700),
    ("not JSON at all", b"hello\n", None, -32700),
    ("not UTF-8", b'{"jsonrpc":"2.0","id":3,"method":"tools/list","x":"\xff\xfe"}\n', 3, -32700),
    ("no JSON-RPC message", b'{"id":4,"hello":"world"}\n', 4, -32600),
    (
        "oversized",
        b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"x":"' + b"a" * MAX_LINE_BYTES + b'"}}\n',
        5,
        -32700,
    ),
]


@pytest.mark.parametrize(("case", "line", "request_id", "code"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_line_is_answered_and_the_server_keeps_serving(
    wire: Wire, case: str, line: bytes, request_id: int | None, code: int
) -> None:
    wire.send(line)
    reply = wire.receive()
    assert reply["id"] == request_id and reply["error"]["code"] == code, case
    wire.request(_call(10, "undercroft_save", {"content": "Still serving after garbage.", "wing": "w", "room": "r"}))
    saved = wire.receive()
    assert saved["id"] == 10 and not saved["result"].get("isError"), saved
    wire.request(_call(11, "undercroft_search", {"query": "still serving after garbage"}))
    assert "Still serving after garbage." in json.dumps(wire.receive()["result"])


def test_every_bad_line_in_a_row_gets_its_own_reply_in_order(wire: Wire) -> None:
    for _, line, _, _ in CASES:
        wire.send(line)
    assert [(r["id"], r["error"]["code"]) for r in (wire.receive() for _ in CASES)] == [(c[2], c[3]) for c in CASES]
    wire.request({"jsonrpc": "2.0", "id": 12, "method": "tools/list"})
    assert wire.receive()["id"] == 12

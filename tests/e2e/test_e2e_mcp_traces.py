"""OTLP traces of the real stdio ``undercroft serve-mcp``, driven by the official ``mcp`` SDK client, received by a
real OTLP/HTTP receiver on loopback that decodes the protobuf it is sent (``tests/otlp_receiver.py``).

Each tool call is a root ``mcp.call`` span (the tool's inventory name, the vault, the outcome) with the store's spans
nested under it: ``save`` for a save, ``search`` for a search, ``kg.write`` for a fact. The spans are flushed when
the client closes stdin, before the process exits (the batch delay is 1 s; the process is gone sooner). Nothing is
exported without ``UNDERCROFT_OTLP_ENDPOINT``. Stdout carries the protocol and nothing else, and no span, no stderr
line carries a saved word, a query word, a fact term or the collector's header value.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from live_server import PROGRAM, palace_env, undercroft
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from otlp_receiver import OtlpReceiver, attributes
from tls_material import make_authority, server_context

pytestmark = pytest.mark.loopback

CONTENT = "gazpacho trebuchet nightingale"
QUERY = "xenolith marzipan"
FACT = ("cartographer", "bequeaths", "astrolabe")
HEADER = "collector-s3cret-value"
SECRET_WORDS = [*CONTENT.split(), *QUERY.split(), *FACT, HEADER]


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    running = OtlpReceiver()
    yield running
    running.close()


def _session(env: dict[str, str], errlog: Path) -> dict[str, Any]:
    params = StdioServerParameters(command=str(PROGRAM), args=["serve-mcp"], env=env)

    async def main() -> dict[str, Any]:
        with errlog.open("w") as log:
            async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                saved = await session.call_tool("undercroft_save", {"content": CONTENT, "wing": "work", "room": "ops"})
                found = await session.call_tool("undercroft_search", {"query": QUERY, "wing": "work"})
                subject, predicate, obj = FACT
                fact = await session.call_tool(
                    "undercroft_kg_add", {"subject": subject, "predicate": predicate, "object": obj}
                )
                unknown = await session.call_tool("undercroft_no_such_tool", {"content": CONTENT})
                return {"saved": saved, "found": found, "fact": fact, "unknown": unknown}

    return anyio.run(main)


def test_each_stdio_tool_call_is_a_root_span_with_the_store_spans_nested(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    home = tmp_path / "palace"
    env = palace_env(
        home,
        UNDERCROFT_OTLP_ENDPOINT=receiver.url,
        UNDERCROFT_OTLP_HEADERS=f"x-collector-key={HEADER}",
        UNDERCROFT_SERVICE_NAME="undercroft-stdio",
    )
    assert undercroft(env, "init").returncode == 0
    errlog = tmp_path / "stderr.log"
    replies = _session(env, errlog)
    assert not replies["saved"].is_error and not replies["found"].is_error and not replies["fact"].is_error
    assert replies["unknown"].is_error
    # The client has closed stdin and the process has exited: every span is already here (flushed on the way out).
    spans = receiver.spans()
    assert receiver.services() == {"undercroft-stdio"}
    assert all(headers.get("x-collector-key") == HEADER for headers in receiver.headers)
    roots = [span for span in spans if span.name == "mcp.call"]
    by_tool = {attributes(span)["tool"]: span for span in roots}
    assert {attributes(span)["tool"] for span in roots} == {
        "undercroft_save", "undercroft_search", "undercroft_kg_add", "unknown"
    }  # fmt: skip
    assert all(not span.parent_span_id for span in roots)  # roots
    assert attributes(by_tool["undercroft_save"]) == {"tool": "undercroft_save", "vault": "default", "outcome": "ok"}
    assert attributes(by_tool["unknown"]) == {"tool": "unknown", "vault": "default", "outcome": "error"}
    nested = {
        "save": "undercroft_save",
        "search": "undercroft_search",
        "kg.write": "undercroft_kg_add",
    }
    for name, tool in nested.items():
        [child] = [span for span in spans if span.name == name]
        assert child.parent_span_id == by_tool[tool].span_id, name
        assert child.trace_id == by_tool[tool].trace_id
        assert child.end_time_unix_nano >= child.start_time_unix_nano
    save = next(span for span in spans if span.name == "save")
    assert attributes(save) == {"vault": "default", "drawers": 1, "created": 1, "deduped": 0, "quarantined": 0}
    search = next(span for span in spans if span.name == "search")
    assert attributes(search)["scoped"] is True and attributes(search)["vault"] == "default"
    assert attributes(next(span for span in spans if span.name == "kg.write")) == {"kind": "add"}
    # The leak check: the raw protobuf bodies and the server's stderr.
    raw = b"".join(receiver.bodies).decode("latin-1")
    stderr = errlog.read_text()
    for word in SECRET_WORDS:
        assert word not in raw, f"{word!r} reached a span"
        assert word not in stderr, f"{word!r} reached stderr"
    assert "Traceback" not in stderr, stderr


def _raw_session(env: dict[str, str], lines: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """The program on a raw pipe: each request written, its reply awaited, then stdin closed (the host leaving)."""
    process = subprocess.Popen(
        [str(PROGRAM), "serve-mcp"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    out: list[str] = []
    for line in lines:
        try:
            process.stdin.write(json.dumps(line) + "\n")
            process.stdin.flush()
        except BrokenPipeError:  # the server refused to start
            break
        if "id" in line:
            reply = process.stdout.readline()
            if not reply:
                break
            out.append(reply)
    with contextlib.suppress(BrokenPipeError):
        process.stdin.close()
    process.stdin = None  # closed: communicate must not flush it
    rest, stderr = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, "".join(out) + rest, stderr)


_INIT = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "undercroft_save", "arguments": {"content": CONTENT, "wing": "work"}}},
]  # fmt: skip


def test_stdout_stays_protocol_only_and_nothing_is_exported_undeclared(tmp_path: Path, receiver: OtlpReceiver) -> None:
    home = tmp_path / "palace"
    env = palace_env(home, UNDERCROFT_OTLP_ENDPOINT=receiver.url)
    assert undercroft(env, "init").returncode == 0
    # stdin closes right after the call: the spans are exported on the way out, and stdout holds only JSON-RPC.
    done = _raw_session(env, _INIT)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [reply.get("id") for reply in replies] == [1, 2] and all(r["jsonrpc"] == "2.0" for r in replies)
    assert not replies[1]["result"]["isError"]
    assert {span.name for span in receiver.spans()} >= {"mcp.call", "save"}
    # Without the declaration nothing leaves the process.
    before = len(receiver.bodies)
    quiet = _raw_session({k: v for k, v in env.items() if k != "UNDERCROFT_OTLP_ENDPOINT"}, _INIT)
    assert quiet.returncode == 0, quiet.stderr
    assert len(receiver.bodies) == before


@pytest.mark.parametrize("endpoint", ["http://collector.example.com:4318", "http://127.1"])
def test_a_refused_otlp_endpoint_stops_serve_mcp_before_it_serves(tmp_path: Path, endpoint: str) -> None:
    # The declaration check refuses the first, the transport policy (at the tracer's construction) the second.
    env = palace_env(tmp_path / "palace")
    assert undercroft(env, "init").returncode == 0
    done = _raw_session({**env, "UNDERCROFT_OTLP_ENDPOINT": endpoint}, _INIT)
    assert done.returncode == 1, done.stderr
    assert done.stdout == "" and "UNDERCROFT_OTLP_ENDPOINT" in done.stderr and "Traceback" not in done.stderr


def test_an_https_collector_is_trusted_through_its_pin_only(tmp_path: Path) -> None:
    # UNDERCROFT_OTLP_CA replaces the public roots: the throw-away CA's collector receives the spans with the pin,
    # and nothing without it (the export fails on the handshake; the session itself is unaffected).
    authority = make_authority("undercroft otlp CA")
    pin = tmp_path / "collector-ca.crt"
    pin.write_bytes(authority.pem())
    collector = OtlpReceiver(tls=server_context(authority, tmp_path))
    try:
        assert collector.url.startswith("https://127.0.0.1:")
        env = palace_env(tmp_path / "palace")
        assert undercroft(env, "init").returncode == 0
        unpinned = _raw_session({**env, "UNDERCROFT_OTLP_ENDPOINT": collector.url}, _INIT)
        assert unpinned.returncode == 0, unpinned.stderr
        assert json.loads(unpinned.stdout.splitlines()[-1])["result"]["isError"] is False
        assert collector.bodies == [] and "OTLP export failed" in unpinned.stderr
        pinned = _raw_session({**env, "UNDERCROFT_OTLP_ENDPOINT": collector.url, "UNDERCROFT_OTLP_CA": str(pin)}, _INIT)
        assert pinned.returncode == 0, pinned.stderr
        assert {span.name for span in collector.spans()} >= {"mcp.call", "save"}
        garbage = tmp_path / "garbage.crt"
        garbage.write_text("not a certificate")
        refused = _raw_session(
            {**env, "UNDERCROFT_OTLP_ENDPOINT": collector.url, "UNDERCROFT_OTLP_CA": str(garbage)}, _INIT
        )
        assert refused.returncode == 1 and "UNDERCROFT_OTLP_CA" in refused.stderr and refused.stdout == ""
    finally:
        collector.close()

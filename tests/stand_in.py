"""A stand-in engine for the orchestrator's failure tests: a loopback proxy in front of a real engine.

It forwards every request unchanged, except that it can drop the last drawer line of an import body (a
destination that loses a record) or kill the real engine's process when an import arrives (an engine that
dies mid-migration). Standard library only; it runs in a thread of the test process.
"""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

__all__ = ["StandIn"]


class StandIn:
    """``with StandIn(engine_url, …) as proxy:`` — ``proxy.url`` forwards to the engine."""

    def __init__(
        self,
        target: str,
        *,
        drop_import_line: bool = False,
        kill_on_import: subprocess.Popen[str] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """Forward to ``target``; ``drop_import_line`` or ``kill_on_import`` injects the failure; ``tls`` serves
        https (a TLS-terminating front, as a real deployment has) with that server context."""
        parts = urlsplit(target)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    body = _read_chunked(self.rfile)
                is_import = self.command == "POST" and self.path.split("?")[0].endswith("/import")
                if is_import and stand_in.drop_import_line:
                    lines = body.splitlines(keepends=True)
                    drawers = [i for i, line in enumerate(lines) if line.startswith(b'{"drawer"')]
                    del lines[drawers[-1]]
                    # The loss is silent: the manifest is rewritten to match, so the engine's own count check
                    # passes and only a judgement against the SOURCE can notice.
                    manifest = json.loads(lines[0])
                    manifest["undercroft_manifest"]["counts"]["drawers"] -= 1
                    lines[0] = json.dumps(manifest).encode() + b"\n"
                    body = b"".join(lines)
                if is_import and stand_in.kill_on_import is not None:
                    stand_in.kill_on_import.kill()
                    stand_in.kill_on_import.wait(30)
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("host", "content-length", "transfer-encoding")
                }
                connection = http.client.HTTPConnection(host, port, timeout=120)
                try:
                    connection.request(self.command, self.path, body=body or None, headers=headers)
                    reply = connection.getresponse()
                    data = reply.read()
                except OSError:
                    self.send_error(502)
                    return
                finally:
                    connection.close()
                self.send_response(reply.status)
                for key, value in reply.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

        self.drop_import_line = drop_import_line
        self.kill_on_import = kill_on_import
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        scheme = "http"
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> StandIn:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()


def _read_chunked(stream: object) -> bytes:
    body = b""
    while True:
        size = int(stream.readline().strip() or b"0", 16)  # type: ignore[attr-defined]
        if size == 0:
            stream.readline()  # type: ignore[attr-defined]
            return body
        body += stream.read(size)  # type: ignore[attr-defined]
        stream.readline()  # type: ignore[attr-defined]

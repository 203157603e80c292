"""A real OTLP/HTTP trace receiver on loopback, for the tests that check what the engine exports.

It accepts ``POST /v1/traces`` as a collector does (HTTP 200, an empty protobuf reply), keeps every body and its
headers, and decodes them with the official ``opentelemetry-proto`` messages (``ExportTraceServiceRequest``): the
tests read the spans the engine actually sent, never a mock exporter's view. Used by the serve-http trace tests and
the stdio ``serve-mcp`` ones.
"""

from __future__ import annotations

import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = ["OtlpReceiver", "attributes"]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:  # refused handshakes are expected
        return


class OtlpReceiver:
    """Keeps every POST body to /v1/traces (and its headers); ``close`` stops it.

    With ``tls`` (a server context, e.g. `tls_material.server_context`) it speaks HTTPS on the same loopback port.
    """

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces":
                    receiver.bodies.append(body)
                    receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"

    def _requests(self) -> list[Any]:
        decoded = []
        for body in self.bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            decoded.append(request)
        return decoded

    def spans(self) -> list[Any]:
        """Every span received, in arrival order."""
        return [
            span
            for request in self._requests()
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def services(self) -> set[str]:
        """The ``service.name`` of every resource received."""
        return {
            attribute.value.string_value
            for request in self._requests()
            for resource in request.resource_spans
            for attribute in resource.resource.attributes
            if attribute.key == "service.name"
        }

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def attributes(span: Any) -> dict[str, Any]:
    """A decoded span's attributes as a plain ``{key: value}``."""
    values = {}
    for attribute in span.attributes:
        value = attribute.value
        values[attribute.key] = getattr(value, value.WhichOneof("value"))
    return values

"""The serve-http application: ``/healthz`` and ``/ui`` before the gate, then the bearer, the read-only gate,
``POST /mcp`` (the SDK's Streamable HTTP transport over the ``--vault`` vault) and ``/v1`` (every vault).

Order of the gates, for every request that is not ``/healthz`` or ``/ui``: the bearer (401 with one body,
whatever the reason; the reason is logged), then — for ``/v1`` on a ``--read-only`` server — the method gate in
front of dispatch: every non-GET is refused with 403 unless it is one of the four named reads (``READ_POSTS``),
so a route added later is refused until someone classifies it. ``/mcp`` refuses writes at the call instead
(``tools/list`` still shows them), and asserts for the ``--vault`` vault when assertions are on.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import anyio
import undercroft_obs as obs
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send
from undercroft_obs import names

from undercroft_cli import __version__
from undercroft_cli.http.auth import ASSERTION_HEADER, Gate
from undercroft_cli.http.console import console_asset
from undercroft_cli.http.errors import error_response, unauthorized
from undercroft_cli.http.live import MISSING_EXTRA, STREAM_PATH, Live
from undercroft_cli.http.monitor import monitor_asset
from undercroft_cli.http.openapi import openapi_document
from undercroft_cli.http.routes import READ_POSTS, UNGATED, path_pattern
from undercroft_cli.http.tenancy import Tenancy
from undercroft_cli.http.v1 import v1_routes
from undercroft_cli.mcp import McpDispatcher
from undercroft_cli.mcp.server import ToolReply, build_server, traced_call
from undercroft_cli.mcp.tools import ToolSession
from undercroft_cli.mcp.tools.base import ADDED_BY

__all__ = ["Service", "build_app"]

log = logging.getLogger("undercroft.http")


_READ_POSTS = tuple(path_pattern(path) for method, path in READ_POSTS if method == "POST")


@dataclass
class Service:
    """What one serve-http process serves: its vault handles, its gate, its posture and its ``--vault``."""

    tenancy: Tenancy
    gate: Gate
    vault: str
    metrics_declared: bool = False
    metrics: Any = None  # the installed PrometheusSink, or None (off, or the telemetry extra is absent)
    live: Live | None = None  # the broker and sampler of a telemetry build (the stream, stats/history)

    @property
    def read_only(self) -> bool:
        """True when the whole process serves read-only."""
        return self.tenancy.read_only


class _Gate:
    """The bearer and the read-only method gate, as plain ASGI in front of every route."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope["method"], scope["path"]
        if (("GET" if method == "HEAD" else method), path) in UNGATED:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.service.gate.bearer_refusal(headers.get("authorization"))
        if refusal is None and path.rstrip("/") == "/mcp" and method == "POST":
            refusal = self.service.gate.assertion_refusal(
                headers.get(ASSERTION_HEADER), self.service.vault, time.time()
            )
        if refusal is not None:
            log.warning("401 on %s %s: %s", method, path, refusal)
            obs.increment(names.AUTH_REJECTIONS_TOTAL, kind="bearer" if "ssertion" not in refusal else "assertion")
            await unauthorized()(scope, receive, send)
            return
        if self.service.read_only and path.startswith("/v1/") and method not in ("GET", "HEAD"):
            if not (method == "POST" and any(p.match(path) for p in _READ_POSTS)):
                response = error_response(403, f"{method} {path}: this server runs --read-only (writes are refused)")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _mcp_server(service: Service) -> Any:
    # The listing dispatcher never touches a session (tools/list is the inventory); calls get the handle's own.
    listing = McpDispatcher(cast("ToolSession", None))
    tools = listing.tools

    def work(name: str, arguments: Mapping[str, Any] | None) -> ToolReply:
        with service.tenancy.session(service.vault) as session:
            stamp, session.surface = session.surface, ADDED_BY  # MCP writes are stamped mcp on every transport
            try:
                return McpDispatcher(session, tools).call(name, arguments)
            finally:
                session.surface = stamp

    async def call(name: str, arguments: Mapping[str, Any] | None) -> ToolReply:
        # The call's root span (the tool name from a closed inventory, never its arguments) spans the session.
        return await service.tenancy.run(lambda: traced_call(tools, name, service.vault, lambda: work(name, arguments)))

    return build_server(listing, call=call)


class _McpEndpoint:
    """The SDK's Streamable HTTP transport as a plain ASGI endpoint (``/mcp`` exactly, no redirect)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)


def _allowed(request: Request) -> str:
    """Every method some route serves at this path (Starlette's own 405 names only the first such route's)."""
    matching = [
        route
        for route in request.app.router.routes
        if isinstance(route, Route) and route.methods and route.matches(request.scope)[0] is not Match.NONE
    ]
    # A literal segment names its own resource: /drawers/check-duplicate is not /drawers/{drawer_id}.
    fewest = min((route.path.count("{") for route in matching), default=0)
    methods = {m for route in matching if route.path.count("{") == fewest for m in route.methods or ()}
    return ", ".join(sorted(methods))


async def _not_found(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 404
    if status == 405:  # RFC 9110 §15.5.6: a 405 carries Allow
        response = error_response(405, f"{request.method} is not a method of {request.url.path}")
        response.headers["Allow"] = _allowed(request)
        return response
    return error_response(status, f"unknown route: {request.method} {request.url.path}")


def build_app(service: Service) -> Starlette:
    """The ASGI application of one serve-http process."""
    manager = StreamableHTTPSessionManager(app=_mcp_server(service), session_idle_timeout=1800)

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"ok": True, "version": __version__, "read_only": service.read_only})

    async def ui(request: Request) -> Response:
        name = request.url.path.removeprefix("/ui").lstrip("/") or "index.html"
        return console_asset(name)

    async def metrics(_request: Request) -> Response:
        if not service.metrics_declared:
            return error_response(404, "/metrics is off: set UNDERCROFT_METRICS=1 to serve it (behind the bearer)")
        if service.metrics is None:
            return error_response(503, "/metrics needs the telemetry extra: pip install 'undercroft-cli[telemetry]'")
        from undercroft_obs.prometheus import EXPOSITION_CONTENT_TYPE

        return Response(service.metrics.render(), media_type=EXPOSITION_CONTENT_TYPE)

    async def openapi(_request: Request) -> Response:
        return JSONResponse(openapi_document())

    live = service.live
    service.tenancy.live = live

    async def no_stream(_request: Request) -> Response:
        return error_response(501, f"GET {STREAM_PATH} needs {MISSING_EXTRA}")

    async def monitor(request: Request) -> Response:
        if live is None:  # the page renders the live stream: a build without one has nothing to show
            return error_response(501, f"the Palace Monitor needs {MISSING_EXTRA}")
        return monitor_asset(request.url.path.removeprefix("/monitor").lstrip("/") or "index.html")

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as group:
            if live is not None:
                live.bind_loop()
                group.start_soon(live.run_sampler, service.tenancy)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                service.tenancy.close()

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/ui", ui, methods=["GET"]),
        Route("/ui/console.js", ui, methods=["GET"]),
        Route("/ui/console.css", ui, methods=["GET"]),
        Route("/ui/runbook.html", ui, methods=["GET"]),
        Route("/monitor", monitor, methods=["GET"]),
        Route("/monitor/monitor.js", monitor, methods=["GET"]),
        Route("/monitor/monitor.css", monitor, methods=["GET"]),
        Route("/v1/openapi.json", openapi, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/mcp", _McpEndpoint(manager), methods=["GET", "POST", "DELETE"]),
        Route(STREAM_PATH, no_stream if live is None else live.stream_endpoint(service.tenancy, service.gate)),
        *v1_routes(service.tenancy, service.gate),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={404: _not_found, 405: _not_found},
    )
    app.add_middleware(_Gate, service=service)
    app.state.service = service
    app.state.tenancy = service.tenancy
    return app

"""The control plane's HTTP surface: ``/healthz``, the tenant data plane ``/t/*``, the admin plane ``/admin/*``.

A writer serves all three (and the fleet console at ``/ui``); a read replica serves only ``/healthz`` and
``/t/*`` — ``/admin/*`` and ``/ui`` answer 403 there. Every 401 is ``{"error":"unauthorized"}`` with
``WWW-Authenticate: Bearer`` and no reason. The data plane forwards only its allowlisted shapes, streaming
bodies both ways, to ``/v1/vaults/{the tenant's vault}/…`` with the engine's bearer and a fresh assertion.
"""

from __future__ import annotations

import hmac
import json
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from undercroft_orchestrator._internal import operations
from undercroft_orchestrator._internal.engines import Engines
from undercroft_orchestrator._internal.meter import Meter, route_class
from undercroft_orchestrator._internal.ratelimit import RateLimit
from undercroft_orchestrator._internal.state import State
from undercroft_orchestrator._internal.vocabulary import data_subpath_ok, operator_route, operator_subpath_ok
from undercroft_orchestrator.errors import EngineFailed, Error, MigrationStopped, Refused, StateError

__all__ = ["ControlPlane", "build_app"]

_READ_POSTS = frozenset({"search", "drawers/check-duplicate"})
_STREAMED = frozenset({"import", "export"})
_MAX_DATA_BODY = 16 * 1024 * 1024  # the engine's own JSON bound: a larger body would be refused there anyway
_FORWARDED_HEADERS = ("content-type", "retry-after", "content-disposition")
_MAX_ADMIN_BODY = 1024 * 1024


class ControlPlane:
    """What the handlers share: the state, the engine hop, the rate screen, the admin token and the mode."""

    def __init__(
        self,
        state: State,
        engines: Engines,
        *,
        admin_token: str | None,
        rate: RateLimit,
        replica: bool,
        meter: Meter | None = None,
    ) -> None:
        """Bundle the process's parts; ``admin_token`` is ``None`` only on a replica."""
        self.state, self.engines, self.admin_token, self.rate, self.replica = state, engines, admin_token, rate, replica
        self.meter = meter or Meter()


def _unauthorized() -> Response:
    return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token if scheme.lower() == "bearer" and token else None


def _error(status: int, error: str, detail: str | None = None, **extra: object) -> JSONResponse:
    body: dict[str, object] = {"error": error}
    if detail is not None:
        body["detail"] = detail
    body.update(extra)
    return JSONResponse(body, status_code=status)


def _engine_reply(failed: EngineFailed) -> JSONResponse:
    """An engine's failure as the admin plane reports it: its status and body, or a 502 when it did not answer."""
    if failed.kind != "status":
        return _error(502, "bad gateway", str(failed), state=failed.kind)
    if failed.status == 401:
        return _error(502, "bad gateway", "the engine refused the orchestrator's credentials")
    body = failed.body if isinstance(failed.body, dict) else {"error": str(failed)}
    return JSONResponse(body, status_code=failed.status)


def _failure(error: Error) -> JSONResponse:
    if isinstance(error, MigrationStopped):
        return _error(409, "migration stopped", str(error), judgement=error.judgement, **_classed(error))
    if isinstance(error, EngineFailed):
        return _engine_reply(error)
    if isinstance(error, StateError):
        return _error(500, "state", str(error), **{"class": "integrity"})
    status = 404 if "no tenant" in str(error) or "no instance" in str(error) else 400
    return _error(status, "refused", str(error))


def _classed(error: Error) -> dict[str, str]:
    return {"class": "integrity"} if error.error_class == "integrity" else {}


async def _bounded_body(request: Request) -> bytes:
    """A data-plane JSON body, refused past the engine's own 16 MiB bound instead of being held whole."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > _MAX_DATA_BODY:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


class _TooLarge(Exception):
    """A data-plane body above the bound (answered 413)."""


def build_app(plane: ControlPlane, console: Callable[[Request], Awaitable[Response]] | None = None) -> Starlette:
    """The Starlette application for ``plane`` (``console`` serves ``/ui`` on a writer)."""

    async def healthz(_request: Request) -> Response:
        mode = "read-replica" if plane.replica else "writer"
        try:
            last_write = plane.state.last_write()
        except StateError as error:
            return _error(503, "state", str(error), mode=mode)
        return JSONResponse({"ok": True, "mode": mode, "last_write": last_write})

    async def data(request: Request) -> Response:
        token = _bearer(request)
        try:
            routed = plane.state.route(token) if token else None
        except StateError as error:
            return _error(500, "state", str(error), **{"class": "integrity"})
        except Refused as error:  # the tenant's instance is gone from the registry
            return _error(502, "bad gateway", str(error))
        if routed is None:
            plane.meter.refused("tenant")
            return _unauthorized()
        tenant, instance = routed
        subpath = request.path_params["subpath"]
        if not data_subpath_ok(subpath):
            if operator_route(subpath):
                return _error(
                    404,
                    "not found",
                    f"{subpath!r} is an operator route: a tenant token cannot reach it; the operator uses "
                    f"/admin/tenants/{{id}}/ops/{subpath} or `undercroft-orchestrator ops`",
                    operator_route=True,
                )
            return _error(404, "not found", f"/t/{subpath} is not a data-plane route")
        wait = plane.rate.admit(tenant.id)
        if wait is not None:
            plane.meter.rate_limited()
            return JSONResponse(
                {"error": "rate limited", "detail": "this tenant's requests per minute are used up"},
                status_code=429,
                headers={"Retry-After": str(math.ceil(wait))},
            )
        write = request.method not in ("GET", "HEAD") and not (request.method == "POST" and subpath in _READ_POSTS)
        if write and tenant.migrating:
            return JSONResponse(
                {"error": "migrating", "detail": "this tenant is being migrated; writes are held, reads still serve"},
                status_code=503,
                headers={"Retry-After": "5"},
            )
        has_body = "content-length" in request.headers or "transfer-encoding" in request.headers
        headers = {"Content-Type": request.headers["content-type"]} if "content-type" in request.headers else {}
        # Whole corpora (import in, export out) stream through; every other body is a small JSON document, read
        # whole so that both hops carry a Content-Length instead of chunked framing.
        content: Any = None
        if has_body:
            try:
                content = request.stream() if subpath in _STREAMED else await _bounded_body(request)
            except _TooLarge:
                return _error(413, "payload too large", "a data-plane JSON body is bounded at 16 MiB")
        try:
            reply = await plane.engines.send(
                instance,
                tenant.vault,
                request.method,
                Engines.path(tenant.vault, subpath),
                query=request.scope.get("query_string", b""),
                content=content,
                headers=headers,
            )
        except EngineFailed as failed:
            return _engine_reply(failed)
        if reply.status_code == 401:
            await reply.aclose()
            return _error(502, "bad gateway", "the engine refused the orchestrator's credentials")
        forwarded = {k: v for k, v in reply.headers.items() if k.lower() in _FORWARDED_HEADERS}
        if subpath in _STREAMED:
            return StreamingResponse(
                reply.aiter_raw(),
                status_code=reply.status_code,
                headers=forwarded,
                background=BackgroundTask(reply.aclose),
            )
        try:
            body = await reply.aread()
        finally:
            await reply.aclose()
        return Response(body, status_code=reply.status_code, headers=forwarded)

    def admin(handler: Callable[[Request], Awaitable[Any]]) -> Callable[[Request], Awaitable[Response]]:
        async def guarded(request: Request) -> Response:
            if plane.replica or plane.admin_token is None:
                return _error(403, "forbidden", "a read replica serves only /healthz and /t/*; use the writer")
            token = _bearer(request) or ""
            if not hmac.compare_digest(token.encode(), plane.admin_token.encode()):
                plane.meter.refused("admin")
                return _unauthorized()
            try:
                result = await handler(request)
            except Error as error:
                return _failure(error)
            if isinstance(result, Response):
                return result
            status, body = result if isinstance(result, tuple) else (200, result)
            return JSONResponse(body, status_code=status)

        return guarded

    async def body_of(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if len(raw) > _MAX_ADMIN_BODY:
            raise Refused("the body is larger than the admin plane's 1 MiB bound")
        if not raw:
            return {}
        try:
            decoded = json.loads(raw)
        except ValueError:
            raise Refused("the body is not JSON") from None
        if not isinstance(decoded, dict):
            raise Refused("the body must be a JSON object")
        return decoded

    async def instances(request: Request) -> Any:
        if request.method == "GET":
            return {"instances": plane.state.instances()}
        body = await body_of(request)
        added = operations.add_instance(
            plane.state,
            plane.engines,
            name=body.get("name"),
            url=body.get("url"),
            bearer=body.get("bearer"),
            assertion_secret=body.get("assertion_secret"),
        )
        return 201, added

    async def instance(request: Request) -> Any:
        name = request.path_params["name"]
        plane.state.remove_instance(name)
        return {"removed": name}

    async def health(request: Request) -> Any:
        verdict = await plane.engines.health(plane.state.instance(request.path_params["name"]))
        return verdict.as_dict()

    async def tenants(request: Request) -> Any:
        if request.method == "GET":
            return {"tenants": [operations.tenant_shape(t) for t in plane.state.tenants()]}
        body = await body_of(request)
        created = await operations.create_tenant(
            plane.state, plane.engines, body.get("id"), body.get("instance"), body.get("level"), body.get("embedder")
        )
        return 201, created

    async def tenant(request: Request) -> Any:
        tenant_id = request.path_params["id"]
        if request.method == "PATCH":
            body = await body_of(request)
            return await operations.repoint(plane.state, plane.engines, tenant_id, body.get("instance"))
        return operations.tenant_shape(plane.state.tenant(tenant_id))

    async def rotate(request: Request) -> Any:
        tenant_id = request.path_params["id"]
        return {"id": tenant_id, "token": plane.state.rotate_tenant(tenant_id)}

    async def migrate(request: Request) -> Any:
        body = await body_of(request)
        return await operations.migrate(plane.state, plane.engines, request.path_params["id"], body.get("to"))

    async def stats(request: Request) -> Any:
        return await operations.relay(plane.state, plane.engines, request.path_params["id"], "GET", "stats")

    async def ops(request: Request) -> Any:
        subpath = request.path_params["subpath"]
        if not operator_subpath_ok(request.method, subpath):
            return _error(404, "not found", f"{request.method} {subpath} is not in the operator vocabulary")
        raw = await request.body()
        status, reply = await operations.relay_raw(
            plane.state, plane.engines, request.path_params["id"], request.method, subpath, raw, request
        )
        return reply if isinstance(reply, Response) else (status, reply)

    async def log(_request: Request) -> Any:
        return {"log": plane.state.log()}

    async def ui(request: Request) -> Response:
        if plane.replica:
            return _error(403, "forbidden", "the fleet console is served by the writer, not a read replica")
        if console is None:
            return _error(404, "not found")
        return await console(request)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/t/{subpath:path}", data, methods=methods),
        Route("/admin/instances", admin(instances), methods=["GET", "POST"]),
        Route("/admin/instances/{name}", admin(instance), methods=["DELETE"]),
        Route("/admin/instances/{name}/health", admin(health), methods=["GET"]),
        Route("/admin/tenants", admin(tenants), methods=["GET", "POST"]),
        Route("/admin/tenants/{id}", admin(tenant), methods=["GET", "PATCH"]),
        Route("/admin/tenants/{id}/rotate", admin(rotate), methods=["POST"]),
        Route("/admin/tenants/{id}/migrate", admin(migrate), methods=["POST"]),
        Route("/admin/tenants/{id}/stats", admin(stats), methods=["GET"]),
        Route("/admin/tenants/{id}/ops/{subpath:path}", admin(ops), methods=["GET", "POST"]),
        Route("/admin/log", admin(log), methods=["GET"]),
        Route("/ui", ui, methods=["GET"]),
        Route("/ui/{asset:path}", ui, methods=["GET"]),
    ]
    return Starlette(routes=routes, middleware=[Middleware(_Timed, meter=plane.meter)])


class _Timed:
    """Times every request by route class (the only label: no tenant, vault or instance name)."""

    def __init__(self, app: ASGIApp, meter: Meter) -> None:
        self.app, self.meter = app, meter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            await self.app(scope, receive, send)
        finally:
            self.meter.request(route_class(scope["path"]), time.perf_counter() - started)

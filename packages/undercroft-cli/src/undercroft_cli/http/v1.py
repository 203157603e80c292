"""The /v1 router: one Starlette route per line of the route table, each running its binding off the loop.

Per request, in order: the vault assertion (when ``UNDERCROFT_ASSERTION_SECRET`` is set) for the vault the path
names; a pending route's 501; the arguments (JSON body, query string or raw body) parsed against the binding's
properties with path parameters joined; the operation on a worker thread holding the vault's handle; the
result as JSON with the binding's status. The bearer and the read-only gate run before this, in the
application's middleware, for every route alike.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import undercroft_obs as obs
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as StarletteRoute
from undercroft_obs import names
from undercroft_obs.logs import log_event

from undercroft_cli.http.auth import ASSERTION_HEADER, Gate
from undercroft_cli.http.bindings import BINDINGS, MAX_IMPORT_BODY
from undercroft_cli.http.errors import HttpRefusal, error_response, failure_response, unauthorized
from undercroft_cli.http.operations import MAX_JSON_BODY, Binding, Call, Reach, Source, coerce_query, parse_body
from undercroft_cli.http.routes import PENDING_ROUTES, ROUTES, Route, path_pattern
from undercroft_cli.http.tenancy import Tenancy

__all__ = ["LISTING_SCOPE", "v1_routes"]

log = logging.getLogger("undercroft.http")

LISTING_SCOPE = "*"
"""The vault id an assertion names to list or create vaults when the path names none (the palace scope)."""

Endpoint = Callable[[Request], Awaitable[Response]]

_VAULT_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


async def _read_body(request: Request, cap: int, route: str) -> bytes:
    """The body, refused with 413 as soon as it exceeds ``cap`` (never read whole, never a prefix used)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise HttpRefusal(413, f"{route}: the body declares {declared} bytes, above the {cap}-byte cap")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise HttpRefusal(413, f"{route}: the body exceeds the {cap}-byte cap")
        chunks.append(chunk)
    return b"".join(chunks)


def _assertion_vault(route: Route, path_params: Mapping[str, str], body: Mapping[str, object]) -> str:
    if "id" in path_params:
        return path_params["id"]
    if route.method == "POST" and isinstance(body.get("id"), str):
        return str(body["id"])  # creating a vault asserts for the vault being created
    return LISTING_SCOPE


def _shadows(route: Route) -> tuple[re.Pattern[str], ...]:
    """The more literal routes ``route``'s template also matches (``/drawers/{drawer_id}`` matches
    ``/drawers/check-duplicate``): a request for one of those paths is theirs, never this route's."""
    template = path_pattern(route.path)
    return tuple(
        path_pattern(other.path)
        for other in ROUTES
        if other.path != route.path
        and other.path.count("{") < route.path.count("{")
        and template.match(other.path) is not None
    )


def _endpoint(route: Route, binding: Binding | None, tenancy: Tenancy, gate: Gate) -> Endpoint:
    label = f"{route.method} {route.path}"
    shadows = _shadows(route)

    async def endpoint(request: Request) -> Response:
        if any(shadow.match(request.url.path) for shadow in shadows):
            # PUT /drawers/check-duplicate is a wrong method on that route, not a drawer named check-duplicate.
            raise HTTPException(405)
        started = time.perf_counter()
        vault = request.path_params.get("id")
        # The request's root span: the route template, never the raw path; store spans nest under it.
        named = vault if vault is not None and _VAULT_ID.fullmatch(vault) else None  # a hostile id is not a label
        with obs.span(names.SPAN_V1_REQUEST, route=route.path, method=route.method, vault=named) as span:
            try:
                response = await _serve(request)
            except Exception as failure:  # noqa: BLE001 -- every failure becomes the doctrine's response
                response = failure_response(failure)
            span.set("status", response.status_code)
        # The route template labels the series, never the raw path: no vault or drawer id reaches /metrics.
        obs.observe(names.HTTP_REQUEST_DURATION_SECONDS, time.perf_counter() - started, route=route.path)
        obs.increment(names.HTTP_REQUESTS_TOTAL, route=route.path, status=str(response.status_code))
        elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
        log_event(
            "http.request", surface="v1", vault=vault, route=route.path, method=route.method,
            status=response.status_code, duration_ms=elapsed_ms,
        )  # fmt: skip
        if response.status_code == 409 and b'"class":"integrity"' in bytes(response.body):
            # The tamper signal, content-free: which vault and route, never the row or its words.
            log_event("tamper.detected", level=logging.WARNING, surface="v1", vault=vault, route=route.path)
        return response

    async def _serve(request: Request) -> Response:
        path_params = {key: str(value) for key, value in request.path_params.items()}
        raw_body = b""
        parsed: dict[str, object] = {}
        if binding is not None and binding.reach is Reach.RAW:
            raw_body = await _read_body(request, MAX_IMPORT_BODY, label)
        elif binding is None or binding.source is Source.BODY:
            parsed = parse_body(await _read_body(request, MAX_JSON_BODY, label), route=label)
        else:
            leftover = await _read_body(request, MAX_JSON_BODY, label)
            if leftover.strip():
                raise HttpRefusal(400, f"{label} takes no request body")
        refusal = gate.assertion_refusal(
            request.headers.get(ASSERTION_HEADER), _assertion_vault(route, path_params, parsed), time.time()
        )
        if refusal is not None:
            log.warning("401 on %s: %s", label, refusal)
            return unauthorized()
        if binding is None:
            return error_response(501, f"{label} is not built yet: it needs {PENDING_ROUTES[route.key]}")
        raw: dict[str, object] = dict(parsed)
        if binding.source is Source.QUERY:
            raw = coerce_query(dict(request.query_params), binding.properties)
        elif request.query_params:
            raise HttpRefusal(400, f"{label}: unexpected query parameter(s) {', '.join(sorted(request.query_params))}")
        for param, key in binding.path.items():
            raw[key] = path_params[param]
        call = Call(tenancy, path_params.get("id"), binding.arguments(raw, label=label), raw_body)
        result = await tenancy.run(lambda: _run(binding, call))
        if isinstance(result, Response):
            return result
        return JSONResponse(result, status_code=binding.status(result))

    return endpoint


def _run(binding: Binding, call: Call) -> Any:
    if binding.reach in (Reach.PALACE,) or call.vault is None:
        return binding.handler(call)
    with call.tenancy.session(call.vault) as session:
        call.session = session
        return binding.handler(call)


def v1_routes(tenancy: Tenancy, gate: Gate) -> list[StarletteRoute]:
    """The Starlette routes of the whole table (pending routes answer 501 behind the same gates)."""
    routes = []
    for route in ROUTES:
        binding = BINDINGS.get(route.key)
        if (binding is None) != (route.pending is not None):
            raise RuntimeError(f"{route.method} {route.path}: a route is bound exactly when it is not pending")
        routes.append(
            StarletteRoute(route.path, _endpoint(route, binding, tenancy, gate), methods=[route.method], name=None)
        )
    extra = set(BINDINGS) - {route.key for route in ROUTES}
    if extra:
        raise RuntimeError(f"bindings without a route line: {sorted(extra)}")
    return routes

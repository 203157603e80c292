"""The /v1 OpenAPI description, generated from the route table and each binding's own input schema.

Nothing here is written twice: a route's parameters and request body are its binding's properties (the same
ones the operation parses, and for a tool-backed route the same ones MCP advertises), and its responses are
the status doctrine's. A test runs schemathesis against a live server with this document.
"""

from __future__ import annotations

import re
from typing import Any

from undercroft_cli import __version__
from undercroft_cli.http.bindings import BINDINGS
from undercroft_cli.http.operations import Reach, Source
from undercroft_cli.http.routes import ROUTES, Route

__all__ = ["openapi_document"]

_ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "class": {"type": "string", "enum": ["integrity"]}},
    "required": ["error"],
}
_PATH_PARAMETER = re.compile(r"\{([a-z_]+)\}")


def _responses(route: Route) -> dict[str, Any]:
    error = {"content": {"application/json": {"schema": _ERROR}}}
    responses: dict[str, Any] = {
        "400": {"description": "a bad request, naming the field", **error},
        "401": {"description": "unauthorized (no reason given)", **error},
        "403": {"description": "refused by the read-only posture", **error},
        "404": {"description": "an unknown route, vault or id", **error},
        "409": {"description": "an integrity verdict (class: integrity) or a state refusal", **error},
        "413": {"description": "a body above its cap", **error},
    }
    if route.pending is not None:
        responses["501"] = {"description": f"not built yet: needs {route.pending}", **error}
        return responses
    if route.path.endswith("/export"):
        responses["200"] = {"description": "NDJSON lines", "content": {"application/x-ndjson": {"schema": {}}}}
    else:
        ok: dict[str, Any] = {"content": {"application/json": {"schema": {}}}}
        responses["201" if route.key == ("POST", "/v1/vaults") else "200"] = {"description": "success", **ok}
        if route.path.endswith(("/drawers", "/diary")) and route.method == "POST":
            responses["202"] = {"description": "diverted by the admission screen (quarantined)", **ok}
        if route.method == "PUT":
            responses["202"] = {"description": "diverted by the admission screen (quarantined)", **ok}
    return responses


def _operation(route: Route) -> dict[str, Any]:
    binding = BINDINGS.get(route.key)
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
        for name in _PATH_PARAMETER.findall(route.path)
    ]
    operation: dict[str, Any] = {
        "summary": route.summary,
        "operationId": f"{route.method.lower()}_{re.sub(r'[^a-z0-9]+', '_', route.path.lower()).strip('_')}",
        "parameters": parameters,
        "responses": _responses(route),
    }
    if binding is None:
        return operation
    schema = binding.input_schema
    if binding.source is Source.QUERY:
        required = set(schema["required"])
        for name, prop in schema["properties"].items():
            parameters.append({"name": name, "in": "query", "required": name in required, "schema": prop})
    elif binding.source is Source.BODY:
        operation["requestBody"] = {
            "required": bool(schema["required"]),
            "content": {"application/json": {"schema": schema}},
        }
    elif binding.reach is Reach.RAW:
        media = "application/x-ndjson" if route.path.endswith("/import") else "application/json"
        operation["requestBody"] = {"required": True, "content": {media: {"schema": {}}}}
    return operation


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every /v1 route."""
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Undercroft engine /v1", "version": __version__},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": paths,
    }

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

__all__ = ["DRAWER_ID_PATTERN", "VAULT_ID_PATTERN", "openapi_document"]

_ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "class": {"type": "string", "enum": ["integrity"]}},
    "required": ["error"],
}
_PATH_PARAMETER = re.compile(r"\{([a-z_]+)\}")

# The vault id rule of ``validate_vault_id`` and ``validate_name`` as one ECMA-262 pattern, so a client (and
# schemathesis) learns it from the document instead of from a 400: 1-64 of [A-Za-z0-9._-] starting with a letter
# or digit, never ``..``, never ending with ``.``, never a Windows device name (``nul``, ``com1.x``, any case).
VAULT_ID_PATTERN = (
    r"^(?!.*\.\.)(?!(?:[Cc][Oo][Nn]|[Pp][Rr][Nn]|[Aa][Uu][Xx]|[Nn][Uu][Ll]|[Cc][Oo][Mm][0-9]|[Ll][Pp][Tt][0-9])(?:\.|$))"
    r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?$"
)
"""The pattern every ``{id}`` (and a created vault's ``id``) matches; anything else is a 400."""


DRAWER_ID_PATTERN = r"^drawer_[0-9a-f]{32}$"
"""What ``undercroft_core.ids`` accepts as a drawer id (anything else is a 400 naming the expected shape)."""

# Arguments that are drawer ids wherever they appear (a path parameter, a query filter, a body list).
_DRAWER_IDS = frozenset({"drawer_id", "subject", "ids"})


def _path_schema(name: str) -> dict[str, Any]:
    if name == "id":
        return {"type": "string", "pattern": VAULT_ID_PATTERN}
    if name in _DRAWER_IDS:
        return {"type": "string", "pattern": DRAWER_ID_PATTERN}
    return {"type": "string", "minLength": 1}


def _advertised(key: str, prop: dict[str, Any], *, required: bool) -> dict[str, Any]:
    """A property as the parser reads it: a required text must hold a visible character (``required_text``
    refuses a blank one) and a drawer id has one shape."""
    if key in _DRAWER_IDS and prop.get("type") == "string":
        return {**prop, "pattern": DRAWER_ID_PATTERN}
    if key in _DRAWER_IDS and prop.get("type") == "array":
        return {**prop, "items": {"type": "string", "pattern": DRAWER_ID_PATTERN}}
    if required and prop.get("type") == "string" and "enum" not in prop:
        return {**prop, "minLength": 1, "pattern": r"\S"}
    return prop


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    kind = prop.get("type")
    kinds = list(kind) if isinstance(kind, list) else [kind]
    nullable = {**prop, "type": [*kinds, "null"]}
    if "enum" in prop:
        nullable["enum"] = [*prop["enum"], None]
    return nullable


def _body_schema(route: Route, schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON body's schema as the parser reads it: an optional field sent as ``null`` is the field absent
    (``Arguments`` reads ``None`` as "not given" on every surface), so the document says so."""
    required = set(schema["required"])
    properties = {
        key: _advertised(key, prop, required=True)
        if key in required
        else _nullable(_advertised(key, prop, required=False))
        for key, prop in schema["properties"].items()
    }
    if route.key == ("POST", "/v1/vaults"):
        properties["id"] = {**properties["id"], "pattern": VAULT_ID_PATTERN}
    return {**schema, "properties": properties}


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
        {"name": name, "in": "path", "required": True, "schema": _path_schema(name)}
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
            advertised = _advertised(name, prop, required=name in required)
            parameters.append({"name": name, "in": "query", "required": name in required, "schema": advertised})
    elif binding.source is Source.BODY:
        schema = _body_schema(route, schema)
        operation["requestBody"] = {
            "required": bool(schema["required"]),
            "content": {"application/json": {"schema": schema}},
        }
    if binding.reach is Reach.RAW:  # a raw body, beside any query parameters
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

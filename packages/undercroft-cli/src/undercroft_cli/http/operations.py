"""How a /v1 route runs an operation: one definition of its inputs, parsed once, run off the event loop.

An operation is the same object the other surfaces use wherever one exists: a route bound to an MCP tool runs
that tool's ``ToolSpec`` — its input properties (renamed to the /v1 field names where the documents name them
differently), its parser, its handler and its structured output — so the agent surface and the REST surface
cannot drift on bounds, defaults or results. Operator-plane operations, which MCP deliberately lacks, are
declared here in the same shape (properties, required keys, a handler over a parsed ``Arguments``).

A binding says where the arguments come from (the JSON body, or the query string coerced by each property's
declared type), which path parameters join them, and how the handler reaches the vault: through its cached
session, through the palace (lifecycle), or with the cached handle closed (rotation, restore, delete).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from undercroft_cli.http.errors import HttpRefusal
from undercroft_cli.http.tenancy import Tenancy
from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.server import structured_reply
from undercroft_cli.mcp.tools import ToolSession, ToolSpec, registry

__all__ = [
    "MAX_JSON_BODY",
    "Binding",
    "Call",
    "Reach",
    "Source",
    "coerce_query",
    "parse_body",
    "tool_binding",
]

MAX_JSON_BODY = 16 * 1024 * 1024
"""A JSON request body above this is refused with 413 (import has its own 256 MiB cap)."""


class Source(StrEnum):
    """Where a route's arguments come from."""

    BODY = "body"
    QUERY = "query"
    NONE = "none"


class Reach(StrEnum):
    """How the handler reaches the vault."""

    SESSION = "session"  # the vault's cached handle, held by this thread
    PALACE = "palace"  # no vault handle (lifecycle)
    EXCLUSIVE = "exclusive"  # the cached handle closed for the whole call
    RAW = "raw"  # the handler reads the request body itself (import)


@dataclass
class Call:
    """One request's resolved context, handed to an operation's handler."""

    tenancy: Tenancy
    vault: str | None
    args: Arguments
    body: bytes = b""
    session: ToolSession | None = None

    @property
    def live(self) -> ToolSession:
        """The vault's session (a SESSION-reach handler always has one)."""
        assert self.session is not None, "a SESSION handler runs inside the vault's session"
        return self.session


@dataclass(frozen=True)
class Binding:
    """A route's operation: input properties, required keys, source, reach, handler and success status."""

    name: str
    properties: Mapping[str, Mapping[str, Any]]
    handler: Callable[[Call], Any]
    required: tuple[str, ...] = ()
    source: Source = Source.BODY
    reach: Reach = Reach.SESSION
    path: Mapping[str, str] = field(default_factory=dict)  # path parameter -> argument key
    status: Callable[[Any], int] = lambda _data: 200

    def arguments(self, raw: Mapping[str, object], *, label: str | None = None) -> Arguments:
        """Parse ``raw`` against this binding's properties: unknown keys, missing required keys, wrong types,
        out-of-range numbers and values outside an enum are refused here, named as the client named them."""
        parsed = Arguments(label or self.name, raw, self.properties)
        parsed.require(self.required)
        for key in raw:
            _check(parsed, key, self.properties[key])
        return parsed

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (what OpenAPI advertises)."""
        return {
            "type": "object",
            "properties": {key: dict(value) for key, value in self.properties.items() if key not in self.path.values()},
            "required": [key for key in self.required if key not in self.path.values()],
            "additionalProperties": False,
        }


def _check(parsed: Arguments, key: str, schema: Mapping[str, Any]) -> None:
    """Read ``key`` through its typed accessor, so a bad value is refused before the operation runs."""
    kind = schema.get("type")
    if kind == "integer":
        parsed.integer(key)
    elif kind == "number":
        parsed.number(key)
    elif kind == "boolean":
        parsed.flag(key)
    elif kind == "string":
        if "enum" in schema:
            parsed.choice(key)
        else:
            parsed.text(key)
    elif kind == "array" and schema.get("items", {}).get("type") == "number":
        parsed.vector(key)
    elif kind == "array" and not isinstance(parsed.raw[key], list):
        got = type(parsed.raw[key]).__name__
        raise HttpRefusal(400, f"{parsed.tool}: argument '{key}' must be an array, got {got}")


def tool_binding(
    tool: str,
    *,
    source: Source = Source.BODY,
    rename: Mapping[str, str] | None = None,
    path: Mapping[str, str] | None = None,
    drop: tuple[str, ...] = (),
    status: Callable[[Any], int] = lambda _data: 200,
) -> Binding:
    """A route that runs MCP tool ``tool``: same schema (``rename``: /v1 field -> tool argument), same handler.

    ``drop`` removes tool arguments the route does not take (a path parameter carries them instead, or the
    route's documented shape omits them).
    """
    spec: ToolSpec = registry()[tool]
    renamed = dict(rename or {})
    back = {tool_key: v1_key for v1_key, tool_key in renamed.items()}
    properties = {back.get(key, key): value for key, value in spec.properties.items() if key not in drop}
    required = tuple(back.get(key, key) for key in spec.required)
    path_map = {param: back.get(key, key) for param, key in (path or {}).items()}

    def run(call: Call) -> Mapping[str, Any]:
        raw = {renamed.get(key, key): value for key, value in call.args.raw.items()}
        reply = structured_reply(spec, spec.handler(call.live, spec.arguments(raw)))
        return dict(reply.structured or {})

    return Binding(tool, properties, run, required=required, source=source, path=path_map, status=status)


def parse_body(body: bytes, *, route: str) -> dict[str, object]:
    """A JSON object body (an empty body is ``{}``); anything else is a 400 naming what is wrong."""
    if len(body) > MAX_JSON_BODY:
        raise HttpRefusal(413, f"{route}: the JSON body is {len(body)} bytes, above the {MAX_JSON_BODY}-byte cap")
    if not body.strip():
        return {}
    try:
        parsed = json.loads(body)
    except UnicodeDecodeError:
        raise HttpRefusal(400, f"{route}: the body is not UTF-8 JSON") from None
    except json.JSONDecodeError as error:
        raise HttpRefusal(
            400, f"{route}: malformed JSON body ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    if not isinstance(parsed, dict):
        raise HttpRefusal(400, f"{route}: the body must be a JSON object, got {type(parsed).__name__}")
    return parsed


def coerce_query(params: Mapping[str, str], properties: Mapping[str, Mapping[str, Any]]) -> dict[str, object]:
    """Query parameters typed by each property's schema; a value that does not parse is left for the parser.

    Leaving it a string means the operation's own parser refuses it with the message every surface gives
    ("must be an integer, got str"), rather than a second wording here.
    """
    typed: dict[str, object] = {}
    for key, value in params.items():
        kind = properties.get(key, {}).get("type")
        if kind == "integer" and value.lstrip("-").isdigit() and len(value) < 20:
            typed[key] = int(value)
        elif kind == "number":
            try:
                typed[key] = float(value)
            except ValueError:
                typed[key] = value
        elif kind == "boolean" and value.lower() in ("1", "true", "0", "false"):
            typed[key] = value.lower() in ("1", "true")
        else:
            typed[key] = value
    return typed

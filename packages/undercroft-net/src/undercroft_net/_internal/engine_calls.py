"""What both typed /v1 clients share: the route table, how a call becomes a request, how a reply becomes a
result or the one error class it is. Only the sending differs between the sync and the async client."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from undercroft_net.engine.assertion import ASSERTION_HEADER, mint_assertion
from undercroft_net.errors import (
    Conflict,
    EngineError,
    Forbidden,
    IntegrityError,
    NotBuilt,
    NotFound,
    PayloadTooLarge,
    Quarantined,
    RequestRejected,
    ServerError,
    Unauthorized,
)

__all__ = [
    "CLIENT_ROUTES",
    "LISTING_SCOPE",
    "STREAM_ROUTE",
    "EventParser",
    "Prepared",
    "interpret",
    "prepare",
    "prepare_stream",
]

_V = "/v1/vaults/{id}"

#: Every /v1 route by the client method that calls it (a test counts it against the engine's table).
CLIENT_ROUTES: dict[str, tuple[str, str]] = {
    "create_vault": ("POST", "/v1/vaults"),
    "list_vaults": ("GET", "/v1/vaults"),
    "delete_vault": ("DELETE", _V),
    "stats": ("GET", f"{_V}/stats"),
    "stats_history": ("GET", f"{_V}/stats/history"),
    "save": ("POST", f"{_V}/drawers"),
    "list_drawers": ("GET", f"{_V}/drawers"),
    "get_drawer": ("GET", f"{_V}/drawers/{{drawer_id}}"),
    "update_drawer": ("PUT", f"{_V}/drawers/{{drawer_id}}"),
    "delete_drawer": ("DELETE", f"{_V}/drawers/{{drawer_id}}"),
    "search": ("POST", f"{_V}/search"),
    "taxonomy": ("GET", f"{_V}/taxonomy"),
    "check_duplicate": ("POST", f"{_V}/drawers/check-duplicate"),
    "delete_by_source": ("DELETE", f"{_V}/drawers"),
    "dedup": ("POST", f"{_V}/dedup"),
    "kg_stats": ("GET", f"{_V}/kg/stats"),
    "kg_entities": ("GET", f"{_V}/kg/entities"),
    "kg_query": ("GET", f"{_V}/kg/query"),
    "kg_timeline": ("GET", f"{_V}/kg/timeline"),
    "kg_receipts": ("GET", f"{_V}/kg/receipts"),
    "kg_canonical": ("GET", f"{_V}/kg/canonical/{{key}}"),
    "kg_authority": ("POST", f"{_V}/kg/authority"),
    "supersessions": ("GET", f"{_V}/supersessions"),
    "kg_rel": ("GET", f"{_V}/kg/rel"),
    "index_status": ("GET", f"{_V}/index/status"),
    "create_tunnel": ("POST", f"{_V}/tunnels"),
    "list_tunnels": ("GET", f"{_V}/tunnels"),
    "traverse": ("GET", f"{_V}/tunnels/traverse"),
    "delete_tunnel": ("DELETE", f"{_V}/tunnels/{{tid}}"),
    "tunnel_drawers": ("GET", f"{_V}/tunnels/{{tid}}/drawers"),
    "wake_up": ("GET", f"{_V}/wake-up"),
    "diary_write": ("POST", f"{_V}/diary"),
    "diary_read": ("GET", f"{_V}/diary"),
    "diary_agents": ("GET", f"{_V}/diary/agents"),
    "closets": ("GET", f"{_V}/closets"),
    "hallways": ("GET", f"{_V}/hallways"),
    "create_backup": ("POST", f"{_V}/backups"),
    "list_backups": ("GET", f"{_V}/backups"),
    "restore_backup": ("POST", f"{_V}/backups/restore"),
    "history": ("GET", f"{_V}/history"),
    "trust": ("GET", f"{_V}/trust"),
    "set_trust": ("POST", f"{_V}/trust"),
    "admission": ("GET", f"{_V}/admission"),
    "rule": ("POST", f"{_V}/admission"),
    "retention": ("GET", f"{_V}/retention"),
    "set_retention": ("POST", f"{_V}/retention"),
    "sweep": ("POST", f"{_V}/retention/sweep"),
    "forget": ("POST", f"{_V}/forget"),
    "witness": ("GET", f"{_V}/witness"),
    "check_witness": ("POST", f"{_V}/witness"),
    "verify_forgetting": ("POST", f"{_V}/verify-forgetting"),
    "refine": ("POST", f"{_V}/refine"),
    "verify": ("POST", f"{_V}/verify"),
    "repair": ("POST", f"{_V}/repair"),
    "anchor": ("POST", f"{_V}/anchor"),
    "rotate": ("POST", f"{_V}/rotate"),
    "export": ("GET", f"{_V}/export"),
    "import_export": ("POST", f"{_V}/import"),
}

#: The live event stream: beside the /v1 table (the documents list it under observability), one frame per event.
STREAM_ROUTE: tuple[str, str] = ("GET", f"{_V}/stream")

LISTING_SCOPE = "*"
"""The id an assertion names for a request that names no vault (listing the palace's vaults)."""

_BY_STATUS: dict[int, type[RequestRejected]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    501: NotBuilt,
}


@dataclass(frozen=True)
class Prepared:
    """One request ready to send: method, path (ids percent-encoded), query, body and headers."""

    route: str
    method: str
    path: str
    query: dict[str, str]
    content: bytes | None
    headers: dict[str, str]


def _query_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def prepare(
    route: str,
    vault: str | None,
    *,
    secret: str | None,
    clock: Callable[[], float],
    path: Mapping[str, str] | None = None,
    query: Mapping[str, object] | None = None,
    body: Mapping[str, object] | None = None,
    content: bytes | None = None,
) -> Prepared:
    """The request for ``route``; ``None`` values are left out (the engine's default applies)."""
    method, template = CLIENT_ROUTES[route]
    values = {"id": vault or "", **(path or {})}
    # Every path segment is percent-encoded whole: an id holding '/', '..' or NUL names one segment, never a route.
    target = template
    for key, value in values.items():
        target = target.replace(f"{{{key}}}", quote(value, safe=""))
    headers: dict[str, str] = {}
    payload = content
    if body is not None:
        payload = json.dumps({k: v for k, v in body.items() if v is not None}).encode("utf-8")
        headers["Content-Type"] = "application/json"
    elif content is not None:
        headers["Content-Type"] = "application/x-ndjson" if route == "import_export" else "application/json"
    if secret is not None:
        scope = vault if vault is not None else str((body or {}).get("id") or LISTING_SCOPE)
        headers[ASSERTION_HEADER] = mint_assertion(secret, scope, clock())
    params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
    return Prepared(route, method, target, params, payload, headers)


def _message(body: object, fallback: str) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return str(body["error"])
    return fallback


def interpret(prepared: Prepared, status: int, content: bytes) -> Any:
    """The reply's JSON (or raw NDJSON for an export), or the error its status and body say it is."""
    if 200 <= status < 300 and prepared.route == "export":
        return content
    try:
        body: object = json.loads(content) if content else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    where = f"{prepared.method} {prepared.path}"
    if status == 202:
        raise Quarantined(status, f"{where}: diverted to the admission queue", body)
    if 200 <= status < 300:
        if body is None:
            raise ServerError(status, f"{where}: the engine answered something that is not JSON")
        if prepared.route == "verify" and isinstance(body, dict) and body.get("ok") is False:
            raise IntegrityError(status, f"{where}: the vault failed verification", body)
        return body
    message = _message(body, f"{where} answered {status}")
    if isinstance(body, dict) and body.get("class") == "integrity":
        raise IntegrityError(status, message, body)
    if status in _BY_STATUS:
        raise _BY_STATUS[status](status, message, body)
    if 400 <= status < 500:
        raise RequestRejected(status, message, body)
    if status >= 500:
        raise ServerError(status, message, body)
    raise EngineError(status, message, body)


def prepare_stream(vault: str, *, secret: str | None, clock: Callable[[], float]) -> Prepared:
    """The request that subscribes to ``vault``'s live stream (signed for that vault when a secret is given)."""
    headers = {"Accept": "text/event-stream"}
    if secret is not None:
        headers[ASSERTION_HEADER] = mint_assertion(secret, vault, clock())
    path = STREAM_ROUTE[1].replace("{id}", quote(vault, safe=""))
    return Prepared("stream", STREAM_ROUTE[0], path, {}, None, headers)


class EventParser:
    """Server-sent events, one line at a time: ``feed`` returns ``(event, data)`` when a frame ends.

    Comment lines (``: ping``, the heartbeat) are skipped; ``data`` must be one JSON object, as the engine sends.
    """

    def __init__(self) -> None:
        self._event = "message"
        self._data: list[str] = []

    def feed(self, line: str) -> tuple[str, dict[str, Any]] | None:
        """Take one line (without its newline); the finished frame at a blank line, else ``None``."""
        if line.startswith(":"):
            return None
        if line == "":
            if not self._data:
                self._event = "message"
                return None
            event, text = self._event, "\n".join(self._data)
            self._event, self._data = "message", []
            decoded = json.loads(text)
            if not isinstance(decoded, dict):
                raise ServerError(200, f"a stream frame's data is not a JSON object: {text[:200]!r}")
            return event, decoded
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        return None

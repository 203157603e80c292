"""The control plane's operations, shared by the CLI commands and the admin plane (one behaviour, two doors)."""

from __future__ import annotations

import json
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from undercroft_orchestrator._internal import migration
from undercroft_orchestrator._internal.engines import Engines, police_instance_url
from undercroft_orchestrator._internal.names import checked_name
from undercroft_orchestrator._internal.state import State, Tenant
from undercroft_orchestrator.errors import EngineFailed, Refused

__all__ = [
    "add_instance",
    "create_tenant",
    "migrate",
    "relay",
    "relay_raw",
    "repoint",
    "tenant_shape",
]


def _optional_text(field: str, value: object) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value != value.strip():
        raise Refused(f"{field} must be a string without surrounding whitespace")
    return value


def add_instance(
    state: State, engines: Engines, *, name: object, url: object, bearer: object, assertion_secret: object
) -> dict[str, str]:
    """Register an engine, its URL policed now (cleartext beyond loopback is refused at registration)."""
    checked = checked_name("instance name", name)
    if not isinstance(url, str) or not url:
        raise Refused("an instance needs a url (https://host:port, or http:// to loopback)")
    endpoint = police_instance_url(checked, url, engines.pin)
    state.add_instance(
        checked, endpoint.url, _optional_text("bearer", bearer), _optional_text("assertion_secret", assertion_secret)
    )
    return {"name": checked, "url": endpoint.url}


def tenant_shape(tenant: Tenant) -> dict[str, object]:
    """A tenant as the admin plane and ``--json`` show it (never its token or token MAC)."""
    return {
        "id": tenant.id,
        "vault": tenant.vault,
        "instance": tenant.instance,
        "created_at": tenant.created_at,
        "rotated_at": tenant.rotated_at,
        "migrating": tenant.migrating,
    }


async def create_tenant(
    state: State, engines: Engines, tenant_id: object, instance: object, level: object = None, embedder: object = None
) -> dict[str, object]:
    """Create the tenant's vault on ``instance`` (default: the instance holding fewest tenants), then map it."""
    checked = checked_name("tenant id", tenant_id)
    if any(t.id == checked for t in state.tenants()):
        raise Refused(f"tenant {checked!r} already exists (tenant-rotate gives it a new token)")
    if instance is None:
        registered = [i["name"] for i in state.instances()]
        if not registered:
            raise Refused("no instance is registered: instance-add one first")
        load = {name: 0 for name in registered}
        for tenant in state.tenants():
            load[tenant.instance] = load.get(tenant.instance, 0) + 1
        instance = min(registered, key=lambda name: (load[name], name))
    target = state.instance(checked_name("instance name", instance))
    body: dict[str, object] = {"id": checked}
    if level is not None:
        body["level"] = level
    if embedder is not None:
        body["embedder"] = embedder
    try:
        await engines.call(target, checked, "POST", path="/v1/vaults", body=body)
    except EngineFailed as failed:
        if failed.status == 409:
            raise Refused(
                f"instance {target.name!r} already holds a vault named {checked!r}: nothing was created"
            ) from None
        raise
    token = state.create_tenant(checked, target.name)
    return {"id": checked, "vault": checked, "instance": target.name, "token": token}


async def repoint(state: State, engines: Engines, tenant_id: str, instance: object) -> dict[str, object]:
    """Move the mapping only, refused unless ``instance`` reports holding the tenant's vault."""
    tenant = state.tenant(tenant_id)
    target = state.instance(checked_name("instance name", instance))
    if target.name == tenant.instance:
        raise Refused(f"tenant {tenant_id!r} already lives on instance {target.name!r}")
    if not await engines.holds(target, tenant.vault):
        raise Refused(
            f"instance {target.name!r} does not report holding vault {tenant.vault!r}: copy it there first "
            "(or use migrate, which copies and judges the copy)"
        )
    return tenant_shape(state.repoint_tenant(tenant_id, target.name))


async def migrate(state: State, engines: Engines, tenant_id: str, to: object) -> dict[str, Any]:
    """Migrate ``tenant_id`` to instance ``to`` with the judged sequence of `migration.migrate`."""
    return await migration.migrate(state, engines, tenant_id, checked_name("instance name", to))


async def relay(state: State, engines: Engines, tenant_id: str, method: str, subpath: str, body: object = None) -> Any:
    """One JSON call on the tenant's vault through its instance; the engine's decoded reply."""
    tenant = state.tenant(tenant_id)
    _, reply = await engines.call(state.instance(tenant.instance), tenant.vault, method, subpath, body=body)
    return reply


async def relay_raw(
    state: State, engines: Engines, tenant_id: str, method: str, subpath: str, raw: bytes, request: Request | None
) -> tuple[int, Any]:
    """An operator call with the caller's own body: export streams back, everything else is JSON."""
    tenant = state.tenant(tenant_id)
    instance = state.instance(tenant.instance)
    query = request.scope.get("query_string", b"") if request is not None else b""
    if subpath == "export" and request is not None:
        reply = await engines.send(instance, tenant.vault, "GET", engines.path(tenant.vault, "export"), query=query)
        media = reply.headers.get("content-type", "application/x-ndjson")
        streamed: Response = StreamingResponse(
            reply.aiter_raw(), status_code=reply.status_code, media_type=media, background=BackgroundTask(reply.aclose)
        )
        return reply.status_code, streamed
    headers_json = subpath != "import"
    content = raw or None
    if content is not None and headers_json:
        try:
            body = json.loads(content)
        except ValueError:
            raise Refused("the body is not JSON") from None
        return await engines.call(instance, tenant.vault, method, subpath, body=body, query=query)
    return await engines.call(instance, tenant.vault, method, subpath, content=content, query=query)

"""The commands behind ``undercroft-orchestrator``: each reads the environment once and calls `operations`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from undercroft_config import Status

from undercroft_orchestrator._internal import operations
from undercroft_orchestrator._internal.engines import Engines, raise_for
from undercroft_orchestrator._internal.environment import Environment, checked_entries, read_environment
from undercroft_orchestrator._internal.sealing import Keys, generate_key, generate_token
from undercroft_orchestrator._internal.state import State
from undercroft_orchestrator._internal.vocabulary import OPERATIONS
from undercroft_orchestrator.errors import IntegrityVerdict, Refused

__all__ = [
    "config_check",
    "instance_add",
    "instance_health",
    "instance_list",
    "instance_remove",
    "keygen",
    "migrate",
    "ops",
    "serve",
    "tenant_create",
    "tenant_list",
    "tenant_repoint",
    "tenant_rotate",
]


def _emit(data: object, as_json: bool, text: str) -> None:
    print(json.dumps(data, indent=2, sort_keys=True) if as_json else text)


def _environment() -> Environment:
    environment = read_environment()
    for line in environment.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return environment


def _state(environment: Environment, *, read_only: bool = False) -> State:
    if environment.key is None:
        raise Refused('UNDERCROFT_ORCH_KEY is required (eval "$(undercroft-orchestrator keygen)" makes one)')
    return State(environment.db, Keys(environment.key), read_only=read_only)


@asynccontextmanager
async def _plane() -> AsyncIterator[tuple[State, Engines]]:
    environment = _environment()
    state = _state(environment)
    engines = Engines(environment.pin)
    try:
        yield state, engines
    finally:
        await engines.aclose()


def keygen(_args: argparse.Namespace) -> int:
    """Print ``export`` lines for a fresh sealing key and admin bearer (store both: the key opens the creds)."""
    print(f"export UNDERCROFT_ORCH_KEY='{generate_key()}'")
    print(f"export UNDERCROFT_ORCH_ADMIN_TOKEN='{generate_token()}'")
    return 0


def config_check(args: argparse.Namespace) -> int:
    """Every UNDERCROFT_ORCH_* declaration through the start-up resolver; 1 when the control plane would refuse."""
    import os

    entries = checked_entries(os.environ)
    missing = [] if "UNDERCROFT_ORCH_KEY" in os.environ else ["UNDERCROFT_ORCH_KEY is required and not declared"]
    starts = not missing and all(e.status is not Status.REFUSED for e in entries)
    if args.json:
        shape = {
            "starts": starts,
            "entries": [{"name": e.name, "status": str(e.status), "message": e.message} for e in entries],
            "missing": missing,
        }
        print(json.dumps(shape, indent=2, sort_keys=True))
    else:
        for entry in entries:
            print(f"{entry.name}: {entry.status}" + (f" — {entry.message}" if entry.message else ""))
        for line in missing:
            print(f"missing: {line}")
        print("the control plane would start" if starts else "the control plane would REFUSE to start")
    return 0 if starts else 1


def serve(args: argparse.Namespace) -> int:
    """Bind the control plane; SIGINT/SIGTERM stop it with exit 0."""
    from undercroft_orchestrator._internal.serving import run

    environment = _environment()
    replica = bool(args.read_replica)
    if not replica and environment.admin_token is None:
        raise Refused("UNDERCROFT_ORCH_ADMIN_TOKEN is required on the writer (at least 16 characters)")
    state = _state(environment, read_only=replica)
    return run(environment, state, address=args.addr, replica=replica)


def instance_add(args: argparse.Namespace) -> int:
    """Register an engine; the URL is refused now if the transport policy would refuse it later."""
    environment = _environment()
    state = _state(environment)
    added = operations.add_instance(
        state,
        Engines(environment.pin),
        name=args.name,
        url=args.url,
        bearer=args.bearer,
        assertion_secret=args.assertion_secret,
    )
    print(f"instance {added['name']} registered at {added['url']}")
    return 0


def instance_list(args: argparse.Namespace) -> int:
    """Registered engines (never their credentials)."""
    rows = _state(_environment()).instances()
    _emit({"instances": rows}, args.json, "\n".join(f"{r['name']}\t{r['url']}" for r in rows) or "no instances")
    return 0


def instance_remove(args: argparse.Namespace) -> int:
    """Forget an engine that holds no tenant."""
    _state(_environment()).remove_instance(args.name)
    print(f"instance {args.name} removed")
    return 0


async def instance_health(args: argparse.Namespace) -> int:
    """Probe an engine; exit 1 unless healthy."""
    async with _plane() as (state, engines):
        verdict = (await engines.health(state.instance(args.name))).as_dict()
    text = f"{verdict['name']}: {verdict['state']}" + (f" — {verdict['reason']}" if "reason" in verdict else "")
    _emit(verdict, args.json, text)
    return 0 if verdict["healthy"] else 1


async def tenant_create(args: argparse.Namespace) -> int:
    """Create the tenant's vault and mapping; the token is printed once and stored only as a MAC."""
    async with _plane() as (state, engines):
        created = await operations.create_tenant(state, engines, args.id, args.instance, args.level, args.embedder)
    text = (
        f"tenant {created['id']} created on {created['instance']}\ntoken (shown once; store it now): {created['token']}"
    )
    _emit(created, args.json, text)
    return 0


def tenant_list(args: argparse.Namespace) -> int:
    """Tenants and the instance each lives on."""
    rows = [operations.tenant_shape(t) for t in _state(_environment()).tenants()]
    text = "\n".join(f"{r['id']}\t{r['instance']}" + ("\tmigrating" if r["migrating"] else "") for r in rows)
    _emit({"tenants": rows}, args.json, text or "no tenants")
    return 0


def tenant_rotate(args: argparse.Namespace) -> int:
    """A new token for the tenant; the old one stops resolving in the same statement."""
    token = _state(_environment()).rotate_tenant(args.id)
    _emit({"id": args.id, "token": token}, args.json, f"new token for {args.id} (shown once): {token}")
    return 0


async def tenant_repoint(args: argparse.Namespace) -> int:
    """Move the mapping only, refused unless the instance reports holding the vault."""
    async with _plane() as (state, engines):
        moved = await operations.repoint(state, engines, args.id, args.instance)
    print(f"tenant {moved['id']} now routes to {moved['instance']}")
    return 0


async def migrate(args: argparse.Namespace) -> int:
    """The judged migration; exit 1 when it stopped before the flip, 2 when an integrity verdict stopped it."""
    async with _plane() as (state, engines):
        judgement = await operations.migrate(state, engines, args.id, args.to)
    deleted = judgement["source_deleted"]
    text = (
        f"tenant {args.id} migrated {judgement['from']} → {judgement['to']}: "
        f"{judgement['destination']['records']} records held = {judgement['manifest']['drawers']} declared = "
        f"{judgement['source']['records_after']} at the source; source "
        + ("deleted" if deleted is True else f"NOT deleted ({deleted})")
    )
    _emit(judgement, args.json, text)
    return 0 if deleted is True else 1


def _body(raw: str | None) -> bytes:
    if raw is None:
        return b""
    if raw.startswith("@"):
        try:
            return Path(raw[1:]).read_bytes()
        except OSError as error:
            raise Refused(f"--body {raw}: {error.strerror}") from None
    return raw.encode("utf-8")


async def ops(args: argparse.Namespace) -> int:
    """One operator call; exit 2 on an integrity verdict (``"ok": false`` or a classed 4xx)."""
    if args.op not in OPERATIONS:
        raise Refused(f"unknown operation {args.op!r}; the vocabulary is: {', '.join(sorted(OPERATIONS))}")
    method, subpath = OPERATIONS[args.op]
    body = _body(args.body)
    async with _plane() as (state, engines):
        if subpath == "export":
            return await _export(state, engines, args.tenant)
        _, reply = await operations.relay_raw(state, engines, args.tenant, method, subpath, body, None)
    print(json.dumps(reply, indent=2, sort_keys=True))
    if isinstance(reply, dict) and reply.get("ok") is False:
        raise IntegrityVerdict(f"{args.op} on tenant {args.tenant!r}: the engine's verdict is ok: false")
    return 0


async def _export(state: State, engines: Engines, tenant_id: str) -> int:
    tenant = state.tenant(tenant_id)
    reply: Any = await engines.send(
        state.instance(tenant.instance), tenant.vault, "GET", engines.path(tenant.vault, "export")
    )
    try:
        if reply.status_code != 200:
            await raise_for(reply, tenant.instance, "export")
        async for chunk in reply.aiter_raw():
            sys.stdout.buffer.write(chunk)
    finally:
        await reply.aclose()
    sys.stdout.buffer.flush()
    return 0

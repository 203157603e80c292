"""Live migration of one tenant between engines: snapshot → export → import → judge the copy → flip → delete.

The judgement is made against what the destination HOLDS, never against the import reply (that counts
records processed, and an upsert counts two records landing on one row twice): the destination's
``records`` must equal the drawer count the export's leading manifest line declares and the source's own
``records`` read again afterwards, the knowledge-graph facts and tunnels must agree the same way, the source
must not have been written to in between (its ``writes`` unchanged), the destination must verify clean, and it
must have adopted the source's id key (the export carries it, the new copy takes it before any write), so every
drawer id the tenant holds is the same on the destination.
While it runs, the tenant's writes are held on the data plane under a lease (reads keep flowing to the
source); a migrator that dies leaves the lease to lapse. Any disagreement or failure stops before the flip:
the partial copy is deleted, the hold released, and the source keeps serving — nothing is lost.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from undercroft_orchestrator._internal.engines import Engines, raise_for
from undercroft_orchestrator._internal.state import State
from undercroft_orchestrator.errors import EngineFailed, MigrationStopped, Refused

__all__ = ["HOLD_SECONDS", "migrate"]

HOLD_SECONDS = 900.0
"""How long a migration's write hold lasts unless the migration releases it first."""


class _Manifest:
    """Passes an export stream through while reading its leading manifest line."""

    def __init__(self, source: AsyncIterator[bytes]) -> None:
        self.source = source
        self.head = b""
        self.manifest: dict[str, Any] | None = None
        self.bytes = 0

    async def stream(self) -> AsyncIterator[bytes]:
        async for chunk in self.source:
            self.bytes += len(chunk)
            if self.manifest is None:
                self.head += chunk
                line, newline, _rest = self.head.partition(b"\n")
                if newline:
                    self.manifest = _manifest(line)
                    self.head = b""
            yield chunk


def _manifest(line: bytes) -> dict[str, Any]:
    try:
        decoded = json.loads(line)
    except ValueError:
        return {}
    manifest = decoded.get("undercroft_manifest") if isinstance(decoded, dict) else None
    return manifest if isinstance(manifest, dict) else {}


def _count(stats: dict[str, Any], *path: str) -> object:
    value: Any = stats
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


async def migrate(state: State, engines: Engines, tenant_id: str, to: str) -> dict[str, Any]:
    """Move ``tenant_id`` to instance ``to``; the judgement, or `MigrationStopped` with it (nothing flipped)."""
    started = time.monotonic()
    tenant = state.tenant(tenant_id)
    if tenant.instance == to:
        raise Refused(f"tenant {tenant_id!r} already lives on instance {to!r}")
    source, destination = state.instance(tenant.instance), state.instance(to)
    vault = tenant.vault
    if await engines.holds(destination, vault):
        raise Refused(
            f"instance {to!r} already holds a vault named {vault!r}: nothing was copied (if it is this tenant's "
            "copy, tenant-repoint moves the mapping)"
        )
    judgement: dict[str, Any] = {"tenant": tenant_id, "vault": vault, "from": source.name, "to": destination.name}
    state.hold_writes(tenant_id, HOLD_SECONDS)
    created = False
    try:
        _, before = await engines.call(source, vault, "GET", "stats")
        _, snapshot = await engines.call(source, vault, "POST", "backups")
        judgement["snapshot"] = snapshot
        create = {"id": vault, "level": before.get("level")}
        embedder = before.get("embedder")
        if isinstance(embedder, str) and embedder.startswith("external:"):
            create["embedder"] = embedder  # the engine embeds otherwise: the import refuses a different model
        await engines.call(destination, vault, "POST", path="/v1/vaults", body=create)
        created = True
        # The export carries the vault's id key and the new, empty copy adopts it: every drawer id, blind label and
        # entity id the tenant's agents hold resolves on the destination as it did on the source.
        export = await engines.send(source, vault, "GET", engines.path(vault, "export"), query=b"with_id_key=true")
        try:
            if export.status_code != 200:
                await raise_for(export, source.name, "the export")
            manifest = _Manifest(export.aiter_raw())
            _, imported = await engines.call(
                destination,
                vault,
                "POST",
                "import",
                content=manifest.stream(),
                query=b"adopt_id_key=true",
            )
        finally:
            await export.aclose()
        declared = manifest.manifest or {}
        _, after = await engines.call(source, vault, "GET", "stats")
        _, held = await engines.call(destination, vault, "GET", "stats")
        _, verified = await engines.call(destination, vault, "POST", "verify")
        declared_counts = declared.get("counts")
        counts: dict[str, Any] = declared_counts if isinstance(declared_counts, dict) else {}
        judgement.update(
            exported_bytes=manifest.bytes,
            imported=imported,
            manifest={
                "drawers": counts.get("drawers"),
                "kg_facts": counts.get("kg_facts"),
                "tunnels": counts.get("tunnels"),
            },
            source={
                "records_before": before.get("records"),
                "records_after": after.get("records"),
                "writes_before": before.get("writes"),
                "writes_after": after.get("writes"),
                "kg_facts": _count(after, "kg", "facts"),
                "tunnels": after.get("tunnels"),
            },
            destination={
                "records": held.get("records"),
                "kg_facts": _count(held, "kg", "facts"),
                "tunnels": held.get("tunnels"),
                "verify_ok": verified.get("ok") if isinstance(verified, dict) else None,
            },
        )
        disagreements = _disagreements(judgement)
        judgement["agree"] = not disagreements
        judgement["disagreements"] = disagreements
        if disagreements:
            raise MigrationStopped(
                f"migration of {tenant_id!r} stopped before the flip: " + "; ".join(disagreements),
                judgement=judgement,
                integrity=judgement["destination"]["verify_ok"] is False,
            )
        state.repoint_tenant(tenant_id, destination.name, action="migrate-flip")
    except BaseException as failure:
        judgement["flipped"] = False
        if created:
            judgement["cleanup"] = await _delete(engines, destination, vault)
        state.hold_writes(tenant_id, None)
        if isinstance(failure, MigrationStopped):
            failure.judgement = judgement
            state.record("migrate-stopped", tenant_id, judgement)
            raise
        if isinstance(failure, EngineFailed | Refused):
            state.record("migrate-stopped", tenant_id, {**judgement, "reason": str(failure)})
            raise MigrationStopped(
                f"migration of {tenant_id!r} stopped before the flip: {failure}",
                judgement={**judgement, "reason": str(failure)},
                integrity=failure.error_class == "integrity",
            ) from None
        raise
    judgement["flipped"] = True
    judgement["source_deleted"] = await _delete(engines, source, vault)
    judgement["seconds"] = round(time.monotonic() - started, 3)
    state.record("migrate", tenant_id, judgement)
    return judgement


def _disagreements(judgement: dict[str, Any]) -> list[str]:
    manifest, source, destination = judgement["manifest"], judgement["source"], judgement["destination"]
    found = []
    # ``writes`` moves by the export's own egress record, so the records are what says nothing wrote (the hold
    # keeps the data plane's writes out; a write made on the engine directly is outside the control plane).
    if source["records_before"] != source["records_after"]:
        found.append("the source's records changed during the copy")
    records = destination["records"]
    if not (records == manifest["drawers"] == source["records_after"]):
        found.append(
            f"the destination holds {records} records, the export declared {manifest['drawers']} drawers and the "
            f"source holds {source['records_after']}"
        )
    if not (destination["kg_facts"] == manifest["kg_facts"] == source["kg_facts"]):
        found.append(f"knowledge-graph facts: destination {destination['kg_facts']}, source {source['kg_facts']}")
    if not (destination["tunnels"] == manifest["tunnels"] == source["tunnels"]):
        found.append(f"tunnels: destination {destination['tunnels']}, source {source['tunnels']}")
    if destination["verify_ok"] is not True:
        found.append("the destination does not verify clean")
    imported = judgement.get("imported")
    if not (isinstance(imported, dict) and imported.get("id_key_adopted") is True):
        found.append("the destination did not adopt the source's id key: its drawer ids would differ")
    return found


async def _delete(engines: Engines, instance: Any, vault: str) -> bool | str:
    """Delete ``vault`` on ``instance``: True, or why it could not be deleted."""
    try:
        await engines.call(instance, vault, "DELETE")
    except EngineFailed as failed:
        return str(failed)
    return True

"""The /v1 routes MCP deliberately lacks: vault lifecycle, the operator plane, maintenance and portability.

Each calls the operation the CLI command calls (``undercroft_cli.operations``: ``assign_trust``, ``sweep_record``,
``rotate_keys``, ``collect``, ``anchor``…) and answers its record, with its arguments declared once here (vault
lifecycle is ``operations.vaults``, export and import ``operations.transfer``). Rotation, restore and deletion
need the only handle: they run with the cached one closed, and answer 409 for the ``--vault`` vault, which
``/mcp`` holds open.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from undercroft_store.errors import VaultInUse
from undercroft_store.governance.forgetting import verify_forgetting
from undercroft_store.integrity.backup import restore_backup
from undercroft_store.memory.kg.facts import AUTHORITY_CLASSES, REVIEW_STATES
from undercroft_vault.manifest import LEVELS

from undercroft_cli._internal.composition import INDEX_BACKENDS, attach_reranker, open_mirror
from undercroft_cli._internal.served import build_chat_model
from undercroft_cli.http.bindings.shapes import jsonable
from undercroft_cli.http.errors import HttpRefusal
from undercroft_cli.http.operations import Binding, Call, Reach, Source
from undercroft_cli.http.tenancy import SURFACE
from undercroft_cli.mcp.tools.base import boolean, integer, string
from undercroft_cli.operations import verify_record
from undercroft_cli.operations.admission import VERDICTS, admission_queue, rule_on
from undercroft_cli.operations.anchor import anchor
from undercroft_cli.operations.authority import declare_tier
from undercroft_cli.operations.backups import backup_records, take_backup
from undercroft_cli.operations.forgetting import forget_drawers, forget_record
from undercroft_cli.operations.history import history_page
from undercroft_cli.operations.refine import refine
from undercroft_cli.operations.remote_index import index_status_record
from undercroft_cli.operations.repair import repair
from undercroft_cli.operations.retention import retention_policies, set_policy, sweep_record, sweep_retention
from undercroft_cli.operations.rotation import rotate_keys, rotation_record
from undercroft_cli.operations.transfer import audit_export, collect, import_bytes
from undercroft_cli.operations.trust import assign_trust, trust_records
from undercroft_cli.operations.values import ValueRefused
from undercroft_cli.operations.vaults import create_vault, delete_vault, list_vaults
from undercroft_cli.operations.witness import check_record, check_witness, emit_document, witness_record

__all__ = ["MAX_IMPORT_BODY", "OPERATOR_BINDINGS"]

MAX_IMPORT_BODY = 256 * 1024 * 1024
"""An import body above 256 MiB is refused whole with 413 (never a prefix imported)."""

_V = "/v1/vaults/{id}"
_NAME = "1–64 of letters, digits, '.', '_', '-'"


def _vault(call: Call) -> str:
    assert call.vault is not None, "a vault route always names its vault"
    return call.vault


def _not_pinned(call: Call, what: str) -> None:
    if call.vault == call.tenancy.pinned:
        raise VaultInUse(
            f"vault {call.vault!r} is held open behind /mcp by this process (--vault): {what} needs the only handle; "
            "stop the server and run it from the CLI"
        )


# --- lifecycle ---------------------------------------------------------------------------------------
def _create(call: Call) -> dict[str, Any]:
    try:
        with call.tenancy.palace_lock:
            created = create_vault(
                call.tenancy.palace,
                call.args.required_text("id"),
                level=call.args.choice("level") or "sealed",
                embedder=call.args.text("embedder"),
                default_label=lambda: call.tenancy.embedder.identity.label,
            )
    except ValueRefused as refused:  # a malformed external declaration is InvalidInput (400) naming it
        raise HttpRefusal(400, f"create: argument 'embedder' must be {refused.expected}, got {refused.value}") from None
    return {"id": created.name, "level": created.level, "embedder": created.embedder, "created": True}


def _list(call: Call) -> dict[str, Any]:
    with call.tenancy.palace_lock:
        return {"vaults": list_vaults(call.tenancy.palace)}


def _delete(call: Call) -> dict[str, Any]:
    _not_pinned(call, "deletion")
    name = _vault(call)
    with call.tenancy.closed(name), call.tenancy.palace_lock:
        delete_vault(call.tenancy.palace, name)  # VaultNotFound (404) before anything is removed
    return {"deleted": name}


# --- operator plane ----------------------------------------------------------------------------------
def _backup(call: Call) -> dict[str, object]:
    return take_backup(call.tenancy.palace, _vault(call), call.tenancy.embedder_for(_vault(call)))


def _backups(call: Call) -> dict[str, Any]:
    return {"backups": backup_records(call.tenancy.palace, _vault(call))}


def _restore(call: Call) -> dict[str, Any]:
    _not_pinned(call, "a restore")
    name = _vault(call)
    with call.tenancy.closed(name):
        embedder = call.tenancy.embedder_for(name)
        report = restore_backup(call.tenancy.palace, name, call.args.required_text("name"), embedder)
    # The record `undercroft backup restore --json` and POST …/verify carry: `ok` (the verdict) first.
    return {"restored": call.args.required_text("name"), "verify": verify_record(report)}


def _history(call: Call) -> dict[str, Any]:
    args = call.args
    return history_page(
        call.live.store, subject=args.text("subject"), limit=args.integer("limit"), offset=args.integer("offset")
    )


def _admission_rule(call: Call) -> dict[str, Any]:
    return rule_on(call.live.store, call.args.required_text("id"), call.args.choice("verdict") or "").to_dict()


def _retention_set(call: Call) -> dict[str, Any]:
    raw = call.args.raw.get("max_age")
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise HttpRefusal(400, "retention: argument 'max_age' must be seconds or a duration like 90d, 12h, 2w")
    return set_policy(call.live.store, call.args.required_text("wing"), call.args.text("room"), raw)


def _forget(call: Call) -> dict[str, Any]:
    ids = call.args.raw.get("ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise HttpRefusal(400, "forget: argument 'ids' must be a non-empty array of drawer ids")
    return forget_record(forget_drawers(call.live.store, ids, reason=call.args.text("reason") or "operator"))


def _authority(call: Call) -> dict[str, Any]:
    return declare_tier(
        call.live.store,
        call.args.required_text("fact_id"),
        authority_class=call.args.text("authority_class"),
        review_state=call.args.text("review_state"),
        canonical_key=call.args.text("canonical_key"),
    )


def _witness_check(call: Call) -> dict[str, Any]:
    """200 ``{"ok": true, "verdict": "extends", …}``; a rollback below the witness is `WitnessFailed` (409,
    integrity)."""
    return check_record(check_witness(call.live.store, call.body))


def _verify_forgetting(call: Call) -> Any:
    return jsonable(verify_forgetting(call.live.store, call.body))


# --- maintenance / portability -----------------------------------------------------------------------
def _repair(call: Call) -> dict[str, Any]:
    name = _vault(call)
    tokens = call.args.flag("tokens")
    with call.tenancy.closed(name):
        embedder = call.tenancy.embedder_for(name)
        # The CLI's repair, through the same function: a served embedder's words leaving are recorded.
        return repair(
            call.tenancy.palace, name, embedder, surface=SURFACE, tokens=tokens, prepare=attach_reranker
        ).to_dict()


def _rotate(call: Call) -> dict[str, Any]:
    _not_pinned(call, "key rotation")
    name = _vault(call)
    with call.tenancy.closed(name):
        return rotation_record(rotate_keys(call.tenancy.palace, name, call.tenancy.embedder_for(name)))


def _export(call: Call) -> Response:
    store = call.live.store
    export = collect(store, with_id_key=call.args.flag("with_id_key"))
    # The record lands before a byte leaves; a replica cannot append: it serves and says the egress went unaudited.
    note = audit_export(store, export, surface=SURFACE, recipient=None)
    headers = {"X-Undercroft-Warning": note} if note is not None else {}
    return Response(export.jsonl, media_type="application/x-ndjson", headers=headers)


def _import(call: Call) -> dict[str, Any]:
    adopt = call.args.flag("adopt_id_key")
    report = import_bytes(call.live.store, call.body, "request body", added_by=SURFACE, adopt=adopt)
    filing = report.filing
    return {
        "imported": report.drawers,
        "new": filing.created,
        "replaced": filing.updated,
        "unchanged": filing.unchanged,
        "quarantined": filing.quarantined,
        "facts": report.facts,
        "tunnels": report.tunnels,
        "id_key_adopted": report.id_key_adopted,
        "notes": report.notes,
    }


def _index_status(call: Call) -> dict[str, Any]:
    """A read: a describe, then a count when the collection exists; nothing is created on the backend."""
    with open_mirror(call.args.required_text("backend"), _vault(call)) as mirror:
        return index_status_record(call.live.store, mirror)


def _refine(call: Call) -> dict[str, Any]:
    """The CLI's refine, through the same function: one egress/refine record per run that sent anything."""
    from undercroft_llm import Extractor

    model = build_chat_model(why="refine")
    try:
        report = refine(
            call.live.store,
            Extractor(model),
            surface=SURFACE,
            wing=call.args.text("wing"),
            room=call.args.text("room"),
            limit=call.args.integer("limit"),
            dry_run=call.args.flag("dry_run"),
        )
    finally:
        model.close()
    return report.to_dict()


_PAGE = {
    "limit": integer("at most this many", minimum=1, maximum=10_000, default=100),
    "offset": integer("skip this many", minimum=0, maximum=100_000_000, default=0),
}

OPERATOR_BINDINGS: dict[tuple[str, str], Binding] = {
    ("POST", "/v1/vaults"): Binding(
        "create_vault",
        {
            "id": string(f"the new vault's id ({_NAME})"),
            "level": string("sealed (default) or hmac-only", enum=LEVELS, default="sealed"),
            "embedder": string("hash (default), or external:<name>@<dim>: the caller supplies every vector"),
        },
        _create,
        required=("id",),
        reach=Reach.PALACE,
        status=lambda _data: 201,
    ),
    ("GET", "/v1/vaults"): Binding("list_vaults", {}, _list, source=Source.NONE, reach=Reach.PALACE),
    ("DELETE", _V): Binding("delete_vault", {}, _delete, source=Source.NONE, reach=Reach.PALACE),
    ("POST", f"{_V}/backups"): Binding("backup", {}, _backup, source=Source.NONE),
    ("GET", f"{_V}/backups"): Binding("backups", {}, _backups, source=Source.NONE),
    ("POST", f"{_V}/backups/restore"): Binding(
        "restore", {"name": string("the backup id (GET …/backups)")}, _restore, required=("name",), reach=Reach.PALACE
    ),
    ("GET", f"{_V}/history"): Binding(
        "history", {"subject": string("only records naming this drawer id"), **_PAGE}, _history, source=Source.QUERY
    ),
    ("GET", f"{_V}/trust"): Binding(
        "trust", {}, lambda call: {"trust": trust_records(call.live.store)}, source=Source.NONE
    ),
    ("POST", f"{_V}/trust"): Binding(
        "trust_set",
        {"wing": string("the wing"), "trust": string("its class", enum=("quarantined", "standard", "trusted"))},
        lambda call: assign_trust(call.live.store, call.args.required_text("wing"), call.args.required_text("trust")),
        required=("wing", "trust"),
    ),
    ("GET", f"{_V}/admission"): Binding(
        "admission",
        {},
        lambda call: {"queue": admission_queue(call.live.store)},
        source=Source.NONE,
    ),
    ("POST", f"{_V}/admission"): Binding(
        "admission_rule",
        {"id": string("the queue entry (GET …/admission)"), "verdict": string("the ruling", enum=VERDICTS)},
        _admission_rule,
        required=("id", "verdict"),
    ),
    ("GET", f"{_V}/retention"): Binding(
        "retention", {}, lambda call: retention_policies(call.live.store), source=Source.NONE
    ),
    ("POST", f"{_V}/retention"): Binding(
        "retention_set",
        {
            "wing": string("the wing"),
            "room": string("one room of it (default: the whole wing)"),
            "max_age": {"type": ["integer", "string"], "description": "seconds, or a duration such as 90d, 12h, 2w"},
        },
        _retention_set,
        required=("wing", "max_age"),
    ),
    ("POST", f"{_V}/retention/sweep"): Binding(
        "retention_sweep", {}, lambda call: sweep_record(sweep_retention(call.live.store)), source=Source.NONE
    ),
    ("POST", f"{_V}/forget"): Binding(
        "forget",
        {
            "ids": {"type": "array", "items": {"type": "string"}, "description": "the drawer ids to destroy"},
            "reason": string("recorded in the attestation (default: operator)"),
        },
        _forget,
        required=("ids",),
    ),
    ("POST", f"{_V}/kg/authority"): Binding(
        "kg_authority",
        {
            "fact_id": string("the active fact"),
            "authority_class": string("its authority class", enum=AUTHORITY_CLASSES),
            "review_state": string("its review state", enum=REVIEW_STATES),
            "canonical_key": string("the key it answers for lookup_canonical"),
        },
        _authority,
        required=("fact_id",),
    ),
    ("GET", f"{_V}/witness"): Binding(
        "witness", {}, lambda call: witness_record(emit_document(call.live.store)), source=Source.NONE
    ),
    ("POST", f"{_V}/witness"): Binding("witness_check", {}, _witness_check, source=Source.NONE, reach=Reach.RAW),
    ("POST", f"{_V}/verify-forgetting"): Binding(
        "verify_forgetting", {}, _verify_forgetting, source=Source.NONE, reach=Reach.RAW
    ),
    ("POST", f"{_V}/repair"): Binding(
        "repair",
        {"tokens": boolean("also build every missing or stale token matrix (UNDERCROFT_RERANKER=colbert|colbert-ort)")},
        _repair,
        reach=Reach.PALACE,
    ),
    ("GET", f"{_V}/index/status"): Binding(
        "index_status",
        {"backend": string("the mirror's backend", enum=INDEX_BACKENDS)},
        _index_status,
        required=("backend",),
        source=Source.QUERY,
    ),
    ("POST", f"{_V}/refine"): Binding(
        "refine",
        {
            "wing": string("only drawers in this wing"),
            "room": string("only drawers in this room"),
            "limit": integer("at most this many drawers (newest first)", minimum=1, maximum=100_000),
            "dry_run": boolean("send and ground, write no fact (the egress is recorded all the same)"),
        },
        _refine,
    ),
    ("POST", f"{_V}/anchor"): Binding(
        "anchor", {}, lambda call: {"behind_by": anchor(call.live.store).behind_by}, source=Source.NONE
    ),
    ("POST", f"{_V}/rotate"): Binding("rotate", {}, _rotate, source=Source.NONE, reach=Reach.PALACE),
    ("GET", f"{_V}/export"): Binding(
        "export",
        {"with_id_key": boolean("also carry the vault's id key (an import with adopt_id_key keeps every drawer id)")},
        _export,
        source=Source.QUERY,
    ),
    ("POST", f"{_V}/import"): Binding(
        "import",
        {"adopt_id_key": boolean("take the export's id key first (the vault must be empty): drawer ids stay")},
        _import,
        source=Source.QUERY,
        reach=Reach.RAW,
    ),
}
"""The lifecycle, operator-plane and maintenance routes, by ``(method, path)``."""

"""Drawer tools: save and add (one new drawer per call), update in place, delete, delete by source, get, list.

Every write goes through an operation of ``undercroft_cli.operations`` and the store's choke point with
``screening=Screen()`` and the handler-stamped ``added_by`` (the session's surface); writer claims (agent,
channel, session) are recorded as claims, never trusted. A save the admission screen diverts is reported as
quarantined, with where it was headed, never as filed.

Saving is ``operations.saving.save``, the call ``undercroft remember`` makes too: these tools state one drawer
per call (``split=False``). A save naming ``supersedes`` is a supersession through the store's
`supersede_drawer` (the new drawer beside the one it replaces, the keyed receipt link in the same transaction);
what that door cannot carry is refused by name rather than dropped (``operations/saving.py``).
"""

from __future__ import annotations

from undercroft_core import KIND_VOCAB
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import WriteResult
from undercroft_store.errors import NothingToRemember

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.errors import InvalidArgument
from undercroft_cli.mcp.tools.base import (
    ToolOutput,
    ToolSession,
    ToolSpec,
    boolean,
    drawer_block,
    integer,
    memory_block,
    string,
    vector,
)
from undercroft_cli.operations import DRAWER_SCHEMA, WRITE_PROPERTIES, drawer_record
from undercroft_cli.operations.drawers import UpdateRefused, delete_by_source, delete_drawer, update_drawer
from undercroft_cli.operations.saving import (
    DEFAULT_ROOM,
    DEFAULT_WING,
    SaveRefused,
    SaveRequest,
    SupersessionUnaccounted,
    save,
)

__all__ = ["DEFAULT_ROOM", "DEFAULT_WING", "DRAWER_TOOLS", "SupersessionUnaccounted", "describe_write", "write_output"]

_PREVIEW_CHARS = 200

_KIND = string("declared record kind (omit rather than guess)", enum=KIND_VOCAB)
_CONTENT_DATE = string("when the content happened, YYYY-MM-DD or RFC 3339; anchors relative dates in the text")
_SUPERSEDES = string(
    "id of the drawer this memory replaces: the new drawer is filed in that drawer's wing, room and kind, with a "
    "keyed receipt over the replaced words (the old drawer stays)"
)
_VECTOR = vector("the drawer's embedding, when the vault stores caller-supplied vectors (external:<name>@<dim>)")

_CLAIMS = {
    "agent": string("provenance claim: which agent wrote this (recorded, never a trust boundary)"),
    "channel": string("provenance claim: origin class of the content, e.g. user|tool-output|scrape|agent"),
    "session": string("provenance claim: the session this was written in"),
}


def describe_write(result: WriteResult, *, wing: str, room: str) -> str:
    """The reply line for one write: where it landed, in words an agent cannot misread."""
    return _landed(result.outcome, result.id, wing=wing, room=room)


def write_output(result: WriteResult, *, wing: str, room: str) -> ToolOutput:
    """One write as text and data (``WRITE_PROPERTIES``)."""
    return _landed_output(result.outcome, result.id, wing=wing, room=room)


def _landed_output(outcome: str, drawer_id: str, *, wing: str, room: str) -> ToolOutput:
    text = _landed(outcome, drawer_id, wing=wing, room=room)
    return ToolOutput(text, {"outcome": outcome, "id": drawer_id, "wing": wing, "room": room})


def _landed(outcome: str, drawer_id: str, *, wing: str, room: str) -> str:
    if outcome == "quarantined":
        return (
            f"quarantined: {drawer_id} was diverted by the admission screen into '{QUARANTINE_WING}' for operator "
            f"review (intended {wing}/{room}); it is not filed there and will not be returned by search"
        )
    return f"{outcome}: {drawer_id} in {wing}/{room}"


def _saved(session: ToolSession, args: Arguments, *, wing: str | None, room: str | None) -> ToolOutput:
    """One save through the shared operation: one drawer per call (an agent saves one memory)."""
    content = args.required_text("content")
    request = SaveRequest(
        content=content,
        added_by=session.surface,
        split=False,
        wing=wing,
        room=room,
        kind=args.choice("kind"),
        vector=args.vector("vector"),
        supersedes=None if args.text("supersedes") is None else args.required_text("supersedes"),
        source_file=args.text("source_file"),
        content_date=args.text("content_date"),
        agent=args.text("agent"),
        channel=args.text("channel"),
        session=args.text("session"),
    )
    try:
        [landed] = save(session.store, request, now=session.now())
    except NothingToRemember:
        raise InvalidArgument(
            f"{args.tool}: argument 'content' is empty after normalisation (whitespace and invisible characters only)"
        ) from None
    except SaveRefused as refused:
        raise InvalidArgument(f"{args.tool}: {refused}") from None
    return _landed_output(landed.outcome, landed.id, wing=landed.wing, room=landed.room)


def _save(session: ToolSession, args: Arguments) -> ToolOutput:
    args.required_text("content")  # checked before the place (as it always was)
    # An empty wing or room is an agent's "not named" (hosts fill optional fields so): the default place.
    return _saved(session, args, wing=args.text("wing") or None, room=args.text("room") or None)


def _add_drawer(session: ToolSession, args: Arguments) -> ToolOutput:
    args.required_text("content")
    return _saved(session, args, wing=args.required_text("wing"), room=args.required_text("room"))


def _update_drawer(session: ToolSession, args: Arguments) -> ToolOutput:
    try:
        done = update_drawer(
            session.store,
            args.required_text("drawer_id"),
            content=args.text("content"),
            now=session.now(),
            wing=args.text("wing"),
            room=args.text("room"),
        )
    except UpdateRefused as refused:
        raise InvalidArgument(f"{args.tool}: {refused}") from None
    if done.outcome == "unchanged":
        data = {"outcome": "unchanged", "id": done.id, "wing": done.wing, "room": done.room}
        return ToolOutput(f"unchanged: {done.id} (no new content given)", data)
    return _landed_output(done.outcome, done.id, wing=done.wing, room=done.room)


def _delete_drawer(session: ToolSession, args: Arguments) -> ToolOutput:
    drawer_id = args.required_text("drawer_id")
    delete_drawer(session.store, drawer_id)
    return ToolOutput(f"deleted: {drawer_id} (a keyed tombstone and an audit record remain)", {"deleted": drawer_id})


def _delete_by_source(session: ToolSession, args: Arguments) -> ToolOutput:
    source = args.required_text("source_file")
    data = delete_by_source(session.store, source, dry_run=args.flag("dry_run"))
    matched = data["matched"]
    if data["dry_run"]:
        text = f"would delete {len(matched)} drawer(s) mined from {source} (dry run: pass dry_run=false to delete)"
        return ToolOutput(text + "".join(f"\n  {i}" for i in matched), data)
    return ToolOutput(f"deleted {len(matched)} drawer(s) mined from {source}", data)


def _get_drawer(session: ToolSession, args: Arguments) -> ToolOutput:
    drawer = session.store.get(args.required_text("drawer_id"))
    return ToolOutput(drawer_block(drawer, full=True), {"drawer": drawer_record(drawer)})


def _list_drawers(session: ToolSession, args: Arguments) -> ToolOutput:
    limit = args.integer("limit") or 20
    offset = args.integer("offset") or 0
    drawers = session.store.list_drawers(wing=args.text("wing"), room=args.text("room"), limit=offset + limit)
    page = drawers[offset:]
    data = {
        "drawers": [drawer_record(d, full=False, preview_chars=_PREVIEW_CHARS) for d in page],
        "offset": offset,
        "next_offset": offset + len(page),
    }
    if not page:
        return ToolOutput(f"no drawers (offset {offset})", data)
    blocks = []
    for drawer in page:
        clipped = len(drawer.content) > _PREVIEW_CHARS
        attributes = {
            "id": drawer.id,
            "wing": drawer.wing,
            "room": drawer.room,
            "content_date": drawer.content_date,
            "filed": drawer.filed_at,
            "preview": "true" if clipped else None,
        }
        blocks.append(memory_block(attributes, drawer.content[:_PREVIEW_CHARS]))
    footer = f"({len(page)} drawer(s), newest first; next offset {offset + len(page)}; get_drawer for full text)"
    return ToolOutput("\n".join([*blocks, footer]), data)


_DRAWER_ID = {"drawer_id": string("drawer id")}

DRAWER_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_save",
        "Save one memory verbatim (sealed and integrity-tagged at rest): the everyday way to remember. Every call "
        "creates a new drawer; wing and room are optional. (undercroft_add_drawer does the same with wing and "
        "room required and a source file, for filing from a known place.)",
        {
            "content": string("the exact words to keep"),
            "wing": string("person/project partition", default=DEFAULT_WING),
            "room": string("topic", default=DEFAULT_ROOM),
            "kind": _KIND,
            "content_date": _CONTENT_DATE,
            "supersedes": _SUPERSEDES,
            "vector": _VECTOR,
            **_CLAIMS,
        },
        _save,
        required=("content",),
        output=WRITE_PROPERTIES,
    ),
    ToolSpec(
        "undercroft_add_drawer",
        "File one drawer verbatim into an explicit wing and room, optionally naming its source file: "
        "undercroft_save with the place required. Use undercroft_save for an ordinary memory.",
        {
            "wing": string("wing"),
            "room": string("room"),
            "content": string("the exact words to keep"),
            "source_file": string("where the words came from"),
            "kind": _KIND,
            "content_date": _CONTENT_DATE,
            "supersedes": _SUPERSEDES,
            "vector": _VECTOR,
            **_CLAIMS,
        },
        _add_drawer,
        required=("wing", "room", "content"),
        output=WRITE_PROPERTIES,
    ),
    ToolSpec(
        "undercroft_update_drawer",
        "Replace a drawer's content in place (re-sealed, re-tagged, audited). It cannot move a drawer: wing and "
        "room are optional checks that must equal the drawer's own (save a new drawer to file it elsewhere).",
        {
            **_DRAWER_ID,
            "content": string("new content"),
            "wing": string("optional check: must equal the drawer's wing"),
            "room": string("optional check: must equal the drawer's room"),
        },
        _update_drawer,
        required=("drawer_id",),
        output=WRITE_PROPERTIES,
    ),
    ToolSpec(
        "undercroft_delete_drawer",
        "Delete one drawer (leaves a keyed tombstone and an audit record).",
        dict(_DRAWER_ID),
        _delete_drawer,
        required=("drawer_id",),
        output={"deleted": string("the deleted drawer's id")},
    ),
    ToolSpec(
        "undercroft_delete_by_source",
        "Delete every drawer mined from one source file. Dry run by default: it lists what it would delete; "
        "pass dry_run=false to delete.",
        {
            "source_file": string("source path as recorded on the drawers"),
            "dry_run": boolean("only list the drawers that would be deleted", default=True),
        },
        _delete_by_source,
        required=("source_file",),
        output={
            "source_file": string("the source asked for"),
            "dry_run": boolean("true when nothing was deleted"),
            "matched": {"type": "array", "items": {"type": "string"}, "description": "ids of its drawers"},
            "deleted": {"type": "integer", "minimum": 0},
        },
    ),
    ToolSpec(
        "undercroft_get_drawer",
        "Fetch one drawer verbatim by id, with its provenance (added_by, source_file, writer claims).",
        dict(_DRAWER_ID),
        _get_drawer,
        required=("drawer_id",),
        output={"drawer": DRAWER_SCHEMA},
    ),
    ToolSpec(
        "undercroft_list_drawers",
        "Page through drawers newest first (previews; get_drawer for the full text).",
        {
            "wing": string("scope to wing"),
            "room": string("scope to room"),
            "limit": integer("page size", minimum=1, maximum=100, default=20),
            "offset": integer("page start", minimum=0, maximum=100_000, default=0),
        },
        _list_drawers,
        output={
            "drawers": {"type": "array", "items": DRAWER_SCHEMA},
            "offset": {"type": "integer"},
            "next_offset": {"type": "integer"},
        },
    ),
)

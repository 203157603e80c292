"""Saving: what ``undercroft remember``, the MCP tools ``undercroft_save`` / ``undercroft_add_drawer`` and
``POST /v1/vaults/{id}/drawers`` (bound to ``undercroft_save``) do, said once.

A save normalises the words, refuses them when nothing visible is left (the store's ``NothingToRemember``), and
files them as new append-recipe drawers through the store's write choke point under the admission screen: a
save the screen diverts lands in the review queue and is reported ``quarantined`` with where it was headed,
never as filed. The quarantine wing is refused in every spelling by that choke point, for every surface.

A save naming ``supersedes`` is a supersession, never a plain write: it goes through the store's
`supersede_drawer`, which files the new drawer beside the one it replaces (that drawer's wing, room and kind)
and records the keyed receipt link over the replaced words in the SAME transaction, so no save leaves a
supersede gap for verify to report. What that door cannot carry (another wing, room or kind, a source file, a
content date, writer claims, a vector) is refused by name rather than dropped.

What the surfaces still differ in is a field of `SaveRequest`, never a code path of their own: ``split`` (a
person pipes whole files into ``remember``; an agent saves one memory) and ``added_by`` (each surface's stamp).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from undercroft_core.chunking import chunk
from undercroft_core.drawer import Drawer
from undercroft_core.ids import ID_RECIPE_APPEND
from undercroft_core.normalisation import is_blank, normalise
from undercroft_store import DrawerWrite, Screen
from undercroft_store.errors import DrawerNotFound, InvalidDrawer, NothingToRemember
from undercroft_store.governance.read_audit import InternalRead, silent
from undercroft_store.memory.supersession import Supersession, supersede_drawer
from undercroft_store.store import VaultStore

from undercroft_cli.errors import Error

__all__ = [
    "DEFAULT_ROOM",
    "DEFAULT_WING",
    "SaveRefused",
    "SaveRequest",
    "SavedDrawer",
    "SupersessionUnaccounted",
    "save",
]

DEFAULT_WING = "general"
"""Where a save that names no wing files (every surface's default)."""
DEFAULT_ROOM = "notes"
"""Where a save that names no room files (every surface's default)."""

# Drawer fields `supersede_drawer` does not take: naming one beside ``supersedes`` is refused, never dropped.
_NOT_CARRIED = ("source_file", "content_date", "agent", "channel", "session", "vector")


class SaveRefused(ValueError):
    """A save the operation refuses as asked (a supersession it cannot carry); the message is the reason, naming
    the request's fields as the MCP arguments are named. Nothing is written. Each adapter maps it to its refusal:
    MCP ``InvalidArgument`` (and through it /v1's 400)."""


class SupersessionUnaccounted(Error):
    """A superseding drawer neither landed under its id nor waits in the admission queue (never expected)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SaveRequest:
    """One save, as every surface asks for it.

    ``split`` is the one difference of substance, stated by each surface rather than chosen by its own code:
    ``True`` splits long text into chunk-sized drawers (``undercroft remember``: a person pipes whole files in);
    ``False`` files one drawer per call, as MemPalace's ``add_drawer`` does (the MCP tools and /v1: an agent saves
    one memory), so text beyond the drawer bound is refused by the choke point rather than cut.

    ``added_by`` is the surface's stamp, never a writer's claim (``cli``; the MCP/HTTP session's surface).
    ``wing`` / ``room`` / ``kind`` ``None`` means not named: the default place (`DEFAULT_WING`, `DEFAULT_ROOM`)
    for a new drawer, the replaced drawer's own for a supersession. ``vector`` is the caller's embedding of the
    text (an ``external:`` vault takes no other): it describes one drawer. ``agent`` / ``channel`` / ``session``
    are recorded as claims. ``supersedes`` names the drawer this one replaces (one drawer: it never splits).
    """

    content: str
    added_by: str
    split: bool
    wing: str | None = None
    room: str | None = None
    kind: str | None = None
    vector: Sequence[float] | None = None
    supersedes: str | None = None
    source_file: str | None = None
    content_date: str | None = None
    agent: str | None = None
    channel: str | None = None
    session: str | None = None


@dataclass(frozen=True, slots=True)
class SavedDrawer:
    """Where one drawer of a save went: ``outcome`` is the store's (``created``, ``quarantined``, …); ``id`` the
    drawer's, or its admission-queue slot when quarantined; ``wing`` / ``room`` where it was filed or headed."""

    outcome: str
    id: str
    wing: str
    room: str


def save(store: VaultStore, request: SaveRequest, *, now: str) -> tuple[SavedDrawer, ...]:
    """File ``request`` (``now`` stamps new drawers as filed); one `SavedDrawer` per drawer, in order.

    Blank text raises the store's ``NothingToRemember``; a vector beside text that splits into more than one
    drawer its ``InvalidDrawer``; a supersession it cannot carry `SaveRefused`. Nothing is written then. The
    store's other refusals (a bad name, the reserved wing, the content bound) pass through.
    """
    text = normalise(request.content)
    if is_blank(text):  # zero-width characters are no more a memory than spaces are
        raise NothingToRemember("nothing to remember: the text is empty or whitespace (invisible characters count)")
    if request.supersedes is not None:
        return (_supersede(store, request, text, request.supersedes),)
    wing = DEFAULT_WING if request.wing is None else request.wing
    room = DEFAULT_ROOM if request.room is None else request.room
    pieces = [piece.text for piece in chunk(text)] if request.split else [text]
    if request.vector is not None and len(pieces) != 1:
        raise InvalidDrawer(
            f"a supplied vector describes one drawer, but the text chunks into {len(pieces)} pieces: "
            "save each piece with its own vector"
        )
    first = store.allocate_append_indices(len(pieces))
    drawers = [
        Drawer(
            id=store.drawer_ids.append(wing, room, first + offset),
            content=piece,
            wing=wing,
            room=room,
            chunk_index=first + offset,
            id_recipe=ID_RECIPE_APPEND,
            added_by=request.added_by,
            filed_at=now,
            source_file=request.source_file,
            content_date=request.content_date,
            kind=request.kind,
            agent=request.agent,
            channel=request.channel,
            session=request.session,
        )
        for offset, piece in enumerate(pieces)
    ]
    results = store.write([DrawerWrite(drawer, request.vector) for drawer in drawers], screening=Screen())
    return tuple(SavedDrawer(result.outcome, result.id, wing, room) for result in results)


def _supersede(store: VaultStore, request: SaveRequest, text: str, old_id: str) -> SavedDrawer:
    """File ``text`` as the drawer that supersedes ``old_id``, through the store's one supersession door."""
    try:
        with silent(store, InternalRead.WRITE_DECISION):  # only the outcome line goes back, no words
            old = store.get(old_id)
    except (DrawerNotFound, InvalidDrawer) as missing:
        raise SaveRefused(f"argument 'supersedes' names no live drawer: {missing}") from None
    for key, asked, held in (  # where supersede_drawer files
        ("wing", request.wing, old.wing),
        ("room", request.room, old.room),
        ("kind", request.kind, old.kind),
    ):
        if asked is not None and asked != held:
            raise SaveRefused(
                f"a superseding drawer is filed beside the one it replaces ({old.id} in "
                f"{old.wing}/{old.room}, kind {old.kind}); argument '{key}' asks for "
                f"{asked!r} (save without 'supersedes' to file it elsewhere, unlinked)"
            )
    carried = [key for key in _NOT_CARRIED if getattr(request, key) is not None]
    if carried:
        raise SaveRefused(
            f"argument(s) {', '.join(carried)} cannot accompany 'supersedes': a supersession records "
            "the new words with the replaced drawer's wing, room and kind only"
        )
    if request.split:
        raise SaveRefused("a supersession replaces one drawer with one: it cannot split the text")
    link = supersede_drawer(store, old.id, text, added_by=request.added_by)
    return _supersession_landed(store, link, wing=old.wing, room=old.room)


def _supersession_landed(store: VaultStore, link: Supersession, *, wing: str, room: str) -> SavedDrawer:
    """Where a supersession went: filed under its id, or diverted into a queue slot (named)."""
    # On first use: the rulings load the admission screen and the signing stack, which a plain save never needs.
    from undercroft_store.governance.rulings import list_admissions

    with silent(store, InternalRead.WRITE_DECISION):  # an id and a slot go back, no words
        if store.hydrate([link.drawer_id]):
            return SavedDrawer("created", link.drawer_id, wing, room)
        # The screen diverted it: the link still names the id it aims at, the words wait in a queue slot.
        queued = [item.entry.drawer_id for item in list_admissions(store) if item.entry.intended_id == link.drawer_id]
    if not queued:
        raise SupersessionUnaccounted(
            f"the superseding drawer {link.drawer_id} neither landed nor waits in the admission queue"
        )
    return SavedDrawer("quarantined", queued[0], wing, room)

"""Turning a tree of files into drawer plans: what ``mine`` and ``sweep`` would write, computed without a store.

A plan names the drawer completely — wing, room, source, chunk index, verbatim content, content date — and
its id comes from core's ``source`` recipe, so planning the same tree twice gives the same ids and re-mining
updates in place. Documents are ``normalise``-d and cut by core's chunker (every chunk an exact substring of
the normalised text); conversations are rendered with core's ``SPEAKER said, "…"`` turns and chunked the same
way; a sweep plans one drawer per message. Files that cannot be planned are skipped with a reason, never
dropped silently.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from undercroft_core import CHUNK_CHARS, DrawerIds, chunk, normalise, render_turn, source_drawer_id, validate_name
from undercroft_core import render_transcript as render_turns

from undercroft_cli.mining.detection import decode_text, parse_text, parse_transcript
from undercroft_cli.mining.discovery import DEFAULT_MAX_FILE_BYTES, Discovery, MineMode, Skip, SkipReason, discover
from undercroft_cli.mining.errors import AmbiguousFormat, MalformedTranscript, MiningError, UnrecognisedFormat
from undercroft_cli.mining.messages import Message, Transcript
from undercroft_cli.mining.rooms import DOCUMENT_ROOM, SWEEP_ROOM, conversation_room, default_wing

__all__ = [
    "ORIGIN_CONVERSATION",
    "ORIGIN_DOCUMENT",
    "ORIGIN_MESSAGE",
    "DrawerPlan",
    "MinePlan",
    "plan_mine",
    "plan_sweep",
    "render_transcript",
]

#: A chunk of a document.
ORIGIN_DOCUMENT = "document"
#: A chunk of a rendered conversation (``mine --mode convos``).
ORIGIN_CONVERSATION = "conversation"
#: One transcript message (``sweep``).
ORIGIN_MESSAGE = "message"

_MAX_SESSION_CHARS = 256
_FILENAME_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


@dataclass(frozen=True, slots=True)
class DrawerPlan:
    """One drawer to write. ``kind`` is the drawer label (mining never guesses one, so it is None).

    ``origin`` says what the content is (document chunk, conversation chunk, message); ``format`` names
    the transcript format, or ``document``; ``session`` is the conversation or session id when known.
    """

    wing: str
    room: str
    source_file: str
    chunk_index: int
    content: str
    content_date: str | None
    origin: str
    format: str
    session: str | None = None
    kind: str | None = None

    @property
    def id(self) -> str:
        """The drawer id under the PUBLIC recipe (``sha256-v1``): what an older vault files it as. Filing
        into a store uses `id_in` with the store's recipe."""
        return source_drawer_id(self.wing, self.room, self.source_file, self.chunk_index)

    def id_in(self, ids: DrawerIds) -> str:
        """The drawer id under a vault's id recipe (``store.drawer_ids``): core's ``source`` recipe over
        (wing, room, source_file, chunk_index), keyed when the vault keys its ids."""
        return ids.source(self.wing, self.room, self.source_file, self.chunk_index)


@dataclass(frozen=True, slots=True)
class MinePlan:
    """Everything a mine or sweep would write, the files it read, and every file it skipped and why."""

    root: Path
    wing: str
    drawers: tuple[DrawerPlan, ...]
    files: tuple[str, ...]
    skipped: tuple[Skip, ...]


def _filename_date(name: str) -> str | None:
    for match in _FILENAME_DATE.finditer(name):
        try:
            return date(int(match[1]), int(match[2]), int(match[3])).isoformat()
        except ValueError:
            continue
    return None


def _session(messages: Sequence[Message]) -> str | None:
    name = messages[0].conversation if messages else None
    return name if name is not None and 0 < len(name) <= _MAX_SESSION_CHARS and name.isprintable() else None


def _latest(messages: Sequence[Message]) -> str | None:
    stamps = [message.timestamp for message in messages if message.timestamp is not None]
    return max(stamps) if stamps else None


def _resolve(root: Path, wing: str | None, room: str | None, *, transcripts: bool) -> tuple[str, str | None]:
    chosen = validate_name(wing, what="wing") if wing is not None else default_wing(root, transcripts=transcripts)
    return chosen, (validate_name(room, what="room") if room is not None else None)


def _read(found_path: Path, relative: str) -> str | Skip:
    try:
        data = found_path.read_bytes()
    except OSError as error:
        return Skip(relative, SkipReason.UNREADABLE, error.strerror or str(error))
    try:
        return decode_text(data, relative)
    except MalformedTranscript as error:
        return Skip(relative, SkipReason.NOT_TEXT, f"{error.position}: {error.reason}")


def _parse(text: str, relative: str) -> Transcript | Skip:
    try:
        return parse_text(text, relative)
    except UnrecognisedFormat:
        return Skip(relative, SkipReason.NOT_TRANSCRIPT, "content matches no supported transcript format")
    except AmbiguousFormat as error:
        return Skip(relative, SkipReason.AMBIGUOUS, f"matches {', '.join(error.candidates)}")
    except MiningError as error:
        return Skip(relative, SkipReason.MALFORMED, str(error))


def _document_plans(text: str, source: str, name: str, wing: str, room: str, target: int) -> list[DrawerPlan]:
    when = _filename_date(name)
    return [
        DrawerPlan(wing, room, source, piece.index, piece.text, when, ORIGIN_DOCUMENT, ORIGIN_DOCUMENT)
        for piece in chunk(normalise(text), target=target)
    ]


def _conversation_plans(
    transcript: Transcript, source: str, wing: str, room: str | None, target: int
) -> list[DrawerPlan]:
    plans: list[DrawerPlan] = []
    for _, messages in transcript.conversations():
        turns = [render_turn(message.speaker, message.text) for message in messages]
        rendered = render_turns((message.speaker, message.text) for message in messages)
        # Each message's [start, end) in the rendered text, to date every chunk by the messages it holds.
        starts: list[int] = []
        ends: list[int] = []
        offset = 0
        for turn in turns:
            starts.append(offset)
            ends.append(offset + len(turn))
            offset += len(turn) + 2
        chosen_room = room if room is not None else conversation_room(rendered)
        for piece in chunk(rendered, target=target):
            held = messages[bisect.bisect_right(ends, piece.start) : bisect.bisect_left(starts, piece.end)]
            plans.append(
                DrawerPlan(
                    wing,
                    chosen_room,
                    source,
                    len(plans),
                    piece.text,
                    _latest(held),
                    ORIGIN_CONVERSATION,
                    str(transcript.format),
                    _session(messages),
                )
            )
    return plans


def plan_mine(
    directory: str | Path,
    *,
    mode: MineMode = "files",
    wing: str | None = None,
    room: str | None = None,
    excludes: tuple[str, ...] = (),
    respect_gitignore: bool = True,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    chunk_chars: int = CHUNK_CHARS,
) -> MinePlan:
    """Plan ``mine <directory> --mode files|convos [--wing]``: drawers with ids, files read, skips and reasons.

    ``source_file`` is the file's absolute path; mining the same tree again gives the same plans and ids.
    Raises :class:`InvalidInput` for a bad ``wing``/``room`` or a directory name that yields no valid wing.
    """
    if mode not in ("files", "convos"):
        raise MiningError(str(directory), f"unknown mine mode {mode!r}: expected 'files' or 'convos'")
    found: Discovery = discover(
        directory, mode=mode, excludes=excludes, respect_gitignore=respect_gitignore, max_bytes=max_bytes
    )
    chosen_wing, chosen_room = _resolve(found.root, wing, room, transcripts=mode == "convos")
    drawers: list[DrawerPlan] = []
    files: list[str] = []
    skipped = list(found.skipped)
    for item in found.files:
        text = _read(item.path, item.relative)
        if isinstance(text, Skip):
            skipped.append(text)
            continue
        source = item.path.as_posix()
        if mode == "files":
            plans = _document_plans(
                text, source, item.path.name, chosen_wing, chosen_room or DOCUMENT_ROOM, chunk_chars
            )
        else:
            transcript = _parse(text, item.relative)
            if isinstance(transcript, Skip):
                skipped.append(transcript)
                continue
            plans = _conversation_plans(transcript, source, chosen_wing, chosen_room, chunk_chars)
        if not plans:
            skipped.append(Skip(item.relative, SkipReason.EMPTY, "no words to file"))
            continue
        files.append(item.relative)
        drawers.extend(plans)
    return MinePlan(found.root, chosen_wing, tuple(drawers), tuple(files), tuple(skipped))


def plan_sweep(
    directory: str | Path,
    *,
    wing: str | None = None,
    room: str | None = None,
    excludes: tuple[str, ...] = (),
    respect_gitignore: bool = True,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> MinePlan:
    """Plan ``sweep <directory>``: one drawer per transcript message, never chunked.

    Each drawer's content is the message rendered ``SPEAKER said, "…"`` — exactly the bytes the store
    fingerprints to skip a message already filed; ``chunk_index`` is the message's index in its file.
    """
    found = discover(
        directory, mode="convos", excludes=excludes, respect_gitignore=respect_gitignore, max_bytes=max_bytes
    )
    chosen_wing, chosen_room = _resolve(found.root, wing, room, transcripts=True)
    drawers: list[DrawerPlan] = []
    files: list[str] = []
    skipped = list(found.skipped)
    for item in found.files:
        text = _read(item.path, item.relative)
        transcript = text if isinstance(text, Skip) else _parse(text, item.relative)
        if isinstance(transcript, Skip):
            skipped.append(transcript)
            continue
        if not transcript.messages:
            skipped.append(Skip(item.relative, SkipReason.EMPTY, "no messages"))
            continue
        files.append(item.relative)
        source = item.path.as_posix()
        for message in transcript.messages:
            drawers.append(
                DrawerPlan(
                    chosen_wing,
                    chosen_room or SWEEP_ROOM,
                    source,
                    message.index,
                    render_turn(message.speaker, message.text),
                    message.timestamp,
                    ORIGIN_MESSAGE,
                    str(transcript.format),
                    _session([message]),
                )
            )
    return MinePlan(found.root, chosen_wing, tuple(drawers), tuple(files), tuple(skipped))


def render_transcript(path: str | Path) -> str:
    """``transcript render <file>``: every message as ``SPEAKER said, "…"``, one paragraph each.

    Raises :class:`MalformedTranscript`, :class:`UnrecognisedFormat` or :class:`AmbiguousFormat`.
    """
    transcript = parse_transcript(path)
    return render_turns((message.speaker, message.text) for message in transcript.messages)

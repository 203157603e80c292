"""``undercroft mine``, ``sweep``, ``transcript render`` and ``drawer delete-by-source``.

The plans come from `undercroft_cli.mining` (pure: no vault); these commands write them through the store's
choke point with ``Screen()`` in batches of hundreds per transaction. Ids are deterministic (core's
``source`` recipe), so re-mining updates in place and re-sweeping files nothing new.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli._internal.progress import progress
from undercroft_cli.errors import Error
from undercroft_cli.operations.drawers import delete_by_source

if TYPE_CHECKING:  # the parsers load only when a command runs: start-up time is every call's cost
    from undercroft_cli._internal.filing import FilingReport
    from undercroft_cli.mining import MinePlan

__all__ = [
    "ADDED_BY",
    "SourceNotFound",
    "delete_by_source_command",
    "mine_command",
    "run_sweep",
    "sweep_command",
    "transcript_group",
]

#: The surface stamped on every drawer these commands write.
ADDED_BY = "cli"

_VAULT = click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to write into.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
_EXCLUDE = click.option(
    "--exclude",
    "excludes",
    multiple=True,
    metavar="PATTERN",
    help="A gitignore-style pattern to leave out (repeatable).",
)


class SourceNotFound(Error):
    """``delete-by-source`` named a source file no drawer was mined from."""


def _directory(path: str) -> Path:
    """The directory to walk; a missing one or a file is a run failure naming the path (exit 1)."""
    target = Path(path).expanduser()
    if not target.exists():
        raise click.BadParameter(f"{path}: no such directory", param_hint="DIR")
    if not target.is_dir():
        raise click.BadParameter(f"{path}: not a directory", param_hint="DIR")
    return target


def _execute(plan: MinePlan, vault: str, *, label: str) -> FilingReport:
    from undercroft_cli._internal.filing import file_plans

    with open_store(vault) as store, progress(len(plan.drawers), label) as bar:
        return file_plans(store, plan.drawers, added_by=ADDED_BY, bar=bar)


def _warm_search(vault: str) -> None:
    """Seal the vault's search state after a mine, so the next ``undercroft search`` starts from it.

    A CLI search opens its vault read-only, and a read-only handle can restore the sealed search snapshot
    but never store one: without this, every cold search re-opened and re-indexed every drawer (~0.5 s at
    2,000 drawers, issue 18 §4). A mine is the bulk write after which that pays off; a current snapshot is
    restored, not rebuilt (cheap), and vaults under the store's snapshot floor store none. Every tier reads
    it: the full scan and hnsw take the matrix and the postings, pq and fde the postings only. So the warm
    always runs the full scan (a full fill is what a snapshot is sealed from), whatever ``UNDERCROFT_RETRIEVAL``
    says; it holds the matrix in this process only for the warm.
    """
    from undercroft_store.search import Searcher

    full_scan = {name: value for name, value in os.environ.items() if name != "UNDERCROFT_RETRIEVAL"}
    # Run after the report is printed: the fill verifies every drawer, and a tampered one elsewhere in the vault
    # is then an integrity verdict (exit 2) after what was filed has been said, never instead of it.
    with open_store(vault) as store:
        Searcher.from_settings(store, store.embedder, env=full_scan).warm()


def _by_room(plan: MinePlan) -> dict[tuple[str, str], int]:
    """How many drawers the plan files into each wing/room, in first-seen order."""
    counts: dict[tuple[str, str], int] = {}
    for drawer in plan.drawers:
        counts[(drawer.wing, drawer.room)] = counts.get((drawer.wing, drawer.room), 0) + 1
    return counts


def _report(verb: str, plan: MinePlan, filed: FilingReport | None, as_json: bool, verbose_dirs: bool) -> None:
    from undercroft_cli.mining import SkipReason

    skips = [s for s in plan.skipped if verbose_dirs or s.reason is not SkipReason.SKIPPED_DIRECTORY]
    skipped = len(plan.skipped) + (len(filed.refused) if filed else 0)
    if as_json:
        body: dict[str, object] = {
            "command": verb,
            "root": plan.root.as_posix(),
            "wing": plan.wing,
            "files": len(plan.files),
            "drawers": len(plan.drawers),
            "skipped": [{"path": s.path, "reason": str(s.reason), "detail": s.detail} for s in plan.skipped],
        }
        if filed is not None:
            body.update(filed.to_dict())
        else:  # a dry run says what it would write, where
            body["dry_run"] = True
            body["would_file"] = [{"wing": w, "room": r, "drawers": n} for (w, r), n in _by_room(plan).items()]
        click.echo(json.dumps(body, ensure_ascii=False))
        return
    for skip in skips:
        detail = f" ({skip.detail})" if skip.detail else ""
        click.echo(message("mine.skip", path=skip.path, reason=skip.reason, detail=detail))
    if filed is None:
        click.echo(message("mine.dry_run"))
        rooms = ", ".join(f"{w}/{r} ({n})" for (w, r), n in _by_room(plan).items()) or "nothing"
        click.echo(
            message("mine.would_file", verb=verb, files=len(plan.files), drawers=len(plan.drawers), rooms=rooms,
                    skipped=skipped)
        )  # fmt: skip
        return
    for drawer_id, reason in filed.refused:
        click.echo(message("mine.skip", path=drawer_id, reason="refused", detail=f" ({reason})"))
    for aimed, landed in filed.diverted:
        click.echo(message("mine.quarantined", aimed=aimed, landed=landed))
    click.echo(
        message(
            "mine.summary",
            verb=verb,
            files=len(plan.files),
            drawers=len(plan.drawers),
            created=filed.created,
            updated=filed.updated,
            unchanged=filed.unchanged,
            quarantined=filed.quarantined,
            skipped=skipped,
        )
    )


@click.command("mine")
@click.argument("directory", metavar="DIR")
@click.option(
    "--mode",
    type=click.Choice(["files", "convos"]),
    default="files",
    show_default=True,
    help="files: documents (text, markdown, code); convos: agent and chat transcripts.",
)
@_VAULT
@click.option("--wing", default=None, help="Wing to file into (default: derived from DIR's name).")
@click.option("--room", default=None, help="Room to file into (default: general; a topic per conversation).")
@_EXCLUDE
@click.option("--no-gitignore", is_flag=True, help="Do not honour .gitignore files.")
@click.option("--dry-run", is_flag=True, help="Plan and report; write nothing.")
@click.option("--show-skipped-dirs", is_flag=True, help="Also list directories never entered (.git, node_modules …).")
@_JSON
def mine_command(
    directory: str,
    mode: Literal["files", "convos"],
    vault: str,
    wing: str | None,
    room: str | None,
    excludes: tuple[str, ...],
    no_gitignore: bool,
    dry_run: bool,
    show_skipped_dirs: bool,
    as_json: bool,
) -> int:
    """Mine documents (--mode files) or transcripts (--mode convos) under DIR into verbatim drawers.

    Idempotent: ids come from (wing, room, file, chunk), so re-mining updates changed chunks in place and
    leaves unchanged ones alone. A shorter file leaves its old trailing chunks: remove them with
    `undercroft drawer delete-by-source FILE` before re-mining.
    """
    from undercroft_cli.mining import plan_mine

    plan = plan_mine(
        _directory(directory), mode=mode, wing=wing, room=room, excludes=excludes, respect_gitignore=not no_gitignore
    )
    filed = None if dry_run else _execute(plan, vault, label="mining")
    _report("mine", plan, filed, as_json, show_skipped_dirs)
    if filed is not None:
        _warm_search(vault)
    return EXIT_OK


def run_sweep(
    directory: Path, vault: str, *, wing: str | None, room: str | None, excludes: tuple[str, ...] = ()
) -> tuple[MinePlan, FilingReport]:
    """Plan and file one sweep of ``directory`` (shared by ``sweep`` and ``daemon run``)."""
    from undercroft_cli.mining import plan_sweep

    plan = plan_sweep(directory, wing=wing, room=room, excludes=excludes)
    return plan, _execute(plan, vault, label="sweeping")


@click.command("sweep")
@click.argument("directory", metavar="DIR")
@_VAULT
@click.option("--wing", default=None, help="Wing to file into (default: wing_api under .claude/.codex/.gemini).")
@click.option("--room", default=None, help="Room to file into (default: conversations).")
@_EXCLUDE
@click.option("--show-skipped-dirs", is_flag=True, help="Also list directories never entered.")
@_JSON
def sweep_command(
    directory: str,
    vault: str,
    wing: str | None,
    room: str | None,
    excludes: tuple[str, ...],
    show_skipped_dirs: bool,
    as_json: bool,
) -> int:
    """File every transcript message under DIR as one verbatim drawer; messages already filed are unchanged.

    Each message keeps its id while its session grows, so a re-sweep writes only the new messages.
    """
    plan, filed = run_sweep(_directory(directory), vault, wing=wing, room=room, excludes=excludes)
    _report("sweep", plan, filed, as_json, show_skipped_dirs)
    return EXIT_OK


@click.group("transcript")
def transcript_group() -> None:
    """Read agent and chat transcripts without filing them."""


@transcript_group.command("render")
@click.argument("path", metavar="FILE")
@click.option("--json", "as_json", is_flag=True, help="Print {path, format, messages: [{speaker, text}]}.")
def transcript_render(path: str, as_json: bool) -> int:
    """Print FILE (any supported transcript format) as `SPEAKER said, "…"` paragraphs, words verbatim."""
    from undercroft_cli.mining import parse_transcript, render_transcript

    target = Path(path).expanduser()
    if not target.is_file():
        raise click.BadParameter(f"{path}: no such file", param_hint="FILE")
    if as_json:
        transcript = parse_transcript(target)
        messages = [{"speaker": m.speaker, "text": m.text} for m in transcript.messages]
        click.echo(
            json.dumps(
                {"path": str(target), "format": str(transcript.format), "messages": messages}, ensure_ascii=False
            )
        )
        return EXIT_OK
    click.echo(render_transcript(target))
    return EXIT_OK


@click.command("delete-by-source")
@click.argument("source", metavar="FILE")
@_VAULT
@click.option("--wing", default=None, help="Only drawers in this wing.")
@click.option("--dry-run", is_flag=True, help="List the drawers it would delete; delete nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print {source_file, dry_run, matched, deleted}.")
def delete_by_source_command(source: str, vault: str, wing: str | None, dry_run: bool, as_json: bool) -> int:
    """Delete every drawer mined from FILE (each leaves a keyed tombstone and an audit record).

    FILE is matched as mining records it: the absolute, resolved path. Quarantined drawers are never
    touched (admission allow/deny are their only doors).
    """
    if wing == QUARANTINE_WING:
        raise click.BadParameter(
            f"{QUARANTINE_WING!r} residents are ruled on with admission allow|deny, never deleted", param_hint="--wing"
        )
    resolved = Path(source).expanduser().resolve().as_posix()
    with open_store(vault, read_only=dry_run) as store:
        body = delete_by_source(store, resolved, wing=wing, dry_run=dry_run)  # nothing matched: nothing deleted
    ids = body["matched"]
    if not ids:
        raise SourceNotFound(f"no drawer in vault {vault!r} was mined from {resolved}")
    if as_json:
        click.echo(json.dumps(body))
    elif dry_run:
        click.echo(message("delete_by_source.would", count=len(ids), source=resolved))
        for drawer_id in ids:
            click.echo(f"  {drawer_id}")
    else:
        click.echo(message("delete_by_source.summary", count=len(ids), source=resolved))
    return EXIT_OK

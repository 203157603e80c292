"""``undercroft index push <backend>`` and ``undercroft index status <backend>``: a vault's remote mirror.

A push is an egress (chain-audited as ``egress/index-push``, a partly failed one included); status is a
read that creates nothing. What each backend receives is in docs/remote-index.md.
"""

from __future__ import annotations

import json

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.errors import MirrorUnavailable
from undercroft_store.governance.index_push import DEFAULT_BATCH, MAX_BATCH, push_mirror

from undercroft_cli._internal.composition import INDEX_BACKENDS, open_mirror, open_reader, open_store
from undercroft_cli._internal.progress import progress
from undercroft_cli.operations import index_status_record

__all__ = ["index_group"]

#: The surface named in the egress record of a CLI push.
SURFACE = "cli"


@click.group("index")
def index_group() -> None:
    """Remote vector indexes (untrusted accelerators): push a vault's mirror, compare it with the vault."""


@index_group.command("push")
@click.argument("backend", type=click.Choice(INDEX_BACKENDS))
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--allow-plaintext", is_flag=True, help="Push an hmac-only vault (its at-rest content IS the text).")
@click.option("--batch", type=click.IntRange(1, MAX_BATCH), default=DEFAULT_BATCH, show_default=True)
@click.option("--resume-after", type=click.IntRange(0), default=0, help="Skip drawers up to this seq (a resumed push).")
@click.option("--drop", is_flag=True, help="Drop the backend's collection first (a mirror of another space).")
@click.option("--json", "as_json", is_flag=True, help="Print the push report as JSON.")
def index_push_command(
    backend: str, vault: str, allow_plaintext: bool, batch: int, resume_after: int, drop: bool, as_json: bool
) -> int:
    """Mirror every drawer of a vault to BACKEND: sealed content, embedding and wing/room labels."""
    with open_mirror(backend, vault) as mirror, open_store(vault) as store:
        with progress(store.count(), f"push to {backend}") as bar:
            done = [0]

            def advance(finished: int, total: int) -> None:
                bar.update(finished - done[0])
                done[0] = finished

            try:
                report = push_mirror(
                    store,
                    mirror,
                    surface=SURFACE,
                    allow_plaintext=allow_plaintext,
                    batch=batch,
                    resume_after=resume_after,
                    drop=drop,
                    progress=advance,
                )
            except MirrorUnavailable as error:
                partial = getattr(error, "report", None)
                if partial is not None and as_json:
                    click.echo(json.dumps(partial.to_dict()))
                raise
    if as_json:
        click.echo(json.dumps(report.to_dict()))
    else:
        click.echo(
            f"pushed {report.pushed} of {report.total} drawer(s) of vault {vault!r} to {backend} "
            f"({report.collection} at {report.destination}); content {report.content}, space {report.space}; "
            f"recorded as egress/index-push at chain height {report.audit_height}"
        )
        if report.skipped:
            click.echo(f"skipped {report.skipped} drawer(s) whose embedding is of another space (run repair)")
    return 0


@index_group.command("status")
@click.argument("backend", type=click.Choice(INDEX_BACKENDS))
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the status object.")
def index_status_command(backend: str, vault: str, as_json: bool) -> int:
    """Remote mirror against local counts (a read: nothing is created on the backend)."""
    with open_mirror(backend, vault) as mirror, open_reader(vault) as store:
        status = index_status_record(store, mirror)
    if as_json:
        click.echo(json.dumps(status))
        return 0
    if status["remote_records"] is None:
        click.echo(
            f"{backend}: no mirror of vault {vault!r} ({status['collection']}); local records {status['local_records']}"
        )
        click.echo(f"run `undercroft index push {backend} --vault {vault}` to create it")
        return 0
    click.echo(
        f"{backend}: remote records {status['remote_records']}, local records {status['local_records']}, "
        f"space {status['remote_space']} (local {status['space']}); "
        + ("in step" if status["in_step"] else "NOT in step: push again")
    )
    return 0

"""``undercroft witness emit [--out] [--sign]`` and ``undercroft witness check <file>`` (always read-only)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli._internal.private_file import write_private
from undercroft_cli.commands.forget import load_signer
from undercroft_cli.operations.witness import check_record, check_witness, emit_document, witness_record

__all__ = ["witness_group"]


@click.group("witness")
def witness_group() -> None:
    """The external witness: keep it where this machine cannot write; check before you emit."""


@witness_group.command("emit")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="write the witness here")
@click.option("--sign", "sign", type=click.Path(dir_okay=False, path_type=Path), help="signing identity file")
@click.option("--json", "as_json", is_flag=True, help="Print {out, witness} (the witness document inline).")
def emit_command(vault: str, out: Path | None, sign: Path | None, as_json: bool) -> int:
    """Emit the row count and unkeyed digest of the audit trail (head as corroboration)."""
    signer = load_signer(sign)
    with open_store(vault, read_only=True) as store:
        document = emit_document(store, signer=signer)
    if out is not None:
        write_private(out, (document + "\n").encode("ascii"))
    if as_json:
        click.echo(json.dumps(witness_record(document, out=out)))
    elif out is None:
        click.echo(document)
    else:
        click.echo(message("witness.written", out=out))
    return EXIT_OK


@witness_group.command("check")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--sender", default=None, help="pin the sender that must have signed")
@click.option("--json", "as_json", is_flag=True, help="Print {ok, verdict, writes_since, corroboration, signature}.")
def check_command(file: Path, vault: str, sender: str | None, as_json: bool) -> int:
    """WITNESS OK when the chain extends the witness; exit 2 when rolled back below it."""
    with open_store(vault, read_only=True) as store:
        verdict = check_witness(store, file.read_bytes(), sender=sender)
    click.echo(json.dumps(check_record(verdict)) if as_json else verdict.render())
    return EXIT_OK

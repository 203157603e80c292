"""``undercroft forget <id…> [--sign KEYFILE]`` and ``undercroft verify-forgetting <receipt>`` (operator only)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.governance.forgetting import verify_forgetting
from undercroft_store.governance.index_push import forget_remote
from undercroft_vault import SigningIdentity, parse_signing_identity

from undercroft_cli._internal.composition import INDEX_BACKENDS, open_mirror, open_store
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli._internal.private_file import reserve_output
from undercroft_cli.operations import erasure_record
from undercroft_cli.operations.forgetting import forget_drawers, forget_record

__all__ = ["forget_command", "load_signer", "reserve_output", "verify_forgetting_command"]


def load_signer(path: Path | None) -> SigningIdentity | None:
    """The signing identity in ``path`` (``pqs1sk…`` or 64 hex), or None."""
    return None if path is None else parse_signing_identity(path.read_text(encoding="ascii"))


@click.command("forget")
@click.argument("ids", nargs=-1, required=True)
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--reason", default="operator", show_default=True)
@click.option("--sign", "sign", type=click.Path(dir_okay=False, path_type=Path), help="signing identity file")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="write the receipt here")
@click.option(
    "--backend",
    "backends",
    multiple=True,
    type=click.Choice(INDEX_BACKENDS),
    help="Delete the drawers from this remote mirror too (before the local erasure; repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {ids, out, receipt} (the receipt inline unless --out).")
def forget_command(
    ids: tuple[str, ...],
    vault: str,
    reason: str,
    sign: Path | None,
    out: Path | None,
    backends: tuple[str, ...],
    as_json: bool,
) -> int:
    """Destroy drawers through the audit chain and print the erasure receipt."""
    signer = load_signer(sign)
    # Reserve --out before anything is destroyed: a bad path must not cost the receipt of a done erasure.
    with reserve_output(out) as output:
        with open_store(vault) as store:
            # Remote first: a mirror that refuses leaves the vault untouched (forget is not retried once done),
            # while a mirror that lost ids the vault still holds is healed by the next push.
            for backend in backends:
                with open_mirror(backend, vault) as mirror:
                    forget_remote(mirror, list(ids))
                click.echo(f"deleted {len(ids)} id(s) from the {backend} mirror", err=True)
            receipt = forget_drawers(store, ids, reason=reason, signer=signer)
        if signer is not None:
            signer.wipe()
        document = receipt.to_json()
        if output is not None:
            output.write((document + "\n").encode("ascii"))
        if as_json:
            click.echo(json.dumps(forget_record(receipt, out=out)))
        elif output is None:
            click.echo(document)
        else:
            click.echo(message("forget.written", count=len(receipt.ids), out=out))
    return EXIT_OK


@click.command("verify-forgetting")
@click.argument("receipt", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--sender", default=None, help="pin the sender (public key) that must have signed")
@click.option("--json", "as_json", is_flag=True, help="Print {status, findings, signature, sender} (same exit code).")
def verify_forgetting_command(receipt: Path, vault: str, sender: str | None, as_json: bool) -> int:
    """Replay an erasure receipt: VERIFIED or RECORDED (exit 0), FAILED (exit 2)."""
    with open_store(vault, read_only=True) as store:
        verdict = verify_forgetting(store, receipt.read_bytes(), pinned_sender=sender)
    click.echo(json.dumps(erasure_record(verdict)) if as_json else verdict.render())
    return EXIT_OK if verdict.ok else EXIT_INTEGRITY

"""``undercroft forget <id…> [--sign KEYFILE]`` and ``undercroft verify-forgetting <receipt>`` (operator only)."""

from __future__ import annotations

from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.governance.forgetting import forget, verify_forgetting
from undercroft_vault import SigningIdentity, parse_signing_identity

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK
from undercroft_cli._internal.private_file import reserve_output

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
def forget_command(ids: tuple[str, ...], vault: str, reason: str, sign: Path | None, out: Path | None) -> int:
    """Destroy drawers through the audit chain and print the erasure receipt."""
    signer = load_signer(sign)
    # Reserve --out before anything is destroyed: a bad path must not cost the receipt of a done erasure.
    with reserve_output(out) as output:
        with open_store(vault) as store:
            receipt = forget(store, list(ids), signer=signer, reason=reason)
        if signer is not None:
            signer.wipe()
        document = receipt.to_json()
        if output is None:
            click.echo(document)
        else:
            output.write((document + "\n").encode("ascii"))
            click.echo(f"forgot {len(receipt.ids)} drawer(s); receipt written to {out}")
    return EXIT_OK


@click.command("verify-forgetting")
@click.argument("receipt", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--sender", default=None, help="pin the sender (public key) that must have signed")
def verify_forgetting_command(receipt: Path, vault: str, sender: str | None) -> int:
    """Replay an erasure receipt: VERIFIED or RECORDED (exit 0), FAILED (exit 2)."""
    with open_store(vault, read_only=True) as store:
        verdict = verify_forgetting(store, receipt.read_bytes(), pinned_sender=sender)
    click.echo(verdict.render())
    return EXIT_OK if verdict.ok else EXIT_INTEGRITY

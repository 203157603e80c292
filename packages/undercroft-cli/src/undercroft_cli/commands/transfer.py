"""``undercroft export``, ``import`` and ``bundle keygen|recipient|sign-keygen|sender``.

An export is lossless decrypted JSONL (docs/cli.md); ``--to`` seals it to one recipient with its manifest
(signed with ``--sign``) inside the envelope. Every export leaves an egress record on the audit chain.
Import re-stamps ``added_by`` with this surface and writes through the admission screen: a quarantined
drawer stays in the review wing (``Bypass(ALREADY_DIVERTED)``), every other drawer is screened afresh.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli._internal.private_file import reserve_output, write_private
from undercroft_cli._internal.progress import progress

__all__ = ["ADDED_BY", "bundle_group", "export_command", "import_command", "write_private"]

#: The surface stamped on every imported drawer (and named in the egress record).
ADDED_BY = "cli"
_BUNDLE_MAGIC = b"UNDERCROFT-BUNDLE-"
_VAULT = click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to use.")


def _read_text_arg(value: str, what: str) -> str:
    """A key given inline, or the path of a file holding it."""
    path = Path(value).expanduser()
    try:
        if path.is_file():
            return path.read_text("utf-8").strip()
    except OSError:  # a key given inline can be longer than any file name
        return value.strip()
    if os.sep in value or value.startswith("~"):
        raise click.BadParameter(f"{value}: no such file", param_hint=what)
    return value.strip()


@click.command("export")
@_VAULT
@click.option("--out", default=None, help="File to write (default: standard output; required with --to).")
@click.option("--to", "recipient", default=None, help="Seal to this recipient (pq1… or 64 hex), or its file.")
@click.option("--sign", "sign_key", default=None, help="Signing identity file (bundle sign-keygen) to attest with.")
@click.option("--expires-days", type=click.IntRange(1, 3650), default=30, show_default=True)
@click.option(
    "--with-id-key",
    is_flag=True,
    help="Carry the vault's id key, so an import with --adopt-id-key into a new vault keeps every drawer id.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary as JSON (on standard error when the export itself goes to standard output).",
)
def export_command(
    vault: str,
    out: str | None,
    recipient: str | None,
    sign_key: str | None,
    expires_days: int,
    with_id_key: bool,
    as_json: bool,
) -> int:
    """Export every drawer (with its embedding), KG entity and fact and tunnel as decrypted JSONL.

    The first line is a manifest with counts. With --to the JSONL is sealed into a bundle only that
    recipient's identity opens (--sign adds a sender attestation). Every export appends an egress record.
    --with-id-key also carries the vault's id key (counted in the manifest and the egress record): whoever
    holds the file can then compute this vault's blind values, so seal it (--to) when it leaves the machine.
    """
    from undercroft_vault import (
        BundleManifest,
        parse_recipient,
        parse_signing_identity,
        seal_bundle,
        sign_bundle_manifest,
        unsigned_bundle_manifest,
    )

    from undercroft_cli._internal.composition import open_store
    from undercroft_cli._internal.transfer_format import frame_sealed
    from undercroft_cli.operations.transfer import audit_export, collect

    if recipient is None and sign_key is not None:
        raise click.BadParameter("--sign attests a sealed bundle: give --to as well", param_hint="--sign")
    if recipient is not None and out is None:
        raise click.BadParameter("a sealed bundle is binary: give --out FILE", param_hint="--out")
    to = parse_recipient(_read_text_arg(recipient, "--to")) if recipient is not None else None
    signer = parse_signing_identity(_read_text_arg(sign_key, "--sign")) if sign_key is not None else None
    # Reserve --out before the egress record: a path that cannot take the bytes (a FIFO, a device, a
    # symlink, a missing directory) refuses the run while the chain still says nothing left the vault.
    with reserve_output(Path(out).expanduser() if out is not None else None) as output, open_store(vault) as store:
        export = collect(store, with_id_key=with_id_key, meter=progress)
        jsonl, counts, digest = export.jsonl, export.counts, export.digest
        if to is None:
            data = jsonl
        else:
            claims = BundleManifest.describe(
                jsonl,
                scope=f"vault:{store.name}",
                trust_claim="operator",
                expires_at=datetime.now(UTC) + timedelta(days=expires_days),
                counts=counts,
                provenance={"surface": ADDED_BY, "vault": store.name},
            )
            document = sign_bundle_manifest(claims, signer) if signer else unsigned_bundle_manifest(claims)
            data = seal_bundle(to, frame_sealed(document, jsonl))
        if output is not None:
            output.stage(data)  # a write that fails (a full disk) fails here, before anything is recorded
        # The record goes on the chain before a byte leaves: an export that cannot be audited does not happen
        # (a staged file is removed again when the record fails).
        note = audit_export(store, export, surface=ADDED_BY, recipient=to.encode() if to else None)
        if output is None:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            output.commit()
    if signer is not None:
        signer.wipe()
    if note is not None:
        click.echo(f"warning: {note}", err=True)
    target = out or "standard output"
    if as_json:
        summary = {
            "vault": vault,
            "out": out,
            "sealed": to is not None,
            "recipient": to.encode() if to is not None else None,
            "sha256": digest,
            "counts": counts,
        }
        click.echo(json.dumps(summary), err=out is None)
        return EXIT_OK
    click.echo(
        message(
            "export.summary",
            drawers=counts["drawers"],
            facts=counts["kg_facts"],
            entities=counts["kg_entities"],
            tunnels=counts["tunnels"],
            target=target,
        ),
        err=out is None,
    )
    if to is not None:
        click.echo(message("export.sealed", recipient=to.encode()[:16] + "…", target=target, manifest=digest[:16]))
    return EXIT_OK


@click.command("import")
@click.argument("source", metavar="FILE")
@_VAULT
@click.option("--identity", default=None, help="Identity file (bundle keygen) that opens a sealed bundle.")
@click.option("--sender", default=None, help="Refuse a bundle not signed by this sender (pqs1… or 64 hex).")
@click.option(
    "--adopt-id-key",
    is_flag=True,
    help="Take the export's id key (export --with-id-key) so every drawer id stays as it was; the vault must be empty.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def import_command(
    source: str, vault: str, identity: str | None, sender: str | None, adopt_id_key: bool, as_json: bool
) -> int:
    """Import FILE: an undercroft export (JSONL or sealed bundle) or a MemPalace export directory.

    Every drawer is re-stamped as written by this surface and goes through the admission screen; its id is
    derived under this vault's recipe, so importing the same file twice changes nothing. With --adopt-id-key
    (an export made with --with-id-key, into a new, empty vault) every drawer id stays the source's.
    """
    from undercroft_cli._internal.composition import open_store
    from undercroft_cli.operations.transfer import import_pending, read_import

    path = Path(source).expanduser()
    if not path.exists():
        raise click.BadParameter(f"{source}: no such file", param_hint="FILE")
    if sender is not None and identity is None:
        raise click.BadParameter(
            "--sender pins a sealed bundle's signer: give --identity as well", param_hint="--sender"
        )
    pending = read_import(
        path, identity=_read_text_arg(identity, "--identity") if identity else None, sender=sender, adopt=adopt_id_key
    )
    with open_store(vault) as store:
        report = import_pending(store, pending, added_by=ADDED_BY, adopt=adopt_id_key, meter=progress)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False))
        return EXIT_OK
    if report.attestation is not None:
        click.echo(
            message(
                "import.attested",
                status=report.attestation,
                sender=f" by {report.sender[:24]}…" if report.sender else "",
            )
        )
    for aimed, landed in report.filing.diverted:
        click.echo(message("mine.quarantined", aimed=aimed, landed=landed))
    for drawer_id, reason in report.filing.refused:
        click.echo(message("mine.skip", path=drawer_id, reason="refused", detail=f" ({reason})"))
    for note in report.notes:
        click.echo(f"note: {note}")
    filing = report.filing
    click.echo(
        message(
            "import.summary",
            drawers=report.drawers,
            source=path,
            created=filing.created,
            updated=filing.updated,
            unchanged=filing.unchanged,
            quarantined=filing.quarantined,
            skipped=len(filing.refused),
            facts=report.facts,
            tunnels=report.tunnels,
        )
    )
    return EXIT_OK


@click.group("bundle")
def bundle_group() -> None:
    """Identities for sealed exports: recipients (keygen, recipient) and senders (sign-keygen, sender)."""


_OUT = click.option("--out", required=True, help="File for the secret key (written 0600; never overwritten).")
_LEGACY = click.option("--legacy", is_flag=True, help="A classical-only key (X25519 / Ed25519) for old readers.")


@bundle_group.command("keygen")
@_OUT
@_LEGACY
def bundle_keygen(out: str, legacy: bool) -> int:
    """Create a recipient identity (hybrid X25519 + ML-KEM-768) in --out; print its public recipient."""
    from undercroft_vault import generate_identity

    identity = generate_identity(hybrid=not legacy)
    try:
        write_private(Path(out).expanduser(), (identity.encode() + "\n").encode("ascii"), overwrite=False)
        click.echo(identity.recipient().encode())
    finally:
        identity.wipe()
    return EXIT_OK


@bundle_group.command("recipient")
@click.argument("key_file", metavar="IDENTITY_FILE")
def bundle_recipient(key_file: str) -> int:
    """Print the public recipient of IDENTITY_FILE (give it to whoever exports to you)."""
    from undercroft_vault import parse_identity

    identity = parse_identity(_key_file(key_file))
    try:
        click.echo(identity.recipient().encode())
    finally:
        identity.wipe()
    return EXIT_OK


@bundle_group.command("sign-keygen")
@_OUT
@_LEGACY
def bundle_sign_keygen(out: str, legacy: bool) -> int:
    """Create a signing identity (hybrid Ed25519 + ML-DSA-65) in --out; print its public sender."""
    from undercroft_vault import generate_signing_identity

    signer = generate_signing_identity(hybrid=not legacy)
    try:
        write_private(Path(out).expanduser(), (signer.encode() + "\n").encode("ascii"), overwrite=False)
        click.echo(signer.sender().encode())
    finally:
        signer.wipe()
    return EXIT_OK


@bundle_group.command("sender")
@click.argument("key_file", metavar="SIGNING_FILE")
def bundle_sender(key_file: str) -> int:
    """Print the public sender of SIGNING_FILE (importers pin it with --sender)."""
    from undercroft_vault import parse_signing_identity

    signer = parse_signing_identity(_key_file(key_file))
    try:
        click.echo(signer.sender().encode())
    finally:
        signer.wipe()
    return EXIT_OK


def _key_file(value: str) -> str:
    path = Path(value).expanduser()
    if not path.is_file():
        raise click.BadParameter(f"{value}: no such file", param_hint="KEY_FILE")
    return path.read_text("utf-8").strip()

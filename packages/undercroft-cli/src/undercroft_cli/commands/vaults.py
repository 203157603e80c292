"""``undercroft init`` and ``undercroft vault create|list|status|delete``."""

from __future__ import annotations

import json

import click
from undercroft_core.errors import InvalidInput
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_palace, pick_embedder
from undercroft_cli._internal.i18n import message
from undercroft_cli.operations.values import ValueRefused
from undercroft_cli.operations.vaults import create_vault, delete_vault, list_vaults, parse_vault_embedder

__all__ = ["init_command", "vault_group"]

_LEVEL = click.Choice(["sealed", "hmac-only"])


@click.command("init")
@click.option("--level", type=_LEVEL, default="sealed", show_default=True, help="Level of the default vault.")
@click.option("--json", "as_json", is_flag=True, help="Print {created, vault, home}.")
def init_command(level: str, as_json: bool) -> int:
    """Create the master key and the 'default' vault (idempotent)."""
    with open_palace() as palace:
        created = palace.init(level=level)  # type: ignore[arg-type]
        where = palace.home
    if as_json:
        click.echo(json.dumps({"created": created, "vault": DEFAULT_VAULT, "home": str(where)}))
        return 0
    click.echo(message("init.created" if created else "init.present", vault=DEFAULT_VAULT, home=where))
    return 0


@click.group("vault")
def vault_group() -> None:
    """Create, list, inspect and delete vaults."""


@vault_group.command("create")
@click.argument("name")
@click.option("--level", type=_LEVEL, default="sealed", show_default=True)
@click.option(
    "--embedder",
    default="hash",
    show_default=True,
    help="The vault's vector space: hash (the engine embeds), or external:<name>@<dim> (every save and search "
    "supplies its own vector: remember --vector, search --vector).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {vault, level, embedder, path}.")
def vault_create(name: str, level: str, embedder: str, as_json: bool) -> int:
    """Create vault NAME (own keys, own database, own vector space).

    Example: undercroft vault create team --embedder external:e5-large@1024
    """
    try:
        parse_vault_embedder(embedder)  # refused before the palace is opened: nothing is created
    except ValueRefused as refused:
        raise click.BadParameter(f"must be {refused.expected}, got {refused.value}", param_hint="--embedder") from None
    except InvalidInput as invalid:
        raise click.BadParameter(str(invalid), param_hint="--embedder") from None
    with open_palace() as palace:
        created = create_vault(
            palace, name, level=level, embedder=embedder, default_label=lambda: pick_embedder().identity.label
        )
    if as_json:
        record = {"vault": name, "level": level, "embedder": created.embedder, "path": str(created.path)}
        click.echo(json.dumps(record))
        return 0
    click.echo(message("vault.created", vault=name, level=level, path=created.path))
    return 0


@vault_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def vault_list(as_json: bool) -> int:
    """List vault names."""
    with open_palace(read_only=True) as palace:
        names = list_vaults(palace)
    click.echo(json.dumps(names) if as_json else "\n".join(names))
    return 0


@vault_group.command("status")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print {name, path, has_manifest, has_database, ...}.")
def vault_status(name: str, as_json: bool) -> int:
    """On-disk status of vault NAME (no keys are opened)."""
    with open_palace(read_only=True) as palace:
        status = palace.status(name)
    if as_json:
        fields = ("name", "has_manifest", "has_database", "db_bytes", "staged_rotation")
        click.echo(json.dumps({**{f: getattr(status, f) for f in fields}, "path": str(status.path)}))
        return 0
    click.echo(f"vault:           {status.name}")
    click.echo(f"path:            {status.path}")
    click.echo(f"manifest:        {'present' if status.has_manifest else 'ABSENT'}")
    click.echo(f"database:        {'present' if status.has_database else 'ABSENT'}")
    click.echo(f"db bytes:        {status.db_bytes}")
    click.echo(f"staged rotation: {'yes' if status.staged_rotation else 'no'}")
    return 0


@vault_group.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Confirm the irreversible delete.")
@click.option("--json", "as_json", is_flag=True, help="Print {vault, deleted}.")
def vault_delete(name: str, yes: bool, as_json: bool) -> int:
    """Delete vault NAME and every file in it (irreversible; needs --yes)."""
    if not yes:
        raise click.UsageError(f"deleting vault {name!r} is irreversible: pass --yes to confirm")
    with open_palace() as palace:
        delete_vault(palace, name)
    click.echo(json.dumps({"vault": name, "deleted": True}) if as_json else message("vault.deleted", vault=name))
    return 0

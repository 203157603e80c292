"""``undercroft mcp``: the MCP configuration a host needs to start ``serve-mcp``, with absolute paths.

A host spawns the server with its own environment and working directory, so a bare ``undercroft`` fails
there whenever it is not on the host's PATH (``spawn undercroft ENOENT``). Every snippet therefore names the
absolute program path of the ``undercroft`` that printed it and the absolute ``UNDERCROFT_HOME`` it resolved,
for Claude Code (``.mcp.json`` and the ``claude mcp add`` line), Claude Desktop, Cursor and any other client.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import click

from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.program import ProgramNotFound, program_path

__all__ = ["CLIENTS", "McpLaunch", "ProgramNotFound", "mcp_command", "program_path", "server_launch"]

CLIENTS: tuple[str, ...] = ("claude-code", "claude-desktop", "cursor", "generic")
DEFAULT_VAULT = "default"  # undercroft_store.DEFAULT_VAULT, not imported: this command never loads the store


McpLaunch = dict[str, Any]
"""``{"name", "command", "args", "env"}``: how a host starts the server."""


def server_launch(*, program: Path, home: Path, vault: str, read_only: bool, name: str | None) -> McpLaunch:
    """The launch description every client's snippet is made from."""
    args = ["serve-mcp"]
    if vault != DEFAULT_VAULT:
        args += ["--vault", vault]
    if read_only:
        args.append("--read-only")
    default_name = "undercroft" if vault == DEFAULT_VAULT else f"undercroft-{vault}"
    return {
        "name": name or default_name + ("-read-only" if read_only else ""),
        "command": str(program),
        "args": args,
        "env": {"UNDERCROFT_HOME": str(home)},
    }


def _servers(launch: McpLaunch, **extra: str) -> dict[str, Any]:
    entry = {**extra, "command": launch["command"], "args": launch["args"], "env": launch["env"]}
    return {"mcpServers": {launch["name"]: entry}}


def claude_mcp_add(launch: McpLaunch, *, scope: str = "user") -> str:
    """The ``claude mcp add`` line registering the server with Claude Code."""
    # The name comes first and `--` closes the options: `--env` takes several values and would take the name.
    env = [item for key, value in launch["env"].items() for item in ("--env", f"{key}={value}")]
    options = ["--transport", "stdio", "--scope", scope, *env]
    return shlex.join(["claude", "mcp", "add", launch["name"], *options, "--", launch["command"], *launch["args"]])


def render(launch: McpLaunch, client: str) -> str:
    """The text block for one client: where the snippet goes, then the snippet."""
    if client == "claude-code":
        return "\n".join([
            "# Claude Code: run this once (user scope) ...",
            claude_mcp_add(launch),
            "# ... or commit this as .mcp.json at a project's root (project scope):",
            json.dumps(_servers(launch, type="stdio"), indent=2),
        ])  # fmt: skip
    if client == "claude-desktop":
        return "\n".join([
            "# Claude Desktop: merge into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/,",
            "# Windows: %APPDATA%\\Claude\\), then restart Claude Desktop:",
            json.dumps(_servers(launch), indent=2),
        ])  # fmt: skip
    if client == "cursor":
        return "\n".join([
            "# Cursor: merge into ~/.cursor/mcp.json (every project) or .cursor/mcp.json (one project):",
            json.dumps(_servers(launch), indent=2),
        ])  # fmt: skip
    return "\n".join([
        "# Any other MCP client (stdio transport): start this command with this environment:",
        json.dumps(_servers(launch), indent=2),
    ])  # fmt: skip


@click.command("mcp")
@click.option("--client", type=click.Choice(("all", *CLIENTS)), default="all", show_default=True,
              help="Print the configuration for this client only.")  # fmt: skip
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault the server is scoped to.")
@click.option("--read-only", is_flag=True, help="Configure a server that refuses every write tool.")
@click.option("--name", default=None, help="Server name in the host (default undercroft[-VAULT][-read-only]).")
@click.option("--json", "as_json", is_flag=True, help="Print the launch description and the claude line as JSON.")
def mcp_command(client: str, vault: str, read_only: bool, name: str | None, as_json: bool) -> int:
    """Print the MCP configuration for Claude Code, Claude Desktop, Cursor or any client.

    Every snippet names this program's absolute path and the palace's absolute UNDERCROFT_HOME, so the
    host finds both whatever its own PATH and working directory. Example:

        undercroft mcp --client claude-code --read-only
    """
    from undercroft_config import settings  # the resolver, loaded only when this command runs
    from undercroft_core import validate_name

    try:
        validate_name(vault, what="vault")
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--vault") from None
    home = settings.home(dict(os.environ)).expanduser().absolute()
    launch = server_launch(program=program_path(), home=home, vault=vault, read_only=read_only, name=name)
    if as_json:
        click.echo(json.dumps({**launch, "claude_mcp_add": claude_mcp_add(launch)}, indent=2))
        return EXIT_OK
    if not ((home / "master.key").exists() or (home / "kdf.salt").exists()):
        click.echo(f"note: no palace at {home} yet: run `undercroft init` before the host starts the server", err=True)
    elif not (home / "vaults" / vault / "vault.db").exists():  # the palace's layout (undercroft_store.palace)
        hint = "undercroft init" if vault == DEFAULT_VAULT else f"undercroft vault create {vault}"
        click.echo(f"note: no vault named {vault!r} in {home} yet: run `{hint}` before the host starts the server",
                   err=True)  # fmt: skip
    chosen = CLIENTS if client == "all" else (client,)
    click.echo("\n\n".join(render(launch, each) for each in chosen))
    return EXIT_OK

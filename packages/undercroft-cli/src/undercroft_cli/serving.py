"""The commands that start an adapter's server: ``undercroft serve-mcp`` now, ``serve-http`` next.

The composition root's other half beside ``main``: the one module (with ``main``) that may import an adapter
package (``undercroft_cli.mcp``), so the click adapters in ``undercroft_cli.commands`` never do.
"""

from __future__ import annotations

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store, pick_embedder

__all__ = ["serve_mcp_command"]


@click.command("serve-mcp")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault the server is scoped to.")
@click.option(
    "--read-only",
    is_flag=True,
    help="Open the vault read-only and refuse every write tool at the call (tools/list still shows them).",
)
def serve_mcp_command(vault: str, read_only: bool) -> int:
    """Serve the vault to an agent over MCP on stdin/stdout.

    Register it with an MCP client as {"command": "undercroft", "args": ["serve-mcp"]}. The vault is opened
    before serving: a tampered or rolled-back vault stops the server with exit 2 instead of serving it.
    """
    # The MCP SDK costs about a second to import: only the server pays it, never every CLI call.
    from undercroft_cli.mcp import McpDispatcher, ToolSession, serve_stdio

    embedder = pick_embedder()
    with open_store(vault, read_only=read_only) as store:
        for line in store.unhealed:
            if line not in store.healed:  # open_store reported the heals as "healed: …"
                click.echo(f"unhealed: {line}", err=True)
        serve_stdio(McpDispatcher(ToolSession(store, embedder, read_only=read_only)))
    return 0

"""The tool handlers, grouped by concern; `registry()` is every tool the server advertises.

A handler takes the call's session and its parsed arguments and returns the reply (text, or a ``ToolOutput``
with its structured data). The untrusted-data notice is said once, in the server instructions, and on the
results that return memory — not in every description.
"""

from __future__ import annotations

from undercroft_cli.mcp.tools.base import TEXT_OUTPUT, UNTRUSTED_NOTICE, ToolOutput, ToolSession, ToolSpec
from undercroft_cli.mcp.tools.diaries import DIARY_TOOLS
from undercroft_cli.mcp.tools.drawers import DRAWER_TOOLS
from undercroft_cli.mcp.tools.erasure import ERASURE_TOOLS
from undercroft_cli.mcp.tools.graph import GRAPH_TOOLS
from undercroft_cli.mcp.tools.history import HISTORY_TOOLS
from undercroft_cli.mcp.tools.palace import PALACE_TOOLS
from undercroft_cli.mcp.tools.recall import RECALL_TOOLS
from undercroft_cli.mcp.tools.remote_index import REMOTE_INDEX_TOOLS
from undercroft_cli.mcp.tools.search import SEARCH_TOOLS
from undercroft_cli.mcp.tools.tunnels import TUNNEL_TOOLS

__all__ = ["TEXT_OUTPUT", "UNTRUSTED_NOTICE", "ToolOutput", "ToolSession", "ToolSpec", "registry"]


def registry() -> dict[str, ToolSpec]:
    """Every implemented tool by name (a name implemented twice is a programming error)."""
    tools: dict[str, ToolSpec] = {}
    groups = (DRAWER_TOOLS, SEARCH_TOOLS, RECALL_TOOLS, PALACE_TOOLS, DIARY_TOOLS, GRAPH_TOOLS, TUNNEL_TOOLS,
              HISTORY_TOOLS, ERASURE_TOOLS, REMOTE_INDEX_TOOLS)  # fmt: skip
    for spec in (spec for group in groups for spec in group):
        if spec.name in tools:
            raise RuntimeError(f"tool {spec.name} is implemented twice")
        tools[spec.name] = spec
    return tools

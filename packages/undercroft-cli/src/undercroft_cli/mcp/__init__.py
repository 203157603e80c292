"""The MCP stdio server: the counted tool inventory, the gates above dispatch, the tool handlers."""

from undercroft_cli.mcp.errors import InvalidArgument, McpError, ToolRefused, UnknownTool
from undercroft_cli.mcp.inventory import OPERATOR_ONLY, PENDING, READ, TOOLS, WRITE, Access, ToolEntry
from undercroft_cli.mcp.server import McpDispatcher, ToolReply, build_server, serve_stdio
from undercroft_cli.mcp.tools import ToolSession, ToolSpec

__all__ = [
    "OPERATOR_ONLY",
    "PENDING",
    "READ",
    "TOOLS",
    "WRITE",
    "Access",
    "InvalidArgument",
    "McpDispatcher",
    "McpError",
    "ToolEntry",
    "ToolRefused",
    "ToolReply",
    "ToolSession",
    "ToolSpec",
    "UnknownTool",
    "build_server",
    "serve_stdio",
]

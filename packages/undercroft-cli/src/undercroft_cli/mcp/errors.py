"""Typed errors of the MCP server: one error class on the wire, typed classes in code."""

from undercroft_core.errors import InvalidInput

from undercroft_cli.errors import Error

__all__ = ["InvalidArgument", "McpError", "ToolRefused", "UnknownTool"]


class McpError(Error):
    """Base of every error the MCP server raises."""


class ToolRefused(McpError):
    """A gate above dispatch refused the call (read-only posture, quarantine fence)."""


class UnknownTool(McpError):
    """The call names a tool this server does not advertise."""


class InvalidArgument(InvalidInput, McpError):
    """A tool argument is missing, of the wrong type, out of range or not one the tool takes."""

"""The undercroft program: CLI, MCP stdio server and HTTP engine."""

from undercroft_cli.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]

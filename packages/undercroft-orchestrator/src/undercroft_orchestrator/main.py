"""The `undercroft-orchestrator` program's entry point."""

from __future__ import annotations

import argparse

from undercroft_orchestrator import __version__

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the control plane (console-script entry point)."""
    parser = argparse.ArgumentParser(
        prog="undercroft-orchestrator",
        description="Fleet control plane for Undercroft engines; speaks to them over HTTP /v1 only.",
    )
    parser.add_argument("--version", action="version", version=f"undercroft-orchestrator {__version__}")
    parser.parse_args(argv)
    parser.print_help()
    return 0

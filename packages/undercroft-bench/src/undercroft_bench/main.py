"""The `undercroft-bench` program's entry point."""

from __future__ import annotations

import argparse

from undercroft_bench import __version__

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run one instrument (console-script entry point)."""
    parser = argparse.ArgumentParser(
        prog="undercroft-bench", description="Undercroft's benchmark and evaluation instruments."
    )
    parser.add_argument("--version", action="version", version=f"undercroft-bench {__version__}")
    parser.parse_args(argv)
    parser.print_help()
    return 0

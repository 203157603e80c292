"""The click adapter: one module per command group, each a thin layer over the store and ``operations``.

A command parses its options, opens the vault through ``undercroft_cli._internal.composition``, calls the
store or an operation in ``undercroft_cli.operations``, and renders text or ``--json``; it raises typed
errors and lets ``run_cli`` choose the exit code. It never imports ``undercroft_cli.mcp`` (an import-linter
contract): what a command and a tool both need lives in ``operations``. The commands that start a server
(``serve-mcp``) live in ``undercroft_cli.serving``, beside the entry point ``undercroft_cli.main``.
"""

__all__: list[str] = []

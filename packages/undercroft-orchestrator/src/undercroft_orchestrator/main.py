"""The ``undercroft-orchestrator`` program: the fleet control plane's commands.

Exit codes follow the doctrine: 0 success, 1 the run failed (a usage error included — never 2), 2 an
integrity verdict (an engine's 200 with ``"ok": false``, or a 4xx carrying ``"class": "integrity"``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NoReturn

from undercroft_orchestrator import __version__
from undercroft_orchestrator.errors import Error, MigrationStopped

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse, except that a usage error exits 1: exit 2 is reserved for an integrity verdict."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="undercroft-orchestrator",
        description="Fleet control plane for Undercroft engines; speaks to them over HTTP /v1 only.",
        epilog="Exit codes: 0 success, 1 the run failed (usage errors included), 2 an integrity verdict.",
    )
    parser.add_argument("--version", action="version", version=f"undercroft-orchestrator {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=summary, description=summary)

    command("keygen", "print a fresh sealing key and a suggested admin bearer as export lines")
    config = command("config", "pre-flight the control plane's declarations")
    config.add_argument("action", choices=["check"])
    config.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    serve = command("serve", "serve the data plane, the admin plane and the fleet console")
    serve.add_argument("--addr", help="host:port (default UNDERCROFT_ORCH_ADDR, 127.0.0.1:8900; port 0 picks one)")
    serve.add_argument("--read-replica", action="store_true", help="open the state read-only; serve /healthz, /t/*")
    add = command("instance-add", "register an engine (its URL is policed now)")
    add.add_argument("name")
    add.add_argument("url")
    add.add_argument("--bearer", help="the engine's UNDERCROFT_MCP_HTTP_TOKEN")
    add.add_argument("--assertion-secret", help="the engine's UNDERCROFT_ASSERTION_SECRET")
    listing = command("instance-list", "list registered engines")
    listing.add_argument("--json", action="store_true")
    remove = command("instance-remove", "forget an engine that holds no tenant")
    remove.add_argument("name")
    health = command("instance-health", "probe one engine: healthy | unhealthy | unreachable | refused")
    health.add_argument("name")
    health.add_argument("--json", action="store_true")
    create = command("tenant-create", "create a tenant's vault on an engine and mint its token (shown once)")
    create.add_argument("id")
    create.add_argument("--instance", help="the engine (default: the one holding fewest tenants)")
    create.add_argument("--level", help="the vault's protection level (the engine's default when omitted)")
    create.add_argument("--embedder", help="the vault's embedder (the engine's default when omitted)")
    create.add_argument("--json", action="store_true")
    tenants = command("tenant-list", "list tenants and where each lives")
    tenants.add_argument("--json", action="store_true")
    rotate = command("tenant-rotate", "mint a new token; the old one dies in the same statement")
    rotate.add_argument("id")
    rotate.add_argument("--json", action="store_true")
    repoint = command("tenant-repoint", "move the mapping only, refused unless the instance holds the vault")
    repoint.add_argument("id")
    repoint.add_argument("--instance", required=True)
    migrate = command("migrate", "snapshot → export → import → judge the copy → flip → delete the source")
    migrate.add_argument("id")
    migrate.add_argument("--to", required=True, help="the destination instance")
    migrate.add_argument("--json", action="store_true")
    ops = command("ops", "one operator-plane call on a tenant's vault (a closed vocabulary)")
    ops.add_argument("tenant")
    ops.add_argument("op", help="verify, repair, anchor, trust-set, export, import, … (see docs/orchestrator.md)")
    ops.add_argument("--body", help="the JSON body (for import: the NDJSON, or @file)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run one command (console-script entry point); the exit code."""
    args = _parser().parse_args(argv)
    if args.command is None:
        _parser().print_help()
        return 0
    try:
        return _run(args)
    except MigrationStopped as stopped:
        print(f"error: {stopped}", file=sys.stderr)
        print(json.dumps(stopped.judgement, indent=2, sort_keys=True), file=sys.stderr)
        return 2 if stopped.error_class == "integrity" else 1
    except Error as error:
        print(f"error: {error}", file=sys.stderr)
        return 2 if error.error_class == "integrity" else 1
    except KeyboardInterrupt:
        return 1


def _run(args: argparse.Namespace) -> int:
    from undercroft_orchestrator._internal import commands

    handlers: dict[str, Callable[[argparse.Namespace], int | Awaitable[int]]] = {
        "keygen": commands.keygen,
        "config": commands.config_check,
        "serve": commands.serve,
        "instance-add": commands.instance_add,
        "instance-list": commands.instance_list,
        "instance-remove": commands.instance_remove,
        "instance-health": commands.instance_health,
        "tenant-create": commands.tenant_create,
        "tenant-list": commands.tenant_list,
        "tenant-rotate": commands.tenant_rotate,
        "tenant-repoint": commands.tenant_repoint,
        "migrate": commands.migrate,
        "ops": commands.ops,
    }
    outcome: Any = handlers[args.command](args)
    if asyncio.iscoroutine(outcome):
        outcome = asyncio.run(outcome)
    return int(outcome)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

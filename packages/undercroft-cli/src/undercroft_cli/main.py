"""The `undercroft` program's entry point: the command group and the exit-code doctrine (0 / 1 / 2).

Start-up is the one cost every call pays, so nothing heavy is imported here: each command's module (and with
it the store, numpy, the MCP SDK) loads only when that command runs (``LazyGroup``). ``--version`` and
``--help`` import no command at all; ``tests/test_cli_startup.py`` pins it.
"""

from __future__ import annotations

import sys

import click

from undercroft_cli import __version__
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli._internal.lazy_commands import LazyCommand, LazyGroup

__all__ = ["COMMANDS", "cli", "main"]

_EVERYDAY = "Commands"
_OPERATOR = "Operator commands"

#: Commands that report on the environment instead of running under it: they run the resolver themselves.
_REPORTS_ON_THE_ENVIRONMENT = frozenset({"config"})

#: Every top-level command: name, defining module and attribute, help section, summary, subcommands added.
#: Everyday commands first (what a person or an agent host uses), then the operator's (integrity, governance,
#: egress). Add a command with one row here.
COMMANDS: tuple[LazyCommand, ...] = (
    LazyCommand(
        "init",
        "commands.vaults",
        "init_command",
        _EVERYDAY,
        "Create the master key and the 'default' vault (idempotent).",
        example="undercroft init",
    ),
    LazyCommand(
        "remember",
        "commands.drawers",
        "remember_command",
        _EVERYDAY,
        "Save TEXT verbatim (or standard input when TEXT is '-' or absent).",
        example='undercroft remember "We chose GraphQL over REST" --wing backend --room decisions',
    ),
    LazyCommand(
        "search",
        "commands.search",
        "search_command",
        _EVERYDAY,
        "Search QUERY in a vault (hybrid: cosine + BM25 + recency, every hit HMAC-verified).",
        example='undercroft search "why graphql" --wing backend -n 5',
    ),
    LazyCommand(
        "wake-up",
        "commands.memory",
        "wake_up_command",
        _EVERYDAY,
        "L0 identity (<home>/identity.txt) and L1 essential recent memories.",
        example="undercroft wake-up --limit 10",
    ),
    LazyCommand(
        "stats",
        "commands.integrity",
        "stats_command",
        _EVERYDAY,
        "Drawers, wings, rooms, chain height and head, size, posture, unhealed, embed failures.",
        example="undercroft stats --json",
    ),
    LazyCommand(
        "verify",
        "commands.integrity",
        "verify_command",
        _EVERYDAY,
        "HMAC every record, replay the audit chain, resolve labels, compare mirrors, check SQLite's structures "
        "(exit 2 on VERIFY FAILED).",
        example="undercroft verify --deep",
    ),
    LazyCommand(
        "drawer",
        "commands.drawers",
        "drawer_group",
        _EVERYDAY,
        "Read, list, update and delete drawers.",
        extras=(("commands.mine", "delete_by_source_command"), ("commands.memory", "check_dup_command")),
        example="undercroft drawer list --wing backend",
    ),
    LazyCommand(
        "diary",
        "commands.memory",
        "diary_group",
        _EVERYDAY,
        "Per-agent diaries, each in its own wing.",
        example='undercroft diary write claude "Finished the billing migration."',
    ),
    LazyCommand(
        "kg",
        "commands.kg",
        "kg_group",
        _EVERYDAY,
        "The temporal knowledge graph: facts with validity windows, sealed and audit-chained.",
        example="undercroft kg add alice works_at acme",
    ),
    LazyCommand(
        "tunnel",
        "commands.memory",
        "tunnel_group",
        _EVERYDAY,
        "Labelled cross-wing links.",
        example="undercroft tunnel create backend frontend api",
    ),
    LazyCommand(
        "supersessions",
        "commands.provenance",
        "supersessions_command",
        _EVERYDAY,
        "Every supersession link with its verdict, recomputed from the keyed receipt.",
        example="undercroft supersessions --json",
    ),
    LazyCommand(
        "closets",
        "commands.memory",
        "closets_command",
        _EVERYDAY,
        "The compact, LLM-scannable index of the vault (or one wing).",
        example="undercroft closets --wing backend",
    ),
    LazyCommand(
        "hallways",
        "commands.memory",
        "hallways_command",
        _EVERYDAY,
        "Entity co-occurrence within WING (computed now, never stored).",
        example="undercroft hallways backend",
    ),
    LazyCommand(
        "taxonomy",
        "commands.integrity",
        "taxonomy_command",
        _EVERYDAY,
        "Wing → room → drawer counts (labels only, never content; the quarantine wing shows its count alone).",
        example="undercroft taxonomy",
    ),
    LazyCommand(
        "dedup",
        "commands.memory",
        "dedup_command",
        _EVERYDAY,
        "Exact duplicates by keyed fingerprint (dry run unless --apply).",
        example="undercroft dedup --apply",
    ),
    LazyCommand(
        "mine",
        "commands.mine",
        "mine_command",
        _EVERYDAY,
        "Mine documents (--mode files) or transcripts (--mode convos) under DIR into verbatim drawers.",
        example="undercroft mine ~/notes --wing notes --dry-run",
    ),
    LazyCommand(
        "sweep",
        "commands.mine",
        "sweep_command",
        _EVERYDAY,
        "File every transcript message under DIR as one verbatim drawer; messages already filed are unchanged.",
        example="undercroft sweep ~/.claude/projects --wing claude-code",
    ),
    LazyCommand(
        "transcript",
        "commands.mine",
        "transcript_group",
        _EVERYDAY,
        "Read agent and chat transcripts without filing them.",
        example="undercroft transcript render session.jsonl",
    ),
    LazyCommand(
        "serve-mcp",
        "serving",
        "serve_mcp_command",
        _EVERYDAY,
        "Serve the vault to an agent over MCP on stdin/stdout.",
        example="undercroft serve-mcp --read-only",
    ),
    LazyCommand(
        "serve-http",
        "serving",
        "serve_http_command",
        _EVERYDAY,
        "Serve MCP over HTTP at /mcp (for --vault) and the multi-tenant REST engine at /v1 (every vault).",
        example="undercroft serve-http --port 8765",
    ),
    LazyCommand(
        "history",
        "commands.provenance",
        "history_command",
        _OPERATOR,
        "The audit trail, oldest first: heights, times and labels of every namespace (never content).",
        example="undercroft history --subject <drawer-id>",
    ),
    LazyCommand(
        "assert-header",
        "serving",
        "assert_header_command",
        _OPERATOR,
        "Print an X-Vault-Assertion value for VAULT, valid ±120 s (reads UNDERCROFT_ASSERTION_SECRET).",
        example="undercroft assert-header acme",
    ),
    LazyCommand(
        "mcp",
        "commands.mcp_config",
        "mcp_command",
        _EVERYDAY,
        "Print the MCP configuration for Claude Code, Claude Desktop, Cursor or any client.",
        example="undercroft mcp --client claude-code",
    ),
    LazyCommand(
        "hooks",
        "commands.hooks",
        "hooks_group",
        _EVERYDAY,
        "Print auto-save hook settings for agent tools.",
        example="undercroft hooks claude-code",
    ),
    LazyCommand(
        "daemon",
        "commands.daemon",
        "daemon_group",
        _EVERYDAY,
        "The background auto-save loop.",
        example="undercroft daemon run --once",
    ),
    LazyCommand(
        "config",
        "commands.config",
        "config_group",
        _EVERYDAY,
        "Inspect this environment's UNDERCROFT_* declarations.",
        example="undercroft config check",
    ),
    LazyCommand(
        "vault",
        "commands.vaults",
        "vault_group",
        _OPERATOR,
        "Create, list, inspect and delete vaults.",
        extras=(("commands.rotate", "rotate_command"),),
        example="undercroft vault create work",
    ),
    LazyCommand(
        "backup",
        "commands.backup",
        "backup_group",
        _OPERATOR,
        "Verified snapshots of a vault (the newest 10 are kept).",
        example="undercroft backup create",
    ),
    LazyCommand(
        "repair",
        "commands.repair",
        "repair_command",
        _OPERATOR,
        "Backfill embeddings, fingerprints and FTS rows; re-embed a forced embedder swap; vacuum; verify.",
        example="undercroft repair",
    ),
    LazyCommand(
        "refine",
        "commands.refine",
        "refine_command",
        _OPERATOR,
        "Distil drawers into KG facts through UNDERCROFT_LLM_URL (each fact grounded, screened, attributed).",
        example="undercroft refine --wing notes --limit 20 --dry-run",
    ),
    LazyCommand(
        "admission",
        "commands.admission",
        "admission_group",
        _OPERATOR,
        "Review the quarantine queue: list, allow (re-file) or deny (destroy with a receipt).",
        example="undercroft admission list",
    ),
    LazyCommand(
        "trust",
        "commands.trust",
        "trust_group",
        _OPERATOR,
        "Assign wing trust classes (quarantined | standard | trusted); unassigned wings are standard.",
        example="undercroft trust set scraped quarantined",
    ),
    LazyCommand(
        "retention",
        "commands.retention",
        "retention_group",
        _OPERATOR,
        "Per wing/room maximum age, enforced only by an explicit, attested sweep.",
        example="undercroft retention set scratch --max-age 30d",
    ),
    LazyCommand(
        "index",
        "commands.index",
        "index_group",
        _OPERATOR,
        "Remote vector indexes (untrusted accelerators): push a vault's mirror, compare it with the vault.",
        example="undercroft index push chroma --vault default",
    ),
    LazyCommand(
        "forget",
        "commands.forget",
        "forget_command",
        _OPERATOR,
        "Destroy drawers through the audit chain and print the erasure receipt.",
        example="undercroft forget drawer_0123… --reason 'subject request' --out receipt.json",
    ),
    LazyCommand(
        "verify-forgetting",
        "commands.forget",
        "verify_forgetting_command",
        _OPERATOR,
        "Replay an erasure receipt: VERIFIED or RECORDED (exit 0), FAILED (exit 2).",
        example="undercroft verify-forgetting receipt.json",
    ),
    LazyCommand(
        "witness",
        "commands.witness",
        "witness_group",
        _OPERATOR,
        "The external witness: keep it where this machine cannot write; check before you emit.",
        example="undercroft witness emit --out witness.json",
    ),
    LazyCommand(
        "anchor",
        "commands.anchor",
        "anchor_command",
        _OPERATOR,
        "Anchor the manifest at the committed chain head.",
        example="undercroft anchor",
    ),
    LazyCommand(
        "export",
        "commands.transfer",
        "export_command",
        _OPERATOR,
        "Export every drawer (with its embedding), KG entity and fact and tunnel as decrypted JSONL.",
        example="undercroft export --out backup.jsonl",
    ),
    LazyCommand(
        "import",
        "commands.transfer",
        "import_command",
        _OPERATOR,
        "Import FILE: an undercroft export (JSONL or sealed bundle) or a MemPalace export directory.",
        example="undercroft import backup.jsonl",
    ),
    LazyCommand(
        "bundle",
        "commands.transfer",
        "bundle_group",
        _OPERATOR,
        "Identities for sealed exports: recipients (keygen, recipient) and senders (sign-keygen, sender).",
        example="undercroft bundle keygen --out me.key",
    ),
)


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    sections=(_EVERYDAY, _OPERATOR),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="undercroft")
@click.pass_context
def cli(context: click.Context) -> None:
    """Undercroft: hardened, local-first memory for AI agents.

    Verbatim drawers in encrypted, integrity-verified vaults, found again by hybrid search.
    """
    # One start-up resolver for every entry point (each command and serve-mcp alike), before anything is
    # opened: a refusal exits 1 naming every refusing variable; warnings print once, here, on stderr.
    if context.invoked_subcommand in _REPORTS_ON_THE_ENVIRONMENT:
        return
    from undercroft_cli._internal.composition import start_up  # the resolver loads the store: only when run

    for line in start_up():
        click.echo(f"warning: {line}", err=True)


def main() -> None:
    """Run the CLI (console-script entry point) and exit with the doctrine's code."""
    sys.exit(run_cli(cli))

"""``undercroft daemon run``: sweep a transcript directory now and every ``--interval`` seconds (auto-save)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli.commands.mine import run_sweep
from undercroft_cli.mining.rooms import CLAUDE_CODE_WING

__all__ = ["DEFAULT_INTERVAL", "daemon_group", "run_daemon"]

#: Seconds between sweeps when ``--interval`` is not given.
DEFAULT_INTERVAL = 60.0


def run_daemon(
    watch: Path,
    vault: str,
    *,
    wing: str | None,
    interval: float,
    passes: int | None,
    sleep: Callable[[float], None] = time.sleep,
    say: Callable[[str], None] = click.echo,
) -> int:
    """Sweep ``watch`` ``passes`` times (forever when None), sleeping ``interval`` between; returns passes run.

    ``sleep`` and ``say`` are injected so tests drive the loop without waiting. A directory that vanishes
    between passes is reported and waited for rather than ending the loop.
    """
    done = 0
    while passes is None or done < passes:
        if done:
            sleep(interval)
        if watch.is_dir():
            plan, filed = run_sweep(watch, vault, wing=wing, room=None)
            say(
                message(
                    "daemon.pass",
                    number=done + 1,
                    created=filed.created,
                    unchanged=filed.unchanged,
                    quarantined=filed.quarantined,
                    skipped=len(plan.skipped) + len(filed.refused),
                )
            )
        else:
            say(f"sweep {done + 1}: {watch} is not a directory; waiting")
        done += 1
    return done


@click.group("daemon")
def daemon_group() -> None:
    """The background auto-save loop."""


@daemon_group.command("run")
@click.option(
    "--watch",
    default="~/.claude/projects",
    show_default=True,
    help="Transcript directory to sweep (Claude Code, Codex, Gemini … sessions).",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_INTERVAL,
    show_default=True,
    help="Seconds between sweeps.",
)
@click.option("--once", is_flag=True, help="Sweep once and exit (for scripts and tests).")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to file into.")
@click.option(
    "--wing",
    default=CLAUDE_CODE_WING,
    show_default=True,
    help="Wing to file into (the hooks claude-code default, so the two never file a message twice).",
)
def daemon_run(watch: str, interval: float, once: bool, vault: str, wing: str) -> int:
    """Sweep --watch now, then every --interval seconds, until interrupted (Ctrl-C exits 0).

    Each pass is an ordinary idempotent sweep: only messages not yet filed are written.
    """
    target = Path(watch).expanduser()
    if once and not target.is_dir():
        raise click.BadParameter(f"{watch}: no such directory", param_hint="--watch")
    try:
        run_daemon(target, vault, wing=wing, interval=interval, passes=1 if once else None)
    except KeyboardInterrupt:
        click.echo("stopped")
    return EXIT_OK

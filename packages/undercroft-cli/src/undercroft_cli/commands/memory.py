"""``undercroft diary|tunnel|hallways|closets|wake-up|dedup`` and ``undercroft drawer check-dup``."""

from __future__ import annotations

import json
import sys

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.errors import NothingToRemember
from undercroft_store.memory.closets import build_closets, render_closets
from undercroft_store.memory.dedup import dedup
from undercroft_store.memory.diaries import read_diary
from undercroft_store.memory.hallways import hallways
from undercroft_store.memory.kg.errors import InvalidSurfaceInput
from undercroft_store.memory.tunnels import follow_tunnel, traverse
from undercroft_store.memory.wakeup import wake_up

from undercroft_cli._internal.composition import open_palace, open_reader, open_store
from undercroft_cli._internal.egress import advised_egress
from undercroft_cli._internal.i18n import message
from undercroft_cli.operations import closet_record, dedup_record, drawer_record, hallway_record, reached_records
from undercroft_cli.operations.diaries import diary_keepers, write_entry
from undercroft_cli.operations.duplicates import find_duplicate
from undercroft_cli.operations.tunnels import open_tunnel, remove_tunnel, tunnel_records

__all__ = [
    "check_dup_command",
    "closets_command",
    "dedup_command",
    "diary_group",
    "hallways_command",
    "tunnel_group",
    "wake_up_command",
]

_VAULT = click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to use.")


def _text(text: str | None) -> str:
    return sys.stdin.read() if text is None or text == "-" else text


@click.group("diary")
def diary_group() -> None:
    """Per-agent diaries, each in its own wing."""


@diary_group.command("write")
@click.argument("agent")
@click.argument("text", required=False)
@_VAULT
@click.option("--topic", default=None, help="Room for the entry (default entries).")
@click.option("--json", "as_json", is_flag=True, help="Print {results: [{outcome, id}]} (as remember does).")
def diary_write(agent: str, text: str | None, vault: str, topic: str | None, as_json: bool) -> int:
    """Append TEXT (or standard input) to AGENT's diary."""
    with open_store(vault) as store:
        try:
            # The operator's own claim: a CLI entry is stamped diary:<agent>, which the trusted-sources list can name.
            results = write_entry(store, agent, _text(text), topic=topic, added_by=f"diary:{agent}")
        except NothingToRemember:
            raise InvalidSurfaceInput("a diary entry must not be empty") from None
    if as_json:
        click.echo(json.dumps({"results": [{"outcome": r.outcome, "id": r.id} for r in results]}))
        return 0
    for result in results:
        click.echo(f"{result.outcome}: {result.id}")
    return 0


@diary_group.command("read")
@click.argument("agent")
@_VAULT
@click.option("--last", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--topic", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print {agent, entries: [drawer]}.")
def diary_read(agent: str, vault: str, last: int, topic: str | None, as_json: bool) -> int:
    """AGENT's newest entries."""
    with open_reader(vault) as store:
        entries = read_diary(store, agent, last=last, topic=topic)
    if as_json:
        click.echo(json.dumps({"agent": agent, "entries": [drawer_record(e) for e in entries]}, ensure_ascii=False))
        return 0
    for entry in entries:
        click.echo(f"[{entry.filed_at[:19]} {entry.room}] {entry.content}")
    return 0


@diary_group.command("agents")
@_VAULT
@click.option("--json", "as_json", is_flag=True, help="Print {agents: {name: entries}}.")
def diary_agents_command(vault: str, as_json: bool) -> int:
    """Agents with a diary and their entry counts."""
    with open_store(vault, read_only=True) as store:
        keepers = diary_keepers(store)
    if as_json:
        click.echo(json.dumps(keepers, ensure_ascii=False))
        return 0
    for agent, count in keepers["agents"].items():
        click.echo(f"{agent}  {count}")
    return 0


@click.group("tunnel")
def tunnel_group() -> None:
    """Labelled cross-wing links."""


@tunnel_group.command("create")
@click.argument("from_wing")
@click.argument("to_wing")
@click.argument("label")
@_VAULT
@click.option("--from-room", default=None)
@click.option("--to-room", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print the tunnel (as tunnel list --json does).")
def tunnel_create(
    from_wing: str, to_wing: str, label: str, vault: str, from_room: str | None, to_room: str | None, as_json: bool
) -> int:
    """Link FROM_WING to TO_WING with LABEL."""
    with open_store(vault) as store:
        tunnel = open_tunnel(store, from_wing, to_wing, label, from_room=from_room, to_room=to_room)
    click.echo(json.dumps(tunnel, ensure_ascii=False) if as_json else f"created: {tunnel['id']}")
    return 0


@tunnel_group.command("list")
@_VAULT
@click.option("--wing", default=None)
@click.option("--json", "as_json", is_flag=True)
def tunnel_list(vault: str, wing: str | None, as_json: bool) -> int:
    """Tunnels (with an end in WING)."""
    with open_store(vault, read_only=True) as store:
        tunnels = tunnel_records(store, wing=wing)
    if as_json:
        click.echo(json.dumps(tunnels, ensure_ascii=False))
        return 0
    for tunnel in tunnels:
        start = f"{tunnel['from_wing']}" + (f"/{tunnel['from_room']}" if tunnel["from_room"] else "")
        end = f"{tunnel['to_wing']}" + (f"/{tunnel['to_room']}" if tunnel["to_room"] else "")
        click.echo(f"{tunnel['id']}  {start} → {end}  {tunnel['label']}")
    return 0


@tunnel_group.command("follow")
@click.argument("tunnel_id")
@_VAULT
@click.option("--from-wing", default=None, help="The end you stand at (default the from end).")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/cli.md).")
def tunnel_follow(tunnel_id: str, vault: str, from_wing: str | None, limit: int, as_json: bool) -> int:
    """The far end's drawers."""
    with open_reader(vault) as store:
        drawers = follow_tunnel(store, tunnel_id, from_wing=from_wing, limit=limit)
    if as_json:
        click.echo(json.dumps({"tunnel": tunnel_id, "drawers": [drawer_record(d, full=False) for d in drawers]}))
        return 0
    for drawer in drawers:
        click.echo(f"{drawer.id}  {drawer.wing}/{drawer.room}  {drawer.content.replace(chr(10), ' ')[:60]}")
    return 0


@tunnel_group.command("delete")
@click.argument("tunnel_id")
@_VAULT
@click.option("--json", "as_json", is_flag=True, help="Print {id, deleted}.")
def tunnel_delete(tunnel_id: str, vault: str, as_json: bool) -> int:
    """Delete TUNNEL_ID (audited)."""
    with open_store(vault) as store:
        remove_tunnel(store, tunnel_id)
    click.echo(json.dumps({"id": tunnel_id, "deleted": True}) if as_json else message("deleted.id", id=tunnel_id))
    return 0


@tunnel_group.command("traverse")
@click.argument("wing")
@_VAULT
@click.option("--depth", type=click.IntRange(min=1, max=8), default=2, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/cli.md).")
def tunnel_traverse(wing: str, vault: str, depth: int, as_json: bool) -> int:
    """Wings reachable from WING through tunnels."""
    with open_store(vault, read_only=True) as store:
        reached = traverse(store, wing, depth=depth)
    if as_json:
        click.echo(json.dumps({"reached": reached_records(reached)}, ensure_ascii=False))
        return 0
    for there, hops, via in reached:
        click.echo(f"{hops}  {there}  via {via}")
    return 0


@click.command("hallways")
@click.argument("wing")
@_VAULT
@click.option("--min-count", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/cli.md).")
def hallways_command(wing: str, vault: str, min_count: int, limit: int, as_json: bool) -> int:
    """Entity co-occurrence within WING (computed now, never stored)."""
    with open_reader(vault) as store:
        found = hallways(store, wing, min_count=min_count, limit=limit)
    if as_json:
        click.echo(json.dumps({"hallways": [hallway_record(wing, h) for h in found]}, ensure_ascii=False))
        return 0
    for hallway in found:
        click.echo(f"{hallway.count}  {hallway.first} ↔ {hallway.second}")
    return 0


@click.command("closets")
@_VAULT
@click.option("--wing", default=None)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/cli.md).")
def closets_command(vault: str, wing: str | None, as_json: bool) -> int:
    """The compact, LLM-scannable index of the vault (or one wing)."""
    with open_reader(vault) as store:
        built = build_closets(store, wing=wing)
    if as_json:
        click.echo(json.dumps({"closets": [closet_record(c) for c in built]}, ensure_ascii=False))
        return 0
    click.echo(render_closets(built))
    return 0


@click.command("wake-up")
@_VAULT
@click.option("--wing", default=None)
@click.option("--limit", type=click.IntRange(min=1), default=15, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print {identity, essentials: [drawer]}.")
def wake_up_command(vault: str, wing: str | None, limit: int, as_json: bool) -> int:
    """L0 identity (<home>/identity.txt) and L1 essential recent memories."""
    with open_palace(read_only=True) as palace:
        path = palace.home / "identity.txt"
        identity = path.read_text(encoding="utf-8") if path.is_file() else None
    with open_reader(vault) as store:
        woken = wake_up(store, identity=identity, wing=wing, limit=limit)
    if as_json:
        essentials = [drawer_record(d, full=False) for d in woken.essentials]
        click.echo(json.dumps({"identity": woken.identity, "essentials": essentials}, ensure_ascii=False))
        return 0
    click.echo(woken.render())
    return 0


@click.command("dedup")
@_VAULT
@click.option("--wing", default=None)
@click.option("--apply", is_flag=True, help="Remove the copies (dates kept). Without it: a dry run.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (docs/cli.md).")
def dedup_command(vault: str, wing: str | None, apply: bool, as_json: bool) -> int:
    """Exact duplicates by keyed fingerprint (dry run unless --apply)."""
    with open_store(vault, read_only=not apply) as store:
        if apply:
            with advised_egress(store, applied=True):
                report = dedup(store, apply=apply, wing=wing)
        else:
            report = dedup(store, apply=apply, wing=wing)
    click.echo(json.dumps(dedup_record(report, dry_run=not apply)) if as_json else report.render())
    return 0


@click.command("check-dup")
@click.argument("text", required=False)
@_VAULT
@click.option("--wing", default=None)
@click.option("--room", default=None)
@click.option("--threshold", type=click.FloatRange(min=0.0, max=1.0, min_open=True), default=None)
@click.option("--json", "as_json", is_flag=True, help="Accepted for uniformity: the verdict is always JSON.")
def check_dup_command(
    text: str | None, vault: str, wing: str | None, room: str | None, threshold: float | None, as_json: bool
) -> int:
    """Is TEXT already stored? Prints {duplicate, id, exact, similarity}."""
    with open_store(vault, read_only=True) as store:
        found = find_duplicate(store, _text(text), wing=wing, room=room, threshold=threshold)
    click.echo(
        json.dumps({"duplicate": found.duplicate, "id": found.id, "exact": found.exact, "similarity": found.similarity})
    )
    return 0

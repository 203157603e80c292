"""``undercroft search``: hybrid search over one vault, each hit rendered with its evidence.

Every hit shows its wing/room, the drawer's content date when it has one (beside its filing date), its id
and the evidence channels on their own line (exact and morph BM25 as a share of the page's strongest), then
— when they apply — how long ago that was (``--as-of``), the other days the same words were recorded and the
dates resolved out of its text; then the verbatim content. ``--json`` prints the result object instead (raw
BM25). A date window in force is announced (``date window … read from the query``), and every filter
discloses what it excluded.
"""

from __future__ import annotations

import json
from datetime import date, datetime

import click
from undercroft_config import settings
from undercroft_core import KIND_VOCAB, TRUST_VOCAB
from undercroft_core.language import CALENDARS, DATE_ORDERS, LANGUAGES, WEEK_STARTS, reading_conventions
from undercroft_store import DEFAULT_VAULT
from undercroft_store.search import Searcher, SearchHit, SearchRequest, SearchResult

from undercroft_cli._internal.composition import INDEX_BACKENDS, open_mirror, open_reader, open_store
from undercroft_cli._internal.i18n import message
from undercroft_cli._internal.vector_option import parse_vector_option
from undercroft_cli.operations import (
    no_hits_line,
    parse_day,
    parse_instant,
    search_disclosures,
)

__all__ = ["render_hit", "render_result", "search_command"]


def _share(value: float, strongest: float) -> float:
    """``value`` as a share of the page's strongest (0 when nothing on the page matched lexically)."""
    return value / strongest if strongest > 0 else 0.0


def render_hit(hit: SearchHit, *, strongest: tuple[float, float] | None = None) -> list[str]:
    """The lines of one hit: header, evidence, optional dates, then the content indented.

    The header names the content date (the date the words are about, from the source) when there is one,
    beside the filing date; ``strongest`` (the page's top exact and morph BM25) normalises those two channels,
    which are raw BM25 otherwise."""
    dated = f"{hit.content_date} (content date; filed {hit.filed_at})" if hit.content_date else f"filed {hit.filed_at}"
    exact, morph = (
        (hit.lexical_exact, hit.lexical_morph)
        if strongest is None
        else (_share(hit.lexical_exact, strongest[0]), _share(hit.lexical_morph, strongest[1]))
    )
    lines = [
        f"[{hit.rank + 1}] {hit.wing}/{hit.room}  {dated}  {hit.id}",
        f"    score {hit.score:.3f}  semantic {hit.semantic:.3f}  lexical {hit.lexical:.3f}  "
        f"exact {exact:.3f}  morph {morph:.3f}",
    ]
    if hit.elapsed is not None:
        lines.append(f"    elapsed: {hit.elapsed}")
    if len(hit.occurrences) > 1:
        lines.append("    also recorded: " + ", ".join(o.content_date or o.filed_at for o in hit.occurrences[1:]))
    if hit.time_mentions:
        rendered = [m.resolved + (f"..{m.resolved_end}" if m.resolved_end else "") for m in hit.time_mentions]
        lines.append("    dates in text: " + ", ".join(rendered))
    lines.extend("    | " + line for line in hit.content.splitlines() or [""])
    return lines


def render_result(result: SearchResult) -> list[str]:
    """The whole page: notes (window, disclosures), then each hit, or a line saying there were none."""
    lines = search_disclosures(result)
    strongest = (
        max((hit.lexical_exact for hit in result.hits), default=0.0),
        max((hit.lexical_morph for hit in result.hits), default=0.0),
    )
    for hit in result.hits:
        lines.extend(render_hit(hit, strongest=strongest))
    if not result.hits:
        lines.append(no_hits_line(result))
    else:
        lines.append(message("search.evidence"))
    return lines


def _date(value: str | None, flag: str) -> date | None:
    if value is None:
        return None
    try:
        return parse_day(value)
    except ValueError as problem:
        raise click.BadParameter(str(problem), param_hint=flag) from None


def _instant(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_instant(value)
    except ValueError as problem:
        raise click.BadParameter(str(problem), param_hint="--ranked-at") from None


@click.command("search")
@click.argument("query")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to search.")
@click.option("--wing", default=None, help="Search only this wing.")
@click.option("--room", default=None, help="Search only this room.")
@click.option("--kind", type=click.Choice(KIND_VOCAB), default=None, help="Only drawers of this kind.")
@click.option("--min-trust", type=click.Choice(TRUST_VOCAB), default=None, help="Exclude wings below this trust.")
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="Hits per page.")
@click.option("--offset", type=int, default=0, show_default=True, help="First rank of the page.")
@click.option("--ranked-at", default=None, help="Pin the ranking's clock (ISO 8601 with timezone) so pages tile.")
@click.option("--room-cap", type=int, default=None, help="Soft per-room cap on the page (refilled in score order).")
@click.option("--language", type=click.Choice(LANGUAGES), default=None, help="Declare the corpus language.")
@click.option("--week-start", type=click.Choice(WEEK_STARTS), default=None)
@click.option("--date-order", type=click.Choice(DATE_ORDERS), default=None)
@click.option("--calendar", type=click.Choice(CALENDARS), default=None)
@click.option("--when", default=None, help="Date window: YYYY[-MM[-DD]], A..B, or an expression like 'last week'.")
@click.option("--when-from-query", is_flag=True, help="Read the date window out of the query.")
@click.option("--as-of", default=None, help="Report each hit's elapsed days up to this date (YYYY-MM-DD).")
@click.option("--vector", default=None, help="The query's embedding as a JSON array (external:<name>@<dim> vaults).")
@click.option(
    "--backend",
    type=click.Choice(("local", *INDEX_BACKENDS)),
    default="local",
    show_default=True,
    help="Draw candidate ids from a remote mirror (each re-verified and re-scored locally; see index push).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def search_command(
    query: str,
    vault: str,
    wing: str | None,
    room: str | None,
    kind: str | None,
    min_trust: str | None,
    limit: int,
    offset: int,
    ranked_at: str | None,
    room_cap: int | None,
    language: str | None,
    week_start: str | None,
    date_order: str | None,
    calendar: str | None,
    when: str | None,
    when_from_query: bool,
    as_of: str | None,
    vector: str | None,
    backend: str,
    as_json: bool,
) -> int:
    """Search QUERY in a vault (hybrid: cosine + BM25 + recency, every hit HMAC-verified)."""
    request = SearchRequest(
        query,
        limit=limit,
        offset=offset,
        wing=wing,
        room=room,
        kind=kind,
        min_trust=min_trust,
        ranked_at=_instant(ranked_at),
        room_cap=room_cap,
        when=when,
        when_from_query=when_from_query,
        as_of=_date(as_of, "--as-of"),
        conventions=reading_conventions(language, date_order, week_start, calendar),
        query_vector=None if vector is None else parse_vector_option(vector),
    )
    if backend != "local":
        if room_cap is not None:
            # The remote path does not apply a room cap: a declaration it cannot honour must not look honoured.
            raise click.BadParameter("a room cap is not applied through a remote backend; drop --room-cap or --backend")
        with open_mirror(backend, vault) as mirror, open_reader(vault) as store:
            result = Searcher.from_settings(store, store.embedder, mirror=mirror).search(request)
    else:
        # The pq and fde tiers keep their sealed rows in the vault: a writable handle persists what it builds, so
        # the next search loads them instead of training or encoding again (a read-only one builds in RAM only).
        opened = open_store(vault) if str(settings.retrieval()) in ("pq", "fde") else open_reader(vault)
        with opened as store:
            result = Searcher.from_settings(store, store.embedder).search(request)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        for line in render_result(result):
            click.echo(line)
    return 0

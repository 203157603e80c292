"""``undercroft kg add|query|rel|invalidate|supersede|timeline|stats|entities|receipts|authority|canonical``."""

from __future__ import annotations

import json

import click
from undercroft_store import DEFAULT_VAULT, VaultStore
from undercroft_store.memory.kg.facts import AUTHORITY_CLASSES, GROUNDINGS, REVIEW_STATES, Fact
from undercroft_store.memory.kg.receipts import IntegrityVerdict, fact_receipts, support_of

from undercroft_cli._internal.composition import open_reader, open_store
from undercroft_cli._internal.i18n import message
from undercroft_cli.operations.authority import declare_tier
from undercroft_cli.operations.entities import ENTITY_PAGE_MAX, entity_records
from undercroft_cli.operations.facts import add_fact, close_fact, parse_span, supersede_fact
from undercroft_cli.operations.graph import (
    canonical_fact,
    fact_timeline,
    facts_about,
    facts_by_relation,
    graph_counts,
    receipt_rows,
)
from undercroft_cli.operations.values import ValueRefused

__all__ = ["kg_group"]

_VAULT = click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to use.")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
_GROUNDING = click.option("--grounding", type=click.Choice(GROUNDINGS), default=None, help="Only facts so grounded.")


def _line(fact: Fact) -> str:
    window = f"[{(fact.valid_from or '…')[:10]} → {(fact.valid_to or 'now')[:10]}]"
    return f"{fact.id}  {fact.subject} —{fact.predicate}→ {fact.object}  {window}  {fact.grounding}"


def _show(facts: list[Fact], as_json: bool, store: VaultStore) -> None:
    if as_json:
        # Each cited fact's support: its receipt verdict and the UTF-8 byte ranges of its words in the drawer.
        support = support_of(store, facts)
        records = [{**f.to_dict(), **({"support": support[f.id].to_dict()} if f.id in support else {})} for f in facts]
        click.echo(json.dumps({"facts": records}, ensure_ascii=False))
        return
    for fact in facts:
        click.echo(_line(fact))
    if not facts:
        click.echo(message("kg.no_facts"))


@click.group("kg")
def kg_group() -> None:
    """The temporal knowledge graph: facts with validity windows, sealed and audit-chained."""


@kg_group.command("add")
@click.argument("subject")
@click.argument("predicate")
@click.argument("obj", metavar="OBJECT")
@_VAULT
@click.option("--valid-from", default=None, help="When the fact became true: YYYY, YYYY-MM, YYYY-MM-DD or a timestamp.")
@click.option("--valid-to", default=None, help="When it stopped being true (same precisions).")
@click.option("--source", "source_drawer", default=None, help="Drawer id the fact cites (its receipt).")
@click.option("--span", default=None, help="START:END character span of the cited drawer.")
@click.option("--extractor", default=None, help="Which model or person claimed the fact.")
@click.option("--grounding", type=click.Choice(GROUNDINGS), default="unevaluated", show_default=True)
@_JSON
def kg_add(
    subject: str,
    predicate: str,
    obj: str,
    vault: str,
    valid_from: str | None,
    valid_to: str | None,
    source_drawer: str | None,
    span: str | None,
    extractor: str | None,
    grounding: str,
    as_json: bool,
) -> int:
    """Add SUBJECT PREDICATE OBJECT."""
    try:
        bounds = parse_span(span) if span is not None else None
    except ValueRefused as refused:
        raise click.BadParameter(f"--span must be {refused.expected}, got {span!r}") from None
    with open_store(vault) as store:
        fact = add_fact(
            store,
            subject,
            predicate,
            obj,
            valid_from=valid_from,
            valid_to=valid_to,
            source_drawer=source_drawer,
            source_span=bounds,
            extractor=extractor,
            grounding=grounding,
        )
    click.echo(json.dumps(fact.to_dict(), ensure_ascii=False) if as_json else f"added: {fact.id}")
    return 0


@kg_group.command("query")
@click.argument("entity")
@_VAULT
@click.option("--direction", type=click.Choice(["outgoing", "incoming", "both"]), default="both", show_default=True)
@click.option("--as-of", default=None, help="Only facts true at this ISO date or timestamp.")
@_GROUNDING
@_JSON
def kg_query(entity: str, vault: str, direction: str, as_of: str | None, grounding: str | None, as_json: bool) -> int:
    """Facts about ENTITY (what was true AS-OF a date, when given)."""
    with open_reader(vault) as store:
        facts = facts_about(store, entity, direction=direction, as_of=as_of, grounding=grounding)  # type: ignore[arg-type]
        _show(facts, as_json, store)
    return 0


@kg_group.command("rel")
@click.argument("predicate")
@_VAULT
@click.option("--as-of", default=None)
@_GROUNDING
@_JSON
def kg_rel(predicate: str, vault: str, as_of: str | None, grounding: str | None, as_json: bool) -> int:
    """Facts with PREDICATE."""
    with open_reader(vault) as store:
        facts = facts_by_relation(store, predicate, as_of=as_of, grounding=grounding)
        _show(facts, as_json, store)
    return 0


@kg_group.command("invalidate")
@click.argument("fact_id")
@_VAULT
@click.option("--ended", default=None, help="When it stopped being true (default now).")
@_JSON
def kg_invalidate(fact_id: str, vault: str, ended: str | None, as_json: bool) -> int:
    """Close FACT_ID's validity window."""
    with open_store(vault) as store:
        fact = close_fact(store, fact_id, ended=ended)
    click.echo(json.dumps(fact.to_dict(), ensure_ascii=False) if as_json else f"closed: {fact.id} at {fact.valid_to}")
    return 0


@kg_group.command("supersede")
@click.argument("fact_id")
@click.argument("new_object")
@_VAULT
@click.option("--at", default=None, help="When the change happened (default now).")
@_JSON
def kg_supersede(fact_id: str, new_object: str, vault: str, at: str | None, as_json: bool) -> int:
    """Close FACT_ID and open its successor with NEW_OBJECT, atomically."""
    with open_store(vault) as store:
        closed, successor = supersede_fact(store, fact_id, new_object, at=at)
    if as_json:
        click.echo(json.dumps({"closed": closed.to_dict(), "opened": successor.to_dict()}, ensure_ascii=False))
        return 0
    click.echo(f"closed: {closed.id}\nopened: {successor.id}")
    return 0


@kg_group.command("timeline")
@click.argument("entity", required=False)
@_VAULT
@_JSON
def kg_timeline(entity: str | None, vault: str, as_json: bool) -> int:
    """Every fact (about ENTITY), closed ones included, in validity order."""
    with open_reader(vault) as store:
        facts = fact_timeline(store, entity)
        _show(facts, as_json, store)
    return 0


@kg_group.command("stats")
@_VAULT
@click.option("--json", "as_json", is_flag=True, help="Accepted for uniformity: the counts are always JSON.")
def kg_stats(vault: str, as_json: bool) -> int:
    """Entity, fact, active and closed counts (JSON)."""
    with open_store(vault, read_only=True) as store:
        click.echo(json.dumps(graph_counts(store)))
    return 0


@kg_group.command("entities")
@_VAULT
@click.option("--limit", type=click.IntRange(1, ENTITY_PAGE_MAX), default=100, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@_JSON
def kg_entities(vault: str, limit: int, offset: int, as_json: bool) -> int:
    """Entities, paged."""
    with open_reader(vault) as store:
        page = entity_records(store, limit=limit, offset=offset)
    if as_json:
        click.echo(json.dumps(page, ensure_ascii=False))
        return 0
    for entity in page["entities"]:
        click.echo(f"{entity['id']}  {entity['name']}")
    return 0


@kg_group.command("receipts")
@_VAULT
@click.option("--integrity-only", is_flag=True, help="One HMAC per fact, no drawer reads: {ok, checked}.")
@_JSON
def kg_receipts(vault: str, integrity_only: bool, as_json: bool) -> int:
    """Receipt verdicts per cited fact (exit 2 when any is tampered)."""
    with open_store(vault, read_only=True) as store:
        result = fact_receipts(store, integrity_only=integrity_only)
    if isinstance(result, IntegrityVerdict):
        click.echo(json.dumps({"ok": result.ok, "checked": result.checked}))
        return 0 if result.ok else 2
    if as_json:
        rows = receipt_rows(result)
        click.echo(json.dumps({"ok": result.ok, "receipts": rows, "counts": result.counts, "uncited": result.uncited}))
        return 0 if result.ok else 2
    for receipt in result.receipts:
        click.echo(f"{receipt.fact_id}  {receipt.source_drawer}  {receipt.verdict}")
    click.echo(json.dumps({"counts": result.counts, "uncited": result.uncited}))
    return 0 if result.ok else 2


@kg_group.command("authority")
@click.argument("fact_id")
@_VAULT
@click.option("--class", "authority_class", type=click.Choice(AUTHORITY_CLASSES), default=None)
@click.option("--review", "review_state", type=click.Choice(REVIEW_STATES), default=None)
@click.option("--key", "canonical_key", default=None, help="The canonical key the fact answers.")
@_JSON
def kg_authority(
    fact_id: str,
    vault: str,
    authority_class: str | None,
    review_state: str | None,
    canonical_key: str | None,
    as_json: bool,
) -> int:
    """Declare FACT_ID's authority tier (operator only; promotion displaces the key's holder)."""
    with open_store(vault) as store:
        change = declare_tier(
            store, fact_id, authority_class=authority_class, review_state=review_state, canonical_key=canonical_key
        )
    if as_json:
        click.echo(json.dumps(change, ensure_ascii=False))
        return 0
    fact = change["fact"]
    click.echo(f"{fact['id']}  {fact['authority_class']}  {fact['review_state']}  {fact['canonical_key'] or '-'}")
    if change["displaced"] is not None:
        click.echo(f"displaced: {change['displaced']['id']}")
    return 0


@kg_group.command("canonical")
@click.argument("key")
@_VAULT
@_JSON
def kg_canonical(key: str, vault: str, as_json: bool) -> int:
    """The one active approved fact for KEY, or nothing (exit 1)."""
    with open_reader(vault) as store:
        fact = canonical_fact(store, key)
        if fact is None:
            click.echo("no canonical fact", err=True)
            return 1
        _show([fact], as_json, store)
    return 0

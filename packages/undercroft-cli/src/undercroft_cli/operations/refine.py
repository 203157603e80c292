"""The refine operation: distil selected drawers into knowledge-graph facts through a served model.

One function, `refine`, that every surface calls (the CLI's ``refine`` command today; the ``/v1`` ``refine``
route and ``undercroft-orchestrator ops`` when they land — never MCP, it is OPERATOR_ONLY). In order:

1. **Select** the drawers in scope (``wing``/``room``, newest first, at most ``limit``; never the quarantine
   wing), read through the verified door under ``silent(EXPORT)``: this run records its own egress instead.
2. **Screen the source**: a drawer the deterministic tier-1 detector flags (an instruction, a tool call, an
   exfiltration marker…) is never sent — refused ``source-flagged:<signal>``.
3. **Send** one drawer per request (`undercroft_llm.Extractor`): the answer's strict schema refuses a malformed
   answer whole (a counted non-event, never a partial write); a failed request is a counted non-event too.
4. **Ground** each fact against its own drawer (`undercroft_llm.grounding`: stated with spans, background, or
   refused when its subject is named nowhere in the note but an order to the extractor).
5. **Screen the fact** — its words are untrusted data like any drawer's: the tier-1 detector always, and the
   vault's admission gate (the tier-2 advisor included) when ``UNDERCROFT_ADMISSION=quarantine``; a flagged
   fact is refused ``fact-flagged:<signal>``.
6. **Write** the survivors through the KG's normal audited path (``KnowledgeGraph.add_many``, one transaction
   per drawer) with the extractor's identity inside each fact's HMAC — unless ``dry_run``.
7. **Record** one ``egress/refine`` record when at least one drawer was POSTed (a dry run included; a run that
   errors mid-loop records the count that actually left; a run that selected nothing records nothing).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import VaultStore
from undercroft_store.governance.admission import Subject, detect
from undercroft_store.governance.quarantine import gate_for
from undercroft_store.governance.read_audit import InternalRead, record_egress, silent
from undercroft_store.memory.kg.graph import FactInput, KnowledgeGraph

if TYPE_CHECKING:
    from undercroft_llm import Distilled, Extractor

__all__ = ["REFINE_SURFACE_STAMP", "RefineReport", "refine"]

#: The added_by the admission gate sees for a distilled fact (a surface stamp, never a writer's claim).
REFINE_SURFACE_STAMP: Final = "refine"


@dataclass
class RefineReport:
    """What one run did: counts only, and refusal reasons — never a drawer's or a fact's words."""

    vault: str
    extractor: str
    destination: str
    dry_run: bool
    scope: dict[str, str | None]
    selected: int = 0
    sent: int = 0
    answered: int = 0
    malformed: int = 0
    failed: int = 0
    facts_written: int = 0
    facts_existing: int = 0
    facts_proposed: int = 0
    grounding: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    egress_recorded: bool = False
    spans: list[dict[str, object]] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready (``--json``, and the /v1 route's body when it lands)."""
        return {
            "vault": self.vault,
            "extractor": self.extractor,
            "destination": self.destination,
            "dry_run": self.dry_run,
            "scope": dict(self.scope),
            "selected": self.selected,
            "sent": self.sent,
            "answered": self.answered,
            "malformed": self.malformed,
            "failed": self.failed,
            "facts_proposed": self.facts_proposed,
            "facts_written": self.facts_written,
            "facts_existing": self.facts_existing,
            "grounding": dict(sorted(self.grounding.items())),
            "refused": dict(sorted(self.refused.items())),
            "egress_recorded": self.egress_recorded,
            "spans": list(self.spans),
        }

    def render(self) -> str:
        """Human lines for the terminal."""
        refused = ", ".join(f"{reason} ×{count}" for reason, count in sorted(self.refused.items())) or "none"
        grounding = ", ".join(f"{kind} {count}" for kind, count in sorted(self.grounding.items())) or "none"
        return "\n".join(
            [
                f"refine {'(dry run) ' if self.dry_run else ''}through {self.extractor} at {self.destination}",
                f"drawers: {self.selected} selected, {self.sent} sent, {self.answered} answered, "
                f"{self.malformed} malformed answers, {self.failed} failed requests",
                f"facts: {self.facts_proposed} accepted ({grounding}); {self.facts_written} written, "
                f"{self.facts_existing} already known",
                f"refused: {refused}",
                f"egress/refine record: {'written' if self.egress_recorded else 'none (nothing was sent)'}",
            ]
        )


def _source_flags(content: str) -> list[str]:
    findings = detect(content, wing="refine", room="source")
    return sorted({f.signal.value for f in findings if f.subject is Subject.CONTENT})


def _fact_flags(store: VaultStore, fact: Distilled, wing: str, room: str) -> list[str]:
    text = f"{fact.subject} {fact.predicate} {fact.object}"
    flags = _source_flags(text)
    gate = gate_for(store)
    if not flags and gate.policy.screening:
        decision = gate.screen(text, wing=wing, room=room, added_by=REFINE_SURFACE_STAMP)
        flags = [signal.value for signal in decision.signals]
    return flags


def refine(
    store: VaultStore,
    extractor: Extractor,
    *,
    surface: str,
    wing: str | None = None,
    room: str | None = None,
    limit: int | None = None,
    dry_run: bool = False,
) -> RefineReport:
    """Run refine over ``store`` (see the module docstring); raises only for what stops the run."""
    from undercroft_llm import MalformedAnswer, ModelCallFailed

    report = RefineReport(
        store.name, extractor.identity, extractor.model.destination, dry_run, {"wing": wing, "room": room}
    )
    with silent(store, InternalRead.EXPORT):
        drawers = [d for d in store.list_drawers(wing=wing, room=room, limit=limit) if d.wing != QUARANTINE_WING]
    report.selected = len(drawers)
    graph = KnowledgeGraph(store)
    try:
        for drawer in drawers:
            flags = _source_flags(drawer.content)
            if flags:
                report.refused.update(f"source-flagged:{flag}" for flag in flags[:1])
                continue
            report.sent += 1
            try:
                extraction = extractor.extract(drawer.id, drawer.content)
            except ModelCallFailed:
                report.failed += 1
                continue
            except MalformedAnswer:
                report.malformed += 1
                report.refused["malformed-answer"] += 1
                continue
            report.answered += 1
            report.refused.update(reason.split(":", 1)[0] for reason in extraction.refused)
            accepted: list[Distilled] = []
            for fact in extraction.facts:
                fact_flags = _fact_flags(store, fact, drawer.wing, drawer.room)
                if fact_flags:
                    report.refused[f"fact-flagged:{fact_flags[0]}"] += 1
                    continue
                accepted.append(fact)
                report.grounding[fact.grounding] += 1
                if fact.byte_span is not None:
                    report.spans.append({"drawer": drawer.id, "bytes": list(fact.byte_span)})
            report.facts_proposed += len(accepted)
            if dry_run or not accepted:
                continue
            before = graph.stats().facts
            graph.add_many(
                [
                    FactInput(
                        fact.subject,
                        fact.predicate,
                        fact.object,
                        source_drawer=drawer.id,
                        source_span=fact.span,
                        extractor=extractor.identity,
                        grounding=fact.grounding,
                    )
                    for fact in accepted
                ]
            )
            written = graph.stats().facts - before
            report.facts_written += written
            report.facts_existing += len(accepted) - written
    finally:
        if report.sent:
            record_egress(
                store,
                "refine",
                surface=surface,
                recipient=report.destination,
                counts={"drawers_sent": report.sent, "facts_written": report.facts_written},
                manifest_digest="",
                details={
                    "model": report.extractor,
                    "wing": wing,
                    "room": room,
                    "limit": limit,
                    "dry_run": dry_run,
                },
            )
            report.egress_recorded = True
    return report

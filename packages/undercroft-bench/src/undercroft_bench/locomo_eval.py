"""The LoCoMo instrument: one fresh retriever per conversation, each question verbatim, session R@k and turn R@k.

Protocol (issue 11, the head-to-head section): chunks by the registered chunker (`protocol` by default), a
fresh retriever per conversation, every question searched verbatim for the top `pool` chunks, those mapped to
sessions deduplicated in rank order and the first `k` kept; gold sessions parsed leniently from `evidence`.
A question with no parseable evidence session is not evaluable and is not searched. Ingest time is the
retriever's construction plus `index` (chunking is the harness's work and excluded); search time is the sum
of `search` calls. Both come from an injected clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from undercroft_bench.arms import resolve_arm
from undercroft_bench.chunking import chunk_sessions
from undercroft_bench.errors import InvalidSetting
from undercroft_bench.evidence import parse_evidence
from undercroft_bench.locomo_data import LocomoConversation
from undercroft_bench.retriever import ArmContext, ArmFactory
from undercroft_bench.scoring import (
    Tally,
    category_order,
    checked_ranking,
    sessions_in_rank_order,
    turns_reached,
)

__all__ = ["LocomoReport", "LocomoSettings", "QuestionResult", "format_locomo", "locomo_json", "run_locomo"]

UNITS = ("session", "turn")


@dataclass(frozen=True)
class LocomoSettings:
    """Everything that defines a LoCoMo run; recorded verbatim in the JSON report."""

    arm: str = "bm25"
    k: int = 10
    pool: int = 50
    unit: str = "session"
    chunking: str = "protocol"
    seed: int = 0
    limit_conversations: int | None = None
    options: Mapping[str, str] = field(default_factory=dict)

    def validate(self) -> None:
        """Refuse settings that cannot define a run, with the offending value in the message."""
        if self.k < 1:
            raise InvalidSetting(f"-k must be at least 1, got {self.k}")
        if self.pool < self.k:
            raise InvalidSetting(f"--pool must be at least -k ({self.k}), got {self.pool}")
        if self.unit not in UNITS:
            raise InvalidSetting(f"--unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if self.limit_conversations is not None and self.limit_conversations < 1:
            raise InvalidSetting(f"--limit-conversations must be at least 1, got {self.limit_conversations}")


@dataclass(frozen=True)
class QuestionResult:
    """One question's outcome; `session_hit`/`turn_hit` are None when that unit is not evaluable for it."""

    conversation_id: str
    index: int
    category: str
    question: str
    evidence: tuple[str, ...]
    gold_sessions: tuple[str, ...]
    gold_turns: tuple[tuple[int, int], ...]
    unparsed: tuple[str, ...]
    ranking: tuple[str, ...]
    top_sessions: tuple[str, ...]
    session_hit: bool | None
    turn_hit: bool | None


@dataclass
class LocomoReport:
    """Exact tallies per category and in total, counts, timings and every question's result."""

    settings: LocomoSettings
    conversations: int = 0
    chunks: int = 0
    questions: int = 0
    unparsed_tokens: int = 0
    session_by_category: dict[str, Tally] = field(default_factory=dict)
    turn_by_category: dict[str, Tally] = field(default_factory=dict)
    session_total: Tally = field(default_factory=Tally)
    turn_total: Tally = field(default_factory=Tally)
    ingest_seconds: float = 0.0
    search_seconds: float = 0.0
    results: list[QuestionResult] = field(default_factory=list)

    @property
    def evaluable(self) -> int:
        """Questions with at least one parseable gold session (the session denominator)."""
        return self.session_total.total

    @property
    def queries(self) -> int:
        """Searches issued (one per evaluable question)."""
        return self.session_total.total


def run_locomo(
    conversations: Sequence[LocomoConversation],
    settings: LocomoSettings,
    *,
    factory: ArmFactory | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> LocomoReport:
    """Run the instrument over `conversations` with the arm named in `settings` (or an explicit `factory`)."""
    settings.validate()
    build = factory if factory is not None else resolve_arm(settings.arm)
    report = LocomoReport(settings=settings)
    selected = conversations[: settings.limit_conversations] if settings.limit_conversations else conversations
    for conversation in selected:
        _run_conversation(conversation, settings, build, clock, report)
    return report


def _run_conversation(
    conversation: LocomoConversation,
    settings: LocomoSettings,
    build: ArmFactory,
    clock: Callable[[], float],
    report: LocomoReport,
) -> None:
    chunks = chunk_sessions(settings.chunking, conversation.sessions)
    by_id = {chunk.chunk_id: chunk for chunk in chunks}
    started = clock()
    retriever = build(ArmContext(scope_id=conversation.conversation_id, seed=settings.seed, options=settings.options))
    retriever.index(chunks)
    report.ingest_seconds += clock() - started
    report.conversations += 1
    report.chunks += len(chunks)
    for item in conversation.questions:
        report.questions += 1
        evidence = parse_evidence(item.evidence)
        report.unparsed_tokens += len(evidence.unparsed)
        gold_sessions = tuple(str(session) for session in evidence.sessions)
        ranking: list[str] = []
        top_sessions: list[str] = []
        session_hit: bool | None = None
        turn_hit: bool | None = None
        if gold_sessions:
            started = clock()
            answer = retriever.search(item.question, settings.pool)
            report.search_seconds += clock() - started
            ranking = checked_ranking(answer, by_id, settings.pool, settings.arm)
            top_sessions = sessions_in_rank_order(ranking, by_id, settings.k)
            session_hit = any(session in top_sessions for session in gold_sessions)
            report.session_total.add(session_hit)
            report.session_by_category.setdefault(item.category, Tally()).add(session_hit)
            if evidence.turns:
                reached = turns_reached(ranking, by_id, settings.k)
                turn_hit = any(turn in reached for turn in evidence.turns)
                report.turn_total.add(turn_hit)
                report.turn_by_category.setdefault(item.category, Tally()).add(turn_hit)
        report.results.append(
            QuestionResult(
                conversation_id=conversation.conversation_id,
                index=item.index,
                category=item.category,
                question=item.question,
                evidence=item.evidence,
                gold_sessions=gold_sessions,
                gold_turns=evidence.turns,
                unparsed=evidence.unparsed,
                ranking=tuple(ranking),
                top_sessions=tuple(top_sessions),
                session_hit=session_hit,
                turn_hit=turn_hit,
            )
        )


def _pair(report: LocomoReport, category: str | None) -> tuple[str, str]:
    k = report.settings.k
    session = report.session_total if category is None else report.session_by_category[category]
    turn = report.turn_total if category is None else report.turn_by_category.get(category, Tally())
    session_text = f"session R@{k} {session.describe()}"
    turn_text = f"turn R@{k} {turn.describe()}"
    return (turn_text, session_text) if report.settings.unit == "turn" else (session_text, turn_text)


def format_locomo(report: LocomoReport, source: str) -> list[str]:
    """The printed report: a header, one line per category, the total, the evaluable count, the timings."""
    settings = report.settings
    lines = [
        f"LoCoMo {settings.unit} R@{settings.k} | arm {settings.arm} | chunking {settings.chunking} | "
        f"pool {settings.pool} | {source} | {report.conversations} conversations, {report.chunks} chunks"
    ]
    for category in sorted(report.session_by_category, key=category_order):
        headline, beside = _pair(report, category)
        lines.append(f"category {category}: {headline} | {beside}")
    headline, beside = _pair(report, None)
    lines.append(f"total ({report.evaluable} evaluable of {report.questions}): {headline} | {beside}")
    lines.append(
        f"evaluable: {report.evaluable} of {report.questions} questions "
        f"({report.questions - report.evaluable} without a parseable evidence session; "
        f"{report.unparsed_tokens} evidence tokens unparsed; {report.turn_total.total} with gold turns)"
    )
    per_conversation = report.ingest_seconds / report.conversations if report.conversations else 0.0
    lines.append(
        f"ingest: {report.ingest_seconds:.3f} s total | {per_conversation:.3f} s per conversation | "
        f"{report.chunks} chunks"
    )
    per_query = 1000.0 * report.search_seconds / report.queries if report.queries else 0.0
    lines.append(
        f"search: {report.search_seconds:.3f} s total | {per_query:.3f} ms per query | {report.queries} queries"
    )
    return lines


def _tallies(total: Tally, by_category: Mapping[str, Tally]) -> dict[str, object]:
    return {
        "hits": total.hits,
        "total": total.total,
        "by_category": {
            category: {"hits": tally.hits, "total": tally.total}
            for category, tally in sorted(by_category.items(), key=lambda pair: category_order(pair[0]))
        },
    }


def locomo_json(report: LocomoReport, source: Mapping[str, str]) -> dict[str, object]:
    """The machine-readable report: settings, raw numerators/denominators, timings, per-question results."""
    settings = report.settings
    return {
        "instrument": "locomo",
        "source": dict(source),
        "settings": {
            "arm": settings.arm,
            "k": settings.k,
            "pool": settings.pool,
            "unit": settings.unit,
            "chunking": settings.chunking,
            "seed": settings.seed,
            "limit_conversations": settings.limit_conversations,
            "options": dict(settings.options),
        },
        "counts": {
            "conversations": report.conversations,
            "chunks": report.chunks,
            "questions": report.questions,
            "evaluable": report.evaluable,
            "unparsed_tokens": report.unparsed_tokens,
        },
        "session": _tallies(report.session_total, report.session_by_category),
        "turn": _tallies(report.turn_total, report.turn_by_category),
        "timing": {
            "ingest_seconds": report.ingest_seconds,
            "search_seconds": report.search_seconds,
            "queries": report.queries,
        },
        "questions": [
            {
                "conversation_id": result.conversation_id,
                "index": result.index,
                "category": result.category,
                "question": result.question,
                "evidence": list(result.evidence),
                "gold_sessions": list(result.gold_sessions),
                "gold_turns": [list(turn) for turn in result.gold_turns],
                "unparsed": list(result.unparsed),
                "top_sessions": list(result.top_sessions),
                "top_chunks": list(result.ranking[: settings.k]),
                "session_hit": result.session_hit,
                "turn_hit": result.turn_hit,
            }
            for result in report.results
        ],
    }

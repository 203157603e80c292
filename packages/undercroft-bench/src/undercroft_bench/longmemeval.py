"""The LongMemEval instrument: session-level R@k (default 5) per question type.

Each question carries its own haystack, so each question gets one fresh retriever over that haystack's
sessions, rendered and packed exactly as LoCoMo's (`ROLE said, "…"` lines, greedy ≤ 800-character chunks).
The ranking's top `pool` chunks map to sessions deduplicated in rank order; a hit iff any of
`answer_session_ids` is among the first `k`. Abstention questions (`question_id` ending `_abs`) and
questions without answer sessions are counted but not evaluable, as in upstream's retrieval evaluation.
Accepts upstream's top-level list and the schema fixture's `{"examples": [...]}`.
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from undercroft_bench._internal.jsonfile import read_json
from undercroft_bench.arms import resolve_arm
from undercroft_bench.chunking import Session, Turn, chunk_sessions
from undercroft_bench.errors import DataError, InvalidSetting
from undercroft_bench.retriever import ArmContext, ArmFactory
from undercroft_bench.scoring import Tally, checked_ranking, sessions_in_rank_order

__all__ = [
    "LongMemEvalQuestion",
    "LongMemEvalReport",
    "format_longmemeval",
    "load_longmemeval",
    "longmemeval_json",
    "parse_longmemeval",
    "run_longmemeval",
]


@dataclass(frozen=True)
class LongMemEvalQuestion:
    """One question with its own haystack of sessions and the ids of the sessions that hold its answer."""

    question_id: str
    question_type: str
    question: str
    sessions: tuple[Session, ...]
    answer_session_ids: tuple[str, ...]

    @property
    def evaluable(self) -> bool:
        """False for abstention questions and for questions naming no answer session."""
        return bool(self.answer_session_ids) and not self.question_id.endswith("_abs")


@dataclass
class LongMemEvalReport:
    """Exact tallies per question type and in total, with timings and per-question hits."""

    arm: str
    k: int
    pool: int
    questions: int = 0
    chunks: int = 0
    by_type: dict[str, Tally] = field(default_factory=dict)
    total: Tally = field(default_factory=Tally)
    ingest_seconds: float = 0.0
    search_seconds: float = 0.0
    results: list[dict[str, object]] = field(default_factory=list)


def load_longmemeval(path: pathlib.Path) -> list[LongMemEvalQuestion]:
    """Read and parse a LongMemEval file (top-level list, or `{"examples": [...]}`)."""
    return parse_longmemeval(read_json(path, "LongMemEval"))


def parse_longmemeval(document: object) -> list[LongMemEvalQuestion]:
    """Parse an already-decoded LongMemEval document, refusing unusable shapes with a precise DataError."""
    if isinstance(document, Mapping) and "examples" in document:
        document = document["examples"]
    if not isinstance(document, list):
        raise DataError(
            f'LongMemEval data must be a list of questions or {{"examples": [...]}}, got {type(document).__name__}'
        )
    if not document:
        raise DataError("LongMemEval data holds no questions")
    return [_question(position, item) for position, item in enumerate(document)]


def _question(position: int, item: object) -> LongMemEvalQuestion:
    if not isinstance(item, Mapping):
        raise DataError(f"LongMemEval question {position} is a {type(item).__name__}, not an object")
    question_id = str(item.get("question_id") or f"question-{position}")
    where = f"LongMemEval question {question_id!r}"
    question = item.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataError(f"{where} has no 'question' text")
    ids, sessions = item.get("haystack_session_ids"), item.get("haystack_sessions")
    if not isinstance(ids, list) or not isinstance(sessions, list):
        raise DataError(f"{where} needs 'haystack_session_ids' and 'haystack_sessions' lists")
    if len(ids) != len(sessions):
        raise DataError(f"{where} has {len(ids)} haystack_session_ids but {len(sessions)} haystack_sessions")
    answers = item.get("answer_session_ids", [])
    if not isinstance(answers, list):
        raise DataError(f"{where}: 'answer_session_ids' is not a list")
    return LongMemEvalQuestion(
        question_id=question_id,
        question_type=str(item.get("question_type") or "untyped"),
        question=question,
        sessions=tuple(_session(where, str(sid), turns) for sid, turns in zip(ids, sessions, strict=True)),
        answer_session_ids=tuple(str(answer) for answer in answers),
    )


def _session(where: str, session_id: str, turns: object) -> Session:
    if not isinstance(turns, list):
        raise DataError(f"{where} session {session_id!r} is not a list of turns")
    parsed: list[Turn] = []
    for index, turn in enumerate(turns):
        if (
            not isinstance(turn, Mapping)
            or not isinstance(turn.get("role"), str)
            or not isinstance(turn.get("content"), str)
        ):
            raise DataError(f"{where} session {session_id!r} turn {index} needs 'role' and 'content' strings")
        parsed.append(Turn(speaker=str(turn["role"]), text=str(turn["content"]), turn_id=f"{session_id}#{index}"))
    return Session(session_id=session_id, turns=tuple(parsed))


def run_longmemeval(
    questions: Sequence[LongMemEvalQuestion],
    *,
    arm: str = "bm25",
    k: int = 5,
    pool: int = 50,
    seed: int = 0,
    factory: ArmFactory | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> LongMemEvalReport:
    """Score every evaluable question with a fresh retriever over its own haystack."""
    if k < 1:
        raise InvalidSetting(f"-k must be at least 1, got {k}")
    if pool < k:
        raise InvalidSetting(f"--pool must be at least -k ({k}), got {pool}")
    build = factory if factory is not None else resolve_arm(arm)
    report = LongMemEvalReport(arm=arm, k=k, pool=pool)
    for item in questions:
        report.questions += 1
        if not item.evaluable:
            report.results.append({"question_id": item.question_id, "type": item.question_type, "hit": None})
            continue
        chunks = chunk_sessions("protocol", item.sessions)
        by_id = {chunk.chunk_id: chunk for chunk in chunks}
        started = clock()
        retriever = build(ArmContext(scope_id=item.question_id, seed=seed))
        retriever.index(chunks)
        report.ingest_seconds += clock() - started
        report.chunks += len(chunks)
        started = clock()
        answer = retriever.search(item.question, pool)
        report.search_seconds += clock() - started
        top = sessions_in_rank_order(checked_ranking(answer, by_id, pool, arm), by_id, k)
        hit = any(session in top for session in item.answer_session_ids)
        report.total.add(hit)
        report.by_type.setdefault(item.question_type, Tally()).add(hit)
        report.results.append(
            {"question_id": item.question_id, "type": item.question_type, "top_sessions": top, "hit": hit}
        )
    return report


def format_longmemeval(report: LongMemEvalReport, source: str) -> list[str]:
    """The printed report: a header, one line per question type, the total naming the evaluable count, timings."""
    lines = [f"LongMemEval session R@{report.k} | arm {report.arm} | pool {report.pool} | {source}"]
    for question_type in sorted(report.by_type):
        lines.append(f"type {question_type}: R@{report.k} {report.by_type[question_type].describe()}")
    lines.append(
        f"total ({report.total.total} evaluable of {report.questions}): R@{report.k} {report.total.describe()}"
    )
    queries = report.total.total
    per_query = 1000.0 * report.search_seconds / queries if queries else 0.0
    lines.append(f"ingest: {report.ingest_seconds:.3f} s total | {report.chunks} chunks")
    lines.append(f"search: {report.search_seconds:.3f} s total | {per_query:.3f} ms per query | {queries} queries")
    return lines


def longmemeval_json(report: LongMemEvalReport, source: Mapping[str, str]) -> dict[str, object]:
    """The machine-readable report: settings, raw numerators/denominators, timings, per-question results."""
    return {
        "instrument": "longmemeval",
        "source": dict(source),
        "settings": {"arm": report.arm, "k": report.k, "pool": report.pool},
        "session": {
            "hits": report.total.hits,
            "total": report.total.total,
            "by_type": {name: {"hits": t.hits, "total": t.total} for name, t in sorted(report.by_type.items())},
        },
        "counts": {"questions": report.questions, "chunks": report.chunks},
        "timing": {"ingest_seconds": report.ingest_seconds, "search_seconds": report.search_seconds},
        "questions": report.results,
    }

"""`config check` data: every `UNDERCROFT_*` variable of an environment through its resolver, opening nothing."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from undercroft_config._internal.parsers import Unparsable
from undercroft_config.capabilities import Build
from undercroft_config.declaration import Resolution, Status
from undercroft_config.registry import PREFIX, REGISTRY, declaration, suggest
from undercroft_config.resolution import evaluate
from undercroft_config.values import Address

__all__ = ["CheckEntry", "CheckReport", "check"]


@dataclass(frozen=True)
class CheckEntry:
    """The verdict on one variable present in the environment."""

    name: str
    status: Status
    #: The warning, refusal or unknown-name message; None when validated or accepted cleanly.
    message: str | None = None


@dataclass(frozen=True)
class CheckReport:
    """Every `UNDERCROFT_*` variable present, in name order, and whether the environment would start."""

    entries: tuple[CheckEntry, ...]

    @property
    def refuses(self) -> bool:
        """True when at least one declaration refuses: this environment would not start."""
        return any(entry.status is Status.REFUSED for entry in self.entries)

    @property
    def starts(self) -> bool:
        """True when nothing refuses."""
        return not self.refuses

    def with_status(self, status: Status) -> tuple[CheckEntry, ...]:
        """The entries with one status."""
        return tuple(entry for entry in self.entries if entry.status is status)


def _cross_checks(env: Mapping[str, str], results: dict[str, Resolution]) -> dict[str, str]:
    """Refusals that need two declarations at once, keyed by the variable they are reported on."""
    refusals: dict[str, str] = {}
    metrics = results.get("UNDERCROFT_ORCH_METRICS_ADDR")
    if metrics is not None and isinstance(metrics.value, Address) and not metrics.value.is_loopback:
        if "UNDERCROFT_ORCH_METRICS_TOKEN" not in env:
            refusals["UNDERCROFT_ORCH_METRICS_ADDR"] = (
                f"UNDERCROFT_ORCH_METRICS_ADDR={str(metrics.value)!r} refuses to start: a non-loopback metrics "
                "listener needs UNDERCROFT_ORCH_METRICS_TOKEN; legal: a loopback address, or declare the token"
            )
    retrieval = results.get("UNDERCROFT_RETRIEVAL")
    reranker = results.get("UNDERCROFT_RERANKER")
    if retrieval is not None and str(retrieval.value) == "fde":
        if reranker is None or str(reranker.value) not in ("colbert", "colbert-ort"):
            # The tier reads the query's and every drawer's ColBERT token matrix: without the late encoder
            # there is nothing to draw from, and a silent full scan would misreport what runs.
            refusals["UNDERCROFT_RETRIEVAL"] = (
                "UNDERCROFT_RETRIEVAL='fde' refuses to start: the fde tier draws candidates from ColBERT token "
                "matrices and no ColBERT encoder is configured; declare UNDERCROFT_RERANKER=colbert (or "
                "colbert-ort) with UNDERCROFT_COLBERT_MODEL, UNDERCROFT_COLBERT_QUERY_MODEL and "
                "UNDERCROFT_COLBERT_TOKENIZER, or unset UNDERCROFT_RETRIEVAL"
            )
    return refusals


def _off_is_legal(name: str) -> bool:
    """True when `off` parses for `name` and selects nothing: the refusal can offer it as the remedy."""
    entry = declaration(name)
    try:
        parsed = entry.parse("off")
    except Unparsable:
        return False
    return entry.requires(parsed) is None


def _lacking(outcome: Resolution, build: Build) -> Resolution:
    """`outcome`, refused when its value selects a capability `build` does not ship."""
    if outcome.status in (Status.UNSET, Status.REFUSED):
        return outcome
    entry = declaration(outcome.name)
    needed = entry.requires(outcome.value)
    if needed is None or build.has(needed):
        return outcome
    remedy = "unset it or declare off" if _off_is_legal(outcome.name) else "unset it"
    message = (
        f"{outcome.name}={entry.shown(outcome.raw or '')} refuses to start: this build has no "
        f"{needed.description} ({needed.value}); {remedy} (default: {entry.default})"
    )
    return Resolution(outcome.name, Status.REFUSED, None, message, outcome.raw)


def check(env: Mapping[str, str] | None = None, *, build: Build) -> CheckReport:
    """Run every `UNDERCROFT_*` variable present in `env` (default `os.environ`) through its resolver.

    Nothing is opened — no vault, no database, no socket — except the files CA pins name. A value that
    parses but selects a capability `build` lacks refuses, naming the variable and the missing component.
    Variables with the prefix that no resolver knows are reported as unknown (likely typos), with the
    nearest name. A clean value of a declaration whose tier is not built yet warns that it changes nothing.
    This is the start-up resolver (`undercroft_config.startup.start` runs it), not a copy.
    """
    environment = os.environ if env is None else env
    present = sorted(name for name in environment if name.startswith(PREFIX))
    results = {name: _lacking(evaluate(name, environment), build) for name in present if name in REGISTRY}
    cross = _cross_checks(environment, results)
    entries: list[CheckEntry] = []
    for name in present:
        if name not in REGISTRY:
            hint = suggest(name)
            message = f"{name} is not a known declaration" + (f"; did you mean {hint}?" if hint else "")
            entries.append(CheckEntry(name, Status.UNKNOWN, message))
        elif name in cross and results[name].status is not Status.REFUSED:
            entries.append(CheckEntry(name, Status.REFUSED, cross[name]))
        else:
            outcome = results[name]
            entries.append(_unbuilt(outcome) or CheckEntry(name, outcome.status, outcome.message))
    return CheckReport(tuple(entries))


def _unbuilt(outcome: Resolution) -> CheckEntry | None:
    """A warning for a clean value of a declaration whose tier is not built: it would read as applied."""
    missing = declaration(outcome.name).unbuilt
    if missing is None or outcome.status not in (Status.VALIDATED, Status.ACCEPTED):
        return None
    message = f"{outcome.name} is declared but changes nothing: {missing} is not built yet (docs/scaling.md)"
    return CheckEntry(outcome.name, Status.WARNED, message)

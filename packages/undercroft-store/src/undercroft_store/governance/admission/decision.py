"""What the screen tells the write choke point: admit (and why) or flag (and with which findings)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from undercroft_core.errors import InvalidInput

from undercroft_store.governance.admission.advisor import AdvisorOutcome
from undercroft_store.governance.admission.signals import Finding, Signal

__all__ = ["AdmitReason", "Decision", "Verdict"]


class Verdict(StrEnum):
    """Admit the write to its destination, or flag it for diversion into the quarantine wing."""

    ADMIT = "admit"
    FLAG = "flag"


class AdmitReason(StrEnum):
    """Why a write was admitted, so the store can record it."""

    #: UNDERCROFT_ADMISSION=off: nothing was screened (the byte-identical write contract).
    SCREEN_OFF = "screen-off"
    #: The handler-stamped added_by is a declared trusted source (UNDERCROFT_ADMIT_TRUSTED_SOURCES).
    TRUSTED_SOURCE = "trusted-source"
    #: Screened, and no signal tripped.
    CLEAN = "clean"


@dataclass(frozen=True)
class Decision:
    """The screen's answer. Build it with `admit_clean`, `screen_off`, `trusted` or `flag`.

    `findings` is empty exactly when admitted, sorted and free of duplicates when flagged. `trusted_source`
    names the declared source that matched (only for TRUSTED_SOURCE). `advice` is how the tier-2 advisor's
    consultation ended, None when it was not shown the content (the store's egress record needs to know).
    """

    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    reason: AdmitReason | None = None
    trusted_source: str | None = None
    advice: AdvisorOutcome | None = None

    def __post_init__(self) -> None:
        if self.verdict is Verdict.FLAG:
            if not self.findings or self.reason is not None or self.trusted_source is not None:
                raise InvalidInput("a flag carries at least one finding and no admit reason")
            if list(self.findings) != sorted(set(self.findings)):
                raise InvalidInput("a flag's findings are sorted and unique")
            advisory = Signal.LLM_ADVISORY in {finding.signal for finding in self.findings}
            if advisory != (self.advice is AdvisorOutcome.QUARANTINE):
                raise InvalidInput("llm-advisory is a finding exactly when the advisor answered quarantine")
        elif self.verdict is Verdict.ADMIT:
            if self.findings or self.reason is None:
                raise InvalidInput("an admission carries a reason and no finding")
            if (self.reason is AdmitReason.TRUSTED_SOURCE) != (self.trusted_source is not None):
                raise InvalidInput("trusted_source is set exactly when the reason is trusted-source")
            if self.advice is not None and self.reason is not AdmitReason.CLEAN:
                raise InvalidInput("only a screened write can have been shown to the advisor")
        else:
            raise InvalidInput(f"unknown verdict {self.verdict!r}")

    @classmethod
    def screen_off(cls) -> Decision:
        """Admitted because the screen is not declared."""
        return cls(Verdict.ADMIT, reason=AdmitReason.SCREEN_OFF)

    @classmethod
    def trusted(cls, source: str) -> Decision:
        """Admitted unscreened because `source` (the handler-stamped added_by) is declared trusted."""
        return cls(Verdict.ADMIT, reason=AdmitReason.TRUSTED_SOURCE, trusted_source=source)

    @classmethod
    def admit_clean(cls, *, advice: AdvisorOutcome | None = None) -> Decision:
        """Screened and admitted (`advice`: how a consultation that did not object ended)."""
        return cls(Verdict.ADMIT, reason=AdmitReason.CLEAN, advice=advice)

    @classmethod
    def flag(cls, findings: Iterable[Finding], *, advice: AdvisorOutcome | None = None) -> Decision:
        """Flagged with `findings` (sorted and de-duplicated here)."""
        return cls(Verdict.FLAG, tuple(sorted(set(findings))), advice=advice)

    @property
    def flagged(self) -> bool:
        """True when the write must divert to the quarantine wing."""
        return self.verdict is Verdict.FLAG

    @property
    def signals(self) -> tuple[Signal, ...]:
        """The distinct signal codes that tripped, in vocabulary order."""
        tripped = {finding.signal for finding in self.findings}
        return tuple(signal for signal in Signal if signal in tripped)

    def to_metadata(self) -> dict[str, object]:
        """The clear-metadata form (codes, offsets, reason, source label): no content word can appear."""
        return {
            "verdict": self.verdict.value,
            "reason": None if self.reason is None else self.reason.value,
            "trusted_source": self.trusted_source,
            "signals": [signal.value for signal in self.signals],
            "findings": [finding.to_metadata() for finding in self.findings],
            "advice": None if self.advice is None else self.advice.value,
        }

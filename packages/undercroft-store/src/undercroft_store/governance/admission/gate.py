"""The declared admission posture and the gate the store's write choke point consults.

`AdmissionPolicy.from_env` reads UNDERCROFT_ADMISSION, UNDERCROFT_ADMIT_TRUSTED_SOURCES,
UNDERCROFT_ADMISSION_RATE and UNDERCROFT_ADMISSION_LLM through the undercroft_config resolvers (a refusal
propagates as `undercroft_config.Refused`). `AdmissionGate` holds what lives across writes: the fixture
index, the rate screen and its clock, the advisor and its outcome counts.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from undercroft_config import settings
from undercroft_config import value as resolved
from undercroft_config.values import Admission, AdmissionAdvisor, Rate
from undercroft_core.errors import InvalidInput

from undercroft_store.governance.admission.advisor import Advisor, AdvisorOutcome
from undercroft_store.governance.admission.decision import Decision
from undercroft_store.governance.admission.detector import screen
from undercroft_store.governance.admission.errors import AdvisorUnavailable
from undercroft_store.governance.admission.rate import RateScreen
from undercroft_store.governance.admission.similarity import FixtureIndex

__all__ = ["AdmissionGate", "AdmissionPolicy"]


@dataclass(frozen=True)
class AdmissionPolicy:
    """The deployment's declaration: screen on or off, trusted surfaces, the rate and the advisor."""

    mode: Admission = Admission.OFF
    trusted_sources: tuple[str, ...] = ()
    rate: Rate | None = None
    advisory: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.mode, Admission):
            raise InvalidInput(f"admission mode must be one of off, quarantine, got {self.mode!r}")
        if any(not isinstance(source, str) or not source for source in self.trusted_sources):
            raise InvalidInput("every trusted source is a non-empty handler surface stamp")
        if self.rate is not None and not isinstance(self.rate, Rate):
            raise InvalidInput(f"the admission rate must be a Rate or None, got {self.rate!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AdmissionPolicy:
        """The policy declared in `env` (default `os.environ`), read through the config resolvers."""
        trusted = resolved("UNDERCROFT_ADMIT_TRUSTED_SOURCES", env)
        advisor = resolved("UNDERCROFT_ADMISSION_LLM", env)
        return cls(
            mode=settings.admission(env),
            trusted_sources=tuple(str(source) for source in trusted) if isinstance(trusted, tuple) else (),
            rate=settings.admission_rate(env),
            advisory=advisor is AdmissionAdvisor.ADVISORY,
        )

    @property
    def screening(self) -> bool:
        """True when UNDERCROFT_ADMISSION=quarantine: every write is screened."""
        return self.mode is Admission.QUARANTINE


class AdmissionGate:
    """What the write choke point calls: `screen(...)` before a write, `record(added_by)` after a commit.

    With the screen off, `screen` answers `Decision.screen_off()` without reading the content, and nothing
    else (fixture index, rate screen, advisor) is built or consulted.
    """

    def __init__(
        self,
        policy: AdmissionPolicy,
        *,
        fixtures: FixtureIndex | None = None,
        advisor: Advisor | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if policy.advisory and policy.screening and advisor is None:
            raise AdvisorUnavailable(
                "UNDERCROFT_ADMISSION_LLM=advisory is declared but no advisor is available: refusing to open "
                "(declare off, or configure the UNDERCROFT_LLM_* runtime)"
            )
        if advisor is not None and not policy.advisory:
            raise InvalidInput("an advisor was supplied but UNDERCROFT_ADMISSION_LLM is not advisory")
        if advisor is not None and not isinstance(advisor, Advisor):
            raise InvalidInput(f"the advisor must implement advise(content, *, wing, room), got {advisor!r}")
        self.policy = policy
        self._fixtures = fixtures
        self._advisor = advisor
        self._trusted = frozenset(policy.trusted_sources)
        self.rate_screen = RateScreen(policy.rate, clock=clock) if policy.rate and policy.screening else None
        #: How each advisor consultation ended (failures are non-events, but counted).
        self.advisor_outcomes: Counter[AdvisorOutcome] = Counter()

    @property
    def advisor(self) -> Advisor | None:
        """The tier-2 advisor this gate consults (None when none is installed)."""
        return self._advisor

    def screen(self, content: str, *, wing: str, room: str, added_by: str) -> Decision:
        """Screen one write bound for `wing`/`room`, stamped `added_by` by the handler that took it."""
        if not self.policy.screening:
            return Decision.screen_off()
        decision = screen(
            content,
            wing=wing,
            room=room,
            added_by=added_by,
            trusted_sources=self._trusted,
            fixtures=self._fixtures,
            rate=self.rate_screen,
            advisor=self._advisor,
        )
        if decision.advice is not None:
            self.advisor_outcomes[decision.advice] += 1
        return decision

    def record(self, added_by: str, at: float | None = None) -> None:
        """Count one committed write (diverted ones included) toward `added_by`'s rate window."""
        if self.rate_screen is not None:
            self.rate_screen.record(added_by, at)

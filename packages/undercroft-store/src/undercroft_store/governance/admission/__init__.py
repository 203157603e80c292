"""The admission screen: the deterministic tier-1 detector and the per-writer rate screen.

The store's write choke point builds one `AdmissionGate` from `AdmissionPolicy.from_env()` and calls
`gate.screen(content, wing=, room=, added_by=)` for every write it screens; the `Decision` says admit
(and why) or flag (with content-free findings). See docs/admission.md.
"""

from undercroft_store.governance.admission.advisor import Advice, Advisor, AdvisorOutcome
from undercroft_store.governance.admission.decision import AdmitReason, Decision, Verdict
from undercroft_store.governance.admission.detector import MARKER_SIGNALS, consult, detect, screen
from undercroft_store.governance.admission.errors import AdmissionError, AdvisorUnavailable
from undercroft_store.governance.admission.fixtures import (
    FIXTURE_FAMILIES,
    AttackFixture,
    Paraphrase,
    load_fixtures,
    load_paraphrases,
    parse_fixtures,
    parse_paraphrases,
)
from undercroft_store.governance.admission.gate import AdmissionGate, AdmissionPolicy
from undercroft_store.governance.admission.rate import RATE_FINDING, RateScreen
from undercroft_store.governance.admission.signals import SIGNAL_VOCAB, SUBJECT_VOCAB, Finding, Signal, Subject
from undercroft_store.governance.admission.similarity import (
    SIMILARITY_THRESHOLD,
    WINDOW_WORDS,
    FixtureIndex,
    SimilarityHit,
    default_fixture_index,
    word_windows,
)

__all__ = [
    "FIXTURE_FAMILIES",
    "MARKER_SIGNALS",
    "RATE_FINDING",
    "SIGNAL_VOCAB",
    "SIMILARITY_THRESHOLD",
    "SUBJECT_VOCAB",
    "WINDOW_WORDS",
    "AdmissionError",
    "AdmissionGate",
    "AdmissionPolicy",
    "AdmitReason",
    "Advice",
    "Advisor",
    "AdvisorOutcome",
    "AdvisorUnavailable",
    "AttackFixture",
    "Decision",
    "Finding",
    "FixtureIndex",
    "Paraphrase",
    "RateScreen",
    "Signal",
    "SimilarityHit",
    "Subject",
    "Verdict",
    "consult",
    "default_fixture_index",
    "detect",
    "load_fixtures",
    "load_paraphrases",
    "parse_fixtures",
    "parse_paraphrases",
    "screen",
    "word_windows",
]

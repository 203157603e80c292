"""The rate screen, the trusted-source bypass, the gate's declared policy and the one-way advisor seam."""

from __future__ import annotations

import pytest
from undercroft_config import Refused
from undercroft_config.values import Admission, Rate
from undercroft_core.errors import InvalidInput
from undercroft_store.governance.admission import (
    RATE_FINDING,
    AdmissionGate,
    AdmissionPolicy,
    AdmitReason,
    Advice,
    AdvisorOutcome,
    AdvisorUnavailable,
    RateScreen,
    Signal,
    load_fixtures,
    screen,
)

CLEAN = "We went to the lake on Sunday and the kids caught two small fish."
ATTACK = load_fixtures()[0].text


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_rate_screen_counts_committed_writes_in_the_trailing_window() -> None:
    clock = Clock()
    rate = RateScreen(Rate(3, 60), clock=clock)
    for _ in range(2):
        assert rate.check("mcp") is None
        rate.record("mcp")
        clock.now += 10
    assert rate.check("mcp") is None
    rate.record("mcp")
    assert rate.check("mcp") is RATE_FINDING
    assert rate.check("cli") is None  # per writer
    clock.now = 1000.0 + 60.0  # the first write leaves the window (the window is open at its far end)
    assert rate.count("mcp") == 2 and rate.check("mcp") is None


def test_rate_screen_seed_and_out_of_order_records_stay_exact_and_bounded() -> None:
    clock = Clock(500.0)
    rate = RateScreen(Rate(2, 100), clock=clock)
    rate.record("api", 490.0)
    rate.seed("api", [420.0, 300.0, 450.0])  # older history arriving after a live write
    assert rate.count("api") == 2 and rate.check("api") is RATE_FINDING
    clock.now = 551.0  # 450 leaves; only 490 remains
    assert rate.count("api") == 1


@pytest.mark.parametrize("writer", ["", None, 3])
def test_rate_screen_refuses_a_missing_writer(writer: object) -> None:
    rate = RateScreen(Rate(1, 1), clock=Clock())
    with pytest.raises(InvalidInput, match="a rate-screened writer is the non-empty handler-stamped added_by"):
        rate.check(writer)  # type: ignore[arg-type]


def test_rate_screen_refuses_a_bad_rate() -> None:
    with pytest.raises(InvalidInput, match="a rate screen needs a Rate"):
        RateScreen((3, 60), clock=Clock())  # type: ignore[arg-type]


def test_policy_reads_the_declarations_through_the_resolvers() -> None:
    env = {
        "UNDERCROFT_ADMISSION": "quarantine",
        "UNDERCROFT_ADMIT_TRUSTED_SOURCES": "cli, mine",
        "UNDERCROFT_ADMISSION_RATE": "20/60",
        "UNDERCROFT_ADMISSION_LLM": "advisory",
    }
    policy = AdmissionPolicy.from_env(env)
    assert policy == AdmissionPolicy(Admission.QUARANTINE, ("cli", "mine"), Rate(20, 60), True)
    assert AdmissionPolicy.from_env({}) == AdmissionPolicy()
    for name, bad in [("UNDERCROFT_ADMISSION", "on"), ("UNDERCROFT_ADMISSION_RATE", "20 per minute")]:
        with pytest.raises(Refused, match=name):
            AdmissionPolicy.from_env({name: bad})


def test_screen_off_admits_without_reading_anything() -> None:
    gate = AdmissionGate(AdmissionPolicy(rate=Rate(1, 60)), clock=Clock())
    decision = gate.screen(ATTACK, wing="quarantine-pending", room="x", added_by="mcp")
    assert decision.reason is AdmitReason.SCREEN_OFF and not decision.flagged
    assert gate.rate_screen is None


def test_trusted_sources_bypass_on_the_handler_stamp_only() -> None:
    gate = AdmissionGate(AdmissionPolicy(Admission.QUARANTINE, trusted_sources=("mine",)), clock=Clock())
    trusted = gate.screen(ATTACK, wing="work", room="inbox", added_by="mine")
    assert (trusted.reason, trusted.trusted_source) == (AdmitReason.TRUSTED_SOURCE, "mine")
    # The writer's own claim is not an input at all; a different surface stamp is screened.
    assert gate.screen(ATTACK, wing="work", room="inbox", added_by="mcp").flagged
    assert gate.screen(ATTACK, wing="work", room="inbox", added_by="Mine").flagged


def test_gate_rate_diverts_the_writer_over_its_budget() -> None:
    clock = Clock()
    gate = AdmissionGate(AdmissionPolicy(Admission.QUARANTINE, rate=Rate(2, 60)), clock=clock)
    for _ in range(2):
        assert not gate.screen(CLEAN, wing="family", room="notes", added_by="mcp").flagged
        gate.record("mcp")
    limited = gate.screen(CLEAN, wing="family", room="notes", added_by="mcp")
    assert limited.flagged and limited.signals == (Signal.RATE_ANOMALY,)
    assert not gate.screen(CLEAN, wing="family", room="notes", added_by="cli").flagged
    clock.now += 61
    assert not gate.screen(CLEAN, wing="family", room="notes", added_by="mcp").flagged


class FakeAdvisor:
    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.seen: list[str] = []

    def advise(self, content: str, *, wing: str, room: str) -> Advice:
        self.seen.append(content)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[return-value]


def test_advisor_moves_only_toward_quarantine_and_never_sees_a_flagged_write() -> None:
    admitting = FakeAdvisor(Advice.NO_OBJECTION)
    flagged = screen(ATTACK, wing="work", room="inbox", added_by="mcp", advisor=admitting)
    assert flagged.flagged and admitting.seen == [] and flagged.advice is None
    clean = screen(CLEAN, wing="family", room="notes", added_by="mcp", advisor=admitting)
    assert not clean.flagged and clean.advice is AdvisorOutcome.NO_OBJECTION and admitting.seen == [CLEAN]

    objecting = FakeAdvisor(Advice.QUARANTINE)
    moved = screen(CLEAN, wing="family", room="notes", added_by="mcp", advisor=objecting)
    assert moved.flagged and moved.signals == (Signal.LLM_ADVISORY,) and moved.advice is AdvisorOutcome.QUARANTINE


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (RuntimeError("model down"), AdvisorOutcome.FAILED),
        ("ADMIT!", AdvisorOutcome.UNPARSEABLE),
        (None, AdvisorOutcome.UNPARSEABLE),
    ],
)
def test_a_failed_or_unparseable_advisor_is_a_counted_non_event(answer: object, outcome: AdvisorOutcome) -> None:
    gate = AdmissionGate(AdmissionPolicy(Admission.QUARANTINE, advisory=True), advisor=FakeAdvisor(answer))
    decision = gate.screen(CLEAN, wing="family", room="notes", added_by="mcp")
    assert not decision.flagged and decision.advice is outcome
    assert gate.advisor_outcomes[outcome] == 1


def test_a_declared_advisor_that_is_missing_refuses_to_open() -> None:
    with pytest.raises(AdvisorUnavailable, match="UNDERCROFT_ADMISSION_LLM=advisory is declared but no advisor"):
        AdmissionGate(AdmissionPolicy(Admission.QUARANTINE, advisory=True))
    with pytest.raises(InvalidInput, match="an advisor was supplied but UNDERCROFT_ADMISSION_LLM is not advisory"):
        AdmissionGate(AdmissionPolicy(Admission.QUARANTINE), advisor=FakeAdvisor(Advice.QUARANTINE))


def test_screen_refuses_an_unstamped_write() -> None:
    with pytest.raises(InvalidInput, match="the screened added_by is the handler's non-empty surface stamp"):
        screen(CLEAN, wing="family", room="notes", added_by="")

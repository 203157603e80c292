"""The shim: no-op by default, registered names only, metadata-only values, thread-safe recording."""

from __future__ import annotations

import threading

import pytest
import undercroft_obs as obs
from hypothesis import given
from hypothesis import strategies as st
from undercroft_obs import names


@pytest.fixture
def recording() -> obs.RecordingSink:
    sink = obs.RecordingSink()
    with obs.sink_installed(sink):
        yield sink


def test_default_sink_is_the_null_sink_and_keeps_nothing() -> None:
    sink = obs.current_sink()
    assert type(sink) is obs.NullSink  # exactly: a recording subclass would pass an isinstance check
    obs.emit(names.EVENT_DRAWER_DELETED, vault="v1")
    obs.increment(names.DRAWER_DELETES_TOTAL)
    obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="drawer")
    assert obs.current_sink() is sink
    assert vars(sink) == {}  # it kept nothing: no buffer, no counter, no last value
    # No-op is not a bypass: names and metadata are still checked with nothing recording.
    with pytest.raises(obs.UnknownName, match="event 'drawer-written' is not registered"):
        obs.emit("drawer-written")
    with pytest.raises(obs.InvalidMetadata, match="surface='disk'"):
        obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="disk")


def test_a_fresh_interpreter_starts_on_the_null_sink() -> None:
    """The default of a process nobody configured (not of this test session, whose fixtures install sinks)."""
    import subprocess
    import sys

    probe = "import undercroft_obs as o; s = o.current_sink(); print(type(s).__module__, type(s).__name__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["undercroft_obs.sink", "NullSink"]


def test_sink_installed_restores_the_previous_sink() -> None:
    before = obs.current_sink()
    with obs.sink_installed(obs.RecordingSink()) as sink:
        assert obs.current_sink() is sink
    assert obs.current_sink() is before


def test_install_sink_refuses_an_object_without_the_interface() -> None:
    with pytest.raises(TypeError, match="does not implement the Sink interface"):
        obs.install_sink(object())  # type: ignore[arg-type]


def test_drawer_write_outcomes_are_counted_apart(recording: obs.RecordingSink) -> None:
    obs.increment(names.DRAWER_WRITES_TOTAL, outcome=names.OUTCOME_CREATED)
    obs.increment(names.DRAWER_WRITES_TOTAL, outcome=names.OUTCOME_CREATED)
    obs.increment(names.DRAWER_WRITES_TOTAL, outcome=names.OUTCOME_QUARANTINED)
    assert recording.counter_total(names.DRAWER_WRITES_TOTAL, outcome="created") == 2
    assert recording.counter_total(names.DRAWER_WRITES_TOTAL, outcome="quarantined") == 1
    assert recording.counter_total(names.DRAWER_WRITES_TOTAL, outcome="deduped") == 0
    assert recording.counter_total(names.DRAWER_WRITES_TOTAL) == 3


def test_outcome_outside_the_closed_vocabulary_is_refused(recording: obs.RecordingSink) -> None:
    with pytest.raises(obs.InvalidMetadata, match=r"outcome='stored' is not one of \['created', 'deduped'"):
        obs.increment(names.DRAWER_WRITES_TOTAL, outcome="stored")
    assert recording.records == ()


def test_hmac_failures_by_surface(recording: obs.RecordingSink) -> None:
    obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="drawer")
    obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, 2, surface="kg")
    assert recording.counter_total(names.HMAC_VERIFY_FAILURES_TOTAL, surface="kg") == 2
    with pytest.raises(obs.InvalidMetadata, match="surface='disk'"):
        obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="disk")


def test_chain_commits_count_records(recording: obs.RecordingSink) -> None:
    obs.increment(names.CHAIN_COMMITS_TOTAL, 256)
    obs.emit(names.EVENT_CHAIN_COMMIT, vault="v1", records=256)
    assert recording.counter_total(names.CHAIN_COMMITS_TOTAL) == 256
    assert recording.events(names.EVENT_CHAIN_COMMIT) == [{"vault": "v1", "records": 256}]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: obs.emit("drawer-written"), "event 'drawer-written' is not registered"),
        (lambda: obs.increment("undercroft_writes_total"), "counter 'undercroft_writes_total' is not registered"),
        (lambda: obs.observe("undercroft_latency", 1.0), "histogram 'undercroft_latency' is not registered"),
        (lambda: obs.set_gauge("undercroft_wings", 3, vault="v"), "gauge 'undercroft_wings' is not registered"),
    ],
)
def test_unregistered_names_are_refused_not_dropped(call, message: str) -> None:
    with pytest.raises(obs.UnknownName, match=message):
        call()


def test_labels_must_match_the_declared_set_exactly() -> None:
    with pytest.raises(obs.InvalidMetadata, match=r"missing \['fusion'\], unexpected \[\]"):
        obs.increment(names.SEARCH_TOTAL)
    with pytest.raises(obs.InvalidMetadata, match=r"unexpected \['vault'\]"):
        obs.increment(names.CHAIN_REPLAYS_TOTAL, vault="v1")


def test_counter_values_must_be_non_negative_finite_numbers() -> None:
    with pytest.raises(obs.InvalidMetadata, match="counters only go up; got -1"):
        obs.increment(names.VAULT_OPENS_TOTAL, -1)
    with pytest.raises(obs.InvalidMetadata, match="is not finite"):
        obs.increment(names.VAULT_OPENS_TOTAL, float("nan"))
    with pytest.raises(obs.InvalidMetadata, match="is not a number"):
        obs.increment(names.VAULT_OPENS_TOTAL, True)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"drawer text", "is a bytes"),
        (bytearray(b"x"), "is a bytearray"),
        ("x" * 129, "is 129 characters; at most 128"),
        ("two\nlines", "line break"),
        ({"nested": 1}, "is a dict"),
        ([[["deep"]]], "nests deeper than one level"),
        (list(range(257)), "holds 257 items"),
        (float("inf"), "not a finite number"),
    ],
)
def test_event_metadata_rejects_content_shaped_values(value: object, message: str) -> None:
    with pytest.raises(obs.InvalidMetadata, match=message):
        obs.emit(names.EVENT_SEARCH, vault="v1", wing=value)


def test_event_metadata_keys_must_be_identifiers() -> None:
    with pytest.raises(obs.InvalidMetadata, match="is not a lower-case identifier"):
        obs.emit(names.EVENT_SEARCH, **{"Query Text": "x"})


def test_sample_frame_carries_wing_pairs_as_tuples(recording: obs.RecordingSink) -> None:
    obs.emit(names.EVENT_SAMPLE, vault="v1", sealed=True, drawers=3, wings=[["work", 2], ["home", 1]], db_bytes=4096)
    (frame,) = recording.events(names.EVENT_SAMPLE)
    assert frame["wings"] == (("work", 2), ("home", 1))
    assert frame["sealed"] is True


def test_label_values_are_short_strings_ints_or_bools(recording: obs.RecordingSink) -> None:
    obs.increment(names.HTTP_REQUESTS_TOTAL, route="/v1/vaults/{id}/search", status=200)
    assert recording.records[-1].labels == {"route": "/v1/vaults/{id}/search", "status": "200"}
    with pytest.raises(obs.InvalidMetadata, match="at most 64 are allowed"):
        obs.increment(names.HTTP_REQUESTS_TOTAL, route="/" + "a" * 64, status=200)
    with pytest.raises(obs.InvalidMetadata, match="label status is a float"):
        obs.increment(names.HTTP_REQUESTS_TOTAL, route="/", status=2.5)


def test_gauges_keep_the_last_value(recording: obs.RecordingSink) -> None:
    obs.set_gauge(names.GAUGE_DRAWERS, 10, vault="v1")
    obs.set_gauge(names.GAUGE_DRAWERS, 12, vault="v1")
    assert recording.gauge_value(names.GAUGE_DRAWERS, vault="v1") == 12
    assert recording.gauge_value(names.GAUGE_DRAWERS, vault="v2") is None


def test_timer_uses_the_injected_clock_and_records_on_error(recording: obs.RecordingSink) -> None:
    ticks = iter([10.0, 10.25, 20.0, 21.5])
    clock = lambda: next(ticks)  # noqa: E731
    with obs.timer(names.SEARCH_DURATION_SECONDS, clock=clock):
        pass
    with pytest.raises(RuntimeError), obs.timer(names.HTTP_REQUEST_DURATION_SECONDS, clock=clock, route="/v1"):
        raise RuntimeError("boom")
    assert recording.observations(names.SEARCH_DURATION_SECONDS) == [0.25]
    assert recording.observations(names.HTTP_REQUEST_DURATION_SECONDS, route="/v1") == [1.5]


def test_timer_checks_labels_before_the_block_runs() -> None:
    ran = []
    with pytest.raises(obs.InvalidMetadata), obs.timer(names.SEARCH_DURATION_SECONDS, wing="secret"):
        ran.append(True)
    assert ran == []


def test_concurrent_increments_are_all_recorded(recording: obs.RecordingSink) -> None:
    def work() -> None:
        for _ in range(500):
            obs.increment(names.SEARCH_TOTAL, fusion="bm25")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert recording.counter_total(names.SEARCH_TOTAL, fusion="bm25") == 4000


@given(st.text(min_size=129, max_size=400))
def test_no_long_string_ever_reaches_a_sink(text: str) -> None:
    sink = obs.RecordingSink()
    with obs.sink_installed(sink), pytest.raises(obs.InvalidMetadata):
        obs.emit(names.EVENT_DRAWER_SAVED, vault="v", wing=text, room="r", deduped=False)
    assert sink.records == ()

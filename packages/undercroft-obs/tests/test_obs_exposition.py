"""The Prometheus text exposition sink: aggregation, histogram buckets, label escaping, thread safety."""

from __future__ import annotations

import threading

import undercroft_obs as obs
from undercroft_obs import names
from undercroft_obs.exposition import MetricsSink


def test_counters_aggregate_per_label_set_and_unlabelled_ones_render_zero() -> None:
    sink = MetricsSink()
    with obs.sink_installed(sink):
        obs.increment(names.DRAWER_WRITES_TOTAL, outcome="created")
        obs.increment(names.DRAWER_WRITES_TOTAL, 2, outcome="created")
        obs.increment(names.DRAWER_WRITES_TOTAL, outcome="quarantined")
    text = sink.render()
    assert 'undercroft_drawer_writes_total{outcome="created"} 3\n' in text
    assert 'undercroft_drawer_writes_total{outcome="quarantined"} 1\n' in text
    assert "# TYPE undercroft_hmac_verify_failures_total counter\n" in text
    assert "undercroft_chain_commits_total 0\n" in text


def test_histogram_buckets_are_cumulative() -> None:
    sink = MetricsSink(buckets=(0.1, 1.0))
    with obs.sink_installed(sink):
        for value in (0.05, 0.5, 5.0):
            obs.observe(names.SEARCH_DURATION_SECONDS, value)
    text = sink.render()
    assert 'undercroft_search_duration_seconds_bucket{le="0.1"} 1\n' in text
    assert 'undercroft_search_duration_seconds_bucket{le="1.0"} 2\n' in text
    assert 'undercroft_search_duration_seconds_bucket{le="+Inf"} 3\n' in text
    assert "undercroft_search_duration_seconds_count 3\n" in text
    assert "undercroft_search_duration_seconds_sum 5.55\n" in text


def test_gauges_render_only_once_set_and_escape_label_values() -> None:
    sink = MetricsSink()
    assert "undercroft_drawers" not in sink.render()
    with obs.sink_installed(sink):
        obs.set_gauge(names.GAUGE_DRAWERS, 7, vault='a"b\\c')
    assert 'undercroft_drawers{vault="a\\"b\\\\c"} 7\n' in sink.render()


def test_events_are_ignored() -> None:
    sink = MetricsSink()
    with obs.sink_installed(sink):
        obs.emit(names.EVENT_DRAWER_DELETED, vault="v")
    assert "drawer-deleted" not in sink.render()


def test_concurrent_counting_loses_nothing() -> None:
    sink = MetricsSink()

    def work() -> None:
        for _ in range(1000):
            sink.counter(names.VAULT_OPENS_TOTAL, 1.0, {})

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "undercroft_vault_opens_total 4000\n" in sink.render()

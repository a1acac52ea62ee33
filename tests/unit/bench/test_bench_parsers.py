"""Parsers on real output of Kafka 3.9.2's perf tools (fixtures captured from a single-node run)."""

from pathlib import Path

import pytest

from kafkakit.bench.parsers import ParseError, parse_consumer, parse_end_to_end, parse_producer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bench"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_producer_final_line():
    r = parse_producer(fixture("producer_100_none.txt"))
    assert r.records == 300000
    assert r.records_per_sec == pytest.approx(83310.191613)
    assert r.mb_per_sec == 7.95
    assert (r.avg_latency_ms, r.max_latency_ms) == (834.76, 1220.0)
    assert (r.p50_ms, r.p95_ms, r.p99_ms, r.p999_ms) == (998, 1194, 1210, 1217)


def test_producer_skips_progress_lines():
    # The 5-second progress line (97066 records) has no percentiles and must not be taken.
    r = parse_producer(fixture("producer_1024_lz4_progress.txt"))
    assert r.records == 100000
    assert r.mb_per_sec == 18.68
    assert r.p999_ms == 1635


def test_producer_with_log_lines_mixed_in():
    assert parse_producer(fixture("producer_100_none_with_log.txt")) == parse_producer(fixture("producer_100_none.txt"))


def test_producer_metrics_are_floats():
    m = parse_producer(fixture("producer_1024_zstd.txt")).metrics()
    assert m["records_per_sec"] == pytest.approx(14188.422247)
    assert all(isinstance(v, float) for v in m.values())


@pytest.mark.parametrize("name", ["consumer_header.txt", "consumer_hide_header.txt"])
def test_consumer_row_with_or_without_header(name):
    r = parse_consumer(fixture(name))
    assert r.complete
    assert r.records in (300000, 100000)
    assert r.mb_per_sec > 0 and r.records_per_sec > 0


def test_consumer_values():
    r = parse_consumer(fixture("consumer_header.txt"))
    assert r.start == "2026-11-22 14:01:02:745"
    assert (r.mb, r.mb_per_sec, r.records, r.records_per_sec) == (28.6102, 10.6994, 300000, 112191.4734)
    fetch = (r.rebalance_ms, r.fetch_ms, r.fetch_mb_per_sec, r.fetch_records_per_sec)
    assert fetch == (1266, 1408, 20.3198, 213068.1818)
    assert "start" not in r.metrics()


def test_consumer_timeout_is_flagged():
    r = parse_consumer(fixture("consumer_timeout.txt"))
    assert not r.complete
    assert r.records == 100000


def test_end_to_end_latency():
    r = parse_end_to_end(fixture("end_to_end_latency.txt"))
    assert (r.avg_ms, r.p50_ms, r.p99_ms, r.p999_ms) == (3.0348, 2, 12, 53)


@pytest.mark.parametrize("parser", [parse_producer, parse_consumer, parse_end_to_end])
def test_no_result_raises_with_the_tail(parser):
    with pytest.raises(ParseError, match="Connection refused"):
        parser("starting\nERROR Connection refused\n")

"""Medians, spread and ratios of medians."""

import math

import pytest

from kafkakit.bench.plan import Comparison
from kafkakit.bench.runner import Measurement
from kafkakit.bench.stats import compare, ratio, summarize, summarize_measurements


def test_median_and_spread_odd():
    s = summarize([5.0, 1.0, 100.0, 3.0, 2.0])
    assert (s.n, s.median, s.minimum, s.maximum) == (5, 3.0, 1.0, 100.0)
    assert (s.q1, s.q3, s.iqr) == (2.0, 5.0, 3.0)


def test_median_even_and_single():
    assert summarize([1.0, 2.0, 3.0, 10.0]).median == 2.5
    one = summarize([7.0])
    assert (one.median, one.minimum, one.maximum, one.iqr) == (7.0, 7.0, 7.0, 0.0)
    with pytest.raises(ValueError):
        summarize([])


def test_failed_runs_are_left_out():
    ms = [
        Measurement("a", 0, 10, {"records_per_sec": 10.0}),
        Measurement("a", 1, 10, {"records_per_sec": 1000.0}, error="timed out"),
        Measurement("a", 2, 10, {"records_per_sec": 30.0}),
    ]
    s = summarize_measurements(ms)["a"]["records_per_sec"]
    assert (s.n, s.median) == (2, 20.0)


def test_ratios_of_medians():
    ms = [Measurement("t", i, 1, {"records_per_sec": v, "p99_ms": 10.0}) for i, v in enumerate([300.0, 100.0, 200.0])]
    ms += [Measurement("s", i, 1, {"records_per_sec": v, "p99_ms": 20.0}) for i, v in enumerate([50.0, 100.0, 400.0])]
    comp = Comparison("tuned/stock", "producer", "t", "s")
    ratios = {r.metric: r.value for r in compare(summarize_measurements(ms), [comp])}
    assert ratios == {"records_per_sec": 2.0, "p99_ms": 0.5}


def test_compare_skips_cases_without_results():
    assert compare({}, [Comparison("lz4/none", "producer", "x", "y")]) == []
    assert math.isnan(ratio(1.0, 0.0))

"""The Markdown report and the chart."""

import datetime as dt

import pytest

from kafkakit.bench.__main__ import main, write_outputs
from kafkakit.bench.plan import Endpoint, make_case
from kafkakit.bench.report import Machine, fmt, machine_description
from kafkakit.bench.runner import run_plan
from tests.unit.support.bench_fakes import FakeRunner

SASL = Endpoint("SASL_SSL", "b1:9093", "/etc/kafka/client.properties")
TUNED = make_case("producer", SASL)
STOCK = make_case("producer", SASL, tuning="stock")
MACHINE = Machine("2", "23.5 GiB", "Test CPU @ 2.0GHz", "2026-11-22 14:00 UTC")


def bench(tmp_path, chart=False):
    # Warm-up first, then three measured runs each: medians 2000 (tuned) and 1000 (stock).
    fake = FakeRunner(rates={TUNED.topic: [1.0, 1000.0, 2000.0, 3000.0], STOCK.topic: [1.0, 900.0, 1100.0, 1000.0]})
    measurements = run_plan([TUNED, STOCK], fake, repetitions=3, records=100)
    return write_outputs(
        [TUNED, STOCK], measurements, out=tmp_path, repetitions=3, records=100, seconds=None, machine=MACHINE,
        chart=chart,
    )  # fmt: skip


def test_report_tables(tmp_path):
    outcome = bench(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert outcome.report == tmp_path / "report.md"
    row = next(line for line in text.splitlines() if line.startswith(f"| `{TUNED.name}`"))
    assert "| SASL_SSL | tuned | none | 1024 | 3 | 2000 (1000–3000) |" in row
    assert "| **2.00** |" in text  # tuned/stock records/s
    for fact in ("CPUs (nproc): 2", "Memory: 23.5 GiB", "CPU model: Test CPU @ 2.0GHz", "Date: 2026-11-22"):
        assert fact in text
    assert "org.apache.kafka.tools.ProducerPerformance" in text
    assert (tmp_path / "results.json").read_text().count('"case"') == 6


def test_fmt():
    assert [fmt(83310.19), fmt(18.68), fmt(3.0348), fmt(float("nan"))] == ["83310", "18.7", "3.03", "n/a"]


def test_machine_description_through_a_runner():
    answers = {
        "nproc": "2\n",
        "/proc/meminfo": "MemTotal:       24681472 kB\nMemFree: 1 kB\n",
        "/proc/cpuinfo": "processor\t: 0\nmodel name\t: Some CPU 9000\n",
    }
    m = machine_description(lambda cmd: answers[cmd[-1]], now=dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC))
    assert m == Machine("2", "23.5 GiB", "Some CPU 9000", "2026-01-02 03:04 UTC")


def test_cli_list(capsys):
    assert main(["--list", "--only", "latency-*"]) == 0
    out = capsys.readouterr().out
    assert "latency-sasl_ssl-100" in out and "org.apache.kafka.tools.EndToEndLatency" in out


def test_cli_needs_bootstrap_to_run(capsys):
    assert main([]) == 2


def test_chart_is_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    outcome = bench(tmp_path, chart=True)
    assert outcome.chart == tmp_path / "throughput.png"
    assert outcome.chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![throughput](throughput.png)" in (tmp_path / "report.md").read_text()

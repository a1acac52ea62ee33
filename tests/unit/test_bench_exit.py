"""The bench's exit status: 0 only when every case was measured in every repetition."""

import json

import pytest

import kafkakit.bench.__main__ as bench
from tests.unit.support.bench_fakes import FakeRunner

TUNED = "producer-sasl_ssl-tuned-none-100"
STOCK = "producer-sasl_ssl-stock-none-100"


def run_main(tmp_path, *extra):
    return bench.main(
        ["--bootstrap", "b1:9093", "--client-config", "/etc/kafka/client.properties", "--only", TUNED, STOCK,
         "--repetitions", "2", "--records", "10", "--no-chart", "--out", str(tmp_path), *extra]
    )  # fmt: skip


def failing_second_run_of(case):
    """A runner whose second measured run of `case` fails; everything else succeeds."""
    fake = FakeRunner()

    def run(command):
        topic = command[command.index("--topic") + 1] if "--topic" in command else ""
        if "org.apache.kafka.tools.ProducerPerformance" in command and topic.startswith(f"bench-{case}-"):
            if topic.endswith("-1"):
                raise RuntimeError("exit 1: broker unreachable")
        return fake(command)

    return run


@pytest.fixture
def use_runner(monkeypatch):
    def use(runner):
        monkeypatch.setattr(bench, "local_runner", runner)

    return use


def test_every_case_measured_exits_0(tmp_path, use_runner, capsys):
    use_runner(FakeRunner())
    assert run_main(tmp_path) == 0
    assert "failed" not in capsys.readouterr().err


def test_one_failed_run_of_one_case_exits_1(tmp_path, use_runner, capsys):
    use_runner(failing_second_run_of(STOCK))
    assert run_main(tmp_path) == 1
    assert f"bench: 1 of 2 case(s) failed: {STOCK}" in capsys.readouterr().err
    # Three of the four runs were measured, and the report and results are still written.
    results = json.loads((tmp_path / "results.json").read_text())
    assert sorted((r["case"], r["error"] is None) for r in results) == [
        (STOCK, False), (STOCK, True), (TUNED, True), (TUNED, True)]  # fmt: skip
    assert (tmp_path / "report.md").exists()


def test_a_case_whose_preparation_failed_exits_1(tmp_path, use_runner, capsys):
    use_runner(FakeRunner(fail_on=f"--topic bench-{TUNED}-"))
    assert run_main(tmp_path) == 1
    assert f"failed: {TUNED}" in capsys.readouterr().err


def test_every_case_failed_exits_1(tmp_path, use_runner, capsys):
    use_runner(FakeRunner(fail_on="ProducerPerformance"))
    assert run_main(tmp_path) == 1
    assert f"bench: 2 of 2 case(s) failed: {TUNED}, {STOCK}" in capsys.readouterr().err


def test_the_tools_run_here_and_the_dead_runner_is_gone(tmp_path, use_runner):
    fake = FakeRunner()
    use_runner(fake)
    assert run_main(tmp_path) == 0
    assert fake.measured("org.apache.kafka.tools.ProducerPerformance")
    assert not hasattr(bench, "lab_runner")

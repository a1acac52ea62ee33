"""run_plan with a fake runner: preparation, interleaving, sizing, failures, teardown."""

import pytest

from kafkakit.bench.plan import Endpoint, make_case
from kafkakit.bench.runner import MIN_RECORDS, run_plan
from tests.unit.bench_fakes import FIXTURES, FakeRunner

SASL = Endpoint("SASL_SSL", "b1:9093", "/etc/kafka/client.properties")
TUNED = make_case("producer", SASL)
STOCK = make_case("producer", SASL, tuning="stock")
PRODUCER = "org.apache.kafka.tools.ProducerPerformance"


def topic_of(command):
    return command[command.index("--topic") + 1]


def test_measured_runs_alternate_between_cases():
    fake = FakeRunner()
    results = run_plan([TUNED, STOCK], fake, repetitions=3, records=1000, tag="t")
    assert [(m.case, m.repetition) for m in results] == [
        (TUNED.name, 0), (STOCK.name, 0), (TUNED.name, 1), (STOCK.name, 1), (TUNED.name, 2), (STOCK.name, 2),
    ]  # fmt: skip
    producers = fake.measured(PRODUCER)
    # Two warm-ups (one per case, 1000 records since that is less than the warm-up size), then ABABAB.
    assert [topic_of(c) for c in producers[2:]] == [TUNED.topic, STOCK.topic] * 3
    assert all(c[c.index("--num-records") + 1] == "1000" for c in producers)
    assert all(m.ok and m.records == 1000 for m in results)


def test_setup_first_and_teardown_last():
    fake = FakeRunner()
    run_plan([TUNED], fake, repetitions=1, records=10)
    assert "--create" in fake.calls[0]
    assert "--delete" in fake.calls[-1]


def test_seconds_sizes_runs_from_the_calibration():
    fake = FakeRunner(rates={TUNED.topic: [2000.0, 1.0, 1.0]})
    results = run_plan([TUNED], fake, repetitions=2, seconds=30)
    assert {m.records for m in results} == {60000}
    # The calibration run is also the warm-up: no second warm-up before the two measured runs.
    assert len(fake.measured(PRODUCER)) == 3


def test_seconds_never_sizes_below_the_minimum():
    fake = FakeRunner(rates={TUNED.topic: [1.0, 1.0]})
    (m,) = run_plan([TUNED], fake, repetitions=1, seconds=1)
    assert m.records == MIN_RECORDS["producer"]


def test_consumer_case_fills_its_topic_and_uses_a_fresh_group_per_run():
    case = make_case("consumer", SASL)
    fake = FakeRunner()
    results = run_plan([case], fake, repetitions=2, records=100000, tag="t")
    fills = fake.measured(PRODUCER)
    assert len(fills) == 1 and fills[0][fills[0].index("--num-records") + 1] == "100000"
    groups = [c[c.index("--group") + 1] for c in fake.measured("org.apache.kafka.tools.ConsumerPerformance")]
    assert len(set(groups)) == 3  # warm-up and two runs
    assert all(m.ok for m in results)
    assert results[0].metrics["mb_per_sec"] == 62.6403


def test_incomplete_consumer_run_is_an_error():
    case = make_case("consumer", SASL)
    fake = FakeRunner()
    timed_out = (FIXTURES / "consumer_timeout.txt").read_text()

    def run(command):
        group = command[command.index("--group") + 1] if "--group" in command else ""
        # 150000 expected; the fixture read 100000 before --timeout.
        return timed_out if group.endswith("-t-0") else fake(command)

    (m,) = run_plan([case], run, repetitions=1, records=150000, tag="t")
    assert not m.ok and "before the consumer's --timeout" in m.error
    assert m.metrics["records"] == 100000


def test_a_failing_case_does_not_stop_the_others():
    fake = FakeRunner(fail_on=f"--topic {STOCK.topic} --num-records")
    results = run_plan([TUNED, STOCK], fake, repetitions=2, records=10)
    stock = [m for m in results if m.case == STOCK.name]
    assert [m.repetition for m in stock] == [-1] and "broker unreachable" in stock[0].error
    assert [m.ok for m in results if m.case == TUNED.name] == [True, True]
    assert sum("--delete" in c for c in fake.calls) == 2


def test_records_and_seconds_are_exclusive():
    with pytest.raises(ValueError):
        run_plan([TUNED], FakeRunner(), records=1, seconds=1)

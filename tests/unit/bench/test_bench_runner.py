"""run_plan with a fake runner: preparation, interleaving, sizing, failures, teardown."""

import pytest

from kafkakit.bench.plan import Endpoint, make_case
from kafkakit.bench.runner import MAX_RUN_BYTES, MIN_RECORDS, run_plan
from tests.unit.support.bench_fakes import FIXTURES, FakeRunner

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
    expected = [f"{t}-t-{rep}" for rep in range(3) for t in (TUNED.topic, STOCK.topic)]
    assert [topic_of(c) for c in producers[2:]] == expected
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
    fake = FakeRunner(fail_on=f"ProducerPerformance --topic {STOCK.topic}-")
    results = run_plan([TUNED, STOCK], fake, repetitions=2, records=10)
    stock = [m for m in results if m.case == STOCK.name]
    assert [m.repetition for m in stock] == [-1] and "broker unreachable" in stock[0].error
    assert [m.ok for m in results if m.case == TUNED.name] == [True, True]
    # Every per-run topic is deleted, the failed run's too.
    created = [topic_of(c) for c in fake.calls if "--create" in c]
    deleted = [topic_of(c) for c in fake.calls if "--delete" in c]
    assert len(created) == 4 and sorted(created) == sorted(deleted)


def test_each_producer_run_has_a_topic_of_its_own_deleted_after_it():
    fake = FakeRunner()
    run_plan([TUNED], fake, repetitions=2, records=10, tag="t")
    steps = [("create" if "--create" in c else "delete" if "--delete" in c else "run", topic_of(c)) for c in fake.calls]
    runs = [f"{TUNED.topic}-t-{r}" for r in ("warmup", "0", "1")]
    assert steps == [(step, t) for t in runs for step in ("create", "run", "delete")]


def test_a_broker_variant_is_set_for_its_runs_only_and_removed_even_when_a_run_fails():
    case = make_case("producer", SASL, tuning="fetchers2")
    fake = FakeRunner(fail_on=f"ProducerPerformance --topic {case.topic}-t-0")
    results = run_plan([case], fake, repetitions=2, records=10, tag="t")
    configs = [c for c in fake.calls if "kafka.admin.ConfigCommand" in c]
    assert len(configs) == 6  # on and off around the warm-up and both runs
    assert [c[c.index("--add-config") + 1] if "--add-config" in c else "off" for c in configs] == [
        "num.replica.fetchers=2", "off"] * 3  # fmt: skip
    assert [m.ok for m in results] == [False, True]
    produced = fake.measured(PRODUCER)[-1]
    assert "linger.ms=20" in produced  # the client side stays the kit's tuned one


def test_runs_are_capped_in_bytes():
    fake = FakeRunner(rates={TUNED.topic: [10_000_000.0, 1.0]})
    (m,) = run_plan([TUNED], fake, repetitions=1, seconds=20)
    assert m.records == MAX_RUN_BYTES // TUNED.record_size


def test_records_and_seconds_are_exclusive():
    with pytest.raises(ValueError):
        run_plan([TUNED], FakeRunner(), records=1, seconds=1)


def test_producer_runs_of_one_record_size_send_equal_counts():
    # Calibrated at 1000, 2000 and 4000 records/s: every case sends the median count, 2000 * 10.
    slow, mid = make_case("producer", SASL, tuning="stock"), make_case("producer", SASL, tuning="fetchers2")
    fake = FakeRunner(rates={TUNED.topic: [4000.0] + [1.0] * 9, slow.topic: [1000.0] + [1.0] * 9})
    fake.rates[mid.topic] = [2000.0] + [1.0] * 9
    results = run_plan([TUNED, slow, mid], fake, repetitions=2, seconds=10)
    assert {m.records for m in results} == {20000}


def test_a_group_of_its_own_runs_after_the_others_between_its_set_up_and_teardown():
    from dataclasses import replace

    from kafkakit.bench.parsers import format_scenario
    from kafkakit.bench.plan import Case

    calls: list[str] = []

    def run(command):
        calls.append(command[0])
        return format_scenario("failover", {"ack_gap_s": 1.0}) if command[0].startswith("run-") else ""

    def scenario(name, group=""):
        return Case(
            name, "failover", (f"run-{name}",), setup=((f"up-{name}",),), teardown=((f"down-{name}",),),
            group=group,
        )  # fmt: skip

    plain, own = scenario("a"), replace(scenario("b", "spare"), setup=(("up-spare",),), teardown=(("down-spare",),))
    results = run_plan([own, plain, scenario("c", "spare")], run, repetitions=2, records=10, tag="t")
    assert calls == [
        "up-a", "run-a", "run-a", "down-a",
        "up-spare", "up-c", "run-b", "run-c", "run-b", "run-c", "down-spare", "down-c",
    ]  # fmt: skip
    # The plain group first whatever the order given; the repetitions and the tag shared.
    assert [(m.case, m.repetition) for m in results] == [("a", 0), ("a", 1), ("b", 0), ("c", 0), ("b", 1), ("c", 1)]

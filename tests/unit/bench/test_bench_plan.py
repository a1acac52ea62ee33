"""The plan: command lines, comparisons, selection and the interleaved order."""

import pytest

from kafkakit.bench.plan import (
    RECORDS,
    Endpoint,
    ToolSettings,
    build_plan,
    comparisons,
    interleave,
    make_case,
    select,
)

SASL = Endpoint("SASL_SSL", "b1:9093,b2:9093", "/etc/kafka/client.properties")
PLAIN = Endpoint("PLAINTEXT", "b1:9092")


def by_name(cases):
    return {c.name: c for c in cases}


def test_producer_command():
    case = make_case("producer", SASL, compression="lz4", record_size=100)
    assert case.name == "producer-sasl_ssl-tuned-lz4-100"
    cmd = case.command(5000)
    assert cmd[:5] == ["java", "-Xmx512m", "-cp", "/opt/kafka/libs/*", "org.apache.kafka.tools.ProducerPerformance"]
    assert cmd[cmd.index("--num-records") + 1] == "5000"
    assert cmd[cmd.index("--throughput") + 1] == "-1"
    assert {"bootstrap.servers=b1:9093,b2:9093", "acks=all", "compression.type=lz4", "linger.ms=20"} <= set(cmd)
    assert cmd[-2:] == ["--producer.config", "/etc/kafka/client.properties"]


def test_stock_producer_has_no_tuning():
    cmd = make_case("producer", SASL, tuning="stock").command(10)
    assert not any(a.startswith(("linger.ms", "batch.size")) for a in cmd)


def test_consumer_command_and_fill():
    case = make_case("consumer", SASL)
    cmd = case.command(7000, "x-1")
    assert "org.apache.kafka.tools.ConsumerPerformance" in cmd
    assert cmd[cmd.index("--messages") + 1] == "7000"
    assert cmd[cmd.index("--group") + 1] == "bench-consumer-sasl_ssl-tuned-none-1024-x-1"
    assert "--hide-header" in cmd and "--show-detailed-stats" not in cmd
    assert cmd[cmd.index("--consumer.config") + 1] == SASL.config
    fill = case.fill_command(7000)
    assert fill and "org.apache.kafka.tools.ProducerPerformance" in fill and "7000" in fill


def test_latency_command_positional_arguments():
    cmd = make_case("latency", SASL, record_size=100).command(300)
    i = cmd.index("org.apache.kafka.tools.EndToEndLatency")
    assert cmd[i + 1 :] == ["b1:9093,b2:9093", "bench-latency-sasl_ssl-100", "300", "all", "100", SASL.config]


def test_setup_creates_a_replicated_topic_and_teardown_deletes_it():
    case = make_case("latency", PLAIN, replication=3)
    (create,) = case.setup
    assert "--create" in create and create[create.index("--replication-factor") + 1] == "3"
    assert "--command-config" not in create  # PLAINTEXT endpoint without a config file
    (delete,) = case.teardown
    assert "--delete" in delete and case.topic in delete


def test_scripts_launcher():
    tools = ToolSettings(scripts_dir="/opt/kafka/bin")
    assert make_case("producer", SASL, tools=tools).args[0] == "/opt/kafka/bin/kafka-producer-perf-test.sh"
    assert make_case("latency", SASL, tools=tools).args[:2] == (
        "/opt/kafka/bin/kafka-run-class.sh",
        "org.apache.kafka.tools.EndToEndLatency",
    )


def test_placeholder_only_in_args():
    case = make_case("producer", SASL)
    assert RECORDS in case.args and RECORDS not in case.command(1)


def test_plan_and_comparisons():
    cases = build_plan([SASL, PLAIN])
    names = by_name(cases)
    assert len(names) == len(cases)
    labels = {(c.label, c.numerator, c.denominator) for c in comparisons(cases)}
    assert ("tuned/stock", "producer-sasl_ssl-tuned-none-100", "producer-sasl_ssl-stock-none-100") in labels
    assert ("SASL_SSL/PLAINTEXT", "latency-sasl_ssl-1024", "latency-plaintext-1024") in labels
    assert ("lz4/none", "consumer-sasl_ssl-tuned-lz4-1024", "consumer-sasl_ssl-tuned-none-1024") in labels
    assert ("zstd/none", "producer-sasl_ssl-tuned-zstd-1024", "producer-sasl_ssl-tuned-none-1024") in labels
    assert ("fetchers2/tuned", "producer-sasl_ssl-fetchers2-none-1024", "producer-sasl_ssl-tuned-none-1024") in labels
    # Only one factor differs in each pair.
    for comp in comparisons(cases):
        a, b = names[comp.numerator], names[comp.denominator]
        factors = ("tool", "tuning", "protocol", "compression", "record_size")
        differing = [f for f in factors if getattr(a, f) != getattr(b, f)]
        assert len(differing) == 1


def test_plan_without_plaintext_has_no_protocol_comparison():
    assert not [c for c in comparisons(build_plan([SASL])) if c.label == "SASL_SSL/PLAINTEXT"]


def test_select_globs_and_unknown_names():
    cases = build_plan([SASL])
    assert [c.name for c in select(cases, ["producer-*-1024"])] == [
        "producer-sasl_ssl-tuned-none-1024",
        "producer-sasl_ssl-stock-none-1024",
        "producer-sasl_ssl-fetchers2-none-1024",
        "producer-sasl_ssl-fewthreads-none-1024",
        "producer-sasl_ssl-tuned-lz4-1024",
        "producer-sasl_ssl-tuned-zstd-1024",
    ]
    with pytest.raises(ValueError, match="no case matches"):
        select(cases, ["nope"])


def test_interleave_is_abab():
    a, b = make_case("producer", SASL), make_case("producer", SASL, tuning="stock")
    order = [(rep, c.name) for rep, c in interleave([a, b], 3)]
    assert order == [(0, a.name), (0, b.name), (1, a.name), (1, b.name), (2, a.name), (2, b.name)]


def test_broker_variant_sets_dynamic_broker_defaults_around_each_run():
    case = make_case("producer", SASL, tuning="fewthreads")
    (on, *_), (*_, off) = case.before("r1"), case.after("r1")
    assert "kafka.admin.ConfigCommand" in on and "--entity-default" in on
    assert on[on.index("--add-config") + 1] == "num.io.threads=4,num.network.threads=2"
    assert off[off.index("--delete-config") + 1] == "num.io.threads,num.network.threads"
    with pytest.raises(ValueError, match="producer only"):
        make_case("consumer", SASL, tuning="fewthreads")

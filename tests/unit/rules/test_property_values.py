"""kafkakit.rules.property_values: Kafka's own definitions of the broker's, controller's, Connect
worker's and MirrorMaker 2's properties, and what Kafka refuses in a value.

The tables are printed again from every Kafka archive build/artifacts holds (`make artifacts`) and
compared with the stored ones, and value_problem is compared with Kafka's own parsing and validators
on sample values, so a version bump that changes a definition fails here instead of at a broker's
start on a cluster.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkakit.rules.property_values import (
    COMPONENTS,
    EARLIER,
    LINES,
    MIRROR_CONNECTORS,
    TABLES,
    TYPE_ONLY,
    mirrormaker_definition,
    property_types,
    understood,
    value_problem,
    worker_definition,
)
from kafkakit.rules.topology import definitions_line
from kafkakit.tooling.config_defs import print_config_defs
from tests.unit.support.kafka_archives import assert_ci_has_archives, each_archive, needs_archives

# Values typed as a user might, good and bad, for each type and kind of validator the tables hold.
SAMPLES: dict[tuple[str, str], list[str]] = {
    ("broker", "num.network.threads"): ["3", " 8 ", "0", "eight", "8.0", "+4", "2147483648"],
    ("broker", "unclean.leader.election.enable"): ["false", "TRUE", "True", "yes", "1", ""],
    ("broker", "log.retention.hours"): ["168", "-1", "-5", "1e3", "7d"],
    ("broker", "log.retention.bytes"): ["-1", "1073741824", "1GB"],
    ("broker", "compression.type"): ["zstd", "producer", "zip", "GZIP"],
    ("broker", "log.cleanup.policy"): ["delete", "compact,delete", " compact , delete ", "compacted", "Delete"],
    ("broker", "log.cleaner.min.cleanable.ratio"): ["0.5", ".5", "1", "1.5", "-0.1", "half"],
    ("broker", "offsets.topic.replication.factor"): ["3", "0", "32767", "32768", "three"],
    ("broker", "num.partitions"): ["1", "0", "-1"],
    ("broker", "message.max.bytes"): ["1048588", "0", "-1", "1MB"],
    ("broker", "log.segment.bytes"): ["14", "1048576", "13", "1000"],
    ("broker", "ssl.client.auth"): ["required", "requested", "none", "optional", "REQUIRED"],
    ("broker", "group.consumer.migration.policy"): ["bidirectional", "DISABLED", "sometimes"],
    ("broker", "controller.quorum.voters"): ["", "1@h:9093"],
    ("broker", "remote.log.storage.manager.class.name"): ["", "org.example.Rsm"],
    ("broker", "replica.selector.class"): ["org.apache.kafka.common.replica.RackAwareReplicaSelector", "not a class"],
    ("broker", "authorizer.class.name"): ["", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"],
    ("broker", "inter.broker.protocol.version"): ["3.9", "3.9-IV0", "3.10", "2.8"],
    ("connect", "plugin.discovery"): ["service_load", "SERVICE_LOAD", "hybrid_warn", "serviceload"],
    ("connect", "exactly.once.source.support"): ["enabled", "preparing", "on"],
    ("connect", "offset.flush.interval.ms"): ["5000", "5s", "-1"],
    ("connect", "config.storage.replication.factor"): ["3", "-1", "0", "-2", "x"],
    ("connect", "offset.storage.partitions"): ["25", "-1", "0"],
    ("connect", "scheduled.rebalance.max.delay.ms"): ["30000", "-1", "thirty"],
    ("connect", "security.protocol"): ["SASL_SSL", "sasl_ssl", "TLS"],
    ("source", "tasks.max"): ["2", "0", "two"],
    ("source", "replication.factor"): ["3", "three"],
    ("source", "sync.topic.configs.enabled"): ["true", "yes"],
    ("source", "name"): ["mm2", ""],
    ("checkpoint", "emit.checkpoints.interval.seconds"): ["10", "10s"],
    ("mirrormaker", "clusters"): ["dc1, dc2", ""],
    ("producer", "acks"): ["all", "-1", "1", "2", "ALL"],
    ("producer", "linger.ms"): ["5", "5ms", "-1"],
    ("producer", "compression.type"): ["zstd", "producer", "zip"],
    ("consumer", "isolation.level"): ["read_committed", "READ_COMMITTED", "committed"],
    ("consumer", "max.poll.records"): ["500", "0", "lots"],
    ("consumer", "auto.offset.reset"): ["latest", "earliest"],
    ("admin", "retries"): ["5", "-1"],
}


def stored(line: str) -> list[str]:
    return [row for row in (TABLES / f"kafka-{line}.tsv").read_text().splitlines() if not row.startswith("#")]


MIRROR = {"mirrormaker", *MIRROR_CONNECTORS}


@pytest.mark.parametrize("line", LINES)
def test_each_table_has_every_component(line: str) -> None:
    # 4.4's archive from Maven Central has no MirrorMaker 2: its settings come from 4.3's table.
    expected = set(COMPONENTS) - (MIRROR if line in EARLIER else set())
    assert {row.split("\t")[0] for row in stored(line)} == expected


def test_a_line_without_mirrormaker_takes_the_earlier_lines_definitions() -> None:
    assert property_types("mirrormaker", "4.4.0") == property_types("mirrormaker", "4.3.1") != {}
    assert mirrormaker_definition("tasks.max", "4.4.0", {"dc1", "dc2"}) == ("tasks.max", ("INT", "[1,...]"))


def test_4_4_only_adds_definitions_and_they_are_not_given_to_4_3() -> None:
    for component in set(COMPONENTS) - MIRROR:
        older, newer = property_types(component, "4.3.1"), property_types(component, "4.4.0")
        assert older.items() <= newer.items(), component
    assert "max.decompressed.message.bytes" in property_types("broker", "4.4.0")
    assert "max.decompressed.message.bytes" not in property_types("broker", "4.3.1")
    assert "max.decompressed.message.bytes" in property_types("broker", None)  # unknown: every line's


def test_every_validator_is_checked_or_knowingly_left_to_kafka() -> None:
    # A validator of a new shape fails here: teach value_problem its check, or add it to TYPE_ONLY.
    shapes = {row.split("\t")[3] for line in LINES for row in stored(line)}
    assert {v for v in shapes if not understood(v)} <= TYPE_ONLY
    assert TYPE_ONLY <= shapes  # none stale


@pytest.mark.parametrize(
    ("version", "name", "expected"),
    [
        ("3.9.2", "log.segment.bytes", ("INT", "[14,...]")),
        ("4.3.1", "log.segment.bytes", ("INT", "[1048576,...]")),
        ("4.0", "log.segment.bytes", ("INT", "[1048576,...]")),
        ("4.4.0", "log.remote.copy.lag.ms", ("LONG", "[-1,...]")),
        ("4.3.1", "log.remote.copy.lag.ms", None),  # 4.4's: a 4.3 broker would ignore it
        (None, "log.segment.bytes", ("INT", "[14,...]")),  # unknown: the most lenient (3.x)
        ("5.0.0", "num.io.threads", ("INT", "[1,...]")),
        ("4.3.1", "inter.broker.protocol.version", None),  # gone with ZooKeeper
        ("3.9.2", "share.coordinator.state.topic.replication.factor", None),
    ],
)
def test_the_definitions_follow_the_release_line(version, name, expected) -> None:
    assert property_types("broker", version).get(name) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("tasks.max", ("tasks.max", ("INT", "[1,...]"))),
        ("dc1->dc2.tasks.max", ("tasks.max", ("INT", "[1,...]"))),
        ("dc2.offset.flush.interval.ms", ("offset.flush.interval.ms", ("LONG", ""))),
        ("clusters", ("clusters", ("LIST", ""))),
        ("dc3.offset.flush.interval.ms", None),  # no such cluster: not a worker setting
        ("dc2.producer.linger.ms", ("linger.ms", ("LONG", "[0,...]"))),
        ("dc2.consumer.no.such.setting", None),
        ("my.plugin.setting", None),
    ],
)
def test_how_mm2_properties_reads_a_key(key, expected) -> None:
    assert mirrormaker_definition(key, "4.3.1", {"dc1", "dc2"}) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("offset.flush.interval.ms", ("offset.flush.interval.ms", ("LONG", ""))),
        ("admin.listeners", ("admin.listeners", ("LIST", ""))),  # the worker's own, not an admin client's
        ("producer.linger.ms", ("linger.ms", ("LONG", "[0,...]"))),
        ("consumer.max.poll.records", ("max.poll.records", ("INT", "[1,...]"))),
        ("admin.retries", ("retries", ("INT", "[0,...,2147483647]"))),
        ("producer.my.interceptor.setting", None),
        ("my.plugin.setting", None),
    ],
)
def test_how_a_connect_worker_reads_a_key(key, expected) -> None:
    assert worker_definition(key, "4.3.1") == expected


@pytest.mark.parametrize(
    ("kind", "validator", "value", "problem"),
    [
        ("INT", "[1,...]", "eight", "is not a whole number"),
        ("INT", "[1,...]", 0, "is outside Kafka's range [1,...]"),
        ("INT", "[1,...]", 8, None),
        ("INT", "", 8.0, "is not a whole number"),
        ("BOOLEAN", "", "yes", "is not true or false"),
        ("BOOLEAN", "", True, None),
        ("SHORT", "[1,...]", 40000, "does not fit Kafka's SHORT type"),
        (
            "STRING",
            "[required, requested, none]",
            "optional",
            "is not one of Kafka's ['required', 'requested', 'none']",
        ),
        ("STRING", "(case insensitive) [ONLY_SCAN, SERVICE_LOAD]", "service_load", None),
        (
            "STRING",
            "(case insensitive) [ONLY_SCAN, SERVICE_LOAD]",
            "serviceload",
            "is not one of Kafka's ['ONLY_SCAN', 'SERVICE_LOAD'] (in any case) (did you mean 'SERVICE_LOAD'?)",
        ),
        (
            "LIST",
            "[compact, delete]",
            "compact,deleted",
            "has 'deleted', which is not one of Kafka's ['compact', 'delete'] (did you mean 'delete'?)",
        ),
        ("STRING", "non-empty string", " ", "is empty; Kafka wants a non-empty string"),
        ("CLASS", "", "com.example.Thing", None),
        ("CLASS", "", "not a class", "is not a Java class name"),
        ("SHORT", "Positive number, or -1 to use the broker's default", -1, None),
        (
            "SHORT",
            "Positive number, or -1 to use the broker's default",
            0,
            "is neither a positive number nor -1 (the broker's default)",
        ),
        ("STRING", "Any MAC algorithm supported by the worker JVM", "anything", None),  # left to Kafka
        ("LONG", "", [1, 2], "is a list; give Kafka a comma-separated string"),
    ],
)
def test_value_problem(kind, validator, value, problem) -> None:
    assert value_problem(kind, validator, value) == problem


def test_ci_compares_the_tables_with_kafka_itself() -> None:
    assert_ci_has_archives()


@needs_archives
@each_archive
def test_the_tables_are_kafkas_own(archive: Path, tmp_path: Path) -> None:
    version = archive.name.removeprefix("kafka_2.13-").removesuffix(".tgz")
    line = definitions_line(version)
    present = {row.split("\t")[0] for row in stored(line)}  # not what a line takes from an earlier one
    samples = [
        f"{component}\t{name}={value}"
        for (component, name), values in SAMPLES.items()
        if component in present and name in property_types(component, version)
        for value in values
    ]
    out = print_config_defs(archive, tmp_path, "\n".join(samples) + "\n").splitlines()
    table = [line for line in out if not line.startswith(("OK\t", "BAD\t"))]
    # Regenerate with: python -m kafkakit.tooling.config_defs <archive> (then the two header lines).
    assert table == stored(line), version
    verdicts = {line.split("\t", 1)[1]: line.startswith("OK") for line in out if line.startswith(("OK\t", "BAD\t"))}
    ours = {}
    for sample in samples:
        component, setting = sample.split("\t")
        name, value = setting.split("=", 1)
        ours[sample] = value_problem(*property_types(component, version)[name], value) is None
    assert ours == verdicts, version

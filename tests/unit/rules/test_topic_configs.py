"""kafkakit.rules.topic_configs: the topic-level configs a declared topic may set, per Kafka line,
and the values each takes.

The tables are compared with the broker's own (LogConfig.configKeys(): names, types, validators) in
every Kafka archive build/artifacts holds (`make artifacts`), and value_problem with Kafka's own
parsing and validators on sample values, so a version bump that adds or drops a topic config or
changes what one takes fails here instead of at apply time on a cluster.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkakit.rules.property_values import value_problem
from kafkakit.rules.topic_configs import (
    KAFKA_3_TOPIC_CONFIGS,
    KAFKA_4_4_TOPIC_CONFIGS,
    KAFKA_4_TOPIC_CONFIGS,
    closest_topic_config,
    release_line,
    topic_config_names,
    topic_config_types,
)
from tests.unit.support.kafka_archives import assert_ci_has_archives, each_archive, needs_archives, run_java

JARS = ("kafka-", "slf4j-api-")
# Prints the broker's topic configs, one a line (name, ConfigDef type, validator), then, for each
# name=value line on stdin, OK or BAD as Kafka parses and validates it (java's single-file source launcher).
LIST_CONFIGS = """
import java.util.*;
import org.apache.kafka.common.config.ConfigDef;
public class ListTopicConfigs {
  public static void main(String[] args) throws Exception {
    Map<String, ConfigDef.ConfigKey> keys = org.apache.kafka.storage.internals.log.LogConfig.configKeys();
    for (String n : new TreeSet<>(keys.keySet()))
      System.out.println(n + "\t" + keys.get(n).type + "\t" + Objects.toString(keys.get(n).validator, ""));
    Scanner in = new Scanner(System.in);
    while (in.hasNextLine()) {
      String line = in.nextLine(), n = line.substring(0, line.indexOf('=')), v = line.substring(n.length() + 1);
      ConfigDef.ConfigKey k = keys.get(n);
      try {
        Object parsed = ConfigDef.parseType(n, v, k.type);
        if (k.validator != null) k.validator.ensureValid(n, parsed);
        System.out.println("OK\t" + line);
      } catch (Exception e) {
        System.out.println("BAD\t" + line);
      }
    }
  }
}
"""
# Values typed as a user might, good and bad, for each kind of type and validator Kafka's topic configs use.
SAMPLES: dict[str, list[str]] = {
    "cleanup.policy": [
        "compact",
        "delete",
        "compact,delete",
        " compact , delete ",
        "",
        "compacted",
        "Compact",
        "delete,",
    ],
    "compression.type": ["gzip", "zip", "GZIP", "producer"],
    "message.timestamp.type": ["CreateTime", "create", "LogAppendTime"],
    "retention.ms": ["-1", "-2", "0", "+100", " 100 ", "1e3", "7d", "9223372036854775807", "9223372036854775808"],
    "retention.bytes": ["-1", "-5", "x"],
    "max.message.bytes": ["1048588", "2147483647", "2147483648", "-1", "1.5"],
    "min.cleanable.dirty.ratio": ["0.5", ".5", "1e-1", "1", "1.5", "-0.1", "half"],
    "compression.gzip.level": ["-1", "0", "1", "9", "10"],
    "compression.zstd.level": ["-131072", "-131073", "22", "23"],
    "preallocate": ["true", "TRUE", " false ", "yes", "1", "True"],
    "leader.replication.throttled.replicas": ["*", "0:1,1:2", "0:1, 1:2", "", "a:b", "0-1"],
    "segment.bytes": ["14", "1048576", "13"],
    "message.format.version": ["2.8", "3.0-IV1", "0.10.0", "9.9"],
}


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("3.9.2", KAFKA_3_TOPIC_CONFIGS),
        ("4.3.1", KAFKA_4_TOPIC_CONFIGS),
        ("4.0.0", KAFKA_4_TOPIC_CONFIGS),
        ("4.4.0", KAFKA_4_4_TOPIC_CONFIGS),
        ("4.5.0", KAFKA_4_4_TOPIC_CONFIGS),
    ],
)
def test_the_list_follows_the_release_line(version: str, expected: frozenset[str]) -> None:
    assert topic_config_names(version) == expected
    assert release_line(version) == f"Kafka {version[0]}.x"


@pytest.mark.parametrize("version", [None, "", "latest", "5.0.0"])
def test_an_unknown_version_allows_every_name_the_kit_knows(version: str | None) -> None:
    assert topic_config_names(version) == KAFKA_3_TOPIC_CONFIGS | KAFKA_4_4_TOPIC_CONFIGS
    assert release_line(version) == "Kafka"


def test_4_4_only_adds_and_a_4_3_data_centre_is_refused_what_it_would_ignore() -> None:
    assert KAFKA_4_TOPIC_CONFIGS < KAFKA_4_4_TOPIC_CONFIGS
    assert "remote.copy.lag.ms" in topic_config_names("4.4.0")
    assert "remote.copy.lag.ms" not in topic_config_names("4.3.1")


def test_what_4_x_dropped() -> None:
    assert KAFKA_3_TOPIC_CONFIGS - KAFKA_4_TOPIC_CONFIGS == {
        "message.downconversion.enable",
        "message.format.version",
        "message.timestamp.difference.max.ms",
    }
    assert {"retention.ms", "cleanup.policy", "min.insync.replicas"} <= KAFKA_4_TOPIC_CONFIGS


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("retention.msx", "retention.ms"),
        ("cleanup.polcy", "cleanup.policy"),
        ("segment.byte", "segment.bytes"),
        ("log.retention.hours", "retention.ms"),
        ("colour", None),
        ("min.isr", None),
    ],
)
def test_the_closest_name(typo: str, meant: str | None) -> None:
    assert closest_topic_config(typo, KAFKA_3_TOPIC_CONFIGS) == meant


def test_ci_compares_the_list_with_kafka_itself() -> None:
    assert_ci_has_archives()


@needs_archives
@each_archive
def test_the_list_is_the_brokers_own(archive: Path, tmp_path: Path) -> None:
    version = archive.name.removeprefix("kafka_2.13-").removesuffix(".tgz")
    types = topic_config_types(version)
    samples = [f"{name}={value}" for name, values in SAMPLES.items() if name in types for value in values]
    # Kafka's own jars and its logging API are all LogConfig needs.
    out = run_java(archive, JARS, "ListTopicConfigs", LIST_CONFIGS, tmp_path, "\n".join(samples) + "\n")
    lines = [line.split("\t") for line in out.splitlines()]
    kafkas = {name: (kind, validator) for name, kind, validator in (x for x in lines if x[0] not in ("OK", "BAD"))}
    assert set(kafkas) == topic_config_names(version), version
    assert kafkas == types, version
    verdicts = {sample: verdict == "OK" for verdict, sample in (x for x in lines if x[0] in ("OK", "BAD"))}
    ours = {s: value_problem(*types[s.split("=", 1)[0]], s.split("=", 1)[1]) is None for s in samples}
    assert ours == verdicts, version

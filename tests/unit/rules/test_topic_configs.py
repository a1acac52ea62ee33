"""kafkakit.rules.topic_configs: the topic-level config names a declared topic may set, per Kafka line.

The lists are compared with the broker's own (LogConfig.configNames()) in every Kafka archive
build/artifacts holds (`make artifacts`), so a version bump that adds or drops a topic config
fails here instead of at apply time on a cluster.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from kafkakit.rules.topic_configs import (
    KAFKA_3_TOPIC_CONFIGS,
    KAFKA_4_TOPIC_CONFIGS,
    closest_topic_config,
    release_line,
    topic_config_names,
)

ROOT = Path(__file__).resolve().parents[3]
ARCHIVES = sorted((ROOT / "build" / "artifacts").glob("kafka_2.13-*.tgz"))
JARS = ("kafka-", "slf4j-api-")
# Prints the broker's topic config names, one a line (java's single-file source launcher).
LIST_CONFIGS = """
public class ListTopicConfigs {
  public static void main(String[] args) throws Exception {
    Class<?> c = Class.forName("org.apache.kafka.storage.internals.log.LogConfig");
    for (Object n : new java.util.TreeSet<Object>((java.util.Collection<?>) c.getMethod("configNames").invoke(null)))
      System.out.println(n);
  }
}
"""


@pytest.mark.parametrize(
    ("version", "expected"),
    [("3.9.2", KAFKA_3_TOPIC_CONFIGS), ("4.3.1", KAFKA_4_TOPIC_CONFIGS), ("4.0.0", KAFKA_4_TOPIC_CONFIGS)],
)
def test_the_list_follows_the_release_line(version: str, expected: frozenset[str]) -> None:
    assert topic_config_names(version) == expected
    assert release_line(version) == f"Kafka {version[0]}.x"


@pytest.mark.parametrize("version", [None, "", "latest", "5.0.0"])
def test_an_unknown_version_allows_every_name_the_kit_knows(version: str | None) -> None:
    assert topic_config_names(version) == KAFKA_3_TOPIC_CONFIGS | KAFKA_4_TOPIC_CONFIGS
    assert release_line(version) == "Kafka"


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
    """`make test` fetches the archives first (make lab): there, the comparison below must run."""
    if os.environ.get("CI"):
        assert ARCHIVES and shutil.which("java"), "no Kafka archive in build/artifacts, or no java"


@pytest.mark.skipif(not ARCHIVES or not shutil.which("java"), reason="no Kafka archive in build/artifacts, or no java")
@pytest.mark.parametrize("archive", ARCHIVES, ids=[a.name for a in ARCHIVES])
def test_the_list_is_the_brokers_own(archive: Path, tmp_path: Path) -> None:
    version = archive.name.removeprefix("kafka_2.13-").removesuffix(".tgz")
    with tarfile.open(archive) as tar:
        # Kafka's own jars and its logging API are all LogConfig needs (the rest is 100 MB more).
        jars = [m for m in tar.getmembers() if "/libs/" in m.name and m.name.rsplit("/", 1)[1].startswith(JARS)]
        tar.extractall(tmp_path, members=jars, filter="data")
    source = tmp_path / "ListTopicConfigs.java"
    source.write_text(LIST_CONFIGS)
    libs = next(tmp_path.glob("*/libs"))
    done = subprocess.run(
        ["java", "-cp", f"{libs}/*", str(source)], capture_output=True, text=True, timeout=120, check=True
    )
    assert set(done.stdout.split()) == topic_config_names(version), version

"""kafkakit.guards.upgrade: the refusals of ops/upgrade.yml in a KRaft data centre. The features
step only once every node runs the new line; never a release below the finalized metadata.version,
nor one older than the release that formatted a node's storage (Kafka 4.4's format is not
forward-compatible). The metadata.version levels are compared with Kafka's own, from each 4.x archive
in build/artifacts."""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

import pytest

from kafkakit.guards.upgrade import (
    METADATA_LEVELS,
    RELEASE_METADATA,
    NodeRead,
    features_step_refusal,
    finalized_metadata,
    metadata_level,
    newest_metadata,
    parse_describe,
    parse_node_read,
    read_nodes,
    release_change_refusal,
    release_line,
)
from tests.unit.support.kafka_archives import assert_ci_has_archives, each_4x_archive, needs_archives

# kafka-features describe of dc2 after the roll to 4.4.0, before its features step.
FEATURES_43 = [
    ("eligible.leader.replicas.version", "0", "1", "1"),
    ("group.version", "0", "1", "1"),
    ("kraft.version", "0", "1", "1"),
    ("metadata.version", "3.3-IV3", "4.4-IV2", "4.3-IV0"),
    ("share.version", "0", "2", "1"),
    ("streams.version", "0", "1", "1"),
    ("transaction.version", "0", "2", "2"),
]
DESCRIBE_43 = "".join(
    f"Feature: {name}\tSupportedMinVersion: {low}\tSupportedMaxVersion: {high}\t"
    f"FinalizedVersionLevel: {level}\tEpoch: 7\n"
    for name, low, high, level in FEATURES_43
)
DESCRIBE_44 = DESCRIBE_43.replace("FinalizedVersionLevel: 4.3-IV0", "FinalizedVersionLevel: 4.4-IV2")
NODES = ["dc2-ctrl1", "dc2-ctrl2", "dc2-ctrl3", "dc2-kafka1", "dc2-kafka2"]


def test_the_describe_output_is_read() -> None:
    features = parse_describe(DESCRIBE_43)
    assert features["metadata.version"].supported_max == "4.4-IV2"
    assert finalized_metadata(DESCRIBE_43) == "4.3-IV0" and finalized_metadata(DESCRIBE_44) == "4.4-IV2"
    assert features["share.version"].finalized == "1"
    with pytest.raises(ValueError, match="no finalized metadata.version"):
        finalized_metadata("Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.4-IV2")


@pytest.mark.parametrize(
    ("version", "line", "newest", "level"),
    [
        ("4.4.0", "4.4", "4.4-IV2", 33),
        ("4.3.1", "4.3", "4.3-IV0", 30),
        ("3.9.2", "3.9", "3.9-IV0", 21),
        ("4.4", "4.4", "4.4-IV2", 33),
    ],
)
def test_a_release_runs_its_lines_metadata_version_at_most(version, line, newest, level) -> None:
    assert release_line(version) == line
    assert newest_metadata(version) == newest and metadata_level(newest) == level


def test_a_release_the_kit_does_not_know() -> None:
    assert newest_metadata("4.9.0") is None and newest_metadata("latest") is None
    with pytest.raises(ValueError):
        release_line("latest")


# --- the features step ---------------------------------------------------------------------------


def test_the_features_step_waits_for_every_node() -> None:
    rolled = dict.fromkeys(NODES, "4.4.0")
    assert features_step_refusal(rolled, "4.4.0") == ""
    # The controllers are rolled, the brokers are not yet.
    half = {**rolled, "dc2-kafka1": "4.3.1", "dc2-kafka2": "4.3.1"}
    refusal = features_step_refusal(half, "4.4.0")
    assert refusal.startswith("refusing the features step to 4.4: 2 node(s) do not run Kafka 4.4 yet")
    assert "dc2-kafka1 (4.3.1), dc2-kafka2 (4.3.1)" in refusal and "4.4-IV2" in refusal
    # A node whose process could not be read counts as not rolled.
    assert "dc2-ctrl3 (?)" in features_step_refusal({**rolled, "dc2-ctrl3": ""}, "4.4.0")
    assert features_step_refusal({}, "4.4.0").startswith("no controller or broker was read")


def test_a_patch_release_or_a_newer_line_is_the_new_line() -> None:
    assert features_step_refusal({**dict.fromkeys(NODES, "4.4.1"), "dc2-kafka2": "4.5.0"}, "4.4.0") == ""


# --- moving the binaries -------------------------------------------------------------------------


def test_the_minor_upgrade_and_a_move_within_the_finalized_line_pass() -> None:
    assert release_change_refusal("4.3-IV0", "4.4.0") == ""  # 4.3.1 -> 4.4.0, before the features step
    assert release_change_refusal("4.3-IV0", "4.3.1") == ""  # back to 4.3.1 before the features step
    assert release_change_refusal("4.4-IV2", "4.4.1") == ""


def test_a_release_below_the_finalized_metadata_version_is_refused() -> None:
    refusal = release_change_refusal("4.4-IV2", "4.3.1", running=dict.fromkeys(NODES, "4.4.0"))
    assert refusal.startswith("refusing to move the data centre to Kafka 4.3.1 (it runs 4.4.0): ")
    assert "metadata.version is 4.4-IV2" in refusal and "runs 4.3-IV0 at most" in refusal


def test_an_unknown_finalized_metadata_version_or_release_is_refused() -> None:
    assert "runs 4.4-IV2 at most" in release_change_refusal("4.5-IV0", "4.4.0")
    assert "does not know which metadata.version Kafka 4.9.0 runs" in release_change_refusal("4.4-IV2", "4.9.0")
    assert "is not a Kafka release" in release_change_refusal("4.4-IV2", "latest")


def test_storage_formatted_by_4_4_is_not_given_to_an_older_release() -> None:
    formatted = {
        "dc2-ctrl3:/var/lib/kafka-controller/metadata": "4.4.0",
        "dc2-ctrl1:/var/lib/kafka-controller/metadata": "4.3.1",
    }
    # Before the features step, metadata.version allows 4.3.1, but ctrl3 was formatted (replaced) by 4.4.0.
    refusal = release_change_refusal("4.3-IV0", "4.3.1", formatted)
    assert "dc2-ctrl3:/var/lib/kafka-controller/metadata (4.4.0): storage formatted by a newer Kafka" in refusal
    assert "dc2-ctrl1" not in refusal
    assert release_change_refusal("4.3-IV0", "4.4.0", formatted) == ""
    # Before 4.4, the format was forward-compatible: a 4.3.1-formatted directory may run 4.3.0.
    assert release_change_refusal("4.3-IV0", "4.3.0", {"dc2-ctrl1:/m": "4.3.1"}) == ""


# --- what the playbook reads on each node --------------------------------------------------------


def test_a_node_read_gives_its_running_release_and_its_record() -> None:
    text = 'running: /opt/kafka_2.13-4.3.1/libs/kafka_2.13-4.3.1.jar\nrecord: {"/var/lib/kafka/data": "4.4.0"}\n'
    assert parse_node_read(text) == NodeRead("4.3.1", {"/var/lib/kafka/data": "4.4.0"})
    assert parse_node_read("running: \nrecord: {}\n") == NodeRead("", {})
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_node_read("record: [1]")
    running, formatted = read_nodes({"a": text, "b": "running: \nrecord: {}"})
    assert running == {"a": "4.3.1", "b": ""} and formatted == {"a:/var/lib/kafka/data": "4.4.0"}


# --- the levels are Kafka's own ------------------------------------------------------------------


def test_each_lines_metadata_version_is_one_of_the_named_levels() -> None:
    assert set(RELEASE_METADATA.values()) <= set(METADATA_LEVELS)
    levels = [METADATA_LEVELS[RELEASE_METADATA[line]] for line in RELEASE_METADATA]
    assert levels == sorted(levels)


def test_ci_compares_the_levels_with_kafka_itself() -> None:
    assert_ci_has_archives()


@needs_archives
@each_4x_archive
def test_the_levels_are_kafkas_own(archive: Path, tmp_path: Path) -> None:
    version = archive.name.removeprefix("kafka_2.13-").removesuffix(".tgz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, members=[m for m in tar.getmembers() if "/libs/" in m.name], filter="data")
    libs = next(tmp_path.glob("kafka_2.13-*/libs"))
    own = release_line(version)
    for line in [x for x in RELEASE_METADATA if tuple(map(int, x.split("."))) <= tuple(map(int, own.split(".")))]:
        out = subprocess.run(
            [
                "java",
                "-Xmx128m",
                "-cp",
                f"{libs}/*",
                "org.apache.kafka.tools.FeatureCommand",
                "version-mapping",
                "--release-version",
                line,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
        (mapping,) = [x for x in out.splitlines() if x.startswith("metadata.version=")]
        level = int(mapping.split("=")[1].split()[0])
        assert level == METADATA_LEVELS[RELEASE_METADATA[line]], (version, line, mapping)
    # Its own line is the newest it runs: the tool's default mapping is it.
    out = subprocess.run(
        ["java", "-Xmx128m", "-cp", f"{libs}/*", "org.apache.kafka.tools.FeatureCommand", "version-mapping"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert f"({newest_metadata(version)})" in out.splitlines()[0], out

"""Kafka's topic-level config names, per release line: what a declared topic's `configs` may set.

Each list is the broker's own (`org.apache.kafka.storage.internals.log.LogConfig.configNames()`)
of the archive the kit installs; tests/unit/rules/test_topic_configs.py compares them with the archives
in build/artifacts when those are there, so a version bump that changes the list fails a test.
"""

from __future__ import annotations

import difflib

from kafkakit.rules.topology import kafka_major

_COMMON = frozenset(
    {
        "cleanup.policy",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.type",
        "compression.zstd.level",
        "delete.retention.ms",
        "file.delete.delay.ms",
        "flush.messages",
        "flush.ms",
        "follower.replication.throttled.replicas",
        "index.interval.bytes",
        "leader.replication.throttled.replicas",
        "local.retention.bytes",
        "local.retention.ms",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms",
        "message.timestamp.type",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "min.insync.replicas",
        "preallocate",
        "remote.log.copy.disable",
        "remote.log.delete.on.disable",
        "remote.storage.enable",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.index.bytes",
        "segment.jitter.ms",
        "segment.ms",
        "unclean.leader.election.enable",
    }
)

# Kafka 3.9.2. The last three are gone from 4.0 (KIP-724 and the message format v0/v1 removal).
KAFKA_3_TOPIC_CONFIGS = _COMMON | {
    "message.downconversion.enable",
    "message.format.version",
    "message.timestamp.difference.max.ms",
}
# Kafka 4.3.1 (internal.segment.bytes is Kafka's own, for its tests; it is still a topic config).
KAFKA_4_TOPIC_CONFIGS = _COMMON | {"internal.segment.bytes"}

_BY_MAJOR = {3: KAFKA_3_TOPIC_CONFIGS, 4: KAFKA_4_TOPIC_CONFIGS}


def topic_config_names(version: str | None) -> frozenset[str]:
    """The topic configs of a Kafka release ("3.9.2", "4.3.1"); every known name when the
    version is unknown or of a line the kit does not ship (then other rules report it)."""
    major = kafka_major(version) if version else None
    return _BY_MAJOR.get(major or 0, KAFKA_3_TOPIC_CONFIGS | KAFKA_4_TOPIC_CONFIGS)


def release_line(version: str | None) -> str:
    """How messages name the release whose list was used: "Kafka 3.x", "Kafka 4.x" or "Kafka"."""
    major = kafka_major(version) if version else None
    return f"Kafka {major}.x" if major in _BY_MAJOR else "Kafka"


def closest_topic_config(key: str, names: frozenset[str]) -> str | None:
    """The valid name a typo most likely meant (retention.msx -> retention.ms), if any is close.
    A broker-wide default (log.retention.hours) is matched without its "log." prefix."""
    match = difflib.get_close_matches(key.removeprefix("log."), sorted(names), n=1, cutoff=0.6)
    return match[0] if match else None

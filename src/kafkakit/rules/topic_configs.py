"""Kafka's topic-level configs, per release line: the names a declared topic's `configs` may set,
and the values each takes.

Each table is the broker's own (`org.apache.kafka.storage.internals.log.LogConfig.configKeys()`) of
the archive the kit installs: per name, its ConfigDef type and its validator as Kafka prints it
(`toString()`), copied from Kafka's output, never typed by hand. tests/unit/rules/test_topic_configs.py
prints the same from every archive in build/artifacts when those are there and compares, and checks
that `value_problem` accepts and refuses what Kafka's own validators do, so a version bump that
changes a name, a type or a range fails a test instead of a run. The values are checked by
kafkakit.rules.property_values.value_problem, as the broker's, Connect's and MirrorMaker's are.
"""

from __future__ import annotations

import difflib

from kafkakit.rules.topology import definitions_line, kafka_major

# name -> (ConfigDef type, validator as Kafka prints it; "" when it has none)
_COMMON: dict[str, tuple[str, str]] = {
    "cleanup.policy": ("LIST", "[compact, delete]"),
    "compression.gzip.level": ("INT", "[1,...,9] or -1"),
    "compression.lz4.level": ("INT", "[1,...,17]"),
    "compression.type": ("STRING", "[uncompressed, zstd, lz4, snappy, gzip, producer]"),
    "compression.zstd.level": ("INT", "[-131072,...,22]"),
    "delete.retention.ms": ("LONG", "[0,...]"),
    "file.delete.delay.ms": ("LONG", "[0,...]"),
    "flush.messages": ("LONG", "[1,...]"),
    "flush.ms": ("LONG", "[0,...]"),
    "follower.replication.throttled.replicas": ("LIST", "[partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    "index.interval.bytes": ("INT", "[0,...]"),
    "leader.replication.throttled.replicas": ("LIST", "[partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    "local.retention.bytes": ("LONG", "[-2,...]"),
    "local.retention.ms": ("LONG", "[-2,...]"),
    "max.compaction.lag.ms": ("LONG", "[1,...]"),
    "max.message.bytes": ("INT", "[0,...]"),
    "message.timestamp.after.max.ms": ("LONG", "[0,...]"),
    "message.timestamp.before.max.ms": ("LONG", "[0,...]"),
    "message.timestamp.type": ("STRING", "[CreateTime, LogAppendTime]"),
    "min.cleanable.dirty.ratio": ("DOUBLE", "[0,...,1]"),
    "min.compaction.lag.ms": ("LONG", "[0,...]"),
    "min.insync.replicas": ("INT", "[1,...]"),
    "preallocate": ("BOOLEAN", ""),
    "remote.log.copy.disable": ("BOOLEAN", ""),
    "remote.log.delete.on.disable": ("BOOLEAN", ""),
    "remote.storage.enable": ("BOOLEAN", ""),
    "retention.bytes": ("LONG", ""),
    "retention.ms": ("LONG", "[-1,...]"),
    "segment.index.bytes": ("INT", "[4,...]"),
    "segment.jitter.ms": ("LONG", "[0,...]"),
    "segment.ms": ("LONG", "[1,...]"),
    "unclean.leader.election.enable": ("BOOLEAN", ""),
}

# Kafka 3.9.2. The last three are gone from 4.0 (KIP-724 and the message format v0/v1 removal).
KAFKA_3_TOPIC_CONFIG_TYPES: dict[str, tuple[str, str]] = {
    **_COMMON,
    "segment.bytes": ("INT", "[14,...]"),
    "message.downconversion.enable": ("BOOLEAN", ""),
    "message.format.version": (
        "STRING",
        "[0.8.0, 0.8.1, 0.8.2, 0.9.0, 0.10.0-IV0, 0.10.0-IV1, 0.10.1-IV0, 0.10.1-IV1, 0.10.1-IV2, 0.10.2-IV0, "
        "0.11.0-IV0, 0.11.0-IV1, 0.11.0-IV2, 1.0-IV0, 1.1-IV0, 2.0-IV0, 2.0-IV1, 2.1-IV0, 2.1-IV1, 2.1-IV2, "
        "2.2-IV0, 2.2-IV1, 2.3-IV0, 2.3-IV1, 2.4-IV0, 2.4-IV1, 2.5-IV0, 2.6-IV0, 2.7-IV0, 2.7-IV1, 2.7-IV2, "
        "2.8-IV0, 2.8-IV1, 3.0-IV0, 3.0-IV1, 3.1-IV0, 3.2-IV0, 3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, "
        "3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, "
        "3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1]",
    ),
    "message.timestamp.difference.max.ms": ("LONG", "[0,...]"),
}
# Kafka 4.3.1 (internal.segment.bytes is Kafka's own, for its tests; it is still a topic config).
KAFKA_4_TOPIC_CONFIG_TYPES: dict[str, tuple[str, str]] = {
    **_COMMON,
    "segment.bytes": ("INT", "[1048576,...]"),
    "internal.segment.bytes": ("INT", ""),
}
# Kafka 4.4.0: 4.3's and four more (KIP-1241's remote copy lag, the share groups' dead-letter queue,
# the decompressed size bound). A 4.3 broker ignores them: a 4.3 data centre is refused them.
KAFKA_4_4_TOPIC_CONFIG_TYPES: dict[str, tuple[str, str]] = {
    **KAFKA_4_TOPIC_CONFIG_TYPES,
    "errors.deadletterqueue.group.enable": ("BOOLEAN", ""),
    "max.decompressed.message.bytes": ("INT", "[1,...,2147483639]"),
    "remote.copy.lag.bytes": ("LONG", "[-1,...]"),
    "remote.copy.lag.ms": ("LONG", "[-1,...]"),
}
KAFKA_3_TOPIC_CONFIGS = frozenset(KAFKA_3_TOPIC_CONFIG_TYPES)
KAFKA_4_TOPIC_CONFIGS = frozenset(KAFKA_4_TOPIC_CONFIG_TYPES)
KAFKA_4_4_TOPIC_CONFIGS = frozenset(KAFKA_4_4_TOPIC_CONFIG_TYPES)

# By kafkakit.rules.topology.definitions_line.
_BY_LINE = {"3": KAFKA_3_TOPIC_CONFIG_TYPES, "4.3": KAFKA_4_TOPIC_CONFIG_TYPES, "4.4": KAFKA_4_4_TOPIC_CONFIG_TYPES}
# A version of no line the kit ships: every name it knows, each with its most lenient (3.x) values.
_ANY_LINE = {**KAFKA_4_4_TOPIC_CONFIG_TYPES, **KAFKA_3_TOPIC_CONFIG_TYPES}


def topic_config_types(version: str | None) -> dict[str, tuple[str, str]]:
    """The topic configs of a Kafka release ("3.9.2", "4.3.1") with their types and validators;
    every known one when the version is unknown or of a line the kit does not ship."""
    return _BY_LINE.get(definitions_line(version) or "", _ANY_LINE)


def topic_config_names(version: str | None) -> frozenset[str]:
    """The topic configs of a Kafka release ("3.9.2", "4.3.1"); every known name when the
    version is unknown or of a line the kit does not ship (then other rules report it)."""
    return frozenset(topic_config_types(version))


def release_line(version: str | None) -> str:
    """How messages name the release whose list was used: "Kafka 3.x", "Kafka 4.x" or "Kafka"."""
    major = kafka_major(version) if version else None
    return f"Kafka {major}.x" if definitions_line(version) else "Kafka"


def closest_topic_config(key: str, names: frozenset[str]) -> str | None:
    """The valid name a typo most likely meant (retention.msx -> retention.ms), if any is close.
    A broker-wide default (log.retention.hours) is matched without its "log." prefix."""
    match = difflib.get_close_matches(key.removeprefix("log."), sorted(names), n=1, cutoff=0.6)
    return match[0] if match else None

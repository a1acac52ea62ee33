"""How far MirrorMaker 2 is behind, per mirrored partition, and whether its connectors run.

MM2 (dedicated mode) keeps Connect's bookkeeping in the target cluster:
- `mm2-offsets.<source>.internal`: per source partition, the last source offset replicated
  (committed every offset.flush.interval.ms);
- `mm2-status.<source>.internal`: the state of every connector and task.
Lag = the source partition's end offset - (last replicated offset + 1). It counts records, so it is
independent of the duplicates at-least-once delivery may leave in the target.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from kafkakit.cluster.admin import client_conf
from kafkakit.mirror.flows import include_regex

CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    source_end: int
    replicated: int  # next source offset MM2 will copy (= last copied + 1), or the start offset
    lag: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "source_end": self.source_end,
            "replicated": self.replicated,
            "lag": self.lag,
        }


@dataclass
class MirrorState:
    partitions: list[PartitionLag] = field(default_factory=list)
    connectors: dict[str, str] = field(default_factory=dict)  # connector or task -> state
    error: str = ""

    @property
    def total_lag(self) -> int:
        return sum(p.lag for p in self.partitions)

    @property
    def max_lag(self) -> int:
        return max((p.lag for p in self.partitions), default=0)

    def not_running(self) -> list[str]:
        missing = [c for c in CONNECTORS if c not in self.connectors]
        broken = [f"{name}={state}" for name, state in sorted(self.connectors.items()) if state != "RUNNING"]
        return [f"{c}=MISSING" for c in missing] + broken

    def ok(self, max_lag: int) -> bool:
        return not self.error and not self.not_running() and (max_lag < 0 or self.max_lag <= max_lag)

    def as_dict(self) -> dict[str, Any]:
        return {
            "partitions": [p.as_dict() for p in self.partitions],
            "connectors": self.connectors,
            "total_lag": self.total_lag,
            "max_lag": self.max_lag,
            "error": self.error,
        }


def _consumer(bootstrap: str, client_config: Mapping[str, Any]) -> Consumer:
    return Consumer(
        {
            # Never committed: the group only satisfies the client; reads use assign().
            "group.id": f"kafkakit-mirror-check-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": "false",
            "enable.partition.eof": "true",
            "socket.timeout.ms": "10000",
            **client_conf(bootstrap, client_config),
        }
    )


def read_latest(consumer: Consumer, topic: str, timeout: float = 30.0) -> dict[bytes, bytes | None]:
    """Every key's latest value in a (compacted) topic, read from the start to the current end."""
    meta = consumer.list_topics(topic, timeout=timeout).topics.get(topic)
    if meta is None or meta.error is not None or not meta.partitions:
        return {}
    ends = {}
    for p in meta.partitions:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
        if high > low:
            ends[p] = high
    if not ends:
        return {}
    consumer.assign([TopicPartition(topic, p, 0) for p in ends])
    latest: dict[bytes, bytes | None] = {}
    pending = dict(ends)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                pending.pop(msg.partition(), None)
                continue
            raise KafkaException(msg.error())
        latest[msg.key() or b""] = msg.value()
        if msg.offset() + 1 >= pending.get(msg.partition(), 0):
            pending.pop(msg.partition(), None)
    consumer.unassign()
    if pending:
        raise TimeoutError(f"could not read {topic} to its end within {timeout}s")
    return latest


def replicated_offsets(offsets_log: Mapping[bytes, bytes | None], source: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> last replicated source offset, from Connect's offsets topic."""
    result: dict[tuple[str, int], int] = {}
    for key, value in offsets_log.items():
        if value is None:
            continue
        try:
            connector, partition = json.loads(key)
            offset = json.loads(value)["offset"]
        except (ValueError, TypeError, KeyError):
            continue
        if connector == "MirrorSourceConnector" and partition.get("cluster") == source:
            result[(str(partition["topic"]), int(partition["partition"]))] = int(offset)
    return result


def connector_states(status_log: Mapping[bytes, bytes | None]) -> dict[str, str]:
    """Connector and task -> RUNNING / FAILED / ..., from Connect's status topic."""
    states = {}
    for key, value in status_log.items():
        name = key.decode(errors="replace")
        if value is None or not name.startswith(("status-connector-", "status-task-")):
            continue
        try:
            state = str(json.loads(value)["state"])
        except (ValueError, TypeError, KeyError):
            continue
        states[name.removeprefix("status-connector-").removeprefix("status-task-")] = state
    return states


def mirrored_topics(
    topic_names: Sequence[str], topics: Sequence[Mapping[str, Any]], exclude: Sequence[str]
) -> list[str]:
    """Source topics the flow mirrors: MM2 matches whole names against include and exclude."""
    include = re.compile(include_regex(topics))
    excluded = [re.compile(p) for p in exclude]
    return sorted(t for t in topic_names if include.fullmatch(t) and not any(x.fullmatch(t) for x in excluded))


def mirror_state(
    source: str,
    source_bootstrap: str,
    target_bootstrap: str,
    client_config: Mapping[str, Any],
    topics: Sequence[Mapping[str, Any]],
    topics_exclude: Sequence[str],
) -> MirrorState:
    state = MirrorState()
    src = _consumer(source_bootstrap, client_config)
    tgt = _consumer(target_bootstrap, client_config)
    try:
        state.connectors = connector_states(read_latest(tgt, f"mm2-status.{source}.internal"))
        done = replicated_offsets(read_latest(tgt, f"mm2-offsets.{source}.internal"), source)
        meta = src.list_topics(timeout=30)
        for topic in mirrored_topics(list(meta.topics), topics, topics_exclude):
            for p in sorted(meta.topics[topic].partitions):
                low, high = src.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
                copied = done.get((topic, p))
                next_offset = low if copied is None else max(copied + 1, low)
                state.partitions.append(PartitionLag(topic, p, high, next_offset, max(high - next_offset, 0)))
    except (KafkaException, TimeoutError) as exc:
        state.error = str(exc)
    finally:
        src.close()
        tgt.close()
    return state


def wait_mirror(max_lag: int, wait_seconds: float, interval: float = 3.0, **kwargs: Any) -> MirrorState:
    """Poll mirror_state until connectors run and the lag is within max_lag (-1: any lag)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        state = mirror_state(**kwargs)
        if state.ok(max_lag) or time.monotonic() >= deadline:
            return state
        time.sleep(interval)  # poll interval of a bounded readiness loop

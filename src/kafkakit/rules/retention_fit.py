"""How much of a broker's data volume the declared retention can take.

A partition replica holds at most its `retention.bytes` plus one segment (the active segment is
never deleted by size), so a topic bounded by size needs, on each broker, its replicas there times
(retention.bytes + segment.bytes). Replicas are spread evenly over a data centre's brokers, so a
broker holds ceil(partitions * replication factor / brokers) of a topic's. A topic bounded only by
time has no such figure: its size follows the write rate, which the inventory does not declare.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Kafka's own defaults, for a topic and a broker that set neither (log.segment.bytes: 1 GiB).
DEFAULT_SEGMENT_BYTES = 1024**3
UNBOUNDED = -1


@dataclass(frozen=True)
class RetentionNeed:
    """The bytes a data centre's declared retention can put on one broker."""

    bytes: int = 0
    # "<topic>: <replicas> replicas x (<retention> + <segment>) = <bytes>", largest first.
    topics: list[str] = field(default_factory=list)
    # Topics bounded by time only: not in `bytes`.
    time_only: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "topics": self.topics, "time_only": self.time_only}


def _int(value: Any, default: int) -> int:
    return default if value is None or str(value).strip() == "" else int(str(value).strip())


def gib(n: float) -> str:
    return f"{n / 1024**3:.1f} GiB"


def retention_need(
    topics: Sequence[Mapping[str, Any]], brokers: int, broker_properties: Mapping[str, Any] | None = None
) -> RetentionNeed:
    """The worst case per broker of the size-bounded topics in `topics` (the kafka_topics entries
    of one data centre, absent ones left out), with the broker-wide defaults that
    kafka_extra_properties may set (log.retention.bytes, log.segment.bytes)."""
    props = broker_properties or {}
    default_retention = _int(props.get("log.retention.bytes"), UNBOUNDED)
    default_segment = _int(props.get("log.segment.bytes"), DEFAULT_SEGMENT_BYTES)
    total, rows, time_only = 0, [], []
    for t in topics:
        if t.get("state", "present") == "absent":
            continue
        configs = t.get("configs") or {}
        retention = _int(configs.get("retention.bytes"), default_retention)
        if retention < 0:
            time_only.append(str(t["name"]))
            continue
        segment = _int(configs.get("segment.bytes"), default_segment)
        replicas = math.ceil(int(t["partitions"]) * int(t.get("replication_factor", 3)) / max(brokers, 1))
        need = replicas * (retention + segment)
        total += need
        rows.append((need, f"{t['name']}: {replicas} replicas x ({gib(retention)} + {gib(segment)}) = {gib(need)}"))
    return RetentionNeed(total, [row for _, row in sorted(rows, key=lambda r: -r[0])], time_only)

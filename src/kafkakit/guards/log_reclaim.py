"""What ops/recover-broker.yml may delete from a broker stuck on a full data disk, and when it may act.

Only data the cluster no longer holds: log directories Kafka already renamed for deletion
(`-delete`, and `-stray` in KRaft) and partition directories of a topic the cluster has neither by
name nor by id (a topic deleted while this broker was down; a running broker would have removed
them itself, but it cannot start on a full disk). The data of live topics is never touched, whatever
the disk: freeing it would be for the operator to decide (more disk, shorter retention).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Suffixes Kafka gives a log directory it has dropped and deletes once it runs.
DROPPED_SUFFIXES = ("-delete", "-stray")
# The KRaft metadata log: no topic of the cluster, never reclaimable.
METADATA_LOG = "__cluster_metadata-0"
PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")


def canonical_id(topic_id: str) -> bytes | None:
    """A topic id's 16 bytes, whichever base64 alphabet wrote it: Kafka's partition.metadata
    uses the URL-safe one ('-', '_'), confluent-kafka's Uuid prints the standard one ('+', '/').
    Compared as text, every id holding one of those characters would look deleted."""
    text = topic_id.strip().translate(str.maketrans("+/", "-_")).rstrip("=")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 16 else None


@dataclass(frozen=True)
class LogEntry:
    """One directory under a log dir, as kafkakit_log_dirs reports it."""

    dir: str
    name: str
    topic_id: str | None
    bytes: int

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> LogEntry:
        topic_id = raw.get("topic_id")
        return cls(str(raw["dir"]), str(raw["name"]), str(topic_id) if topic_id else None, int(raw.get("bytes", 0)))


def why_reclaimable(entry: LogEntry, live_names: Collection[str], live_ids: Collection[bytes | None]) -> str:
    """Why the cluster no longer needs `entry` ('' when it does, or when that is not certain):
    `live_names` and `live_ids` (canonical_id) are the cluster's topics."""
    if entry.name == METADATA_LOG:
        return ""
    if entry.name.endswith(DROPPED_SUFFIXES):
        return "dropped by Kafka, waiting for deletion"
    partition = PARTITION_DIR.match(entry.name)
    own_id = canonical_id(entry.topic_id) if entry.topic_id else None
    if partition is None or own_id is None:
        return ""  # not a partition, or no readable id: not known deleted
    # A name the cluster still has is kept even under another id (a topic deleted and made
    # again): the broker tells those apart itself once it runs, and an id misread here must
    # never cost a live topic's data.
    if partition["topic"] in live_names or own_id in live_ids:
        return ""
    return f"topic {partition['topic']} (id {entry.topic_id}) is no topic of the cluster (deleted)"


def reclaimable(entries: Iterable[Mapping[str, Any]], live_topics: Mapping[str, str]) -> list[dict[str, Any]]:
    """The entries the cluster no longer holds, largest first, each with its reason."""
    live_ids = {canonical_id(i) for i in live_topics.values()}
    found = []
    for raw in entries:
        entry = LogEntry.of(raw)
        why = why_reclaimable(entry, live_topics.keys(), live_ids)
        if why:
            found.append({"dir": entry.dir, "name": entry.name, "bytes": entry.bytes, "why": why})
    return sorted(found, key=lambda e: (-e["bytes"], e["dir"], e["name"]))


def _mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


def used_share(volume: Mapping[str, Any]) -> float:
    """The share of a volume an unprivileged writer (Kafka) can no longer use."""
    size = int(volume["size_bytes"])
    return 1.0 - int(volume["avail_bytes"]) / size if size else 1.0


def recover_refusal(
    host: str,
    serving: bool,
    volumes: Iterable[Mapping[str, Any]],
    entries: Iterable[Mapping[str, Any]],
    live_topics: Mapping[str, str],
    full_share: float,
) -> str:
    """Why ops/recover-broker.yml must not act on `host` ('' when it may).

    It acts on a broker that does not serve, or whose data volume is full, and only when something
    the cluster deleted is left on it to free."""
    if not live_topics:
        # Every partition would look deleted: never act on an unread or empty answer.
        return f"the topics of {host}'s cluster could not be read: nothing can be told deleted"
    rows = list(entries)
    fullest = max((used_share(v) for v in volumes), default=0.0)
    full = fullest >= full_share
    found = reclaimable(rows, live_topics)
    if serving and not full:
        return f"{host} serves and its data volume is {fullest:.0%} used: there is nothing to recover"
    if found:
        return ""
    if full:
        kept = sorted((LogEntry.of(e) for e in rows), key=lambda e: -e.bytes)[:5]
        largest = ", ".join(f"{e.name} ({_mib(e.bytes)})" for e in kept) or "none"
        return (
            f"{host}'s data volume is {fullest:.0%} used and holds nothing the cluster has deleted: "
            f"the recovery frees only that. Add disk or shorten retention (largest: {largest})"
        )
    return (
        f"{host} does not serve, but its data volume is only {fullest:.0%} used and holds nothing the "
        "cluster has deleted: this is not a full disk. Its journal says why (journalctl -u kafka)"
    )

"""Where a name lands in a java.util.HashMap: String.hashCode() spread as HashMap spreads it.

For kafka_scram_anchor_user (roles/kafka_common/defaults): Kafka iterates a metadata delta's SCRAM
changes in HashMap order, and the anchor works around a Kafka bug only while it comes first."""

from __future__ import annotations


def string_hash(name: str) -> int:
    """Java's String.hashCode() over UTF-16 code units, as an unsigned 32-bit value."""
    h = 0
    data = name.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h


def hashmap_bucket(name: str, capacity: int) -> int:
    """The bucket of `name` in a HashMap of `capacity` (a power of two) buckets."""
    h = string_hash(name)
    return (h ^ (h >> 16)) & (capacity - 1)

"""Replica assignments for the kraft-vs-zk scenarios: which brokers hold a topic, and which one
leads. Given explicitly at creation, so the first replica of each list is the leader."""

from __future__ import annotations

from collections.abc import Sequence


def spread(partitions: int, brokers: Sequence[int], replication: int) -> list[list[int]]:
    """Round-robin over `brokers`: partition i led by brokers[i % n], its followers the next ones."""
    n = len(brokers)
    if not 0 < replication <= n:
        raise ValueError(f"replication {replication} needs as many brokers, got {list(brokers)}")
    return [[brokers[(i + r) % n] for r in range(replication)] for i in range(partitions)]


def led_by(partitions: int, leader: int, others: Sequence[int]) -> list[list[int]]:
    """Every partition led by `leader` (its preferred replica), the follower round-robin over `others`."""
    followers = [b for b in others if b != leader]
    if not followers:
        raise ValueError(f"broker {leader} needs another broker to replicate to, got {list(others)}")
    return [[leader, followers[i % len(followers)]] for i in range(partitions)]


def data_brokers(brokers: Sequence[int], avoid: int | None, count: int) -> list[int]:
    """The first `count` brokers by id, `avoid` (the broker a fault hits) left out."""
    chosen = [b for b in sorted(brokers) if b != avoid][:count]
    if len(chosen) < count:
        raise ValueError(f"{count} brokers besides {avoid} needed, got {sorted(brokers)}")
    return chosen

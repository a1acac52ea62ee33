"""Where a ZooKeeper data centre's migration to KRaft is (ops/migrate-to-kraft.yml and
ops/rollback-to-zookeeper.yml), from what the cluster itself says."""

from __future__ import annotations

from collections.abc import Iterable

# Kafka's ZkMigrationState gauge on a controller (org.apache.kafka.metadata.migration.ZkMigrationState).
NONE, MIGRATION, PRE_MIGRATION, POST_MIGRATION = 0, 1, 2, 3
NOT_ANSWERING = -1

# In the order a migration goes through them.
PHASES = ("zookeeper", "controllers", "migrated", "brokers-to-kraft", "dual-write", "finalized")


def phase(kraft_brokers: int, brokers: int, controller_states: Iterable[int]) -> str:
    """The phase of a data centre whose `brokers` brokers include `kraft_brokers` running
    process.roles=broker, and whose controllers report these ZkMigrationState values (-1: no answer).
    zookeeper: no controller answers; controllers: they run, the metadata is not copied yet (some
    brokers may already run migration mode); migrated: copied, every broker still ZooKeeper-mode;
    brokers-to-kraft: some KRaft brokers; dual-write: all; finalized: a controller says so."""
    states = set(controller_states)
    if POST_MIGRATION in states:
        return "finalized"
    if brokers > 0 and kraft_brokers == brokers:
        return "dual-write"
    if kraft_brokers > 0:
        return "brokers-to-kraft"
    if states == {MIGRATION}:
        return "migrated"
    if states - {NOT_ANSWERING}:
        return "controllers"
    return "zookeeper"

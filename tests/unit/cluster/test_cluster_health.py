"""kafkakit.cluster.admin.cluster_health reads everything from one Metadata request: the admin API's
DescribeCluster, polled while a broker refuses connections (every roll), can abort the process
inside librdkafka (rd_kafka_admin_response_parse: Assertion `rko_result' failed)."""

from __future__ import annotations

from confluent_kafka.admin import BrokerMetadata, ClusterMetadata, PartitionMetadata, TopicMetadata

from kafkakit.cluster.admin import cluster_health

Partitions = dict[int, tuple[int, list[int], list[int]]]  # id -> (leader, replicas, isrs)


def metadata(brokers: list[int], controller: int, partitions: Partitions) -> ClusterMetadata:
    meta = ClusterMetadata()
    meta.controller_id = controller
    for b in brokers:
        broker = BrokerMetadata()
        broker.id = b
        meta.brokers[b] = broker
    topic = TopicMetadata()
    topic.topic = "orders"
    for pid, (leader, replicas, isrs) in partitions.items():
        p = PartitionMetadata()
        p.id, p.leader, p.replicas, p.isrs = pid, leader, replicas, isrs
        topic.partitions[pid] = p
    meta.topics["orders"] = topic
    return meta


class MetadataOnlyAdmin:
    """Answers Metadata; any admin API call fails the test."""

    def __init__(self, meta: ClusterMetadata) -> None:
        self.meta = meta

    def list_topics(self, timeout: float = -1) -> ClusterMetadata:
        return self.meta

    def __getattr__(self, name: str):  # describe_cluster and every other admin API call
        raise AssertionError(f"cluster_health called the admin API ({name})")


def test_health_comes_from_the_metadata_alone() -> None:
    meta = metadata([1, 2, 3], 2, {0: (1, [1, 2, 3], [1, 2, 3]), 1: (2, [2, 3, 1], [2, 3]), 2: (-1, [3, 1, 2], [])})
    health = cluster_health(MetadataOnlyAdmin(meta))
    assert (health.brokers, health.controller) == ([1, 2, 3], 2)
    assert (health.under_replicated, health.offline) == (["orders-1"], ["orders-2"])
    assert not health.healthy([1, 2, 3])


def test_a_whole_cluster_is_healthy_and_a_missing_broker_is_seen() -> None:
    meta = metadata([1, 2], 1, {0: (1, [1, 2], [1, 2])})
    assert cluster_health(MetadataOnlyAdmin(meta)).healthy([1, 2])
    assert not cluster_health(MetadataOnlyAdmin(meta)).healthy([1, 2, 3])
    # KRaft: a broker's metadata names a random broker as controller; none is required.
    kraft = cluster_health(MetadataOnlyAdmin(metadata([1, 2], -1, {0: (1, [1, 2], [1, 2])})), kraft=True)
    assert kraft.controller == -1 and kraft.healthy([1, 2])

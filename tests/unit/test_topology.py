"""kafkakit.topology.validate(): one plain-English message per broken rule, naming the DC."""

from __future__ import annotations

import dataclasses

import pytest

from kafkakit.topology import Cluster, Node, Topic, Topology, validate


def nodes(dc: str, kind: str, racks: list[str], ids: list[int] | None = None) -> list[Node]:
    ids = ids if ids is not None else list(range(1, len(racks) + 1))
    return [Node(f"{dc}-{kind}{i}", i, rack) for i, rack in zip(ids, racks, strict=True)]


def three_rack(name: str = "dc1", **changes: object) -> Cluster:
    """A valid production-shaped DC: 3 ZooKeeper servers and 3 brokers over 3 racks, RF 3."""
    racks = [f"{name}-az1", f"{name}-az2", f"{name}-az3"]
    cluster = Cluster(
        name=name,
        zookeepers=nodes(name, "zk", racks),
        brokers=nodes(name, "kafka", racks),
        replication_factor=3,
        min_insync_replicas=2,
        topics=[Topic("orders", 6, 3, consumers=6), Topic("payments", 3, 3)],
    )
    return dataclasses.replace(cluster, **changes)


def errors_for(*clusters: Cluster) -> list[str]:
    return validate(Topology(clusters=list(clusters)))


def test_valid_three_rack_topology_has_no_errors():
    assert errors_for(three_rack("dc1"), three_rack("dc2")) == []


def test_no_data_centre_is_refused():
    assert validate(Topology()) == ["no data centre is declared"]


def test_duplicate_data_centres_are_refused():
    assert errors_for(three_rack("dc1"), three_rack("dc1")) == ["data centre(s) declared twice: ['dc1']"]


@pytest.mark.parametrize("size", [4, 6])
def test_even_ensemble_is_refused(size):
    racks = [f"dc1-az{i % 3 + 1}" for i in range(size)]
    errors = errors_for(three_rack(zookeepers=nodes("dc1", "zk", racks)))
    assert errors == [
        f"dc1: the ZooKeeper ensemble has an even number of servers ({size}); "
        "use an odd number so a majority survives a split"
    ]


def test_ensemble_below_the_minimum_is_refused():
    errors = errors_for(three_rack(zookeepers=nodes("dc1", "zk", ["dc1-az1"])))
    assert errors == ["dc1: the ZooKeeper ensemble has 1 server(s); at least 3 are needed"]


def test_two_servers_are_both_too_few_and_even():
    errors = errors_for(three_rack(zookeepers=nodes("dc1", "zk", ["dc1-az1", "dc1-az2"])))
    assert errors == [
        "dc1: the ZooKeeper ensemble has 2 server(s); at least 3 are needed",
        "dc1: the ZooKeeper ensemble has an even number of servers (2); "
        "use an odd number so a majority survives a split",
    ]


def test_empty_ensemble_is_too_small_in_zookeeper_mode():
    assert errors_for(three_rack(zookeepers=[])) == [
        "dc1: the ZooKeeper ensemble has 0 server(s); at least 3 are needed"
    ]


def test_min_ensemble_override_allows_a_single_server_dr_site():
    small = three_rack("dc2", zookeepers=nodes("dc2", "zk", ["dc2-az1"]), min_ensemble=1)
    assert errors_for(small) == []


def test_min_ensemble_override_can_also_raise_the_bar():
    errors = errors_for(three_rack(min_ensemble=5))
    assert errors == ["dc1: the ZooKeeper ensemble has 3 server(s); at least 5 are needed"]


def test_duplicate_zookeeper_ids_are_refused():
    zks = nodes("dc1", "zk", ["dc1-az1", "dc1-az2", "dc1-az3"], ids=[1, 2, 1])
    assert errors_for(three_rack(zookeepers=zks)) == ["dc1: duplicate zookeeper_id [1]"]


def test_zookeeper_id_out_of_range_is_refused():
    zks = nodes("dc1", "zk", ["dc1-az1", "dc1-az2", "dc1-az3"], ids=[0, 2, 256])
    assert errors_for(three_rack(zookeepers=zks)) == ["dc1: zookeeper_id must be 1..255 on ['dc1-zk0', 'dc1-zk256']"]


def test_duplicate_broker_ids_are_refused():
    brokers = nodes("dc1", "kafka", ["dc1-az1", "dc1-az2", "dc1-az3", "dc1-az1"], ids=[1, 2, 2, 1])
    assert errors_for(three_rack(brokers=brokers)) == ["dc1: duplicate broker_id [1, 2]"]


def test_same_broker_ids_in_two_data_centres_are_fine():
    # Each DC is its own cluster; the lab numbers both from 1.
    assert errors_for(three_rack("dc1"), three_rack("dc2")) == []


def test_negative_broker_id_is_refused():
    brokers = nodes("dc1", "kafka", ["dc1-az1", "dc1-az2", "dc1-az3"], ids=[-1, 2, 3])
    assert errors_for(three_rack(brokers=brokers)) == ["dc1: broker_id must not be negative"]


def test_no_brokers_is_refused():
    assert errors_for(three_rack(brokers=[], topics=[])) == ["dc1: no Kafka brokers are declared"]


def test_replication_factor_above_broker_count_is_refused():
    # Two brokers on two racks, RF 2 would fit; RF 3 fits neither the brokers nor the racks.
    brokers = nodes("dc1", "kafka", ["dc1-az1", "dc1-az2"])
    errors = errors_for(three_rack(brokers=brokers, topics=[]))
    assert errors == [
        "dc1: default replication factor 3 is above the broker count 2",
        "dc1: 2 rack(s) ['dc1-az1', 'dc1-az2'] cannot hold replication factor 3; each replica needs its own rack",
    ]


def test_fewer_racks_than_replication_factor_is_refused():
    brokers = nodes("dc1", "kafka", ["dc1-az1", "dc1-az2", "dc1-az1"])
    assert errors_for(three_rack(brokers=brokers)) == [
        "dc1: 2 rack(s) ['dc1-az1', 'dc1-az2'] cannot hold replication factor 3; each replica needs its own rack"
    ]


def test_racks_equal_to_replication_factor_are_enough():
    brokers = nodes("dc1", "kafka", ["dc1-az1", "dc1-az2", "dc1-az3", "dc1-az1", "dc1-az2"])
    assert errors_for(three_rack(brokers=brokers)) == []


@pytest.mark.parametrize("min_isr", [3, 4])
def test_min_insync_replicas_not_below_replication_factor_is_refused(min_isr):
    assert errors_for(three_rack(min_insync_replicas=min_isr)) == [
        f"dc1: min.insync.replicas={min_isr} must be below the replication factor 3, "
        "or one broker down stops every acks=all producer"
    ]


def test_min_insync_replicas_equal_to_rf_1_is_allowed():
    # RF 1 has nothing to spare anyway; the rule only makes sense from RF 2 up.
    single = three_rack(replication_factor=1, min_insync_replicas=1, topics=[])
    assert errors_for(single) == []


def test_min_insync_replicas_below_one_is_refused():
    assert errors_for(three_rack(min_insync_replicas=0)) == ["dc1: min.insync.replicas must be at least 1"]


def test_topic_with_fewer_partitions_than_consumers_is_refused():
    topics = [Topic("orders", 3, 3, consumers=5)]
    assert errors_for(three_rack(topics=topics)) == [
        "dc1: topic orders has 3 partition(s) for 5 declared consumers; the extra consumers would sit idle"
    ]


def test_topic_with_as_many_partitions_as_consumers_is_fine():
    assert errors_for(three_rack(topics=[Topic("orders", 4, 3, consumers=4)])) == []


def test_topic_replication_factor_above_broker_count_is_refused():
    topics = [Topic("orders", 6, 4)]
    assert errors_for(three_rack(topics=topics)) == [
        "dc1: topic orders has replication factor 4 above the broker count 3"
    ]


def test_topic_without_partitions_is_refused():
    assert errors_for(three_rack(topics=[Topic("orders", 0, 3)])) == ["dc1: topic orders needs at least 1 partition"]


def test_duplicate_topics_are_refused():
    topics = [Topic("orders", 6, 3), Topic("payments", 3, 3), Topic("orders", 12, 3)]
    assert errors_for(three_rack(topics=topics)) == ["dc1: topic(s) declared twice: ['orders']"]


def test_kraft_mode_skips_the_ensemble_rules():
    kraft = three_rack(metadata_mode="kraft", zookeepers=[])
    assert errors_for(kraft) == []
    even_dup = nodes("dc1", "zk", ["dc1-az1", "dc1-az2"], ids=[7, 7])
    assert errors_for(dataclasses.replace(kraft, zookeepers=even_dup)) == []


def test_kraft_mode_still_checks_brokers_and_topics():
    kraft = three_rack(metadata_mode="kraft", zookeepers=[], min_insync_replicas=3)
    assert errors_for(kraft) == [
        "dc1: min.insync.replicas=3 must be below the replication factor 3, "
        "or one broker down stops every acks=all producer"
    ]


def test_every_broken_rule_is_reported_and_names_its_data_centre():
    good = three_rack("dc1")
    bad = three_rack(
        "dc2",
        zookeepers=nodes("dc2", "zk", ["dc2-az1", "dc2-az2"]),
        min_insync_replicas=3,
        topics=[Topic("clicks", 2, 3, consumers=3)],
    )
    errors = errors_for(good, bad)
    assert len(errors) == 4
    assert all(e.startswith("dc2: ") for e in errors)

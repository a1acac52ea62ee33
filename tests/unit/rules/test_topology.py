"""kafkakit.rules.topology.validate(): one plain-English message per broken rule, naming the DC."""

from __future__ import annotations

import dataclasses

import pytest

from kafkakit.rules.topology import Cluster, Node, Topic, Topology, validate


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


def kraft_dc(name: str = "dc2", **changes: object) -> Cluster:
    """A valid KRaft DC: 3 dedicated controllers (101..103) and 3 brokers over 3 racks, Kafka 4.3.1."""
    racks = [f"{name}-az1", f"{name}-az2", f"{name}-az3"]
    cluster = three_rack(
        name,
        metadata_mode="kraft",
        zookeepers=[],
        controllers=nodes(name, "controller", racks, ids=[101, 102, 103]),
        kafka_version="4.3.1",
        offsets_topic_replication_factor=3,
        transaction_state_log_replication_factor=3,
        transaction_state_log_min_isr=2,
        share_coordinator_state_topic_replication_factor=3,
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
    assert errors_for(kraft_dc("dc1")) == []
    # ZooKeeper hosts in a KRaft DC are refused as such, not measured as an ensemble.
    even_dup = nodes("dc1", "zk", ["dc1-az1", "dc1-az2"], ids=[7, 7])
    assert errors_for(kraft_dc("dc1", zookeepers=even_dup)) == [
        "dc1: a KRaft data centre has no ZooKeeper, but zookeeper host(s) ['dc1-zk7', 'dc1-zk7'] are in it; "
        "remove them from the zookeeper group"
    ]


def test_kraft_mode_still_checks_brokers_and_topics():
    assert errors_for(kraft_dc("dc1", min_insync_replicas=3)) == [
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


# --- KRaft (issue 14): one failing and one passing case per rule -------------------------------

AZ = ["dc2-az1", "dc2-az2", "dc2-az3"]


def controllers(racks: list[str], ids: list[int] | None = None) -> list[Node]:
    ids = ids if ids is not None else [101 + i for i in range(len(racks))]
    return nodes("dc2", "controller", racks, ids=ids)


def two_rack_kraft(**changes: object) -> Cluster:
    """A KRaft DC with only two racks (like the lab's dc2): RF 2 fits, controllers share a rack."""
    base = kraft_dc(
        brokers=nodes("dc2", "kafka", AZ[:2]),
        controllers=controllers([AZ[0], AZ[1], AZ[0]]),
        replication_factor=2,
        min_insync_replicas=1,
        offsets_topic_replication_factor=2,
        transaction_state_log_replication_factor=2,
        transaction_state_log_min_isr=1,
        share_coordinator_state_topic_replication_factor=2,
        topics=[],
    )
    return dataclasses.replace(base, **changes)


QUORUM = "the KRaft controller quorum has"
EVEN = "use an odd number so a majority survives a split"

KRAFT_CASES: list[tuple[str, Cluster, list[str]]] = [
    # metadata mode
    ("kraft dc is valid", kraft_dc(), []),
    ("zookeeper dc is valid", three_rack("dc2"), []),
    (
        "unknown mode",
        kraft_dc(metadata_mode="zk", controllers=[]),
        ["dc2: unknown metadata mode 'zk'; kafka_metadata_mode is 'zookeeper' or 'kraft'"],
    ),
    (
        "unknown mode reports only itself, not the rules of either mode",
        three_rack("dc2", metadata_mode="KRaft", zookeepers=[]),
        ["dc2: unknown metadata mode 'KRaft'; kafka_metadata_mode is 'zookeeper' or 'kraft'"],
    ),
    # controller count
    (
        "one controller",
        kraft_dc(controllers=controllers(AZ[:1])),
        [f"dc2: {QUORUM} 1 controller(s); at least 3 are needed"],
    ),
    ("one controller with the lab override", kraft_dc(controllers=controllers(AZ[:1]), min_controllers=1), []),
    (
        "no controllers",
        kraft_dc(controllers=[]),
        [f"dc2: {QUORUM} 0 controller(s); at least 3 are needed"],
    ),
    (
        "the override can raise the bar",
        kraft_dc(min_controllers=5),
        [f"dc2: {QUORUM} 3 controller(s); at least 5 are needed"],
    ),
    ("five controllers over three racks", kraft_dc(controllers=controllers([*AZ, *AZ[:2]])), []),
    # odd count
    (
        "four controllers",
        kraft_dc(controllers=controllers([*AZ, AZ[0]])),
        [f"dc2: {QUORUM} an even number of controllers (4); {EVEN}"],
    ),
    (
        "two controllers are too few and even",
        kraft_dc(controllers=controllers(AZ[:2])),
        [
            f"dc2: {QUORUM} 2 controller(s); at least 3 are needed",
            f"dc2: {QUORUM} an even number of controllers (2); {EVEN}",
        ],
    ),
    # rack spread
    (
        "three controllers in one of three racks",
        kraft_dc(controllers=controllers([AZ[0]] * 3)),
        [
            "dc2: the controllers are not spread over the racks ({'dc2-az1': 3} with 3 rack(s) in the data "
            "centre); put at most 1 in one rack so a rack outage keeps the quorum"
        ],
    ),
    (
        "five controllers crowding one of three racks",
        kraft_dc(controllers=controllers([AZ[0], AZ[0], AZ[0], AZ[1], AZ[2]])),
        [
            "dc2: the controllers are not spread over the racks ({'dc2-az1': 3, 'dc2-az2': 1, 'dc2-az3': 1} "
            "with 3 rack(s) in the data centre); put at most 2 in one rack so a rack outage keeps the quorum"
        ],
    ),
    ("three controllers over two racks when the DC has only two", two_rack_kraft(), []),
    (
        "a controller's own rack counts as one of the DC's racks",
        two_rack_kraft(controllers=controllers([AZ[0], AZ[0], AZ[2]])),
        [
            "dc2: the controllers are not spread over the racks ({'dc2-az1': 2, 'dc2-az3': 1} with 3 rack(s) "
            "in the data centre); put at most 1 in one rack so a rack outage keeps the quorum"
        ],
    ),
    (
        "a single lab controller has nothing to spread",
        two_rack_kraft(controllers=controllers(AZ[:1]), min_controllers=1),
        [],
    ),
    # node ids
    (
        "a controller_id equal to a broker_id",
        kraft_dc(controllers=controllers(AZ, ids=[101, 2, 103])),
        [
            "dc2: node id(s) [2] belong to a broker and a controller; broker_id and controller_id are both "
            "node.id and must be unique in the data centre (controllers count from 101)"
        ],
    ),
    (
        "controller ids 1..3 beside brokers 11..13",
        kraft_dc(brokers=nodes("dc2", "kafka", AZ, ids=[11, 12, 13]), controllers=controllers(AZ, ids=[1, 2, 3])),
        [],
    ),
    (
        "duplicate controller_id",
        kraft_dc(controllers=controllers(AZ, ids=[101, 102, 101])),
        ["dc2: duplicate controller_id [101]"],
    ),
    (
        "negative controller_id",
        kraft_dc(controllers=controllers(AZ, ids=[-1, 102, 103])),
        ["dc2: controller_id must not be negative"],
    ),
    ("the same controller ids in a second DC", kraft_dc("dc1"), []),
    # Kafka version against the mode
    (
        "KRaft mode on Kafka 3.8",
        kraft_dc(kafka_version="3.8.1"),
        [
            "dc2: KRaft mode runs Kafka 4.x, not 3.8.1; set kafka_version to a 4.x release (a ZooKeeper data "
            "centre on 3.x moves to KRaft through the migration, not by switching the mode)"
        ],
    ),
    ("KRaft mode on Kafka 4.3.0", kraft_dc(kafka_version="4.3.0"), []),
    # A DC migrated from ZooKeeper runs KRaft on 3.9 until its upgrade.
    ("KRaft mode on Kafka 3.9 (migrated)", kraft_dc(kafka_version="3.9.2"), []),
    ("KRaft mode on a later major", kraft_dc(kafka_version="5.0.0"), []),
    (
        "ZooKeeper mode on Kafka 4",
        three_rack("dc2", kafka_version="4.3.1"),
        [
            "dc2: a ZooKeeper data centre runs Kafka 3.x, not 4.3.1 "
            "(4.x has no ZooKeeper mode: set kafka_metadata_mode: kraft)"
        ],
    ),
    (
        "ZooKeeper mode on Kafka 2",
        three_rack("dc2", kafka_version="2.8.2"),
        ["dc2: a ZooKeeper data centre runs Kafka 3.x, not 2.8.2"],
    ),
    ("ZooKeeper mode on Kafka 3.9.2", three_rack("dc2", kafka_version="3.9.2"), []),
    (
        "a version that is no release",
        kraft_dc(kafka_version="latest"),
        ["dc2: kafka_version 'latest' is not a Kafka release like 4.3.1"],
    ),
    ("an unknown version is not checked", kraft_dc(kafka_version=None), []),
    # nothing of the other mode
    (
        "ZooKeeper hosts in a KRaft DC",
        kraft_dc(zookeepers=nodes("dc2", "zk", AZ)),
        [
            "dc2: a KRaft data centre has no ZooKeeper, but zookeeper host(s) ['dc2-zk1', 'dc2-zk2', 'dc2-zk3'] "
            "are in it; remove them from the zookeeper group"
        ],
    ),
    (
        "ZooKeeper settings in a KRaft DC",
        kraft_dc(zookeeper_settings=["zookeeper_min_ensemble", "zookeeper_id (dc2-kafka1)"]),
        [
            "dc2: ZooKeeper setting(s) ['zookeeper_min_ensemble', 'zookeeper_id (dc2-kafka1)'] in a KRaft "
            "data centre; remove them"
        ],
    ),
    ("ZooKeeper settings in a ZooKeeper DC", three_rack("dc2", zookeeper_settings=["zookeeper_min_ensemble"]), []),
    # A ZooKeeper DC's controllers are the quorum it migrates to: checked as a KRaft DC's are.
    ("controllers in a ZooKeeper DC (its migration target)", three_rack("dc2", controllers=controllers(AZ)), []),
    (
        "a ZooKeeper DC's migration target with two controllers",
        three_rack("dc2", controllers=controllers(AZ[:2])),
        [
            f"dc2: {QUORUM} 2 controller(s); at least 3 are needed",
            f"dc2: {QUORUM} an even number of controllers (2); {EVEN}",
        ],
    ),
    # internal topics within the broker count
    (
        "offsets topic RF above the brokers",
        kraft_dc(offsets_topic_replication_factor=4),
        [
            "dc2: offsets.topic.replication.factor=4 is above the broker count 3; "
            "Kafka could not create __consumer_offsets"
        ],
    ),
    (
        "transaction state RF above the brokers, in ZooKeeper mode too",
        three_rack("dc2", transaction_state_log_replication_factor=4),
        [
            "dc2: transaction.state.log.replication.factor=4 is above the broker count 3; "
            "Kafka could not create __transaction_state"
        ],
    ),
    (
        "share-group state RF above the brokers",
        two_rack_kraft(share_coordinator_state_topic_replication_factor=3),
        [
            "dc2: share.coordinator.state.topic.replication.factor=3 is above the broker count 2; "
            "Kafka could not create __share_group_state"
        ],
    ),
    (
        "share-group state is a 4.x topic: not checked in ZooKeeper mode",
        three_rack("dc2", share_coordinator_state_topic_replication_factor=9),
        [],
    ),
    ("internal RFs equal to the broker count", two_rack_kraft(), []),
    (
        "transaction state min ISR above its RF",
        two_rack_kraft(transaction_state_log_min_isr=3),
        [
            "dc2: transaction.state.log.min.isr=3 is above transaction.state.log.replication.factor=2; "
            "no transaction could commit"
        ],
    ),
    (
        "undeclared internal RFs are not checked",
        two_rack_kraft(
            offsets_topic_replication_factor=None,
            transaction_state_log_replication_factor=None,
            share_coordinator_state_topic_replication_factor=None,
        ),
        [],
    ),
]


@pytest.mark.parametrize("cluster, expected", [(c, e) for _, c, e in KRAFT_CASES], ids=[n for n, _, _ in KRAFT_CASES])
def test_kraft_rules(cluster: Cluster, expected: list[str]) -> None:
    assert errors_for(cluster) == expected


def test_a_zookeeper_dc_and_a_kraft_dc_side_by_side_like_the_lab():
    dc1 = three_rack("dc1", kafka_version="3.9.2")
    dc2 = two_rack_kraft(controllers=controllers(AZ), min_controllers=3)
    assert errors_for(dc1, dc2) == []
    assert errors_for(dc1, dataclasses.replace(dc2, kafka_version="3.8.1")) == [
        "dc2: KRaft mode runs Kafka 4.x, not 3.8.1; set kafka_version to a 4.x release (a ZooKeeper data "
        "centre on 3.x moves to KRaft through the migration, not by switching the mode)"
    ]


@pytest.mark.parametrize(
    "version, major", [("4.3.1", 4), ("3.9.2", 3), ("4.0", 4), ("4.1.0-rc2", 4), ("x", None), ("4.3.1.2", None)]
)
def test_kafka_major(version, major):
    from kafkakit.rules.topology import kafka_major

    assert kafka_major(version) == major


@pytest.mark.parametrize(
    "version, line",
    [
        ("3.9.2", "3"),
        ("4.0.0", "4.3"),
        ("4.3.1", "4.3"),
        ("4.4.0", "4.4"),
        ("4.10.1", "4.4"),
        ("5.0.0", None),
        ("latest", None),
        (None, None),
        ("", None),
    ],
)
def test_definitions_line(version, line):
    from kafkakit.rules.topology import definitions_line

    assert definitions_line(version) == line

"""kafkakit.rules.inventory: the one inventory shape, and reading a Topology back out of it."""

from __future__ import annotations

import pytest

from kafkakit.rules.inventory import (
    COMPONENT_GROUPS,
    HostRecord,
    build_inventory,
    missing_hostvars,
    preflight_errors,
    topology_from_inventory,
)
from kafkakit.rules.topology import Node, Topic

DEFAULTS = {
    "kafka_default_replication_factor": 3,
    "kafka_min_insync_replicas": 2,
    "zookeeper_min_ensemble": 3,
}


def lab_hosts() -> list[HostRecord]:
    """The lab's layout (ansible/lab/lab-config.yml) plus a MirrorMaker and Spark hosts."""
    zk_kafka = ("zookeeper", "kafka_broker")
    return [
        HostRecord("dc1-kafka1", "dc1", "dc1-az1", "10.0.0.11", zk_kafka, broker_id=1, zookeeper_id=1),
        HostRecord("dc1-kafka2", "dc1", "dc1-az2", "10.0.0.12", zk_kafka, broker_id=2, zookeeper_id=2),
        HostRecord("dc1-kafka3", "dc1", "dc1-az3", "10.0.0.13", zk_kafka, broker_id=3, zookeeper_id=3),
        HostRecord("dc2-kafka1", "dc2", "dc2-az1", "10.0.0.21", zk_kafka, broker_id=1, zookeeper_id=1),
        HostRecord("dc2-kafka2", "dc2", "dc2-az2", "10.0.0.22", ("kafka_broker",), broker_id=2),
        HostRecord("dc2-mm2", "dc2", "dc2-az1", "10.0.0.23", ("mirrormaker",)),
        HostRecord("spark1", "dc1", "dc1-az1", "10.0.0.31", ("spark_master", "spark_worker")),
    ]


def as_play_view(doc: dict) -> tuple[dict[str, list[str]], dict[str, dict]]:
    """What Ansible's `groups` and `hostvars` would hold for an inventory document
    (host vars only; group vars are passed in per test)."""
    children = doc["all"]["children"]
    groups = {name: list(group["hosts"]) for name, group in children.items()}
    all_hosts: list[str] = []
    hostvars: dict[str, dict] = {}
    for group in children.values():
        for host, hv in group["hosts"].items():
            if host not in all_hosts:
                all_hosts.append(host)
            hostvars.setdefault(host, {}).update(hv)
    groups["all"] = all_hosts
    return groups, hostvars


# --- build_inventory -------------------------------------------------------------------------


def test_build_inventory_groups_are_the_components_plus_one_per_dc():
    doc = build_inventory(lab_hosts())
    children = doc["all"]["children"]
    assert set(children) == set(COMPONENT_GROUPS) | {"dc1", "dc2"}
    assert set(COMPONENT_GROUPS) == {
        "zookeeper",
        "kafka_controller",
        "kafka_broker",
        "mirrormaker",
        "kafka_connect",
        "spark_master",
        "spark_worker",
        "monitoring",
        "source_db",
    }
    assert list(children["zookeeper"]["hosts"]) == [
        "dc1-kafka1",
        "dc1-kafka2",
        "dc1-kafka3",
        "dc2-kafka1",
    ]
    assert list(children["kafka_broker"]["hosts"]) == [
        "dc1-kafka1",
        "dc1-kafka2",
        "dc1-kafka3",
        "dc2-kafka1",
        "dc2-kafka2",
    ]
    assert list(children["mirrormaker"]["hosts"]) == ["dc2-mm2"]
    assert list(children["spark_master"]["hosts"]) == ["spark1"]
    assert list(children["spark_worker"]["hosts"]) == ["spark1"]
    assert list(children["dc1"]["hosts"]) == ["dc1-kafka1", "dc1-kafka2", "dc1-kafka3", "spark1"]
    assert list(children["dc2"]["hosts"]) == ["dc2-kafka1", "dc2-kafka2", "dc2-mm2"]
    assert "vars" not in doc["all"]


def test_build_inventory_puts_hostvars_on_the_dc_group_only():
    children = build_inventory(lab_hosts())["all"]["children"]
    assert children["dc1"]["hosts"]["dc1-kafka1"] == {
        "ansible_host": "10.0.0.11",
        "dc": "dc1",
        "kafka_rack": "dc1-az1",
        "private_ip": "10.0.0.11",
        "private_dns": "dc1-kafka1",
        "broker_id": 1,
        "zookeeper_id": 1,
    }
    # Hosts outside kafka_broker/zookeeper carry no ids.
    assert children["dc2"]["hosts"]["dc2-mm2"] == {
        "ansible_host": "10.0.0.23",
        "dc": "dc2",
        "kafka_rack": "dc2-az1",
        "private_ip": "10.0.0.23",
        "private_dns": "dc2-mm2",
    }
    assert "zookeeper_id" not in children["dc2"]["hosts"]["dc2-kafka2"]
    for group in COMPONENT_GROUPS:
        assert all(hv == {} for hv in children[group]["hosts"].values()), group


def test_build_inventory_empty_component_groups_still_exist():
    host = HostRecord("solo", "dc1", "az1", "10.0.0.1", ("kafka_broker",), broker_id=0)
    children = build_inventory([host])["all"]["children"]
    for group in ("zookeeper", "kafka_controller", "mirrormaker", "spark_master", "spark_worker"):
        assert children[group] == {"hosts": {}}
    # broker_id 0 is a real id, not "missing".
    assert children["dc1"]["hosts"]["solo"]["broker_id"] == 0


def test_build_inventory_explicit_dns_host_extra_and_all_vars():
    host = HostRecord(
        "k1",
        "dc1",
        "az1",
        "10.0.0.1",
        ("kafka_broker",),
        private_dns="ip-10-0-0-1.internal",
        ansible_host="203.0.113.7",
        broker_id=1,
        extra={"kafka_heap": "1g"},
    )
    doc = build_inventory([host], {"ansible_user": "ubuntu"})
    hv = doc["all"]["children"]["dc1"]["hosts"]["k1"]
    assert hv["ansible_host"] == "203.0.113.7"
    assert hv["private_dns"] == "ip-10-0-0-1.internal"
    assert hv["kafka_heap"] == "1g"
    assert doc["all"]["vars"] == {"ansible_user": "ubuntu"}


def test_build_inventory_refuses_an_unknown_role():
    hosts = [
        *lab_hosts(),
        HostRecord("x", "dc1", "az1", "10.0.0.9", ("kafka_broker", "schema_registry")),
    ]
    with pytest.raises(ValueError, match=r"unknown host role\(s\) \['schema_registry'\]"):
        build_inventory(hosts)


# --- topology_from_inventory -----------------------------------------------------------------


def test_topology_from_inventory_reads_nodes_per_dc():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    topo = topology_from_inventory(groups, hostvars, DEFAULTS)
    assert [c.name for c in topo.clusters] == ["dc1", "dc2"]
    dc1, dc2 = topo.clusters
    assert dc1.brokers == [
        Node("dc1-kafka1", 1, "dc1-az1"),
        Node("dc1-kafka2", 2, "dc1-az2"),
        Node("dc1-kafka3", 3, "dc1-az3"),
    ]
    assert dc1.zookeepers == dc1.brokers
    assert dc2.brokers == [Node("dc2-kafka1", 1, "dc2-az1"), Node("dc2-kafka2", 2, "dc2-az2")]
    assert dc2.zookeepers == [Node("dc2-kafka1", 1, "dc2-az1")]


def test_topology_from_inventory_falls_back_to_defaults():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    defaults = {
        "kafka_default_replication_factor": 5,
        "kafka_min_insync_replicas": 4,
        "zookeeper_min_ensemble": 7,
        "kafka_metadata_mode": "kraft",
    }
    for c in topology_from_inventory(groups, hostvars, defaults).clusters:
        assert (c.replication_factor, c.min_insync_replicas, c.min_ensemble) == (5, 4, 7), c.name
        assert c.metadata_mode == "kraft"
        assert c.topics == []


def test_topology_from_inventory_builtin_fallbacks_without_defaults():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    c = topology_from_inventory(groups, hostvars, {}).clusters[0]
    assert (c.replication_factor, c.min_insync_replicas, c.min_ensemble) == (3, 2, 3)
    assert c.metadata_mode == "zookeeper"


def test_topology_from_inventory_per_dc_settings_override_defaults():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    # dc2's group vars, as inventories/local/group_vars/dc2.yml sets them.
    dc2_vars = {
        "zookeeper_min_ensemble": 1,
        "kafka_default_replication_factor": 2,
        "kafka_min_insync_replicas": 1,
    }
    for host in groups["dc2"]:
        hostvars[host].update(dc2_vars)
    dc1_topics = [
        {"name": "orders", "partitions": 6, "replication_factor": 3, "consumers": 2},
        {"name": "payments", "partitions": "3"},
    ]
    for host in groups["dc1"]:
        hostvars[host]["kafka_topics"] = dc1_topics
    dc1, dc2 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters
    assert (dc1.replication_factor, dc1.min_insync_replicas, dc1.min_ensemble) == (3, 2, 3)
    assert (dc2.replication_factor, dc2.min_insync_replicas, dc2.min_ensemble) == (2, 1, 1)
    assert dc1.topics == [Topic("orders", 6, 3, 2), Topic("payments", 3, 3, 0)]
    assert dc2.topics == []


def test_topology_from_inventory_setting_comes_from_any_broker_of_the_dc():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    hostvars["dc1-kafka3"]["kafka_min_insync_replicas"] = 1
    hostvars["dc2-kafka1"]["kafka_metadata_mode"] = "kraft"
    dc1, dc2 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters
    assert dc1.min_insync_replicas == 1
    assert dc1.metadata_mode == "zookeeper"
    assert dc2.min_insync_replicas == 2
    assert dc2.metadata_mode == "kraft"


def test_topology_from_inventory_preserves_group_order():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    groups["kafka_broker"] = ["dc2-kafka2", "dc1-kafka3", "dc1-kafka1", "dc2-kafka1", "dc1-kafka2"]
    groups["zookeeper"] = ["dc1-kafka2", "dc1-kafka3", "dc2-kafka1", "dc1-kafka1"]
    groups["all"] = [
        "dc2-mm2",
        "dc2-kafka1",
        *[h for h in groups["all"] if not h.startswith("dc2")],
    ]
    dc2, dc1 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters
    assert (dc2.name, dc1.name) == ("dc2", "dc1")
    assert [b.host for b in dc1.brokers] == ["dc1-kafka3", "dc1-kafka1", "dc1-kafka2"]
    assert [b.host for b in dc2.brokers] == ["dc2-kafka2", "dc2-kafka1"]
    assert [z.host for z in dc1.zookeepers] == ["dc1-kafka2", "dc1-kafka3", "dc1-kafka1"]


def test_topology_from_inventory_uses_dc_group_membership():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    # A broker listed in kafka_broker but not in its dc group is not part of that cluster.
    groups["dc1"].remove("dc1-kafka3")
    dc1 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters[0]
    assert [b.host for b in dc1.brokers] == ["dc1-kafka1", "dc1-kafka2"]


def test_topology_from_inventory_keeps_an_explicit_zero():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    for host in groups["dc1"]:
        hostvars[host]["kafka_min_insync_replicas"] = 0
    dc1 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters[0]
    assert dc1.min_insync_replicas == 0


# --- missing_hostvars / preflight_errors -----------------------------------------------------


def test_missing_hostvars_none_on_a_complete_inventory():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    assert missing_hostvars(groups, hostvars) == []


def test_missing_hostvars_names_host_group_and_variables():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    del hostvars["dc1-kafka2"]["broker_id"]
    del hostvars["dc1-kafka3"]["zookeeper_id"]
    hostvars["dc2-mm2"]["kafka_rack"] = ""
    del hostvars["dc2-mm2"]["private_ip"]
    hostvars["dc2-kafka2"]["dc"] = None
    assert missing_hostvars(groups, hostvars) == [
        "host dc2-kafka2 (all) is missing required variable(s) ['dc']",
        "host dc2-mm2 (all) is missing required variable(s) ['kafka_rack', 'private_ip']",
        "host dc1-kafka2 (kafka_broker) is missing required variable(s) ['broker_id']",
        "host dc1-kafka3 (zookeeper) is missing required variable(s) ['zookeeper_id']",
    ]


def test_missing_hostvars_host_without_any_vars():
    groups = {"all": ["ghost"], "kafka_broker": ["ghost"]}
    assert missing_hostvars(groups, {}) == [
        "host ghost (all) is missing required variable(s) ['dc', 'kafka_rack', 'private_ip']",
        "host ghost (kafka_broker) is missing required variable(s) ['broker_id']",
    ]


def test_missing_hostvars_zero_ids_are_present():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    hostvars["dc1-kafka1"]["broker_id"] = 0
    assert missing_hostvars(groups, hostvars) == []


def test_preflight_errors_valid_lab_inventory():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    for host in groups["dc2"]:
        hostvars[host].update(
            zookeeper_min_ensemble=1,
            kafka_default_replication_factor=2,
            kafka_min_insync_replicas=1,
        )
    assert preflight_errors(groups, hostvars, DEFAULTS) == []


def test_preflight_errors_reports_topology_rules_with_their_dc():
    # Without dc2's scaled-down group vars, the small DR site breaks the production rules.
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    assert preflight_errors(groups, hostvars, DEFAULTS) == [
        "dc2: the ZooKeeper ensemble has 1 server(s); at least 3 are needed",
        "dc2: default replication factor 3 is above the broker count 2",
        "dc2: 2 rack(s) ['dc2-az1', 'dc2-az2'] cannot hold replication factor 3; each replica needs its own rack",
    ]


def test_preflight_errors_returns_missing_variables_first_and_only():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    del hostvars["dc2-kafka2"]["broker_id"]
    # dc2 also breaks topology rules (see above), but a missing variable stops there:
    # the topology read from an incomplete inventory would only produce noise.
    assert preflight_errors(groups, hostvars, DEFAULTS) == [
        "host dc2-kafka2 (kafka_broker) is missing required variable(s) ['broker_id']"
    ]


# --- KRaft data centres (issue 14): the kafka_controller group, controller_id, the DC's mode --------


def kraft_lab_hosts() -> list[HostRecord]:
    """dc1 as in the lab (ZooKeeper); dc2 a KRaft DC: three dedicated controllers and two brokers."""
    dc1 = [h for h in lab_hosts() if h.dc == "dc1"]
    return [
        *dc1,
        HostRecord("dc2-controller1", "dc2", "dc2-az1", "10.0.0.24", ("kafka_controller",), controller_id=101),
        HostRecord("dc2-controller2", "dc2", "dc2-az2", "10.0.0.25", ("kafka_controller",), controller_id=102),
        HostRecord("dc2-controller3", "dc2", "dc2-az3", "10.0.0.26", ("kafka_controller",), controller_id=103),
        HostRecord("dc2-kafka1", "dc2", "dc2-az1", "10.0.0.21", ("kafka_broker",), broker_id=1),
        HostRecord("dc2-kafka2", "dc2", "dc2-az2", "10.0.0.22", ("kafka_broker",), broker_id=2),
    ]


# dc2's group vars, as a KRaft inventories/local/group_vars/dc2.yml would set them.
KRAFT_DC2_VARS = {
    "kafka_metadata_mode": "kraft",
    "kafka_version": "4.3.1",
    "kafka_default_replication_factor": 2,
    "kafka_min_insync_replicas": 1,
    "kafka_offsets_topic_replication_factor": 2,
    "kafka_transaction_state_log_replication_factor": 2,
    "kafka_transaction_state_log_min_isr": 1,
    "kafka_share_coordinator_state_topic_replication_factor": 2,
}


def kraft_play_view(**dc2_changes: object) -> tuple[dict[str, list[str]], dict[str, dict]]:
    groups, hostvars = as_play_view(build_inventory(kraft_lab_hosts()))
    for host in groups["dc2"]:
        hostvars[host].update({**KRAFT_DC2_VARS, **dc2_changes})
    for host in groups["dc1"]:
        hostvars[host]["kafka_version"] = "3.9.2"
    return groups, hostvars


def test_controllers_land_in_the_kafka_controller_group_with_their_controller_id():
    children = build_inventory(kraft_lab_hosts())["all"]["children"]
    assert list(children["kafka_controller"]["hosts"]) == ["dc2-controller1", "dc2-controller2", "dc2-controller3"]
    assert all(hv == {} for hv in children["kafka_controller"]["hosts"].values())
    assert children["dc2"]["hosts"]["dc2-controller2"] == {
        "ansible_host": "10.0.0.25",
        "dc": "dc2",
        "kafka_rack": "dc2-az2",
        "private_ip": "10.0.0.25",
        "private_dns": "dc2-controller2",
        "controller_id": 102,
    }
    # Brokers keep broker_id as their node.id and carry no controller_id.
    assert "controller_id" not in children["dc2"]["hosts"]["dc2-kafka1"]
    assert list(children["zookeeper"]["hosts"]) == ["dc1-kafka1", "dc1-kafka2", "dc1-kafka3"]


def test_group_vars_set_a_data_centres_metadata_mode():
    doc = build_inventory(
        kraft_lab_hosts(),
        {"ansible_user": "admin"},
        {"dc1": {"kafka_metadata_mode": "zookeeper"}, "dc2": {"kafka_metadata_mode": "kraft"}, "monitoring": {}},
    )
    children = doc["all"]["children"]
    assert children["dc1"]["vars"] == {"kafka_metadata_mode": "zookeeper"}
    assert children["dc2"]["vars"] == {"kafka_metadata_mode": "kraft"}
    assert "vars" not in children["monitoring"]  # empty: left out
    assert "vars" not in build_inventory(kraft_lab_hosts())["all"]["children"]["dc2"]
    with pytest.raises(ValueError, match="variables for group 'dc3', which is neither"):
        build_inventory(kraft_lab_hosts(), group_vars={"dc3": {"kafka_metadata_mode": "kraft"}})


def test_topology_from_inventory_reads_a_kraft_data_centre():
    groups, hostvars = kraft_play_view()
    dc1, dc2 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters
    assert (dc1.metadata_mode, dc1.kafka_version, dc1.controllers) == ("zookeeper", "3.9.2", [])
    assert dc2.metadata_mode == "kraft" and dc2.kafka_version == "4.3.1"
    assert dc2.controllers == [
        Node("dc2-controller1", 101, "dc2-az1"),
        Node("dc2-controller2", 102, "dc2-az2"),
        Node("dc2-controller3", 103, "dc2-az3"),
    ]
    assert dc2.brokers == [Node("dc2-kafka1", 1, "dc2-az1"), Node("dc2-kafka2", 2, "dc2-az2")]
    assert dc2.zookeepers == [] and dc2.zookeeper_settings == []
    assert (dc2.offsets_topic_replication_factor, dc2.transaction_state_log_replication_factor) == (2, 2)
    assert (dc2.transaction_state_log_min_isr, dc2.share_coordinator_state_topic_replication_factor) == (1, 2)
    assert dc2.min_controllers == 3


def test_topology_from_inventory_mode_and_version_come_from_any_host_of_the_dc():
    # A DC of controllers only still says which mode it is in (its group vars reach every host).
    groups, hostvars = kraft_play_view()
    for host in ("dc2-kafka1", "dc2-kafka2"):
        for key in ("kafka_metadata_mode", "kafka_version"):
            del hostvars[host][key]
    dc2 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters[1]
    assert (dc2.metadata_mode, dc2.kafka_version) == ("kraft", "4.3.1")


def test_topology_from_inventory_version_and_internal_rfs_fall_back_to_the_role_defaults():
    groups, hostvars = as_play_view(build_inventory(lab_hosts()))
    defaults = {
        **DEFAULTS,
        "kafka_version": "3.9.2",
        "kafka_offsets_topic_replication_factor": 3,
        "kafka_transaction_state_log_replication_factor": 3,
        "kafka_min_controllers": 5,
    }
    dc1 = topology_from_inventory(groups, hostvars, defaults).clusters[0]
    assert (dc1.kafka_version, dc1.offsets_topic_replication_factor, dc1.min_controllers) == ("3.9.2", 3, 5)
    assert dc1.transaction_state_log_replication_factor == 3
    # Not declared anywhere: not checked.
    bare = topology_from_inventory(groups, hostvars, {}).clusters[0]
    assert bare.kafka_version is None and bare.offsets_topic_replication_factor is None


def test_topology_from_inventory_lists_zookeeper_settings_of_a_dc():
    groups, hostvars = kraft_play_view(zookeeper_min_ensemble=1)
    hostvars["dc2-kafka2"]["zookeeper_id"] = 2
    dc2 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters[1]
    assert dc2.zookeeper_settings == ["zookeeper_min_ensemble", "zookeeper_id (dc2-kafka2)"]
    # ZooKeeper hosts are reported as hosts, not again by their zookeeper_id.
    dc1 = topology_from_inventory(groups, hostvars, DEFAULTS).clusters[0]
    assert dc1.zookeeper_settings == []


def test_missing_controller_id_is_named():
    groups, hostvars = kraft_play_view()
    del hostvars["dc2-controller3"]["controller_id"]
    assert missing_hostvars(groups, hostvars) == [
        "host dc2-controller3 (kafka_controller) is missing required variable(s) ['controller_id']"
    ]


def test_preflight_errors_valid_zookeeper_and_kraft_lab():
    groups, hostvars = kraft_play_view()
    assert preflight_errors(groups, hostvars, DEFAULTS) == []


def dc_vars(dc: str, **values: object):  # noqa: ANN201 - a mutation
    """Set group variables of `dc` (every host of the DC gets them, as Ansible's group vars do)."""

    def change(groups: dict, hostvars: dict) -> None:
        for host in groups[dc]:
            hostvars[host].update(values)

    return change


def host_vars(host: str, **values: object):  # noqa: ANN201 - a mutation
    return lambda groups, hostvars: hostvars[host].update(values)


def drop_controllers(*hosts: str):  # noqa: ANN201 - a mutation
    def change(groups: dict, hostvars: dict) -> None:
        for host in hosts:
            groups["kafka_controller"].remove(host)

    return change


def lab_single_controller(groups: dict, hostvars: dict) -> None:
    dc_vars("dc2", kafka_min_controllers=1)(groups, hostvars)
    drop_controllers("dc2-controller2", "dc2-controller3")(groups, hostvars)


def zookeeper_on_a_kraft_broker(groups: dict, hostvars: dict) -> None:
    groups["zookeeper"].append("dc2-kafka1")
    hostvars["dc2-kafka1"]["zookeeper_id"] = 1


ZK_ON_4X = (
    "a ZooKeeper data centre runs Kafka 3.x, not 4.3.1 (4.x has no ZooKeeper mode: set kafka_metadata_mode: kraft)"
)
KRAFT_PREFLIGHT = {
    "node-id-clash": (
        host_vars("dc2-controller2", controller_id=2),
        [
            "dc2: node id(s) [2] belong to a broker and a controller; broker_id and controller_id are both "
            "node.id and must be unique in the data centre (controllers count from 101)"
        ],
    ),
    "kraft-on-3.8": (
        dc_vars("dc2", kafka_version="3.8.1"),
        [
            "dc2: KRaft mode runs Kafka 4.x, not 3.8.1; set kafka_version to a 4.x release (a ZooKeeper data "
            "centre on 3.x moves to KRaft through the migration, not by switching the mode)"
        ],
    ),
    "zookeeper-on-4.x": (dc_vars("dc1", kafka_version="4.3.1"), [f"dc1: {ZK_ON_4X}"]),
    "even-quorum": (
        drop_controllers("dc2-controller3"),
        [
            "dc2: the KRaft controller quorum has 2 controller(s); at least 3 are needed",
            "dc2: the KRaft controller quorum has an even number of controllers (2); "
            "use an odd number so a majority survives a split",
        ],
    ),
    "lab-override-single-controller": (lab_single_controller, []),
    "zookeeper-host-in-kraft-dc": (
        zookeeper_on_a_kraft_broker,
        [
            "dc2: a KRaft data centre has no ZooKeeper, but zookeeper host(s) ['dc2-kafka1'] are in it; "
            "remove them from the zookeeper group"
        ],
    ),
    "zookeeper-variable-in-kraft-dc": (
        dc_vars("dc2", zookeeper_min_ensemble=1),
        ["dc2: ZooKeeper setting(s) ['zookeeper_min_ensemble'] in a KRaft data centre; remove them"],
    ),
    "zookeeper-mode-on-4x": (
        dc_vars("dc2", kafka_metadata_mode="zookeeper"),
        [
            f"dc2: {ZK_ON_4X}",
            "dc2: the ZooKeeper ensemble has 0 server(s); at least 3 are needed",
        ],
    ),
    "unknown-mode": (
        dc_vars("dc2", kafka_metadata_mode="kraft "),
        ["dc2: unknown metadata mode 'kraft '; kafka_metadata_mode is 'zookeeper' or 'kraft'"],
    ),
    "share-state-rf": (
        dc_vars("dc2", kafka_share_coordinator_state_topic_replication_factor=3),
        [
            "dc2: share.coordinator.state.topic.replication.factor=3 is above the broker count 2; "
            "Kafka could not create __share_group_state"
        ],
    ),
    "mixed-modes": (
        host_vars("dc2-controller1", kafka_metadata_mode="zookeeper"),
        [
            "dc2: its hosts disagree on kafka_metadata_mode ({'kraft': ['dc2-controller2', 'dc2-controller3', "
            "'dc2-kafka1', 'dc2-kafka2'], 'zookeeper': ['dc2-controller1']}); set it once for the data centre, "
            "in group_vars/dc2.yml"
        ],
    ),
}


@pytest.mark.parametrize("case", list(KRAFT_PREFLIGHT))
def test_preflight_errors_kraft_rules(case):
    change, expected = KRAFT_PREFLIGHT[case]
    groups, hostvars = kraft_play_view()
    change(groups, hostvars)
    assert preflight_errors(groups, hostvars, DEFAULTS) == expected

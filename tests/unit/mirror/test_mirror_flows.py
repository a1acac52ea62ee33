"""MirrorMaker 2 flows: validation, include patterns, the MM2 principal's ACLs, lag bookkeeping."""

from __future__ import annotations

import json
import re

import pytest

from kafkakit.cluster.acls import desired_bindings
from kafkakit.mirror.flows import flow_errors, include_regex, mirrormaker_acls, synced_acl_prefixes
from kafkakit.mirror.lag import MirrorState, PartitionLag, connector_states, mirrored_topics, replicated_offsets

FLOW = {
    "source": "dc1",
    "target": "dc2",
    "topics": [{"name": "orders"}, {"name": "team-a.", "pattern_type": "prefixed"}],
    "groups": [{"name": "orders-", "pattern_type": "prefixed"}],
}


def test_a_valid_flow_has_no_errors() -> None:
    assert flow_errors([FLOW], ["dc1", "dc2"], ["dc2"]) == []


@pytest.mark.parametrize(
    ("flow", "mm_dcs", "expected"),
    [
        ({**FLOW, "target": "dc3"}, ["dc2"], "target 'dc3' is not a data centre"),
        ({**FLOW, "target": "dc1"}, ["dc1"], "source and target must differ"),
        (FLOW, [], "dc2 has no mirrormaker host"),
        ({**FLOW, "topics": []}, ["dc2"], "topics: must be a non-empty list"),
        (
            {**FLOW, "topics": [{"name": "x", "pattern_type": "regex"}]},
            ["dc2"],
            "pattern_type must be literal or prefixed",
        ),
        ({**FLOW, "topics_exclude": ["(unclosed"]}, ["dc2"], "is not a valid regex"),
        ({**FLOW, "colour": "blue"}, ["dc2"], "unknown field(s) colour"),
    ],
)
def test_bad_flows_are_refused_with_a_clear_message(flow: dict, mm_dcs: list[str], expected: str) -> None:
    errors = flow_errors([flow], ["dc1", "dc2"], mm_dcs)
    assert any(expected in e for e in errors), errors


def test_a_flow_declared_twice_is_refused() -> None:
    assert any("declared twice" in e for e in flow_errors([FLOW, FLOW], ["dc1", "dc2"], ["dc2"]))


def test_identity_naming_refuses_active_active() -> None:
    back = {**FLOW, "source": "dc2", "target": "dc1"}
    assert flow_errors([FLOW, back], ["dc1", "dc2"], ["dc1", "dc2"]) == []
    errors = flow_errors([FLOW, back], ["dc1", "dc2"], ["dc1", "dc2"], "identity")
    assert any("back and forth" in e for e in errors)


def test_include_regex_matches_exactly_what_the_acl_patterns_cover() -> None:
    pattern = re.compile(include_regex(FLOW["topics"]))
    assert pattern.fullmatch("orders")
    assert pattern.fullmatch("team-a.events")
    assert not pattern.fullmatch("orders2")  # literal means literal
    assert not pattern.fullmatch("team-ab")  # the dot of the prefix is not a wildcard
    assert not re.compile(include_regex([])).fullmatch("anything")


def test_source_side_acls_only_read() -> None:
    acls = mirrormaker_acls([FLOW], "dc1", "User:mm")
    topic_ops = {op for a in acls if a["resource_type"] == "topic" for op in a["operations"]}
    assert topic_ops == {"read", "describe", "describe_configs"}
    assert {a["name"] for a in acls if a["resource_type"] == "topic"} == {"orders", "team-a.", "heartbeats"}
    assert not [a for a in acls if a["resource_type"] == "cluster"]
    desired_bindings(acls)  # valid for the kafka_acls module


def test_target_side_acls_are_confined_to_the_source_prefix_and_mm2_topics() -> None:
    acls = mirrormaker_acls([FLOW], "dc2", "User:mm")
    topics = {(a["name"], a["pattern_type"]) for a in acls if a["resource_type"] == "topic"}
    assert topics == {("dc1.", "prefixed"), ("mm2-", "prefixed"), ("heartbeats", "literal")}
    assert ("dc1-mm2", "literal") in {(a["name"], a["pattern_type"]) for a in acls if a["resource_type"] == "group"}
    desired_bindings(acls)


def test_acl_sync_adds_cluster_rights_and_protects_mirrored_topics() -> None:
    assert {"describe", "alter"} <= {
        op
        for a in mirrormaker_acls([FLOW], "dc2", "User:mm", sync_acls=True)
        if a["resource_type"] == "cluster"
        for op in a["operations"]
    }
    assert synced_acl_prefixes([FLOW], "dc2", "default", True) == ["dc1."]
    assert synced_acl_prefixes([FLOW], "dc2", "default", False) == []
    assert synced_acl_prefixes([FLOW], "dc1", "default", True) == []


def test_a_dc_outside_every_flow_gets_no_acls() -> None:
    assert mirrormaker_acls([FLOW], "dc3", "User:mm") == []


def test_mirrored_topics_apply_include_and_exclude() -> None:
    names = ["orders", "orders2", "team-a.x", "team-a.x.internal", "__consumer_offsets", "payments"]
    assert mirrored_topics(names, FLOW["topics"], [r".*[\-\.]internal"]) == ["orders", "team-a.x"]


def test_replicated_offsets_come_from_the_source_connector_only() -> None:
    log = {
        json.dumps(
            ["MirrorSourceConnector", {"cluster": "dc1", "partition": 2, "topic": "orders"}]
        ).encode(): b'{"offset": 41}',
        json.dumps(
            ["MirrorSourceConnector", {"cluster": "dc3", "partition": 2, "topic": "orders"}]
        ).encode(): b'{"offset": 7}',
        json.dumps(["MirrorCheckpointConnector", {"group": "g"}]).encode(): b'{"offset": 1}',
        json.dumps(["MirrorSourceConnector", {"cluster": "dc1", "partition": 0, "topic": "gone"}]).encode(): None,
    }
    assert replicated_offsets(log, "dc1") == {("orders", 2): 41}


def test_connector_states_and_health() -> None:
    log = {
        b"status-connector-MirrorSourceConnector": b'{"state": "RUNNING"}',
        b"status-task-MirrorSourceConnector-0": b'{"state": "FAILED", "trace": "boom"}',
        b"status-connector-MirrorCheckpointConnector": b'{"state": "RUNNING"}',
        b"status-topic-orders:connector-MirrorSourceConnector": b"{}",
    }
    states = connector_states(log)
    assert states == {
        "MirrorSourceConnector": "RUNNING",
        "MirrorSourceConnector-0": "FAILED",
        "MirrorCheckpointConnector": "RUNNING",
    }
    state = MirrorState(connectors=states)
    assert state.not_running() == ["MirrorHeartbeatConnector=MISSING", "MirrorSourceConnector-0=FAILED"]
    assert not state.ok(-1)


def test_lag_threshold() -> None:
    running = dict.fromkeys(
        ["MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"], "RUNNING"
    )
    state = MirrorState(partitions=[PartitionLag("orders", 0, 100, 90, 10)], connectors=running)
    assert state.ok(10) and not state.ok(9) and state.ok(-1)
    assert state.total_lag == 10


def test_exclusive_acls_leave_mirrored_topic_bindings_to_mm2() -> None:
    from kafkakit.cluster.acls import AclKey, plan_acls

    synced = AclKey("User:reader", "topic", "dc1.orders", "literal", "READ", "ALLOW", "*")
    stray = AclKey("User:reader", "topic", "orders", "literal", "READ", "ALLOW", "*")
    plan = plan_acls(set(), {synced, stray}, exclusive=True, protected_topic_prefixes=["dc1."])
    assert plan.to_remove == [stray]

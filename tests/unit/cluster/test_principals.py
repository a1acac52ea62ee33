"""kafkakit.cluster.principals: when a data centre's certificates may carry the shared principal, and which
hosts super.users must still name, through the three runs of the move and the cases around it."""

from __future__ import annotations

from kafkakit.cluster.principals import DcPlan, ServerState, dc_plan, principal_plan, state_from_result
from tests.unit.support import plugin_files

BROKERS = ["k1", "k2", "k3"]


def servers(**overrides: dict) -> list[ServerState]:
    """dc1's three brokers, each as given in `overrides` (default: the state before the move)."""
    before = {"config": "older", "loaded": True, "certificate_ou": "", "presented_ou": ""}
    return [ServerState(host=h, dc="dc1", **{**before, **overrides.get(h, {})}) for h in BROKERS]


def every(**state: object) -> dict:
    return {h: state for h in BROKERS}


def test_a_fresh_data_centre_is_shared_from_the_start_and_names_no_one() -> None:
    fresh = servers(**every(config="absent", certificate_ou=None, presented_ou=None))
    assert dc_plan(fresh) == DcPlan(shared=True, by_name=[])


def test_before_the_move_no_certificate_changes_and_every_server_keeps_its_name() -> None:
    assert dc_plan(servers()) == DcPlan(shared=False, by_name=BROKERS)


def test_rules_written_but_one_server_not_restarted_keeps_the_certificates() -> None:
    # Run 1 wrote the rules everywhere, and its roll stopped before k3.
    plan = dc_plan(servers(**{**every(config="current"), "k3": {"config": "current", "loaded": False}}))
    assert plan == DcPlan(shared=False, by_name=BROKERS)


def test_rules_loaded_everywhere_lets_the_certificates_change_names_kept() -> None:
    # Run 2: every server runs the rules; they still present certificates without an OU.
    assert dc_plan(servers(**every(config="current"))) == DcPlan(shared=True, by_name=BROKERS)


def test_a_roll_that_stopped_after_the_reissue_keeps_the_names_of_the_servers_not_restarted() -> None:
    # Run 2 wrote certificates with an OU everywhere; k2 and k3 still run with the old one.
    new = {"config": "current", "certificate_ou": "dc1:brokers"}
    plan = dc_plan(servers(k1={**new, "presented_ou": "dc1:brokers"}, k2=new, k3=new))
    assert plan == DcPlan(shared=True, by_name=["k2", "k3"])


def test_across_no_one_is_named() -> None:
    across = every(config="current", certificate_ou="dc1:brokers", presented_ou="dc1:brokers")
    assert dc_plan(servers(**across)) == DcPlan(shared=True, by_name=[])


def test_a_new_broker_joins_a_shared_data_centre_by_its_principal() -> None:
    across = every(config="current", certificate_ou="dc1:brokers", presented_ou="dc1:brokers")
    new = ServerState(host="k4", dc="dc1", config="absent", certificate_ou=None, presented_ou=None)
    assert dc_plan([*servers(**across), new]) == DcPlan(shared=True, by_name=[])


def test_a_new_broker_joining_before_the_move_is_named() -> None:
    new = ServerState(host="k4", dc="dc1", config="absent", certificate_ou=None, presented_ou=None)
    assert dc_plan([*servers(), new]) == DcPlan(shared=False, by_name=[*BROKERS, "k4"])


def test_a_stopped_broker_is_named_by_the_certificate_it_will_start_with() -> None:
    across = every(config="current", certificate_ou="dc1:brokers", presented_ou="dc1:brokers")
    stopped_old = {"config": "current", "certificate_ou": "", "presented_ou": None}
    assert dc_plan(servers(**{**across, "k2": stopped_old})).by_name == ["k2"]
    stopped_new = {"config": "current", "certificate_ou": "dc1:brokers", "presented_ou": None}
    assert dc_plan(servers(**{**across, "k2": stopped_new})).by_name == []


def test_an_unreachable_server_neither_undoes_nor_starts_the_move() -> None:
    unreachable = ServerState(host="k3", dc="dc1", read=False)
    across = every(config="current", certificate_ou="dc1:brokers", presented_ou="dc1:brokers")
    # Across: it stays shared, and the host is assumed across like the others (no roll for it).
    assert dc_plan([*servers(**across)[:2], unreachable]) == DcPlan(shared=True, by_name=[])
    # Rules loaded on the others: not shared while one server is unknown, and it keeps its name.
    ready = every(config="current")
    assert dc_plan([*servers(**ready)[:2], unreachable]) == DcPlan(shared=False, by_name=BROKERS)
    # Nothing read at all: nothing is assumed across.
    nothing = [ServerState(host=h, dc="dc1", read=False) for h in BROKERS]
    assert dc_plan(nothing) == DcPlan(shared=False, by_name=BROKERS)


def test_data_centres_are_decided_apart_and_from_the_module_results() -> None:
    results = [
        {
            "item": "k1",
            "config": "current",
            "loaded": True,
            "certificate_ou": "dc1:brokers",
            "presented_ou": "dc1:brokers",
        },
        {"item": "m1", "config": "older", "loaded": True, "certificate_ou": "", "presented_ou": ""},
        {"item": "m2", "unreachable": True},
    ]
    dcs = {"k1": "dc1", "m1": "dc2", "m2": "dc2"}
    states = [state_from_result(r["item"], dcs[r["item"]], r) for r in results]
    assert principal_plan(states) == {
        "dc1": DcPlan(shared=True, by_name=[]),
        "dc2": DcPlan(shared=False, by_name=["m1", "m2"]),
    }


def test_the_servers_read_are_every_broker_and_controller_of_the_play_data_centres() -> None:
    filters = plugin_files.load("filter/principals.py", "principals_filters")
    groups = {"kafka_broker": ["a1", "a2", "b1"], "kafka_controller": ["b9"], "monitoring": ["m1"]}
    hostvars = {
        "a1": {"dc": "dc1", "private_ip": "10.0.0.1"},
        "a2": {"dc": "dc1", "private_ip": "10.0.0.2"},
        "b1": {"dc": "dc2", "private_ip": "10.0.1.1"},
        "b9": {"dc": "dc2", "private_ip": "10.0.1.9"},
        "m1": {"dc": "dc1", "private_ip": "10.0.0.9"},
    }
    # A play limited to one dc1 broker and the monitoring host still reads the other dc1 broker.
    assert filters.kafkakit_principal_servers(["a1", "m1"], groups, hostvars) == [
        {"host": "a1", "address": "10.0.0.1", "controller": False},
        {"host": "a2", "address": "10.0.0.2", "controller": False},
    ]
    assert [s["host"] for s in filters.kafkakit_principal_servers(["b1"], groups, hostvars)] == ["b1", "b9"]
    assert filters.kafkakit_principal_servers(["b1"], groups, hostvars)[1]["controller"] is True


def test_the_plan_is_made_from_every_host_read_and_a_skipped_item_counts_for_none() -> None:
    filters = plugin_files.load("filter/principals.py", "principals_filters")
    hostvars = {"k1": {"dc": "dc1"}, "k2": {"dc": "dc1"}}
    # Each server's own read (tasks/principals.yml), flattened: k1 read, k2's item skipped.
    read = {"item": {"host": "k1"}, "config": "older", "loaded": True, "certificate_ou": "", "presented_ou": ""}
    skipped = {"item": {"host": "k2"}, "skipped": True}
    assert filters.kafkakit_principal_plan([read, skipped], hostvars) == {"dc1": {"shared": False, "by_name": ["k1"]}}
    # Positive control: the same item counted as a server's result is an unread server, kept by name.
    unread = {**skipped, "skipped": False}
    counted = filters.kafkakit_principal_plan([read, unread], hostvars)
    assert counted == {"dc1": {"shared": False, "by_name": ["k1", "k2"]}}

"""ansible/preflight.yml end to end: the real playbook, filter plugin and role defaults.

Each case loads fixtures/preflight_good.yml (the lab's inventory shape), breaks one rule,
writes the copy to tmp_path and runs `ansible-playbook -i <copy> preflight.yml` from ansible/.
The preflight only runs on localhost, so the fixture hosts are never contacted.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.unit.support.ansible_run import ANSIBLE_DIR, REPO, failure_msg, run_playbook

GOOD = Path(__file__).parents[1] / "fixtures" / "preflight_good.yml"

Inventory = dict
Mutation = Callable[[Inventory], None]


def group(inv: Inventory, name: str) -> dict:
    return inv["all"]["children"][name]


def host(inv: Inventory, name: str) -> dict:
    dc = name.split("-", 1)[0]
    return group(inv, dc)["hosts"][name]


def run_preflight(inv: Inventory, tmp_path: Path, playbook: str = "preflight.yml") -> subprocess.CompletedProcess[str]:
    """preflight.yml (or a playbook importing it) against `inv`, whatever its outcome."""
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return run_playbook(path, playbook, tmp_path=tmp_path)


@pytest.fixture(scope="module")
def good() -> Inventory:
    return yaml.safe_load(GOOD.read_text())


def test_good_inventory_passes(good, tmp_path):
    done = run_preflight(good, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed=0" in done.stdout
    assert "skipping: [localhost]" in done.stdout  # the "Refuse the inventory" task


def test_preflight_imported_from_another_folder_finds_the_role_defaults(good, tmp_path):
    # ops/ playbooks import ../site.yml, which imports preflight.yml: the role defaults are found
    # through roles_path (ansible.cfg), whatever folder the importing playbook is in.
    elsewhere = tmp_path / "ops"
    elsewhere.mkdir()
    (elsewhere / "importer.yml").write_text(
        f"- name: The preflight, imported\n  ansible.builtin.import_playbook: {ANSIBLE_DIR / 'preflight.yml'}\n"
    )
    inv = copy.deepcopy(good)
    rf_above_brokers(inv)  # a rule that reads a role default (the replication factor's)
    done = run_preflight(inv, tmp_path, str(elsewhere / "importer.yml"))
    assert done.returncode != 0 and "dc2" in str(failure_msg(done.stdout)), done.stdout + done.stderr
    assert "could not locate file" not in done.stdout + done.stderr


def add_even_zookeeper(inv: Inventory) -> None:
    group(inv, "dc1")["hosts"]["dc1-zk4"] = {
        "dc": "dc1",
        "kafka_rack": "dc1-az1",
        "private_ip": "10.99.0.14",
        "zookeeper_id": 4,
    }
    group(inv, "zookeeper")["hosts"]["dc1-zk4"] = {}


def duplicate_broker_id(inv: Inventory) -> None:
    host(inv, "dc1-kafka3")["broker_id"] = 1


def rf_above_brokers(inv: Inventory) -> None:
    group(inv, "dc2")["vars"]["kafka_default_replication_factor"] = 3


def fewer_racks_than_rf(inv: Inventory) -> None:
    host(inv, "dc1-kafka3")["kafka_rack"] = "dc1-az1"


def min_isr_equal_to_rf(inv: Inventory) -> None:
    group(inv, "dc1")["vars"]["kafka_min_insync_replicas"] = 3


def topic_fewer_partitions_than_consumers(inv: Inventory) -> None:
    group(inv, "dc1")["vars"]["kafka_topics"].append(
        {"name": "clicks", "partitions": 2, "replication_factor": 3, "consumers": 4}
    )


def broker_without_id(inv: Inventory) -> None:
    del host(inv, "dc2-kafka2")["broker_id"]
    # A broken topology rule too: missing variables are reported alone, first.
    host(inv, "dc1-kafka3")["broker_id"] = 1


def admin_password_missing(inv: Inventory) -> None:
    del inv["all"]["vars"]["kafka_admin_password"]


def no_brokers(inv: Inventory) -> None:
    group(inv, "kafka_broker")["hosts"] = {}


FLOW = {"source": "dc1", "target": "dc2", "topics": [{"name": "orders"}]}


def flow_without_mirrormaker_host(inv: Inventory) -> None:
    inv["all"]["vars"]["mirrormaker_flows"] = [FLOW]


def mirrormaker_host(inv: Inventory) -> None:
    group(inv, "dc2")["hosts"]["dc2-mm2-1"] = {"dc": "dc2", "kafka_rack": "dc2-az1", "private_ip": "10.99.0.25"}
    inv["all"]["children"].setdefault("mirrormaker", {"hosts": {}})["hosts"] = {"dc2-mm2-1": {}}


def flow_to_unknown_dc(inv: Inventory) -> None:
    mirrormaker_host(inv)
    inv["all"]["vars"]["kafka_mirrormaker_password"] = "placeholder"
    inv["all"]["vars"]["mirrormaker_flows"] = [FLOW, {**FLOW, "target": "dc3"}]


def mirrormaker_password_missing(inv: Inventory) -> None:
    mirrormaker_host(inv)
    inv["all"]["vars"]["mirrormaker_flows"] = [FLOW]


def topic_config_typo(inv: Inventory) -> None:
    group(inv, "dc1")["vars"]["kafka_topics"][0]["configs"] = {"retention.msx": "1000"}


def broker_id_not_a_number(inv: Inventory) -> None:
    host(inv, "dc1-kafka2")["broker_id"] = "two"


def extra_property_overrides_min_isr(inv: Inventory) -> None:
    group(inv, "dc2")["vars"]["kafka_extra_properties"] = {"min.insync.replicas": 1}


def data_dir_outside_the_volume(inv: Inventory) -> None:
    host(inv, "dc1-kafka1")["kafka_data_dirs"] = ["/data/kafka"]


def acl_for_an_undeclared_user(inv: Inventory) -> None:
    group(inv, "dc1")["vars"]["kafka_acls"] = [
        {"principal": "User:orders-writer", "resource_type": "topic", "name": "orders", "operations": ["write"]}
    ]


def secret_empty_on_one_host(inv: Inventory) -> None:
    host(inv, "dc2-kafka2")["kafka_keystore_password"] = ""


def offsets_rf_above_dc2_brokers(inv: Inventory) -> None:
    group(inv, "dc2")["vars"]["kafka_offsets_topic_replication_factor"] = 3


BROKEN = {
    "topic-config-typo": (
        topic_config_typo,
        ["dc1: topic orders: 'retention.msx' is not a topic config of Kafka 3.x (did you mean 'retention.ms'?)"],
    ),
    "broker-id-not-a-number": (broker_id_not_a_number, ["host dc1-kafka2: broker_id='two' is not a whole number"]),
    "extra-property-overrides-min-isr": (
        extra_property_overrides_min_isr,
        [
            "kafka_extra_properties of ['dc2-kafka1', 'dc2-kafka2'] overrides min.insync.replicas: "
            "set kafka_min_insync_replicas instead"
        ],
    ),
    "data-dir-outside-the-volume": (
        data_dir_outside_the_volume,
        [
            "host(s) ['dc1-kafka1']: kafka_data_dirs entry '/data/kafka' is outside the encrypted data volume "
            "['/var/lib/kafka', '/srv/kafkakit/kafka']; put the data directories under one of them (roles/storage)"
        ],
    ),
    "acl-for-an-undeclared-user": (
        acl_for_an_undeclared_user,
        [
            "dc1: kafka_acls[0] is for User:orders-writer, which no declared user has; add orders-writer to "
            "kafka_users or fix the principal (declared: [])"
        ],
    ),
    "secret-empty-on-one-host": (
        secret_empty_on_one_host,
        [
            "kafka_keystore_password is missing or empty on host(s) ['dc2-kafka2']; "
            "every host of ['kafka_broker', 'kafka_controller'] "
            "needs it (set it in group_vars/all, ansible-vault)"
        ],
    ),
    "offsets-rf-above-brokers": (
        offsets_rf_above_dc2_brokers,
        [
            "dc2: offsets.topic.replication.factor=3 is above the broker count 2; "
            "Kafka could not create __consumer_offsets"
        ],
    ),
    "flow-without-mirrormaker-host": (
        flow_without_mirrormaker_host,
        ["mirrormaker_flows[0] (dc1->dc2): dc2 has no mirrormaker host to run the flow (pull model)"],
    ),
    "flow-to-unknown-dc": (
        flow_to_unknown_dc,
        ["mirrormaker_flows[1] (dc1->dc3): target 'dc3' is not a data centre of the inventory ['dc1', 'dc2']"],
    ),
    "mirrormaker-password-missing": (
        mirrormaker_password_missing,
        [
            "missing or empty variable(s) ['kafka_mirrormaker_password']: put the secrets in an ansible-vault file "
            'of the inventory (README, "Secrets") and kafka_pki_ca_dir in its group_vars'
        ],
    ),
    "even-ensemble": (
        add_even_zookeeper,
        [
            "dc1: the ZooKeeper ensemble has an even number of servers (4); "
            "use an odd number so a majority survives a split"
        ],
    ),
    "duplicate-broker-id": (duplicate_broker_id, ["dc1: duplicate broker_id [1]"]),
    "rf-above-brokers": (
        rf_above_brokers,
        [
            "dc2: default replication factor 3 is above the broker count 2",
            "dc2: 2 rack(s) ['dc2-az1', 'dc2-az2'] cannot hold replication factor 3; each replica needs its own rack",
        ],
    ),
    "fewer-racks-than-rf": (
        fewer_racks_than_rf,
        ["dc1: 2 rack(s) ['dc1-az1', 'dc1-az2'] cannot hold replication factor 3; each replica needs its own rack"],
    ),
    "min-isr-not-below-rf": (
        min_isr_equal_to_rf,
        [
            "dc1: min.insync.replicas=3 must be below the replication factor 3, "
            "or one broker down stops every acks=all producer"
        ],
    ),
    "partitions-below-consumers": (
        topic_fewer_partitions_than_consumers,
        ["dc1: topic clicks has 2 partition(s) for 4 declared consumers; the extra consumers would sit idle"],
    ),
    "missing-broker-id": (
        broker_without_id,
        ["host dc2-kafka2 (kafka_broker) is missing required variable(s) ['broker_id']"],
    ),
    "missing-secret": (
        admin_password_missing,
        [
            "missing or empty variable(s) ['kafka_admin_password']: put the secrets in an ansible-vault file of "
            'the inventory (README, "Secrets") and kafka_pki_ca_dir in its group_vars'
        ],
    ),
    "no-brokers": (
        no_brokers,
        "the inventory has no kafka_broker hosts: is it the right inventory (-i)?",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_inventory_is_refused_with_its_message(case, good, tmp_path):
    mutate, expected = BROKEN[case]
    inv = copy.deepcopy(good)
    mutate(inv)
    done = run_preflight(inv, tmp_path)
    assert done.returncode != 0, done.stdout
    assert failure_msg(done.stdout) == expected, done.stdout


# --- a KRaft dc2 (issue 14): the real playbook reads the DC's mode, version and controllers ------


def kraft_dc2(inv: Inventory) -> None:
    """dc2 as the lab's KRaft DC: no ZooKeeper, three dedicated controllers, Kafka 4.x."""
    dc2 = group(inv, "dc2")
    del dc2["hosts"]["dc2-kafka1"]["zookeeper_id"]
    del group(inv, "zookeeper")["hosts"]["dc2-kafka1"]
    del dc2["vars"]["zookeeper_min_ensemble"]
    dc2["vars"].update(
        kafka_metadata_mode="kraft", kafka_version="4.3.1", kafka_share_coordinator_state_topic_replication_factor=2
    )
    controllers = inv["all"]["children"].setdefault("kafka_controller", {"hosts": {}})
    for i in (1, 2, 3):
        name = f"dc2-controller{i}"
        dc2["hosts"][name] = {
            "dc": "dc2",
            "kafka_rack": f"dc2-az{i}",
            "private_ip": f"10.99.0.3{i}",
            "controller_id": 100 + i,
        }
        controllers["hosts"][name] = {}


def kraft_then(*changes: Mutation) -> Mutation:
    def mutate(inv: Inventory) -> None:
        kraft_dc2(inv)
        for change in changes:
            change(inv)

    return mutate


def test_a_kraft_dc_beside_a_zookeeper_dc_passes(good, tmp_path):
    inv = copy.deepcopy(good)
    kraft_dc2(inv)
    done = run_preflight(inv, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed=0" in done.stdout


KRAFT_BROKEN = {
    "even-quorum": (
        kraft_then(lambda inv: group(inv, "kafka_controller")["hosts"].pop("dc2-controller3")),
        [
            "dc2: the KRaft controller quorum has 2 controller(s); at least 3 are needed",
            "dc2: the KRaft controller quorum has an even number of controllers (2); "
            "use an odd number so a majority survives a split",
        ],
    ),
    "node-id-clash": (
        kraft_then(lambda inv: host(inv, "dc2-controller1").update(controller_id=1)),
        [
            "dc2: node id(s) [1] belong to a broker and a controller; broker_id and controller_id are both "
            "node.id and must be unique in the data centre (controllers count from 101)"
        ],
    ),
    "kraft-on-3.8": (
        kraft_then(lambda inv: group(inv, "dc2")["vars"].update(kafka_version="3.8.1")),
        [
            "dc2: KRaft mode runs Kafka 4.x, not 3.8.1; set kafka_version to a 4.x release (a ZooKeeper data "
            "centre on 3.x moves to KRaft through the migration, not by switching the mode)"
        ],
    ),
    "zookeeper-variable-left-in-kraft-dc": (
        kraft_then(lambda inv: group(inv, "dc2")["vars"].update(zookeeper_min_ensemble=1)),
        ["dc2: ZooKeeper setting(s) ['zookeeper_min_ensemble'] in a KRaft data centre; remove them"],
    ),
    "missing-controller-id": (
        kraft_then(lambda inv: host(inv, "dc2-controller2").pop("controller_id")),
        ["host dc2-controller2 (kafka_controller) is missing required variable(s) ['controller_id']"],
    ),
}


@pytest.mark.parametrize("case", list(KRAFT_BROKEN))
def test_broken_kraft_inventory_is_refused_with_its_message(case, good, tmp_path):
    mutate, expected = KRAFT_BROKEN[case]
    inv = copy.deepcopy(good)
    mutate(inv)
    done = run_preflight(inv, tmp_path)
    assert done.returncode != 0, done.stdout
    assert failure_msg(done.stdout) == expected, done.stdout


# --- the lab's own inventory passes; a refused inventory stops site.yml before any host -------------


def test_the_lab_inventory_with_its_group_vars_passes(tmp_path):
    # The lab's hosts (lab-config.yml, as lab-up.yml writes them) beside a copy of its real
    # group_vars: its topics, users, ACLs and generated secrets pass every input rule. The copy
    # sits two levels down so the generated secrets land in tmp_path/build, not the checkout's.
    from kafkakit.rules.inventory import HostRecord, build_inventory

    config = yaml.safe_load((ANSIBLE_DIR / "lab" / "lab-config.yml").read_text())
    records = [
        HostRecord(
            h["name"],
            h["dc"],
            h["rack"],
            h["ip"],
            tuple(h["roles"]),
            broker_id=h.get("broker_id"),
            zookeeper_id=h.get("zookeeper_id"),
            controller_id=h.get("controller_id"),
        )
        for h in config["lab_hosts"]
    ]
    inventory = tmp_path / "inventories" / "local"
    shutil.copytree(REPO / "inventories" / "local" / "group_vars", inventory / "group_vars")
    (inventory / "hosts.yml").write_text(yaml.safe_dump(build_inventory(records), sort_keys=False))
    done = run_playbook(inventory, "preflight.yml", tmp_path=tmp_path, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed=0" in done.stdout
    assert sorted(p.name for p in (tmp_path / "build" / "lab" / "secrets").iterdir())  # lookups ran there


def test_a_refused_inventory_stops_site_yml_before_any_host(good, tmp_path):
    inv = copy.deepcopy(good)
    topic_config_typo(inv)
    # Should a later play start anyway, it could only reach a closed port on loopback.
    inv["all"]["vars"].update(ansible_host="127.0.0.1", ansible_port=1, ansible_connection="ssh")
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    done = run_playbook(path, "site.yml", tmp_path=tmp_path, timeout=180)
    assert done.returncode != 0
    assert "retention.msx" in str(failure_msg(done.stdout))
    plays = [line for line in done.stdout.splitlines() if line.startswith("PLAY [")]
    assert plays == ["PLAY [Preflight checks] " + "*" * (len(plays[0]) - len("PLAY [Preflight checks] "))], plays
    recap = done.stdout.split("PLAY RECAP", 1)[1]
    assert "localhost" in recap and "dc1-kafka1" not in recap

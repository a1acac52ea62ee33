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


def in_order(*steps: Mutation) -> Mutation:
    def mutate(inv: Inventory) -> None:
        for step in steps:
            step(inv)

    return mutate


def kraft_then(*changes: Mutation) -> Mutation:
    return in_order(kraft_dc2, *changes)


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


# --- values, not only names (issue 47): typos in values are refused before any host -------------------


def with_extra(dc: str, variable: str, **properties: object) -> Mutation:
    return lambda inv: group(inv, dc)["vars"].update(
        {variable: {k.replace("_", "."): v for k, v in properties.items()}}
    )


def dc_vars(dc: str, **variables: object) -> Mutation:
    return lambda inv: group(inv, dc)["vars"].update(variables)


def all_vars(**variables: object) -> Mutation:
    return lambda inv: inv["all"]["vars"].update(variables)


DC1_BROKERS = "['dc1-kafka1', 'dc1-kafka2', 'dc1-kafka3']"
VALUE_BROKEN = {
    "extra-property-not-a-number": (
        with_extra("dc1", "kafka_extra_properties", num_network_threads="eight"),
        [
            f"kafka_extra_properties of {DC1_BROKERS}: num.network.threads='eight' is not a whole number "
            "(Kafka 3.x defines num.network.threads as INT [1,...])"
        ],
    ),
    "extra-property-out-of-range": (
        with_extra("dc1", "kafka_extra_properties", background_threads=0),
        [f"kafka_extra_properties of {DC1_BROKERS}: background.threads=0 is outside Kafka's range [1,...] (Kafka 3.x)"],
    ),
    "extra-property-negative-retention": (
        with_extra("dc1", "kafka_extra_properties", log_retention_hours=-5),
        [
            f"kafka_extra_properties of {DC1_BROKERS}: log.retention.hours=-5 is negative: Kafka reads any negative "
            "value as no limit; write -1 if that is meant"
        ],
    ),
    "extra-property-not-a-choice": (
        with_extra("dc1", "kafka_extra_properties", compression_type="zip"),
        [
            f"kafka_extra_properties of {DC1_BROKERS}: compression.type='zip' is not one of Kafka's ['uncompressed', "
            "'zstd', 'lz4', 'snappy', 'gzip', 'producer'] (did you mean 'gzip'?) (Kafka 3.x)"
        ],
    ),
    "kit-number-as-text": (
        dc_vars("dc1", kafka_num_network_threads="eight"),
        [
            f"kafka_num_network_threads='eight' on {DC1_BROKERS}: argument 'kafka_num_network_threads' is of type str "
            "and we were unable to convert to int: \"'eight'\" cannot be converted to an int "
            "(roles/kafka_broker/meta/argument_specs.yml)"
        ],
    ),
    "kit-number-outside-kafkas-range": (
        dc_vars("dc1", kafka_num_io_threads=0),
        [
            f"kafka_num_io_threads=0 on {DC1_BROKERS} is outside Kafka's range [1,...] (Kafka 3.x); the kit writes it "
            "as num.io.threads"
        ],
    ),
    "kit-boolean-yes": (
        dc_vars("dc1", kafka_auto_create_topics="yes"),
        [
            f"kafka_auto_create_topics='yes' on {DC1_BROKERS} is not true or false (Kafka 3.x defines "
            "auto.create.topics.enable as BOOLEAN); the kit writes it as auto.create.topics.enable"
        ],
    ),
    "kit-choice": (
        dc_vars("dc1", kafka_log_cleanup_policy="compacted"),
        [
            f"kafka_log_cleanup_policy='compacted' on {DC1_BROKERS}: value of kafka_log_cleanup_policy must be one of: "
            "delete, compact, compact,delete, got: compacted (roles/kafka_broker/meta/argument_specs.yml)"
        ],
    ),
    "inter-broker-protocol-version": (
        dc_vars("dc1", kafka_inter_broker_protocol_version="3.10"),
        [
            f"kafka_inter_broker_protocol_version='3.10' on {DC1_BROKERS} is not one of Kafka's 57 values ['0.8.0', "
            "'0.8.1', '0.8.2'] ... ['3.9-IV0', '4.0-IV0', '4.0-IV1'] (did you mean '3.1-IV0'?) (Kafka 3.x); the kit "
            "writes it as inter.broker.protocol.version"
        ],
    ),
    "metadata-mode-typo": (
        dc_vars("dc2", kafka_metadata_mode="Kraft"),
        [
            "kafka_metadata_mode='Kraft' on ['dc2-kafka1', 'dc2-kafka2']: value of kafka_metadata_mode must be one "
            "of: zookeeper, kraft, got: Kraft (roles/kafka_common/meta/argument_specs.yml)"
        ],
    ),
    "port-out-of-range": (
        all_vars(kafka_client_port=99999),
        [
            "kafka_client_port=99999 on ['dc1-kafka1', 'dc1-kafka2', 'dc1-kafka3', 'dc2-kafka1', 'dc2-kafka2'] is not "
            "a TCP port (a whole number 1..65535)"
        ],
    ),
    "rack-not-a-name": (
        lambda inv: host(inv, "dc1-kafka1").update(kafka_rack=["dc1-az1"]),
        ["host dc1-kafka1: kafka_rack=['dc1-az1'] is not a name; give one word, like dc1 or dc1-az1"],
    ),
    # Security: what would weaken the cluster is refused (these by the rule that keeps the kit's settings).
    "super-user-everyone": (
        all_vars(kafka_super_users=["dc1:brokers", "*"]),
        [
            "kafka_super_users on ['dc1-kafka1', 'dc1-kafka2', 'dc1-kafka3', 'dc2-kafka1', 'dc2-kafka2'] names ['*']: "
            "every principal (or every unauthenticated client) would be a super user, to whom no ACL applies; name "
            "the users"
        ],
    ),
    "admin-client-off-tls": (
        all_vars(
            kafka_admin_client_config={
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanisms": "SCRAM-SHA-512",
                "sasl.username": "admin",
                "sasl.password": "placeholder",
            }
        ),
        [
            "kafka_admin_client_config on ['dc1-kafka1', 'dc1-kafka2', 'dc1-kafka3', 'dc2-kafka1', 'dc2-kafka2'] sets "
            "security.protocol='SASL_PLAINTEXT': the admin client must use SASL_SSL (the kit's brokers take the "
            "admin's password over TLS only, with their certificate and name checked)"
        ],
    ),
    "client-auth-none": (
        with_extra("dc1", "kafka_extra_properties", ssl_client_auth="none"),
        [
            f"kafka_extra_properties of {DC1_BROKERS} overrides ssl.client.auth: the kit sets it for security or "
            "durability and keeps it"
        ],
    ),
    "allow-everyone": (
        with_extra("dc1", "kafka_extra_properties", allow_everyone_if_no_acl_found=True),
        [
            f"kafka_extra_properties of {DC1_BROKERS} overrides allow.everyone.if.no.acl.found: the kit sets it for "
            "security or durability and keeps it"
        ],
    ),
    # Client quotas Kafka would refuse, a user's and a default, one line each.
    "quota-not-above-zero": (
        dc_vars("dc1", kafka_users=[{"name": "app1", "password": "placeholder", "quotas": {"producer_byte_rate": 0}}]),
        [
            "dc1: kafka_users[0] (app1): producer_byte_rate=0 must be above 0 (Kafka refuses a quota of 0 or less; "
            "to lift a quota, remove it)"
        ],
    ),
    "quota-default-key-typo": (
        dc_vars("dc2", kafka_user_quota_defaults={"consumer_bytes_rate": 1048576}),
        [
            "dc2: kafka_user_quota_defaults: unknown quota 'consumer_bytes_rate' (did you mean 'consumer_byte_rate'?); "
            "Kafka's user quotas are producer_byte_rate, consumer_byte_rate, request_percentage, "
            "controller_mutation_rate"
        ],
    ),
}


@pytest.mark.parametrize("case", list(VALUE_BROKEN))
def test_a_value_typo_is_refused_with_its_message(case, good, tmp_path):
    mutate, expected = VALUE_BROKEN[case]
    inv = copy.deepcopy(good)
    mutate(inv)
    done = run_preflight(inv, tmp_path)
    assert done.returncode != 0, done.stdout
    assert failure_msg(done.stdout) == expected, done.stdout


def whole_kit(inv: Inventory) -> None:
    """Every component the values reach: dc2 in KRaft mode with its controllers, a Connect cluster
    in dc1, MirrorMaker 2 in dc2 mirroring dc1."""
    kraft_dc2(inv)
    mirrormaker_host(inv)
    inv["all"]["vars"].update(
        kafka_mirrormaker_password="placeholder",
        mirrormaker_flows=[FLOW],
        kafka_connect_password="placeholder",
        kafka_connect_keystore_password="placeholder",
    )
    workers = inv["all"]["children"].setdefault("kafka_connect", {"hosts": {}})
    for i in (1, 2):
        name = f"dc1-connect-{i}"
        group(inv, "dc1")["hosts"][name] = {"dc": "dc1", "kafka_rack": f"dc1-az{i}", "private_ip": f"10.99.0.4{i}"}
        workers["hosts"][name] = {}


def whole_kit_then(*changes: Mutation) -> Mutation:
    return in_order(whole_kit, *changes)


def test_valid_neighbours_of_every_refused_value_pass(good, tmp_path):
    inv = copy.deepcopy(good)
    whole_kit(inv)
    with_extra("dc1", "kafka_extra_properties", num_network_threads="8", background_threads=4, log_retention_hours=-1)(
        inv
    )
    with_extra("dc2", "kafka_controller_extra_properties", controller_quorum_fetch_timeout_ms=2000)(inv)
    dc_vars("dc1", kafka_auto_create_topics=False, kafka_log_cleanup_policy="compact,delete", kafka_num_io_threads=4)(
        inv
    )
    dc_vars("dc2", kafka_log_segment_bytes=1048576, kafka_user_quota_defaults={"consumer_byte_rate": "1048576"})(inv)
    dc_vars("dc1", kafka_users=[{"name": "app1", "password": "placeholder", "quotas": {"request_percentage": 12.5}}])(
        inv
    )
    all_vars(
        kafka_client_port=9093,
        kafka_connect_plugin_discovery="hybrid_warn",
        kafka_connect_extra_properties={"offset.flush.interval.ms": 5000},
        mirrormaker_sync_group_offsets=True,
        mirrormaker_extra_properties={"replication.factor": 2, "dc1->dc2.tasks.max": 4},
        kafka_super_users=["dc1:brokers", "admin"],
    )(inv)
    done = run_preflight(inv, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed=0" in done.stdout


CONNECT_WORKERS = "['dc1-connect-1', 'dc1-connect-2']"
WHOLE_KIT_BROKEN = {
    "controller-property-as-text": (
        whole_kit_then(with_extra("dc2", "kafka_controller_extra_properties", controller_quorum_fetch_timeout_ms="2s")),
        [
            "kafka_controller_extra_properties of ['dc2-controller1', 'dc2-controller2', 'dc2-controller3']: "
            "controller.quorum.fetch.timeout.ms='2s' is not a whole number (Kafka 4.x defines "
            "controller.quorum.fetch.timeout.ms as INT [0,...])"
        ],
    ),
    "segment-bytes-below-4x-minimum": (
        whole_kit_then(dc_vars("dc2", kafka_log_segment_bytes=1000)),
        [
            "kafka_log_segment_bytes=1000 on ['dc2-kafka1', 'dc2-kafka2'] is outside Kafka's range [1048576,...] "
            "(Kafka 4.x); the kit writes it as log.segment.bytes"
        ],
    ),
    "connect-worker-setting-as-text": (
        whole_kit_then(all_vars(kafka_connect_extra_properties={"offset.flush.interval.ms": "5s"})),
        [
            f"kafka_connect_extra_properties of {CONNECT_WORKERS}: offset.flush.interval.ms='5s' is not a whole number "
            "(Kafka 4.x defines offset.flush.interval.ms as LONG)"
        ],
    ),
    "connect-plugin-discovery-typo": (
        whole_kit_then(all_vars(kafka_connect_plugin_discovery="serviceload")),
        [
            f"kafka_connect_plugin_discovery='serviceload' on {CONNECT_WORKERS}: value of "
            "kafka_connect_plugin_discovery must be one of: only_scan, hybrid_warn, hybrid_fail, service_load, got: "
            "serviceload (roles/kafka_connect/meta/argument_specs.yml)"
        ],
    ),
    "connect-client-setting-as-text": (
        whole_kit_then(all_vars(kafka_connect_extra_properties={"producer.linger.ms": "5ms"})),
        [
            f"kafka_connect_extra_properties of {CONNECT_WORKERS}: producer.linger.ms='5ms' is not a whole number "
            "(Kafka 4.x defines linger.ms as LONG [0,...])"
        ],
    ),
    "mirrormaker-setting-as-text": (
        whole_kit_then(all_vars(mirrormaker_extra_properties={"replication.factor": "three"})),
        [
            "mirrormaker_extra_properties of ['dc2-mm2-1']: replication.factor='three' is not a whole number "
            "(Kafka 4.x defines replication.factor as INT)"
        ],
    ),
    "mirrormaker-boolean-yes": (
        whole_kit_then(all_vars(mirrormaker_sync_group_offsets="yes")),
        [
            "mirrormaker_sync_group_offsets='yes' on ['dc2-mm2-1'] is not true or false (Kafka 4.x defines "
            "sync.group.offsets.enabled as BOOLEAN); the kit writes it as sync.group.offsets.enabled"
        ],
    ),
    "mirrormaker-plain-http-rest": (
        whole_kit_then(all_vars(mirrormaker_extra_properties={"dedicated.mode.enable.internal.rest": True})),
        [
            "mirrormaker_extra_properties of ['dc2-mm2-1'] overrides dedicated.mode.enable.internal.rest: the kit sets "
            "it for security or durability and keeps it"
        ],
    ),
    "connect-plain-http-listener": (
        whole_kit_then(all_vars(kafka_connect_extra_properties={"listeners": "http://0.0.0.0:8083"})),
        [
            f"kafka_connect_extra_properties of {CONNECT_WORKERS} overrides listeners: the kit sets it for security or "
            "durability and keeps it"
        ],
    ),
}


def test_the_whole_kit_passes(good, tmp_path):
    inv = copy.deepcopy(good)
    whole_kit(inv)
    done = run_preflight(inv, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("case", list(WHOLE_KIT_BROKEN))
def test_a_value_typo_anywhere_in_the_kit_is_refused_with_its_message(case, good, tmp_path):
    mutate, expected = WHOLE_KIT_BROKEN[case]
    inv = copy.deepcopy(good)
    mutate(inv)
    done = run_preflight(inv, tmp_path)
    assert done.returncode != 0, done.stdout
    assert failure_msg(done.stdout) == expected, done.stdout

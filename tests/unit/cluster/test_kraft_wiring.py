"""KRaft wired into the deployment: the lab's inventory shape (dc1 ZooKeeper, dc2 KRaft), the
preflight's secrets per metadata mode, the controllers' roll order, broker health without an
active controller, and site.yml's play order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kafkakit.cluster.admin import ClusterHealth
from kafkakit.cluster.kraft import controller_roll_order, quorum_health
from kafkakit.rules.inventory import missing_variables, preflight_errors
from kafkakit.rules.topology import FIRST_CONTROLLER_ID

ROOT = Path(__file__).resolve().parents[3]


def lab_config() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "ansible/lab/lab-config.yml").read_text())


def lab_inventory() -> dict:
    from kafkakit.rules import inventory

    hosts = [
        inventory.HostRecord(
            name=h["name"],
            dc=h["dc"],
            rack=h["rack"],
            private_ip=h["ip"],
            roles=tuple(h["roles"]),
            broker_id=h.get("broker_id"),
            zookeeper_id=h.get("zookeeper_id"),
            controller_id=h.get("controller_id"),
        )
        for h in lab_config()["lab_hosts"]
    ]
    return inventory.build_inventory(hosts)


def play_view(group_vars: dict[str, dict]) -> tuple[dict[str, list[str]], dict[str, dict]]:
    """groups and hostvars as a play sees the lab: host facts plus inventories/local group_vars."""
    children = lab_inventory()["all"]["children"]
    groups = {g: list(body.get("hosts") or {}) for g, body in children.items()}
    groups["all"] = [h for dc in ("dc1", "dc2") for h in groups[dc]]
    hostvars = {}
    for dc in ("dc1", "dc2"):
        for h, hv in children[dc]["hosts"].items():
            hostvars[h] = {**group_vars.get("all", {}), **group_vars.get(dc, {}), **hv}
    return groups, hostvars


def lab_group_vars() -> dict[str, dict]:
    folder = ROOT / "inventories/local/group_vars"
    return {p.stem: yaml.safe_load(p.read_text()) or {} for p in folder.glob("*.yml")}


def test_the_lab_runs_dc1_on_zookeeper_and_dc2_on_kraft_with_three_controllers():
    groups, _ = play_view({})
    dc2 = set(groups["dc2"])
    assert [h for h in groups["zookeeper"] if h in dc2] == [], "dc2 is KRaft: no ZooKeeper there"
    assert len([h for h in groups["zookeeper"] if h in set(groups["dc1"])]) == 3
    controllers = [h for h in groups["kafka_controller"] if h in dc2]
    assert controllers == ["dc2-controller1", "dc2-controller2", "dc2-controller3"]
    hosts = {h["name"]: h for h in lab_config()["lab_hosts"]}
    assert len({hosts[c]["rack"] for c in controllers}) == 3, "one controller per rack"
    assert [hosts[c]["controller_id"] for c in controllers] == [FIRST_CONTROLLER_ID + i for i in range(3)]
    ips = [h["ip"] for h in lab_config()["lab_hosts"] + lab_config()["lab_spare_hosts"]]
    assert len(ips) == len(set(ips))
    gv = lab_group_vars()
    assert gv["dc2"]["kafka_metadata_mode"] == "kraft" and str(gv["dc2"]["kafka_version"]).startswith("4.")
    assert "kafka_metadata_mode" not in gv["dc1"] and "zookeeper_min_ensemble" not in gv["dc2"]
    assert gv["dc2"]["kafka_controller_heap"] == "256m"


def roles_defaults() -> dict[str, Any]:
    """The roles' plain defaults (those that need no templating): the service users among them."""
    merged: dict[str, Any] = {}
    for path in sorted((ROOT / "roles").glob("*/defaults/main.yml")):
        merged.update({k: v for k, v in (yaml.safe_load(path.read_text()) or {}).items() if "{{" not in str(v)})
    return merged


def test_the_lab_passes_the_topology_rules():
    gv = lab_group_vars()
    gv["all"] = {k: v for k, v in gv["all"].items() if "lookup(" not in str(v)}
    groups, hostvars = play_view(gv)
    # With the roles' defaults, as the preflight runs: the kit's service users (spark, ...) are known.
    assert preflight_errors(groups, hostvars, roles_defaults()) == []


SECRETS = {
    "kafka_admin_password": "a",
    "kafka_keystore_password": "k",
    "kafka_zookeeper_password": "z",
    "zookeeper_keystore_password": "zk",
    "kafka_pki_ca_passphrase": "p",
    "kafka_pki_ca_dir": "/ca",
}


def kraft_only_view(secrets: dict[str, str]) -> tuple[dict[str, list[str]], dict[str, dict]]:
    groups = {
        "all": ["c1", "c2", "c3", "b1"],
        "dc2": ["c1", "c2", "c3", "b1"],
        "kafka_controller": ["c1", "c2", "c3"],
        "kafka_broker": ["b1"],
        "zookeeper": [],
    }
    hostvars = {h: {"kafka_metadata_mode": "kraft", **secrets} for h in groups["all"]}
    return groups, hostvars


def test_a_kraft_only_inventory_needs_no_zookeeper_secret():
    secrets = {k: v for k, v in SECRETS.items() if "zookeeper" not in k}
    assert missing_variables(*kraft_only_view(secrets)) == []


def test_a_zookeeper_dc_still_needs_the_zookeeper_password():
    secrets = {k: v for k, v in SECRETS.items() if k != "kafka_zookeeper_password"}
    groups = {"all": ["b1", "z1"], "dc1": ["b1", "z1"], "kafka_broker": ["b1"], "zookeeper": ["z1"]}
    hostvars = {h: dict(secrets) for h in groups["all"]}  # no mode: kafka_common's default, zookeeper
    assert any("kafka_zookeeper_password" in e for e in missing_variables(groups, hostvars))


def test_the_controllers_need_the_admin_and_keystore_passwords():
    groups, hostvars = kraft_only_view({k: v for k, v in SECRETS.items() if "zookeeper" not in k})
    del hostvars["c2"]["kafka_keystore_password"]
    errors = missing_variables(groups, hostvars)
    assert len(errors) == 1 and "kafka_keystore_password" in errors[0] and "c2" in errors[0]


def test_the_controllers_roll_the_quorum_leader_last():
    ids = {"c1": 101, "c2": 102, "c3": 103}
    assert controller_roll_order(["c1", "c2", "c3"], ids, 101) == ["c2", "c3", "c1"]
    assert controller_roll_order(["c1", "c2", "c3"], ids, 103) == ["c1", "c2", "c3"]
    # Only some hosts marked (a config change on two of them): the leader still last among them.
    assert controller_roll_order(["c2", "c1"], ids, 102) == ["c1", "c2"]
    # No leader known (-1): the given order; the roll's health gate refuses it anyway.
    assert controller_roll_order(["c1", "c2"], ids, -1) == ["c1", "c2"]


def test_the_roll_order_follows_the_parsed_leader():
    status = (
        "LeaderId: 102\n"
        'CurrentVoters: [{"id": 101}, {"id": 102}, {"id": 103}]\n'
        'CurrentObservers: [{"id": 1}, {"id": 2}]\n'
    )
    replication = (
        "NodeId DirectoryId LogEndOffset Lag LastFetchTimestamp LastCaughtUpTimestamp Status\n"
        "102 d2 900 0 1 1 Leader\n101 d1 900 0 1 1 Follower\n103 d3 899 1 1 1 Follower\n"
        "1 b1 900 0 1 1 Observer\n2 b2 900 0 1 1 Observer\n"
    )
    health = quorum_health(status, replication, [101, 102, 103], 20)
    assert health.problems == [] and health.observers == [1, 2]
    order = controller_roll_order(["c1", "c2", "c3"], {"c1": 101, "c2": 102, "c3": 103}, health.leader)
    assert order == ["c1", "c3", "c2"]


def test_kraft_broker_health_needs_no_active_controller():
    kraft = ClusterHealth(brokers=[1, 2], controller=-1, kraft=True)
    assert kraft.healthy([1, 2]) and not kraft.healthy([1, 2, 3])
    assert not ClusterHealth(brokers=[1, 2], controller=-1).healthy([1, 2]), "ZooKeeper mode still needs one"
    assert not ClusterHealth(brokers=[1, 2], under_replicated=["t-0"], kraft=True).healthy([1, 2])
    assert ClusterHealth(kraft=True).as_dict()["kraft"] is True


def site_plays(playbook: str = "site.yml") -> list[dict]:
    """The plays of an ansible/ playbook, those of the playbooks it imports in their place."""
    plays: list[dict] = []
    for p in yaml.safe_load((ROOT / "ansible" / playbook).read_text()):
        imported = p.get("ansible.builtin.import_playbook", p.get("import_playbook"))
        if imported:
            plays += site_plays(imported)
        elif "hosts" in p:
            plays.append(p)
    return plays


def test_site_runs_the_controllers_after_their_hosts_are_ready_and_before_the_brokers():
    plays = site_plays()
    names = [p["name"] for p in plays]
    controllers = names.index("KRaft controller quorums")
    assert plays[controllers]["hosts"] == "kafka_controller" and plays[controllers]["any_errors_fatal"] is True
    assert controllers < names.index("Kafka brokers")
    for prep in ("Java runtime", "Host certificates", "Encrypted data volumes"):
        assert names.index(prep) < controllers
        assert "kafka_controller" in plays[names.index(prep)]["hosts"].split(":")
    assert "kafka_controller" in plays[names.index("Node exporter on every host Prometheus scrapes")]["hosts"]


def test_the_upgrade_rolls_controllers_then_brokers_then_moves_the_features():
    plays = yaml.safe_load((ROOT / "ansible/ops/upgrade.yml").read_text())
    names = [p["name"] for p in plays]
    assert (
        names.index("Install the new version on the controllers and roll them")
        < names.index("Install the new version and roll it out")
        < names.index("Move the KRaft features to the new release")
    )

"""Stack outputs -> inventories/aws -> Ansible: the inventory the roles and the preflight expect."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from stack_harness import ROOT, StackRun

from kafkakit.rules.inventory import COMPONENT_GROUPS, build_inventory, preflight_errors, topology_from_inventory
from kafkakit.rules.topology import validate

SCRIPT = ROOT / "inventories" / "aws" / "pulumi_stack.py"
REQUIRED_HOSTVARS = {"ansible_host", "dc", "kafka_rack", "private_ip", "private_dns"}
MAGIC = {
    "inventory_file",
    "inventory_dir",
    "inventory_hostname",
    "inventory_hostname_short",
    "group_names",
}


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("aws_inventory_script", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def saved_outputs(tmp_path: Path, small: StackRun) -> Path:
    """What `pulumi stack output --json > outputs.json` saves for the small stack."""
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(small.outputs))
    return path


def run_script(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], **env},
        check=False,
    )


def ansible_view(source: Path, env: dict[str, str] | None = None) -> tuple[dict, dict, dict]:
    """(groups -> hosts, host -> host vars, all vars) as Ansible itself loads `source`."""
    from ansible.inventory.helpers import get_group_vars
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.utils.vars import combine_vars

    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        inv = InventoryManager(loader=DataLoader(), sources=[str(source)])
    finally:
        os.environ.clear()
        os.environ.update(old)
    groups = {
        name: sorted(h.name for h in g.get_hosts())
        for name, g in inv.groups.items()
        if name not in ("all", "ungrouped")
    }
    # Host variables as a play sees them from the inventory: its groups' variables (a DC's
    # kafka_metadata_mode), then its own.
    hostvars = {
        h.name: {k: v for k, v in combine_vars(get_group_vars(h.get_groups()), h.get_vars()).items() if k not in MAGIC}
        for h in inv.get_hosts()
    }
    return groups, hostvars, inv.groups["all"].get_vars()


def test_the_script_is_an_executable_ansible_inventory_script() -> None:
    assert os.access(SCRIPT, os.X_OK)
    assert SCRIPT.read_text().startswith("#!/usr/bin/env python3\n")


def test_list_turns_the_saved_outputs_into_script_json(saved_outputs: Path, small: StackRun) -> None:
    done = run_script("--list", env={"KAFKAKIT_PULUMI_OUTPUTS": str(saved_outputs)})
    assert done.returncode == 0, done.stderr
    inv = json.loads(done.stdout)
    assert set(inv["all"]["children"]) == {*COMPONENT_GROUPS, "dc1", "dc2"}
    assert inv["all"]["vars"]["ansible_connection"] == "community.aws.aws_ssm"
    brokers = inv["kafka_broker"]["hosts"]
    assert sorted(brokers) == [f"dc{d}-kafka-{i}" for d in (1, 2) for i in (1, 2, 3)]
    for host in brokers:
        hv = inv["_meta"]["hostvars"][host]
        assert REQUIRED_HOSTVARS | {"broker_id", "ansible_aws_ssm_instance_id"} <= set(hv)
        assert hv["kafka_rack"].startswith("eu-") and host in inv[hv["dc"]]["hosts"]
    for host in inv["zookeeper"]["hosts"]:
        assert "zookeeper_id" in inv["_meta"]["hostvars"][host]

    host = run_script("--host", "dc2-mm2-1", env={"KAFKAKIT_PULUMI_OUTPUTS": str(saved_outputs)})
    assert json.loads(host.stdout) == inv["_meta"]["hostvars"]["dc2-mm2-1"]


def test_ansible_sees_the_same_inventory_as_the_lab_shaped_yaml(
    saved_outputs: Path, small: StackRun, tmp_path: Path
) -> None:
    # The lab provisioner writes build_inventory's document as YAML; the AWS path must load
    # into exactly the same groups, host variables and connection variables.
    lab_style = tmp_path / "hosts.yml"
    lab_style.write_text(yaml.safe_dump(small.outputs["inventory"]))
    via_script = ansible_view(ROOT / "inventories" / "aws", {"KAFKAKIT_PULUMI_OUTPUTS": str(saved_outputs)})
    assert via_script == ansible_view(lab_style)

    groups, hostvars, all_vars = via_script
    assert set(groups) == {*COMPONENT_GROUPS, "dc1", "dc2"}
    assert groups["mirrormaker"] == ["dc2-mm2-1"] and groups["spark_master"] == ["dc1-spark-master"]
    assert all(REQUIRED_HOSTVARS <= set(hv) for hv in hostvars.values())
    assert all_vars["ansible_connection"] == "community.aws.aws_ssm"


def test_the_preflight_accepts_the_topology_ansible_loads(saved_outputs: Path) -> None:
    groups, hostvars, _ = ansible_view(ROOT / "inventories" / "aws", {"KAFKAKIT_PULUMI_OUTPUTS": str(saved_outputs)})
    groups["all"] = sorted(hostvars)
    topology = topology_from_inventory(groups, hostvars, defaults={})
    assert validate(topology) == []
    dc1 = topology.clusters[0]
    assert dc1.name == "dc1" and len({b.rack for b in dc1.brokers}) == 3
    assert sorted(z.node_id for z in dc1.zookeepers) == [1, 2, 3]


def test_every_preflight_rule_accepts_the_inventory_ansible_loads(saved_outputs: Path) -> None:
    # The whole preflight (issue 16's input rules too), with the role defaults the playbook loads.
    groups, hostvars, _ = ansible_view(ROOT / "inventories" / "aws", {"KAFKAKIT_PULUMI_OUTPUTS": str(saved_outputs)})
    groups["all"] = sorted(hostvars)
    defaults: dict[str, Any] = {}
    for role in ("kafka_common", "storage", "kafka_broker", "zookeeper"):
        defaults.update(yaml.safe_load((ROOT / "roles" / role / "defaults" / "main.yml").read_text()))
    defaults.pop("kafka_version")  # as ansible/preflight.yml loads them
    assert preflight_errors(groups, hostvars, defaults) == []


def test_hostvars_match_the_registered_instances(small: StackRun) -> None:
    doc = small.outputs["inventory"]["all"]["children"]
    for inst in small.of("aws:ec2/instance:Instance"):
        name = inst.name
        hv = doc[inst.inputs["tags"]["DataCentre"]]["hosts"][name]
        assert hv["private_ip"] == hv["ansible_host"] == inst.state["privateIp"]
        assert hv["private_dns"] == inst.state["privateDns"]
        assert hv["kafka_rack"] == inst.inputs["availabilityZone"]
        assert hv["ansible_aws_ssm_instance_id"] == inst.id
        assert hv["ansible_aws_ssm_region"] == inst.region
        assert name in doc[inst.inputs["tags"]["Role"]]["hosts"]


def test_the_document_is_exactly_what_build_inventory_makes(small: StackRun) -> None:
    from kafkakit.rules.inventory import HostRecord

    doc = small.outputs["inventory"]
    records = []
    for group in COMPONENT_GROUPS:
        for name in doc["all"]["children"][group]["hosts"]:
            hv = dict(
                next(
                    doc["all"]["children"][dc]["hosts"][name]
                    for dc in ("dc1", "dc2")
                    if name in doc["all"]["children"][dc]["hosts"]
                )
            )
            core = {k: hv.pop(k) for k in ("ansible_host", "dc", "kafka_rack", "private_ip", "private_dns")}
            records.append(
                HostRecord(
                    name=name,
                    dc=core["dc"],
                    rack=core["kafka_rack"],
                    private_ip=core["private_ip"],
                    roles=(group,),
                    private_dns=core["private_dns"],
                    ansible_host=core["ansible_host"],
                    broker_id=hv.pop("broker_id", None),
                    zookeeper_id=hv.pop("zookeeper_id", None),
                    controller_id=hv.pop("controller_id", None),
                    extra=hv,
                )
            )
    dc_vars = {dc: doc["all"]["children"][dc]["vars"] for dc in ("dc1", "dc2")}
    rebuilt = build_inventory(records, doc["all"]["vars"], dc_vars)
    assert json.loads(json.dumps(rebuilt)) == doc


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda p: None, "KAFKAKIT_PULUMI_OUTPUTS={p}: no such file"),
        (lambda p: p.write_text("not json"), "{p}: not JSON"),
        (lambda p: p.write_text(json.dumps({"vpcId": "x"})), "the stack has no `inventory` output"),
        (
            lambda p: p.write_text(json.dumps({"inventory": {}})),
            "the `inventory` output has no `all`",
        ),
    ],
)
def test_bad_outputs_fail_with_a_clear_message(tmp_path: Path, setup: Any, message: str) -> None:
    path = tmp_path / "outputs.json"
    setup(path)
    done = run_script("--list", env={"KAFKAKIT_PULUMI_OUTPUTS": str(path)})
    assert done.returncode == 1 and done.stdout == ""
    assert message.format(p=path) in done.stderr


def test_without_saved_outputs_it_asks_the_pulumi_cli(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "pulumi").write_text(
        '#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\n'
        'echo \'{"inventory": {"all": {"children": {"dc1": {"hosts": {"h1": {"dc": "dc1"}}}}}}}\'\n'
    )
    (fake / "pulumi").chmod(0o755)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--list"],
        capture_output=True,
        text=True,
        env={"PATH": f"{fake}:{os.environ['PATH']}", "KAFKAKIT_PULUMI_STACK": "small"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["dc1"]["hosts"] == ["h1"]
    assert (fake / "args").read_text().split() == [
        "stack",
        "output",
        "--json",
        "--cwd",
        str(ROOT),
        "--stack",
        "small",
    ]


def test_without_outputs_or_cli_it_says_what_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no pulumi on it
    script = load_script()
    with pytest.raises(script.InventoryError, match="set KAFKAKIT_PULUMI_OUTPUTS"):
        script.read_outputs({})


def test_nested_children_are_flattened() -> None:
    script = load_script()
    inv = script.to_script_inventory(
        {"all": {"children": {"eu": {"vars": {"x": 1}, "children": {"dc1": {"hosts": {"a": {"y": 2}}}}}}}}
    )
    assert inv["eu"] == {"hosts": [], "vars": {"x": 1}, "children": ["dc1"]}
    assert inv["dc1"]["hosts"] == ["a"] and inv["_meta"]["hostvars"]["a"] == {"y": 2}

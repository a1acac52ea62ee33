"""What the tests know about a deployment: read from the inventory and the client configs
that `make lab` (or site.yml against any inventory) wrote, never hard-coded."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import testinfra
import yaml

from kafkakit.cluster.admin import read_client_conf

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = Path(os.environ.get("KAFKAKIT_INVENTORY", ROOT / "build/lab/hosts.yml"))
# What playbooks get as -i: the inventory directory, with its group_vars.
ANSIBLE_INVENTORY = Path(os.environ.get("KAFKAKIT_ANSIBLE_INVENTORY", ROOT / "inventories/local"))
CLIENT_DIR = Path(os.environ.get("KAFKAKIT_CLIENT_DIR", ROOT / "build/lab"))
# testinfra takes its SSH settings (the shared connections' path) from the ansible.cfg it finds:
# the project's, wherever pytest runs from.
os.environ.setdefault("ANSIBLE_CONFIG", str(ROOT / "ansible/ansible.cfg"))


def properties(text: str) -> dict[str, str]:
    """A Java .properties (or zoo.cfg) text as a dict; comments and blank lines skipped."""
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


@dataclass(frozen=True)
class Host:
    name: str
    dc: str
    ip: str
    rack: str
    broker_id: int | None
    zookeeper_id: int | None
    controller_id: int | None = None


class Lab:
    def __init__(self, inventory: Path = INVENTORY) -> None:
        if not inventory.exists():
            raise FileNotFoundError(f"{inventory} is missing: run `make lab` first")
        self.doc = yaml.safe_load(inventory.read_text())

    @cached_property
    def groups(self) -> dict[str, list[str]]:
        children = self.doc["all"]["children"]
        return {g: list((body or {}).get("hosts") or {}) for g, body in children.items()}

    @cached_property
    def hosts(self) -> dict[str, Host]:
        out = {}
        for group, names in self.groups.items():
            for name in names:
                hv = self.doc["all"]["children"][group]["hosts"][name] or {}
                if "dc" in hv:
                    out[name] = Host(
                        name,
                        hv["dc"],
                        hv["private_ip"],
                        hv["kafka_rack"],
                        hv.get("broker_id"),
                        hv.get("zookeeper_id"),
                        hv.get("controller_id"),
                    )
        return out

    def members(self, group: str, dc: str) -> list[Host]:
        return [self.hosts[n] for n in self.groups.get(group, []) if self.hosts[n].dc == dc]

    def brokers(self, dc: str = "dc1") -> list[Host]:
        return self.members("kafka_broker", dc)

    def zookeepers(self, dc: str = "dc1") -> list[Host]:
        """A ZooKeeper DC's ensemble; empty for a KRaft DC (the lab's dc2)."""
        return self.members("zookeeper", dc)

    def controllers(self, dc: str = "dc2") -> list[Host]:
        """A KRaft DC's dedicated controllers; empty for a ZooKeeper DC."""
        return self.members("kafka_controller", dc)

    def data_centres(self) -> list[str]:
        """The DCs that have Kafka brokers, in name order."""
        return sorted({self.hosts[n].dc for n in self.groups.get("kafka_broker", [])})

    def kraft(self, dc: str) -> bool:
        """Whether the DC runs KRaft: it has controllers (kafka_metadata_mode is a group variable
        of inventories/, not in the hosts file)."""
        return bool(self.controllers(dc))

    def metadata_mode(self, dc: str) -> str:
        return "kraft" if self.kraft(dc) else "zookeeper"

    def dc_id(self, dc: str) -> str:
        """A DC's test id: its name and metadata mode (dc1-zookeeper, dc2-kraft)."""
        return f"{dc}-{self.metadata_mode(dc)}"

    def group_vars(self, dc: str) -> dict[str, Any]:
        """What the Ansible inventory's group_vars (all.yml, then <dc>.yml) declare for a DC, as
        written: Jinja expressions stay unrendered, so read names and numbers, not secrets."""
        merged: dict[str, Any] = {}
        for name in ("all", dc):
            path = ANSIBLE_INVENTORY / "group_vars" / f"{name}.yml"
            if path.exists():
                merged.update(yaml.safe_load(path.read_text()) or {})
        return merged

    def broker_by_id(self, broker_id: int, dc: str = "dc1") -> Host:
        return next(b for b in self.brokers(dc) if b.broker_id == broker_id)

    def client_conf(self, dc: str = "dc1") -> dict[str, str]:
        return read_client_conf(CLIENT_DIR / dc / "client.conf")

    def unit_started(self, host: Host | str, unit: str = "kafka") -> str:
        """When a host's systemd unit last became active (monotonic): changes with each restart."""
        return self.testinfra(host).check_output(f"systemctl show -p ActiveEnterTimestampMonotonic --value {unit}")

    def journal_of_this_start(self, host: Host | str, unit: str) -> str:
        """What a systemd unit has logged since it last started (its current invocation)."""
        return self.testinfra(host).check_output(
            f"journalctl --no-pager -o cat _SYSTEMD_INVOCATION_ID=$(systemctl show -p InvocationID --value {unit})"
        )

    def testinfra(self, host: Host | str):  # noqa: ANN201 - testinfra.host.Host
        """A testinfra host reached the way Ansible reaches it (the inventory's connection)."""
        name = host if isinstance(host, str) else host.name
        return testinfra.get_host(f"ansible://{name}", ansible_inventory=str(inventory_as_it_is()))


def inventory_as_it_is() -> Path:
    """The inventory as it is now, at a path of its own content: testinfra reads an inventory once
    per path and process, and a scenario adds hosts (spare controllers, dc3) after an earlier test
    read it. hosts.yml holds every connection setting itself (absolute paths), so a copy reads the same."""
    text = INVENTORY.read_bytes()
    path = INVENTORY.parent / "testinfra" / f"hosts-{hashlib.sha256(text).hexdigest()[:16]}.yml"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(text)
        tmp.replace(path)
    return path

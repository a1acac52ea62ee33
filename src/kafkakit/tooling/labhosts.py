"""The lab's containers: what podman runs for each host of ansible/lab/lab-config.yml.

lab/lab-up.yml starts one container per spec. Each container carries a digest of its spec as a
label, so a container made for another spec (another image, another checkout's SSH key, other
addresses) is removed at once before the start instead of being recreated by podman_container,
whose graceful stop of a container that had run services for hours once failed `make lab` in CI.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SPEC_LABEL = "kafkakit.spec"


def mac_address(ip: str) -> str:
    """A fixed MAC per address (02:00 and the address's four bytes): podman gives a restarted or
    recreated container a new one, and the host's neighbour cache kept the old one."""
    octets = [int(b) for b in ip.split(".")]
    if len(octets) != 4 or not all(0 <= b <= 255 for b in octets):
        raise ValueError(f"not an IPv4 address: {ip!r}")
    return "02:00:" + ":".join(f"{b:02x}" for b in octets)


def without_role(lab_host: dict[str, Any], role: str) -> dict[str, Any]:
    """A lab host without one of its roles and that role's id (a migrated DC's ZooKeeper: zookeeper
    and zookeeper_id)."""
    kept = {k: v for k, v in lab_host.items() if k != f"{role}_id"}
    return {**kept, "roles": [r for r in lab_host.get("roles", []) if r != role]}


def container_spec(
    host: dict[str, Any],
    *,
    image: str,
    permanent_hosts: list[dict[str, Any]],
    optional_hosts: list[dict[str, Any]],
    public_key: str,
    network: str,
    ulimits: list[str],
    app_label: str,
) -> dict[str, Any]:
    """The podman_container parameters of one lab host, with its spec's digest among the labels."""
    optional = {h["name"] for h in optional_hosts}
    # Optional hosts also know each other; the permanent hosts' list stays as it was, so starting a
    # spare or dc3 never changes a permanent host's spec (Kafka advertises addresses, not names).
    known = permanent_hosts + (optional_hosts if host["name"] in optional else [])
    spec: dict[str, Any] = {
        "name": host["name"],
        "hostname": host["name"],
        "image": image,
        "command": "/sbin/init",
        "systemd": "always",
        # Loop devices, mounts and fscrypt for the encrypted data volume (roles/storage).
        "privileged": True,
        "cmd_args": ["--runtime", "runc"],  # crun cannot run on this kernel (MACHINE-NOTES.md)
        "network": network,
        "ip": host["ip"],
        "mac_address": mac_address(host["ip"]),
        "etc_hosts": {h["name"]: h["ip"] for h in known},
        "ulimit": list(ulimits),
        "volume": [f"{public_key}:/root/.ssh/authorized_keys:ro"],
        "label": {"app": app_label, "dc": host["dc"]},
    }
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    spec["label"][SPEC_LABEL] = digest
    return spec


def stale_containers(existing: list[dict[str, Any]], specs: list[dict[str, Any]]) -> list[str]:
    """The names of existing lab containers (podman inspect documents) to remove before the start:
    stopped ones (their state is not trusted), ones no spec asks for, and ones made for another
    spec."""
    wanted = {s["name"]: s["label"][SPEC_LABEL] for s in specs}
    stale = []
    for c in existing:
        labels = (c.get("Config") or {}).get("Labels") or {}
        running = bool((c.get("State") or {}).get("Running"))
        if not running or c["Name"] not in wanted or labels.get(SPEC_LABEL) != wanted[c["Name"]]:
            stale.append(c["Name"])
    return stale

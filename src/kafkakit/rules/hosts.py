"""Per-host facts and settings as typed in the inventory: node ids that are numbers, private
addresses that are addresses and unique, and broker data directories on the encrypted volume."""

from __future__ import annotations

import ipaddress
import posixpath
from collections.abc import Mapping, Sequence

from kafkakit.rules.values import whole_number

# Host facts that kafkakit.rules.topology reads as numbers.
NUMERIC_HOSTVARS = {"kafka_broker": "broker_id", "zookeeper": "zookeeper_id", "kafka_controller": "controller_id"}
# Where the storage role bind-mounts the brokers' directory of the encrypted volume: its default
# storage_dirs for a kafka_broker host (tests/unit/rules/test_host_rules.py pins the two together).
# (name on the volume, path on the host), as in its storage_dirs.
STORAGE_BROKER_DIRS: tuple[tuple[str, str], ...] = (("kafka", "/var/lib/kafka"),)
STORAGE_MOUNT_POINT = "/srv/kafkakit"


def node_id_errors(groups: Mapping[str, Sequence[str]], hostvars: Mapping[str, Mapping]) -> list[str]:
    """A message per node id that is not a whole number (a string, a float, a bool)."""
    errors = []
    for group, var in NUMERIC_HOSTVARS.items():
        for host in groups.get(group, []):
            value = hostvars.get(host, {}).get(var)
            if value is not None and whole_number(value) is None:
                errors.append(f"host {host}: {var}={value!r} is not a whole number")
    return errors


# Host facts that name something (a data centre, an availability zone): the rules use them as keys.
NAME_HOSTVARS = ("dc", "kafka_rack")


def host_name_errors(hosts: Sequence[str], hostvars: Mapping[str, Mapping]) -> list[str]:
    """A message per dc or kafka_rack that is not a single name (a list, a mapping, a bool)."""
    errors = []
    for host in hosts:
        for var in NAME_HOSTVARS:
            value = hostvars.get(host, {}).get(var)
            if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
                errors.append(f"host {host}: {var}={value!r} is not a name; give one word, like dc1 or dc1-az1")
    return errors


def private_ip_errors(hosts: Sequence[str], hostvars: Mapping[str, Mapping]) -> list[str]:
    """A message per private_ip that is no IP address, and per address two hosts share."""
    errors = []
    owners: dict[str, list[str]] = {}
    for host in hosts:
        value = hostvars.get(host, {}).get("private_ip")
        if value is None:
            continue  # kafkakit.rules.inventory.missing_hostvars says so
        try:
            address = str(ipaddress.ip_address(str(value).strip()))
        except ValueError:
            errors.append(f"host {host}: private_ip={value!r} is not an IP address")
            continue
        owners.setdefault(address, []).append(host)
    for address, names in owners.items():
        if len(names) > 1:
            errors.append(f"hosts {names} share private_ip {address}; each host needs its own address")
    return errors


def _under(path: str, root: str) -> bool:
    root = posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def encrypted_roots(hostvars: Mapping, defaults: Mapping) -> list[str]:
    """The directories of a broker that live on the encrypted data volume: the storage role's
    bind-mount targets and their sources under the mount point."""
    mount = str(hostvars.get("storage_mount_point", defaults.get("storage_mount_point", STORAGE_MOUNT_POINT)))
    dirs = hostvars.get("storage_dirs")
    if isinstance(dirs, list) and all(isinstance(d, Mapping) for d in dirs):
        entries = [(str(d.get("path", "")), str(d.get("name", ""))) for d in dirs]
    else:  # the role's default (a template of the host's groups)
        entries = [(path, name) for name, path in STORAGE_BROKER_DIRS]
    roots = []
    for path, name in entries:
        if path:
            roots.append(posixpath.normpath(path))
        if name:
            roots.append(posixpath.join(posixpath.normpath(mount), name))
    return roots


def data_dir_errors(brokers: Sequence[str], hostvars: Mapping[str, Mapping], defaults: Mapping) -> list[str]:
    """A message per kafka_data_dirs entry outside the encrypted data volume, naming its hosts."""
    errors = []
    hosts_by_problem: dict[str, list[str]] = {}
    for host in brokers:
        hv = hostvars.get(host, {})
        dirs = hv.get("kafka_data_dirs", defaults.get("kafka_data_dirs"))
        if dirs is None:
            continue
        if not isinstance(dirs, list) or not dirs or not all(isinstance(d, str) and d for d in dirs):
            errors.append(f"host {host}: kafka_data_dirs={dirs!r} must be a non-empty list of absolute paths")
            continue
        roots = encrypted_roots(hv, defaults)
        for d in dirs:
            path = posixpath.normpath(d)
            if not posixpath.isabs(d):
                problem = f"kafka_data_dirs entry {d!r} is not an absolute path"
            elif not any(_under(path, root) for root in roots):
                problem = (
                    f"kafka_data_dirs entry {d!r} is outside the encrypted data volume {roots}; "
                    "put the data directories under one of them (roles/storage)"
                )
            else:
                continue
            hosts_by_problem.setdefault(problem, []).append(host)
    for problem, hosts in hosts_by_problem.items():
        errors.append(f"host(s) {hosts}: {problem}")
    return errors

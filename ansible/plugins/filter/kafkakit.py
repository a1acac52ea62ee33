"""Filters that hand inventory work to the shared kafkakit package (one copy of the rules)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml


def kafkakit_lab_inventory(lab_hosts: list[dict], all_vars: dict | None = None, dc_vars: dict | None = None) -> dict:
    """The lab inventory document for the hosts of ansible/lab/lab-config.yml (`dc_vars`: variables of
    data centre groups)."""
    from kafkakit.rules.inventory import HostRecord, build_inventory

    records = [
        HostRecord(
            name=h["name"],
            dc=h["dc"],
            rack=h["rack"],
            private_ip=h["ip"],
            roles=tuple(h.get("roles", [])),
            broker_id=h.get("broker_id"),
            zookeeper_id=h.get("zookeeper_id"),
            controller_id=h.get("controller_id"),
        )
        for h in lab_hosts
    ]
    return build_inventory(records, all_vars, dc_vars)


def kafkakit_lab_containers(
    lab_hosts: list[dict], permanent_hosts: list[dict], optional_hosts: list[dict], **kw: Any
) -> list[dict]:
    """The podman_container parameters of each lab host (kafkakit.tooling.labhosts.container_spec)."""
    from kafkakit.tooling.labhosts import container_spec

    return [container_spec(h, permanent_hosts=permanent_hosts, optional_hosts=optional_hosts, **kw) for h in lab_hosts]


def kafkakit_preflight_errors(groups: Any, hostvars: Any, defaults: dict, roles_dir: str = "") -> list[str]:
    """Every reason to refuse this inventory, one message each (empty: go ahead). `roles_dir`: the
    roles, whose meta/argument_specs.yml the inventory's values are checked against."""
    from kafkakit.rules.inventory import preflight_errors

    plain_groups = {k: list(v) for k, v in dict(groups).items()}
    # Keep each host's vars lazy: only the keys the rules read get templated.
    lazy_hostvars = {h: hostvars[h] for h in plain_groups.get("all", [])}
    specs = (
        {
            path.parents[1].name: (yaml.safe_load(path.read_text()) or {}).get("argument_specs") or {}
            for path in sorted(Path(roles_dir).glob("*/meta/argument_specs.yml"))
        }
        if roles_dir
        else {}
    )
    return preflight_errors(plain_groups, lazy_hostvars, defaults, specs)


def kafkakit_missing_variables(groups: Any, hostvars: Any) -> list[str]:
    """One message per required variable unset or empty on a host that reads it (empty: all set)."""
    from kafkakit.rules.inventory import missing_variables

    plain_groups = {k: list(v) for k, v in dict(groups).items()}
    return missing_variables(plain_groups, {h: hostvars[h] for h in plain_groups.get("all", [])})


def kafkakit_marked_hosts(hosts: list[str], hostvars: Any, marker: str) -> list[str]:
    """The hosts whose fact `marker` is set and true: those a role marked for the roll."""
    return [h for h in hosts if hostvars[h].get(marker)]


def kafkakit_roll_waves(hosts: list[str], hostvars: Any) -> list[list[str]]:
    """The roll's restart order in waves of one host per data centre: the i-th host of each DC
    restarts together (the DCs are separate clusters), each DC keeping its own order."""
    by_dc: dict[str, list[str]] = {}
    for host in hosts:
        by_dc.setdefault(str(hostvars[host].get("dc", "")), []).append(host)
    depth = max((len(v) for v in by_dc.values()), default=0)
    return [[order[i] for order in by_dc.values() if i < len(order)] for i in range(depth)]


def kafkakit_bootstrap_by_dc(groups: Any, hostvars: Any, port: int) -> dict[str, str]:
    """Each data centre's client bootstrap list, from its brokers' private IPs."""
    by_dc: dict[str, list[str]] = {}
    for host in groups.get("kafka_broker", []):
        hv = hostvars[host]
        by_dc.setdefault(str(hv["dc"]), []).append(f"{hv['private_ip']}:{port}")
    return {dc: ",".join(addrs) for dc, addrs in by_dc.items()}


def kafkakit_asn1_epoch(not_after: str) -> int:
    """'20271224120000Z' (community.crypto's not_after) as Unix seconds."""
    return int(datetime.strptime(str(not_after), "%Y%m%d%H%M%SZ").replace(tzinfo=UTC).timestamp())


def kafkakit_valid_for_days(not_after: str, days: int | str) -> bool:
    """Whether a certificate with this not_after is still valid `days` days from now."""
    return kafkakit_asn1_epoch(not_after) >= time.time() + int(days) * 86400


def kafkakit_retention_need(topics: list[dict], brokers: int, broker_properties: dict | None = None) -> dict:
    """What the size-bounded topics of a data centre can put on one of its `brokers` brokers:
    {bytes, topics (one line each, largest first), time_only (names)}."""
    from kafkakit.rules.retention_fit import retention_need

    return retention_need(topics or [], int(brokers), broker_properties).as_dict()


def kafkakit_connectors_declared(entries: list[dict], secrets_dir: str) -> list[dict]:
    """kafka_connectors as Connect stores them (secrets and principals as references): the
    kafka_connectors module's input, free of any secret."""
    from kafkakit.cluster.connectors import declared_connectors

    return [
        {"name": d.name, "class": d.cls, "state": d.state, "config": dict(d.config)}
        for d in declared_connectors(entries, secrets_dir)
    ]


def kafkakit_connector_secret_files(entries: list[dict], secrets_dir: str, users: list[dict]) -> list[dict]:
    """The workers' secret files for kafka_connectors (kafkakit_files entries, secret_content),
    principals' passwords from the declared users."""
    from kafkakit.cluster.connectors import secret_files

    passwords = {str(u["name"]): str(u["password"]) for u in users if u.get("state", "present") != "absent"}
    return [
        {"dest": path, "secret_content": text}
        for path, text in sorted(secret_files(entries, secrets_dir, passwords).items())
    ]


def kafkakit_connector_reference_errors(
    connectors: list[dict], dc: str, users: list[dict], plugins: list[dict], plugin_src: str
) -> list[str]:
    """Declared connectors whose class no declared plugin provides or whose principal is no
    declared user, and declared plugins with no archive (kafkakit.rules.connect); empty: all known."""
    from kafkakit.rules.connect import connector_reference_errors, plugin_connectors

    return connector_reference_errors(dc, connectors, users, plugin_connectors(plugin_src, plugins))


def kafkakit_without_role(lab_host: dict[str, Any], role: str) -> dict[str, Any]:
    """kafkakit.tooling.labhosts.without_role."""
    from kafkakit.tooling.labhosts import without_role

    return without_role(lab_host, role)


def kafkakit_stale_lab_containers(existing: list[dict[str, Any]], specs: list[dict[str, Any]]) -> list[str]:
    """kafkakit.tooling.labhosts.stale_containers."""
    from kafkakit.tooling.labhosts import stale_containers

    return stale_containers(existing, specs)


def kafkakit_connector_acls(entries: Any, group_id: str, offset_topic: str) -> list[dict[str, Any]]:
    """kafkakit.cluster.connectors.connector_acls."""
    from kafkakit.cluster.connectors import connector_acls

    return connector_acls(entries, group_id, offset_topic)


def kafkakit_properties_value(text: str, key: str) -> str:
    """kafkakit.cluster.connectors.properties_value."""
    from kafkakit.cluster.connectors import properties_value

    return properties_value(text, key)


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {
            "kafkakit_lab_inventory": kafkakit_lab_inventory,
            "kafkakit_without_role": kafkakit_without_role,
            "kafkakit_lab_containers": kafkakit_lab_containers,
            "kafkakit_stale_lab_containers": kafkakit_stale_lab_containers,
            "kafkakit_preflight_errors": kafkakit_preflight_errors,
            "kafkakit_missing_variables": kafkakit_missing_variables,
            "kafkakit_marked_hosts": kafkakit_marked_hosts,
            "kafkakit_roll_waves": kafkakit_roll_waves,
            "kafkakit_bootstrap_by_dc": kafkakit_bootstrap_by_dc,
            "kafkakit_asn1_epoch": kafkakit_asn1_epoch,
            "kafkakit_valid_for_days": kafkakit_valid_for_days,
            "kafkakit_retention_need": kafkakit_retention_need,
            "kafkakit_connectors_declared": kafkakit_connectors_declared,
            "kafkakit_connector_secret_files": kafkakit_connector_secret_files,
            "kafkakit_connector_acls": kafkakit_connector_acls,
            "kafkakit_connector_reference_errors": kafkakit_connector_reference_errors,
            "kafkakit_properties_value": kafkakit_properties_value,
        }

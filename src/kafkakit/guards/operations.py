"""Guards of the day-2 operations that can take a production cluster down (issue 16).

Each returns why the operation must not run ('' when it may), one line, naming what it would
destroy and the exact confirmation that lets it go ahead. The playbooks call them through
ansible/plugins/filter/ops_guards.py before touching any host.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

DR_CONFIRM_VAR = "dr_drill_confirm"


def dr_drill_victims(groups: Mapping[str, Iterable[str]], source: str) -> list[str]:
    """The hosts the drill's step 2 kills: every broker and ZooKeeper server of `source`, in
    inventory order (the play's pattern kafka_broker:&src:zookeeper:&src)."""
    in_source = set(groups.get(source, []))
    servers = list(groups.get("kafka_broker", [])) + list(groups.get("zookeeper", []))
    return [h for i, h in enumerate(servers) if h in in_source and h not in servers[:i]]


def dr_drill_refusal(source: Any, target: Any, confirmation: Any, groups: Mapping[str, Iterable[str]]) -> str:
    """Why the DR drill must not take `source` down ('' when the operator confirmed it by name)."""
    source, target = str(source), str(target)
    victims = dr_drill_victims(groups, source)
    if not victims:
        return f"dr_source={source} has no broker or ZooKeeper server in this inventory: nothing to drill (-i?)"
    if source == target:
        return f"dr_source and dr_target are both {source}: the drill fails over to another data centre"
    stops = f"{len(victims)} host(s) {', '.join(victims)}"
    confirmed = "" if confirmation is None else str(confirmation).strip()
    if not confirmed:
        return (
            f"refusing to run the DR drill: it SIGKILLs and stops every broker and ZooKeeper server of {source}, "
            f"{stops}, and {source} serves nothing until the drill brings it back; "
            f"to go ahead, name the data centre: -e {DR_CONFIRM_VAR}={source}"
        )
    if confirmed != source:
        return (
            f"{DR_CONFIRM_VAR}={confirmed} does not name the data centre this drill takes down: {source} "
            f"({stops}); check dr_source and the inventory, then confirm with -e {DR_CONFIRM_VAR}={source}"
        )
    return ""


def _named_member(host: Any, members: list[str], group: str, host_var: str, role: str) -> tuple[str, str]:
    """The host an operation names, and why it is refused ('' when it is one of `members`)."""
    name = "" if host is None else str(host).strip()
    known = f"({group}: {', '.join(members) or 'none'})"
    if not name:
        return name, f"name {role}: -e {host_var}=<host> {known}"
    if name not in members:
        return name, f"{host_var}={name} is not a {group} host of this inventory {known}"
    return name, ""


def _confirmed(name: str, confirmation: Any, confirm_var: str, verb: str, what: str) -> str:
    """'' when the confirmation names the host; else the refusal, saying what the operation does."""
    confirmed = "" if confirmation is None else str(confirmation).strip()
    if confirmed == name:
        return ""
    said = f"{confirm_var}={confirmed} does not name {name}" if confirmed else f"refusing to {verb} {name}"
    return f"{said}: this {what}; to go ahead: -e {confirm_var}={name}"


CONTROLLER_CONFIRM_VARS = {"replace": "controller_replace_confirm", "remove": "controller_remove_confirm"}
CONTROLLER_HOST_VARS = {"replace": "controller_replace", "remove": "controller_remove"}
# A quorum of 3 survives one controller down; fewer survives none.
MIN_CONTROLLERS = 3


def controller_change_refusal(
    operation: str, host: Any, confirmation: Any, groups: Mapping[str, Iterable[str]], dc_of: Mapping[str, str]
) -> str:
    """Why ops/replace-controller.yml or ops/remove-controller.yml must not touch `host` ('' when
    it may): the host must be a KRaft controller of the inventory, removal must leave at least 3
    voters, and the operator must name the host in the confirmation."""
    host_var, confirm_var = CONTROLLER_HOST_VARS[operation], CONTROLLER_CONFIRM_VARS[operation]
    controllers = list(groups.get("kafka_controller", []))
    name, why = _named_member(host, controllers, "kafka_controller", host_var, f"the controller to {operation}")
    if why:
        return why
    dc = dc_of.get(name, "")
    peers = [h for h in controllers if dc_of.get(h) == dc]
    if operation == "remove" and len(peers) - 1 < MIN_CONTROLLERS:
        kept = ", ".join(p for p in peers if p != name)
        return (
            f"refusing to remove {name}: {dc} would keep {len(peers) - 1} controller(s) ({kept}), and a quorum "
            f"of fewer than {MIN_CONTROLLERS} cannot lose a controller; add one first (ops/add-controller.yml)"
        )
    what = (
        f"moves {name}'s metadata directory aside, formats an empty one and swaps its voter in {dc}'s quorum "
        f"(until it has caught up, {dc} cannot lose another controller)"
        if operation == "replace"
        else f"takes {name} out of {dc}'s quorum ({len(peers) - 1} voters left) and stops it"
    )
    return _confirmed(name, confirmation, confirm_var, operation, what)


RECOVER_HOST_VAR, RECOVER_CONFIRM_VAR = "recover_host", "recover_confirm"


def _recover_refusal(host: Any, confirmation: Any, members: list[str], group: str, role: str, what: str) -> str:
    """The guard both recoveries share: `host` one of `members`, named in the confirmation."""
    name, why = _named_member(host, members, group, RECOVER_HOST_VAR, role)
    if why:
        return why
    return _confirmed(name, confirmation, RECOVER_CONFIRM_VAR, "recover", what.format(name=name))


def zookeeper_recover_refusal(host: Any, confirmation: Any, groups: Mapping[str, Iterable[str]]) -> str:
    """Why ops/recover-zookeeper.yml must not touch `host` ('' when it may): the host must be a
    ZooKeeper server of the inventory and the operator must name it in the confirmation. That it
    does not serve, and that the rest of its ensemble has a quorum, the playbook reads from the
    servers themselves."""
    return _recover_refusal(
        host,
        confirmation,
        list(groups.get("zookeeper", [])),
        "zookeeper",
        "the ZooKeeper server to recover",
        "stops ZooKeeper on {name}, sets its snapshots and transaction logs aside (renamed, not deleted) "
        "and lets it resync them from the leader",
    )


def broker_recover_refusal(host: Any, confirmation: Any, groups: Mapping[str, Iterable[str]]) -> str:
    """Why ops/recover-broker.yml must not touch `host` ('' when it may): the host must be a broker
    of the inventory and the operator must name it in the confirmation. That it does not serve or
    its disk is full, and what on it the cluster has deleted, the playbook reads from the host and
    the cluster (kafkakit.guards.log_reclaim)."""
    return _recover_refusal(
        host,
        confirmation,
        list(groups.get("kafka_broker", [])),
        "kafka_broker",
        "the broker to recover",
        "stops Kafka on {name}, deletes from its log dirs the data of topics the cluster has deleted "
        "(and directories Kafka dropped), and starts it again",
    )

"""The values of the settings an inventory gives the roles, checked before any host is touched:

- the extra properties of brokers, controllers, Connect workers and MirrorMaker 2, against Kafka's
  own definitions (kafkakit.rules.property_values), as Kafka would read them when it starts;
- the kit's variables that the templates write as a Kafka property, against that property's
  definition (a thread count of "eight", a boolean of "yes");
- every variable the inventory sets that a role's meta/argument_specs.yml declares, by Ansible's
  own validator (types and choices), which the role would otherwise apply only when it starts;
- ports, and the names that would make every principal a super user.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkakit.rules.property_values import definition_of, property_types, value_problem
from kafkakit.rules.topic_configs import release_line
from kafkakit.rules.values import whole_number

# A host's variable as typed: (value, None), or (None, why it cannot be read before the roles run).
Reader = Callable[[str, str], tuple[Any, str | None]]

# Kit variables each template writes as one Kafka property: variable -> (the hosts' group, the
# component whose definition applies, the property). Blank values are not written.
KIT_PROPERTIES: dict[str, tuple[str, str, str]] = {
    "kafka_num_partitions": ("kafka_broker", "broker", "num.partitions"),
    "kafka_default_replication_factor": ("kafka_broker", "broker", "default.replication.factor"),
    "kafka_min_insync_replicas": ("kafka_broker", "broker", "min.insync.replicas"),
    "kafka_offsets_topic_replication_factor": ("kafka_broker", "broker", "offsets.topic.replication.factor"),
    "kafka_transaction_state_log_replication_factor": (
        "kafka_broker",
        "broker",
        "transaction.state.log.replication.factor",
    ),
    "kafka_transaction_state_log_min_isr": ("kafka_broker", "broker", "transaction.state.log.min.isr"),
    "kafka_share_coordinator_state_topic_replication_factor": (
        "kafka_broker",
        "broker",
        "share.coordinator.state.topic.replication.factor",
    ),
    "kafka_auto_create_topics": ("kafka_broker", "broker", "auto.create.topics.enable"),
    "kafka_log_retention_hours": ("kafka_broker", "broker", "log.retention.hours"),
    "kafka_log_retention_bytes": ("kafka_broker", "broker", "log.retention.bytes"),
    "kafka_log_segment_bytes": ("kafka_broker", "broker", "log.segment.bytes"),
    "kafka_log_cleanup_policy": ("kafka_broker", "broker", "log.cleanup.policy"),
    "kafka_message_max_bytes": ("kafka_broker", "broker", "message.max.bytes"),
    "kafka_num_network_threads": ("kafka_broker", "broker", "num.network.threads"),
    "kafka_num_io_threads": ("kafka_broker", "broker", "num.io.threads"),
    "kafka_num_replica_fetchers": ("kafka_broker", "broker", "num.replica.fetchers"),
    "kafka_group_initial_rebalance_delay_ms": ("kafka_broker", "broker", "group.initial.rebalance.delay.ms"),
    "kafka_replica_lag_time_max_ms": ("kafka_broker", "broker", "replica.lag.time.max.ms"),
    "kafka_zookeeper_session_timeout_ms": ("kafka_broker", "broker", "zookeeper.session.timeout.ms"),
    "kafka_broker_session_timeout_ms": ("kafka_broker", "broker", "broker.session.timeout.ms"),
    "kafka_broker_heartbeat_interval_ms": ("kafka_broker", "broker", "broker.heartbeat.interval.ms"),
    "kafka_inter_broker_protocol_version": ("kafka_broker", "broker", "inter.broker.protocol.version"),
    "kafka_connect_group_id": ("kafka_connect", "connect", "group.id"),
    "kafka_connect_replication_factor": ("kafka_connect", "connect", "config.storage.replication.factor"),
    "kafka_connect_offset_partitions": ("kafka_connect", "connect", "offset.storage.partitions"),
    "kafka_connect_status_partitions": ("kafka_connect", "connect", "status.storage.partitions"),
    "kafka_connect_plugin_discovery": ("kafka_connect", "connect", "plugin.discovery"),
    "kafka_connect_rebalance_delay_ms": ("kafka_connect", "connect", "scheduled.rebalance.max.delay.ms"),
    "kafka_connect_worker_sync_timeout_ms": ("kafka_connect", "connect", "worker.sync.timeout.ms"),
    "mirrormaker_replication_factor": ("mirrormaker", "source", "replication.factor"),
    "mirrormaker_internal_replication_factor": ("mirrormaker", "source", "offset-syncs.topic.replication.factor"),
    "mirrormaker_tasks_max": ("mirrormaker", "source", "tasks.max"),
    "mirrormaker_refresh_topics_interval_seconds": ("mirrormaker", "source", "refresh.topics.interval.seconds"),
    "mirrormaker_refresh_groups_interval_seconds": ("mirrormaker", "checkpoint", "refresh.groups.interval.seconds"),
    "mirrormaker_sync_topic_configs": ("mirrormaker", "source", "sync.topic.configs.enabled"),
    "mirrormaker_sync_topic_acls": ("mirrormaker", "source", "sync.topic.acls.enabled"),
    "mirrormaker_emit_checkpoints_interval_seconds": (
        "mirrormaker",
        "checkpoint",
        "emit.checkpoints.interval.seconds",
    ),
    "mirrormaker_sync_group_offsets": ("mirrormaker", "checkpoint", "sync.group.offsets.enabled"),
    "mirrormaker_sync_group_offsets_interval_seconds": (
        "mirrormaker",
        "checkpoint",
        "sync.group.offsets.interval.seconds",
    ),
    "mirrormaker_offset_lag_max": ("mirrormaker", "source", "offset.lag.max"),
    "mirrormaker_offset_flush_interval_ms": ("mirrormaker", "connect", "offset.flush.interval.ms"),
}
# Broker-wide retention Kafka takes any negative value of as "no limit" (it defines no range): a
# negative other than -1 is a typo, not a choice.
UNLIMITED_WHEN_NEGATIVE = frozenset(
    {"log.retention.hours", "log.retention.minutes", "log.retention.ms", "log.retention.bytes"}
)
# The ports the roles listen on or connect to.
PORT_VARIABLES = (
    "kafka_internal_port",
    "kafka_client_port",
    "kafka_controller_port",
    "zookeeper_secure_client_port",
    "zookeeper_peer_port",
    "zookeeper_election_port",
    "kafka_connect_rest_port",
    "mirrormaker_rest_port",
)
# super.users entries (the template prefixes each with User:) that would make every principal, or
# every client that did not authenticate, a super user: ACLs would no longer apply to them.
SUPER_USER_VARIABLES = ("kafka_admin_user", "kafka_super_users")
NOT_A_SUPER_USER = frozenset({"*", "ANONYMOUS", "User:*", "User:ANONYMOUS"})

# The admin client (librdkafka) the kit's modules run from the controller: what keeps it on TLS,
# checking the broker's certificate and name. Setting -> the values allowed (in any case).
ADMIN_CLIENT_SECURE: dict[str, tuple[str, ...]] = {
    "security.protocol": ("SASL_SSL",),
    "enable.ssl.certificate.verification": ("true",),
    "ssl.endpoint.identification.algorithm": ("https",),
}


def _shown(validator: str) -> str:
    """A validator for a message: a long list of choices shortened (Kafka's metadata versions)."""
    items = validator.strip("[]").split(", ")
    if validator.startswith("[") and len(items) > 8:
        return f"[{', '.join(items[:3])}, ..., {', '.join(items[-3:])}]"
    return validator


def _definition_problem(name: str, definition: tuple[str, str], value: object, version: str | None) -> str | None:
    kind, validator = definition
    problem = value_problem(kind, "", value)
    if problem:  # not even of its type: say what it takes
        return f"{problem} ({release_line(version)} defines {name} as {kind} {_shown(validator)}".rstrip() + ")"
    problem = value_problem(kind, validator, value)
    if problem:
        return f"{problem} ({release_line(version)})"
    number = whole_number(value)
    if number is not None and number < -1 and name in UNLIMITED_WHEN_NEGATIVE:
        return "is negative: Kafka reads any negative value as no limit; write -1 if that is meant"
    return None


def property_problem(component: str, name: str, value: object, version: str | None) -> str | None:
    """What Kafka (of `version`) would refuse in `value` for property `name` of `component`, said
    after the value with the definition it breaks; None when it takes it or defines no such name."""
    definition = property_types(component, version).get(name)
    return None if definition is None else _definition_problem(name, definition, value, version)


class _ByHosts:
    """Messages that differ only in their hosts, said once with all of them."""

    def __init__(self) -> None:
        self._hosts: dict[tuple[str, str], list[str]] = {}

    def add(self, before: str, after: str, host: str) -> None:
        self._hosts.setdefault((before, after), []).append(host)

    def messages(self) -> list[str]:
        return [f"{before}{hosts}{after}" for (before, after), hosts in self._hosts.items()]


def extra_property_value_errors(
    variable: str,
    component: str,
    extras: Mapping[str, tuple[str | None, object]],
    is_protected: Callable[[str], bool],
    clusters: Iterable[str] = (),
) -> list[str]:
    """One message per property of `variable` (host -> (its Kafka version, its extra properties))
    whose value Kafka would refuse; protected names are left to the rule that refuses them, and
    names Kafka does not define (a plugin's, a prefixed client setting) are not checked."""
    aliases = set(clusters)
    found = _ByHosts()
    for host, (version, extra) in extras.items():
        if not isinstance(extra, Mapping):
            continue  # kafkakit.rules.broker_properties says so
        for raw_key, value in extra.items():
            key = str(raw_key)
            if is_protected(key):
                continue
            known = definition_of(component, key, version, aliases)
            problem = None if known is None else _definition_problem(*known, value, version)
            if problem:
                found.add(f"{variable} of ", f": {key}={value!r} {problem}", host)
    return found.messages()


def kit_property_errors(
    groups: Mapping[str, Iterable[str]],
    read: Reader,
    version_of: Callable[[str, str], str | None],
    skip: Iterable[str] = (),
) -> list[str]:
    """One message per KIT_PROPERTIES variable the inventory sets to a value Kafka would refuse
    for the property the template writes it as. `version_of(host, component)`: the Kafka release
    that reads it there; `skip`: variables already refused (by their argument spec)."""
    found = _ByHosts()
    for variable, (group, component, name) in KIT_PROPERTIES.items():
        if variable in skip:
            continue
        for host in groups.get(group) or []:
            value, unreadable = read(host, variable)
            if unreadable or value is None or (isinstance(value, str) and not value.strip()):
                continue  # unset, blank (not written), or made of role defaults: the role checks it
            problem = property_problem(component, name, value, version_of(host, component))
            if problem:
                found.add(f"{variable}={value!r} on ", f" {problem}; the kit writes it as {name}", host)
    return found.messages()


def port_errors(hosts: Iterable[str], read: Reader, skip: Iterable[str] = ()) -> list[str]:
    """One message per port variable set to anything but a TCP port number (`skip`: already refused)."""
    found = _ByHosts()
    hosts = list(hosts)
    for variable in (v for v in PORT_VARIABLES if v not in skip):
        for host in hosts:
            value, unreadable = read(host, variable)
            if unreadable or value is None:
                continue
            port = whole_number(value)
            if port is None or not 1 <= port <= 65535:
                found.add(f"{variable}={value!r} on ", " is not a TCP port (a whole number 1..65535)", host)
    return found.messages()


def super_user_errors(hosts: Iterable[str], read: Reader) -> list[str]:
    """One message per super user name that would stand for every principal or for clients that
    did not authenticate: deny-by-default would no longer hold for them."""
    found = _ByHosts()
    for variable in SUPER_USER_VARIABLES:
        for host in hosts:
            value, unreadable = read(host, variable)
            if unreadable or value is None:
                continue
            names = value if isinstance(value, list) else [value]
            wide = [str(n) for n in names if str(n).strip() in NOT_A_SUPER_USER]
            if wide:
                found.add(
                    f"{variable} on ",
                    f" names {wide}: every principal (or every unauthenticated client) would be a super user, "
                    "to whom no ACL applies; name the users",
                    host,
                )
    return found.messages()


# The inventory groups whose hosts each role runs on (site.yml and the playbooks it imports;
# kafka_common through the roles that depend on it): tests/unit/rules/test_settings.py reads them
# from the playbooks. A role not named here (the lab's postgresql, the roll, ...): every host.
_KAFKA_HOSTS = ("zookeeper", "kafka_controller", "kafka_broker", "mirrormaker", "kafka_connect")
_SPARK_HOSTS = ("spark_master", "spark_worker")
ROLE_GROUPS: dict[str, tuple[str, ...]] = {
    "java": (*_KAFKA_HOSTS, *_SPARK_HOSTS),
    "kafka_pki": (*_KAFKA_HOSTS, "monitoring", "spark_master"),
    "storage": ("zookeeper", "kafka_controller", "kafka_broker"),
    "kafka_common": (*_KAFKA_HOSTS, "monitoring", *_SPARK_HOSTS),
    "zookeeper": ("zookeeper",),
    "kafka_controller": ("kafka_controller",),
    "kafka_broker": ("kafka_broker",),
    "kafka_resources": ("kafka_broker",),
    "mirrormaker2": ("mirrormaker",),
    "kafka_connect": ("kafka_connect",),
    "spark": _SPARK_HOSTS,
    "monitoring": ("monitoring",),
}


def argument_spec_errors(
    groups: Mapping[str, Iterable[str]],
    read: Reader,
    specs: Mapping[str, Mapping[str, Any]],
    skip: Iterable[str] = (),
) -> dict[str, list[str]]:
    """Per variable the inventory sets that a role's argument spec (role -> its
    meta/argument_specs.yml `argument_specs`, entry point `main`) would refuse when the role starts
    on a host of its groups, one message per value: Ansible's own validator, run before any host is
    touched. `skip`: variables other rules check with their own messages."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    everyone = list(groups.get("all") or [])
    declared: dict[str, list[tuple[str, dict, list[str]]]] = {}
    for role, entries in sorted(specs.items()):
        members = {h for g in ROLE_GROUPS.get(role, ()) for h in groups.get(g) or []}
        hosts = [h for h in everyone if h in members or role not in ROLE_GROUPS]
        for name, option in (((entries or {}).get("main") or {}).get("options") or {}).items():
            if name in skip:
                continue
            checked = {k: v for k, v in dict(option or {}).items() if k != "default"}  # set: no default
            declared.setdefault(name, []).append((role, checked, hosts))
    refused: dict[str, list[str]] = {}
    for name, by_role in declared.items():
        found = _ByHosts()
        seen: set[str] = set()
        for role, option, hosts in by_role:
            for host in hosts:
                value, unreadable = read(host, name)
                if host in seen or unreadable or value is None:
                    continue
                result = ArgumentSpecValidator({name: option}).validate({name: value})
                if result.error_messages:
                    seen.add(host)
                    # A list or mapping is not repeated: it may hold secrets, and the message names the field.
                    shown = "" if isinstance(value, list | dict) else f"={value!r}"
                    problem = result.error_messages[0]
                    if option.get("no_log"):  # Ansible's message quotes the value
                        shown, problem = "=(secret)", f"not of type {option.get('type', 'str')}, or not one allowed"
                    found.add(f"{name}{shown} on ", f": {problem} (roles/{role}/meta/argument_specs.yml)", host)
        if found.messages():
            refused[name] = found.messages()
    return refused


def admin_client_errors(hosts: Iterable[str], read: Reader) -> list[str]:
    """One message per setting of kafka_admin_client_config that would take the admin's password and
    the kit's changes off TLS, or stop checking the broker's certificate or name."""
    found = _ByHosts()
    for host in hosts:
        config, unreadable = read(host, "kafka_admin_client_config")
        if unreadable or not isinstance(config, Mapping):
            continue
        for key, allowed in ADMIN_CLIENT_SECURE.items():
            if key in config and str(config[key]).strip().lower() not in {a.lower() for a in allowed}:
                found.add(
                    "kafka_admin_client_config on ",
                    f" sets {key}={config[key]!r}: the admin client must use {allowed[0]} (the kit's brokers take "
                    "the admin's password over TLS only, with their certificate and name checked)",
                    host,
                )
    return found.messages()

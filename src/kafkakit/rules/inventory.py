"""The one inventory shape that the lab provisioner and the Pulumi outputs both produce.

Groups: the component groups below plus one group per data centre. Host variables:
`dc`, `kafka_rack` (= availability zone), `private_ip`, `private_dns`, `ansible_host`,
and `broker_id` / `zookeeper_id` / `controller_id` on the hosts of those groups. A data
centre's metadata mode, `kafka_metadata_mode: zookeeper | kraft`, is a variable of its DC group.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafkakit.rules.access import acl_principal_errors, quota_default_errors
from kafkakit.rules.broker_properties import (
    CONNECT_PROTECTED,
    PROTECTED_PROPERTIES,
    connect_protected,
    extra_property_errors,
    protected,
    tls_protocols_problem,
)
from kafkakit.rules.connect import connect_errors
from kafkakit.rules.hosts import (
    NUMERIC_HOSTVARS,
    data_dir_errors,
    host_name_errors,
    node_id_errors,
    private_ip_errors,
)
from kafkakit.rules.sessions import Ensemble, lease_errors, zookeeper_session_errors
from kafkakit.rules.settings import (
    admin_client_errors,
    argument_spec_errors,
    extra_property_value_errors,
    kit_property_errors,
    port_errors,
    super_user_errors,
)
from kafkakit.rules.topics import topic_errors
from kafkakit.rules.topology import MIN_CONTROLLERS, Cluster, Node, Topic, Topology, kafka_major, validate
from kafkakit.rules.values import is_blank, whole_number

COMPONENT_GROUPS = (
    "zookeeper",
    "kafka_controller",  # dedicated KRaft controllers (process.roles=controller), KRaft DCs only
    "kafka_broker",
    "mirrormaker",
    "kafka_connect",  # distributed Kafka Connect workers, one Connect cluster per data centre
    "spark_master",
    "spark_worker",
    "monitoring",
    "source_db",  # the lab's stand-in for a user's database (ansible/lab/source-db.yml); never provisioned
)
# Settings that only a ZooKeeper-mode DC may carry (host facts and inventory variables).
ZOOKEEPER_ONLY_VARS = ("zookeeper_id", "zookeeper_min_ensemble", "kafka_zookeeper_connect", "kafka_zookeeper_chroot")


@dataclass(frozen=True)
class HostRecord:
    name: str
    dc: str
    rack: str
    private_ip: str
    roles: tuple[str, ...]
    private_dns: str = ""
    ansible_host: str = ""
    broker_id: int | None = None
    zookeeper_id: int | None = None
    controller_id: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def hostvars(self) -> dict[str, Any]:
        hv: dict[str, Any] = {
            "ansible_host": self.ansible_host or self.private_ip,
            "dc": self.dc,
            "kafka_rack": self.rack,
            "private_ip": self.private_ip,
            "private_dns": self.private_dns or self.name,
        }
        if self.broker_id is not None:
            hv["broker_id"] = self.broker_id
        if self.zookeeper_id is not None:
            hv["zookeeper_id"] = self.zookeeper_id
        if self.controller_id is not None:
            hv["controller_id"] = self.controller_id
        hv.update(self.extra)
        return hv


def build_inventory(
    hosts: Iterable[HostRecord],
    all_vars: Mapping[str, Any] | None = None,
    group_vars: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict:
    """An Ansible YAML inventory document for `hosts`; `group_vars` sets variables of groups
    (a data centre's `kafka_metadata_mode`, for one)."""
    hosts = list(hosts)
    unknown = {r for h in hosts for r in h.roles} - set(COMPONENT_GROUPS)
    if unknown:
        raise ValueError(f"unknown host role(s) {sorted(unknown)}; known: {COMPONENT_GROUPS}")
    children: dict[str, dict] = {g: {"hosts": {}} for g in COMPONENT_GROUPS}
    for h in hosts:
        children.setdefault(h.dc, {"hosts": {}})["hosts"][h.name] = h.hostvars()
        for role in h.roles:
            children[role]["hosts"][h.name] = {}
    for group, variables in (group_vars or {}).items():
        if group not in children:
            raise ValueError(f"variables for group {group!r}, which is neither a component group nor a data centre")
        if variables:
            children[group]["vars"] = dict(variables)
    doc: dict[str, Any] = {"all": {"children": children}}
    if all_vars:
        doc["all"]["vars"] = dict(all_vars)
    return doc


def _dc_hosts(groups: Mapping[str, list[str]], dc: str, group: str) -> list[str]:
    members = set(groups.get(dc, []))
    return [h for h in groups.get(group, []) if h in members]


def data_centres(groups: Mapping[str, list[str]], hostvars: Mapping[str, Mapping]) -> list[str]:
    """Data centre names, taken from the `dc` variable of every host, in first-seen order."""
    seen: list[str] = []
    for name in groups.get("all", []):
        dc = hostvars.get(name, {}).get("dc")
        if dc and dc not in seen:
            seen.append(dc)
    return seen


def topology_from_inventory(
    groups: Mapping[str, list[str]],
    hostvars: Mapping[str, Mapping],
    defaults: Mapping[str, Any],
) -> Topology:
    """The Topology an inventory describes. Per-DC settings come from any broker's hostvars,
    falling back to `defaults` (the kafka_broker role defaults)."""

    def setting(hosts: list[str], key: str, fallback: Any) -> Any:
        for h in hosts:
            if key in hostvars.get(h, {}):
                return hostvars[h][key]
        value = defaults.get(key)
        return fallback if value is None else value

    def optional_int(hosts: list[str], key: str) -> int | None:
        value = setting(hosts, key, None)
        return None if value is None else int(value)

    def nodes(hosts: list[str], id_var: str) -> list[Node]:
        return [Node(h, int(hostvars[h].get(id_var, -1)), hostvars[h].get("kafka_rack", "")) for h in hosts]

    clusters = []
    for dc in data_centres(groups, hostvars):
        zks = _dc_hosts(groups, dc, "zookeeper")
        controllers = _dc_hosts(groups, dc, "kafka_controller")
        brokers = _dc_hosts(groups, dc, "kafka_broker")
        # Brokers first: the kafka_broker role's variables are set where the brokers are.
        everyone = brokers + controllers + [h for h in groups.get(dc, []) if h not in brokers + controllers]
        topics = [
            Topic(
                name=str(t["name"]),
                partitions=int(t.get("partitions", 1)),
                replication_factor=int(t.get("replication_factor", 3)),
                consumers=int(t.get("consumers", 0)),
            )
            for t in setting(brokers, "kafka_topics", [])
        ]
        version = setting(brokers + controllers, "kafka_version", None)
        clusters.append(
            Cluster(
                name=dc,
                zookeepers=nodes(zks, "zookeeper_id"),
                brokers=nodes(brokers, "broker_id"),
                replication_factor=int(setting(brokers, "kafka_default_replication_factor", 3)),
                min_insync_replicas=int(setting(brokers, "kafka_min_insync_replicas", 2)),
                topics=topics,
                min_ensemble=int(setting(zks, "zookeeper_min_ensemble", 3)),
                metadata_mode=str(setting(everyone, "kafka_metadata_mode", "zookeeper")),
                controllers=nodes(controllers, "controller_id"),
                min_controllers=int(setting(controllers + brokers, "kafka_min_controllers", MIN_CONTROLLERS)),
                kafka_version=None if version is None else str(version),
                offsets_topic_replication_factor=optional_int(brokers, "kafka_offsets_topic_replication_factor"),
                transaction_state_log_replication_factor=optional_int(
                    brokers, "kafka_transaction_state_log_replication_factor"
                ),
                transaction_state_log_min_isr=optional_int(brokers, "kafka_transaction_state_log_min_isr"),
                share_coordinator_state_topic_replication_factor=optional_int(
                    brokers, "kafka_share_coordinator_state_topic_replication_factor"
                ),
                zookeeper_settings=_zookeeper_settings(groups.get(dc, []), zks, hostvars),
            )
        )
    return Topology(clusters=clusters)


@dataclass(frozen=True)
class InventoryVariable:
    """A variable the inventory must give the roles besides the host facts."""

    name: str
    # The inventory group whose hosts need it; "all": every inventory.
    needed_with: str = "all"
    # A secret: vault it; the roles' meta/argument_specs.yml mark it no_log.
    secret: bool = True
    # False: the roles cope without it (spark_auth_secret is generated when empty).
    required: bool = True
    note: str = ""
    # The groups whose hosts' plays read it: the preflight checks it on each of their hosts.
    used_by: tuple[str, ...] = ("kafka_broker",)
    # The metadata modes whose data centres' hosts read it: a KRaft DC's brokers have no
    # ZooKeeper login, so a KRaft-only inventory needs no ZooKeeper secret.
    modes: tuple[str, ...] = ("zookeeper", "kraft")


# The hosts kafka_pki issues certificates to (site.yml): each signing reads the CA's variables.
_PKI_HOSTS = ("zookeeper", "kafka_controller", "kafka_broker", "mirrormaker", "kafka_connect", "monitoring")
# The one list of the secrets (and the controller path) the roles need. ansible/preflight.yml checks
# it through the kafkakit_missing_variables filter; docs/variables.md lists it; a unit test checks
# that the roles' argument specs mark exactly these secrets no_log and that the lab sets them.
INVENTORY_VARIABLES: tuple[InventoryVariable, ...] = (
    # The controllers format their metadata with the admin's SCRAM credential (--add-scram).
    InventoryVariable("kafka_admin_password", used_by=("kafka_broker", "kafka_controller")),
    InventoryVariable("kafka_keystore_password", used_by=("kafka_broker", "kafka_controller")),
    InventoryVariable("kafka_zookeeper_password", used_by=("kafka_broker", "zookeeper"), modes=("zookeeper",)),
    InventoryVariable("zookeeper_keystore_password", used_by=("zookeeper",)),
    InventoryVariable("kafka_pki_ca_passphrase", used_by=_PKI_HOSTS),
    InventoryVariable("kafka_pki_ca_dir", secret=False, used_by=_PKI_HOSTS),
    # kafka_resources creates the service users from the brokers' vars, so the brokers need them too.
    InventoryVariable("kafka_mirrormaker_password", "mirrormaker", used_by=("mirrormaker", "kafka_broker")),
    InventoryVariable("kafka_spark_password", "spark_master", used_by=("spark_master", "spark_worker", "kafka_broker")),
    InventoryVariable("kafka_monitoring_password", "monitoring", used_by=("monitoring", "kafka_broker")),
    InventoryVariable("kafka_connect_password", "kafka_connect", used_by=("kafka_connect", "kafka_broker")),
    InventoryVariable("kafka_connect_keystore_password", "kafka_connect", used_by=("kafka_connect",)),
    # The lab's source database (ansible/lab/source-db.yml, roles/postgresql).
    InventoryVariable("postgresql_owner_password", "source_db", used_by=("source_db",)),
    InventoryVariable("postgresql_capture_password", "source_db", used_by=("source_db",)),
    # Its monitoring user (roles/postgresql makes it unless postgresql_monitor_user is '').
    InventoryVariable("postgresql_monitor_password", "source_db", required=False, used_by=("source_db",)),
    # The source databases' exporters log in with these (monitoring_postgres_sources' names).
    InventoryVariable("monitoring_postgres_passwords", "monitoring", required=False, used_by=("monitoring",)),
    # The JMX agents on the scraped hosts check it.
    InventoryVariable(
        "monitoring_scrape_password",
        "monitoring",
        used_by=("monitoring", "kafka_broker", "kafka_controller", "zookeeper", "mirrormaker"),
    ),
    InventoryVariable(
        "spark_auth_secret",
        "spark_master",
        required=False,
        note="empty: made on the master",
        used_by=("spark_master", "spark_worker"),
    ),
)
SECRETS: tuple[str, ...] = tuple(v.name for v in INVENTORY_VARIABLES if v.secret)


def required_variables(groups: Mapping[str, Iterable[str]]) -> list[str]:
    """The INVENTORY_VARIABLES this inventory must set: the always-required ones, and those of
    the groups that have hosts."""
    return [
        v.name
        for v in INVENTORY_VARIABLES
        if v.required and (v.needed_with == "all" or list(groups.get(v.needed_with) or []))
    ]


def _metadata_mode(hostvars: Mapping[str, Mapping], host: str) -> str:
    """A host's data centre mode as the roles read it (kafka_common's default: zookeeper)."""
    value, problem = _read(hostvars, host, "kafka_metadata_mode")
    return "zookeeper" if problem or value is None else str(value)


class _Unreadable(Exception):
    pass


def _plain(value: Any) -> Any:
    """A value with every list and mapping inside it templated now (Ansible's are lazy). A value
    made of a variable the preflight does not have (a role default) is Jinja's Undefined: unreadable."""
    if any(c.__name__ == "Undefined" for c in type(value).__mro__):  # jinja2 without importing it
        raise _Unreadable("it uses a variable only the roles define")
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _read(hostvars: Mapping[str, Mapping], host: str, name: str) -> tuple[Any, str | None]:
    """A host's variable, templated all through (Ansible's hostvars are lazy), or why it could not be."""
    try:
        return _plain(hostvars.get(host, {}).get(name)), None
    except Exception as exc:  # an undefined variable inside it, a vault it cannot open, ...
        return None, f"{type(exc).__name__}: {exc}"


def missing_variables(groups: Mapping[str, Iterable[str]], hostvars: Mapping[str, Mapping]) -> list[str]:
    """The required INVENTORY_VARIABLES that are unset or empty on a host whose plays read them:
    one message for those no host has, one per variable some hosts lack (naming them)."""
    nowhere: list[str] = []
    errors: list[str] = []
    for v in required_variables(groups):
        spec = next(x for x in INVENTORY_VARIABLES if x.name == v)
        hosts = [
            h
            for h in dict.fromkeys(h for g in spec.used_by for h in groups.get(g) or [])
            if _metadata_mode(hostvars, h) in spec.modes
        ]
        lacking, unreadable = [], []
        for h in hosts:
            value, problem = _read(hostvars, h, v)
            if problem:
                unreadable.append(f"{v} cannot be read on host {h} ({problem})")
            elif is_blank(value):
                lacking.append(h)
        errors += unreadable
        if hosts and len(lacking) == len(hosts):
            nowhere.append(v)
        elif lacking:
            errors.append(
                f"{v} is missing or empty on host(s) {lacking}; every host of {list(spec.used_by)} needs it "
                "(set it in group_vars/all, ansible-vault)"
            )
    if nowhere:
        errors.insert(
            0,
            f"missing or empty variable(s) {nowhere}: put the secrets in an ansible-vault file of the "
            'inventory (README, "Secrets") and kafka_pki_ca_dir in its group_vars',
        )
    return errors


def _zookeeper_settings(members: list[str], zks: list[str], hostvars: Mapping[str, Mapping]) -> list[str]:
    """The ZooKeeper-only variables set on a DC's hosts (the zookeeper hosts themselves aside:
    they are reported as hosts). Host facts name their host; inventory variables once."""
    found: list[str] = []
    for h in members:
        hv = hostvars.get(h, {})
        for key in ZOOKEEPER_ONLY_VARS:
            if key not in hv or (key == "zookeeper_id" and h in zks):
                continue
            label = f"{key} ({h})" if key == "zookeeper_id" else key
            if label not in found:
                found.append(label)
    return found


def mixed_metadata_modes(groups: Mapping[str, list[str]], hostvars: Mapping[str, Mapping]) -> list[str]:
    """One message per data centre whose hosts disagree on kafka_metadata_mode: it is one
    setting of the whole DC (its group vars), never per host."""
    errors = []
    for dc in data_centres(groups, hostvars):
        modes: dict[str, list[str]] = {}
        for h in groups.get(dc, []):
            if "kafka_metadata_mode" in hostvars.get(h, {}):
                modes.setdefault(str(hostvars[h]["kafka_metadata_mode"]), []).append(h)
        if len(modes) > 1:
            errors.append(
                f"{dc}: its hosts disagree on kafka_metadata_mode ({dict(sorted(modes.items()))}); "
                f"set it once for the data centre, in group_vars/{dc}.yml"
            )
    return errors


REQUIRED_HOSTVARS = {
    "all": ("dc", "kafka_rack", "private_ip"),
    "kafka_broker": ("broker_id",),
    "zookeeper": ("zookeeper_id",),
    "kafka_controller": ("controller_id",),
}


def missing_hostvars(groups: Mapping[str, list[str]], hostvars: Mapping[str, Mapping]) -> list[str]:
    """One message per host that lacks a variable the roles need."""
    errors = []
    for group, keys in REQUIRED_HOSTVARS.items():
        for host in groups.get(group, []):
            hv = hostvars.get(host, {})
            missing = [k for k in keys if hv.get(k) in (None, "")]
            if missing:
                errors.append(f"host {host} ({group}) is missing required variable(s) {missing}")
    return errors


# The Kafka release line of a DC that declares no kafka_version (kafkakit.rules.topology: ZooKeeper mode
# runs 3.x, KRaft 4.x), for its topic configs.
ZOOKEEPER_LINE, KRAFT_LINE = "3.9", "4.0"
# Settings kafkakit.rules.topology reads as numbers, and the least each may be (None: any number).
INTEGER_SETTINGS: dict[str, int | None] = {
    "kafka_default_replication_factor": 1,
    "kafka_min_insync_replicas": None,  # below 1: kafkakit.rules.topology says why
    "kafka_offsets_topic_replication_factor": 1,
    "kafka_transaction_state_log_replication_factor": 1,
    "kafka_transaction_state_log_min_isr": 1,
    "kafka_share_coordinator_state_topic_replication_factor": 1,
    "zookeeper_min_ensemble": None,
    "kafka_min_controllers": None,
    "kafka_connect_min_workers": 1,
    "kafka_connect_replication_factor": 1,
    "kafka_connect_min_insync_replicas": 1,
    "kafka_connect_rebalance_delay_ms": 0,  # scheduled.rebalance.max.delay.ms: a delay, never negative
    "kafka_connect_ready_timeout": 1,
    "kafka_connect_worker_sync_timeout_ms": 1,
}


# Variables the other input rules check with their own messages (the host facts, the integer
# settings above, the TLS versions, the data directories, the extra properties' shape, the topics,
# users (their quotas, and the default ones) and ACLs, the MirrorMaker 2 flows): the argument specs'
# check leaves them to those.
CHECKED_BY_OWN_RULES = frozenset(
    {
        *REQUIRED_HOSTVARS["all"],
        *NUMERIC_HOSTVARS.values(),
        *INTEGER_SETTINGS,
        "kafka_tls_protocols",
        "zookeeper_tls_protocols",
        "kafka_data_dirs",
        "kafka_extra_properties",
        "kafka_controller_extra_properties",
        "kafka_connect_extra_properties",
        "mirrormaker_extra_properties",
        "kafka_topics",
        "kafka_users",
        "kafka_user_quota_defaults",
        "kafka_acls",
        "mirrormaker_flows",
        "mirrormaker_replication_policy",
    }
)


def _first(hostvars: Mapping[str, Mapping], hosts: list[str], key: str, defaults: Mapping[str, Any]) -> Any:
    """A DC setting as topology_from_inventory reads it: the first host that sets it, else the default."""
    for h in hosts:
        if key in hostvars.get(h, {}):
            return hostvars[h][key]
    return defaults.get(key)


def _values_of(
    groups: Mapping[str, list[str]], hostvars: Mapping[str, Mapping], defaults: Mapping[str, Any], key: str
) -> dict[str, tuple[Any, list[str]]]:
    """A setting's values (by their repr, so one message covers a group variable) -> the hosts that
    set each; the role default when no host sets it."""
    where: dict[str, tuple[Any, list[str]]] = {}
    for h in groups.get("all", []):
        if key in hostvars.get(h, {}):
            value = hostvars[h][key]
            where.setdefault(repr(value), (value, []))[1].append(h)
    if not where and defaults.get(key) is not None:
        where[repr(defaults[key])] = (defaults[key], ["the role default"])
    return where


def tls_protocol_errors(
    groups: Mapping[str, list[str]], hostvars: Mapping[str, Mapping], defaults: Mapping[str, Any]
) -> list[str]:
    """A message per TLS version list that enables a version Kafka does not by default."""
    errors = []
    for key in ("kafka_tls_protocols", "zookeeper_tls_protocols"):
        for shown, (value, hosts) in _values_of(groups, hostvars, defaults, key).items():
            problem = tls_protocols_problem(value)
            if problem:
                errors.append(f"{key}={shown} on {hosts} {problem}")
    return errors


def session_setting_errors(
    groups: Mapping[str, list[str]], hostvars: Mapping[str, Mapping], defaults: Mapping[str, Any]
) -> list[str]:
    """Per data centre, the session settings against each other (kafkakit.rules.sessions): a
    ZooKeeper DC's brokers' session against what its ensemble grants, a KRaft DC's heartbeat
    interval against the lease on its brokers and controllers. Values that are no whole numbers
    are left to the argument specs."""

    def number(host: str, key: str) -> int | None:
        if key not in hostvars.get(host, {}):
            return whole_number(defaults.get(key))
        value, problem = _read(hostvars, host, key)
        return None if problem else whole_number(value)

    errors = []
    for dc in data_centres(groups, hostvars):
        brokers = _dc_hosts(groups, dc, "kafka_broker")
        if not brokers:
            continue
        if _metadata_mode(hostvars, brokers[0]) == "kraft":
            leases: dict[tuple[int, int], list[str]] = {}
            for h in brokers + _dc_hosts(groups, dc, "kafka_controller"):
                pair = (number(h, "kafka_broker_session_timeout_ms"), number(h, "kafka_broker_heartbeat_interval_ms"))
                if None not in pair:
                    leases.setdefault(pair, []).append(h)  # type: ignore[arg-type]
            errors += lease_errors(dc, leases)
            continue
        servers = _dc_hosts(groups, dc, "zookeeper")
        if not servers:
            continue  # the topology rules refuse a ZooKeeper DC without an ensemble
        keys = ("zookeeper_tick_time", "zookeeper_min_session_timeout", "zookeeper_max_session_timeout")
        tick, low, high = (number(servers[0], k) for k in keys)
        if tick is None or low is None or high is None:
            continue
        sessions: dict[int, list[str]] = {}
        for h in brokers:
            requested = number(h, "kafka_zookeeper_session_timeout_ms")
            if requested is not None:
                sessions.setdefault(requested, []).append(h)
        errors += zookeeper_session_errors(dc, Ensemble(tick, low, high), sessions)
    return errors


def integer_setting_errors(
    groups: Mapping[str, list[str]],
    hostvars: Mapping[str, Mapping],
    defaults: Mapping[str, Any],
    only: str | None = None,
) -> list[str]:
    """A message per numeric setting (INTEGER_SETTINGS; `only`: that one) that is no whole number or
    is too small."""
    errors = []
    for key, least in INTEGER_SETTINGS.items():
        if only is not None and key != only:
            continue
        for shown, (value, hosts) in _values_of(groups, hostvars, defaults, key).items():
            number = whole_number(value)
            if number is None:
                errors.append(f"{key}={shown} on {hosts} is not a whole number")
            elif least is not None and number < least:
                errors.append(f"{key}={number} on {hosts} must be at least {least}")
    return errors


def _dc_release(
    groups: Mapping[str, list[str]], hostvars: Mapping[str, Mapping], defaults: Mapping[str, Any], dc: str
) -> str:
    """The Kafka release a DC's brokers and controllers run: the declared one, else the line of its mode."""
    servers = _dc_hosts(groups, dc, "kafka_broker") + _dc_hosts(groups, dc, "kafka_controller")
    version = _first(hostvars, servers, "kafka_version", defaults)
    mode = _first(hostvars, groups.get(dc, []), "kafka_metadata_mode", defaults)
    return str(version) if version is not None else KRAFT_LINE if mode == "kraft" else ZOOKEEPER_LINE


def _connect_release(hostvars: Mapping[str, Mapping], host: str) -> str:
    """The Kafka release a Connect worker runs: a 4.x one (kafkakit.rules.connect)."""
    version, problem = _read(hostvars, host, "kafka_connect_version")
    return str(version) if not problem and version is not None and kafka_major(str(version)) else KRAFT_LINE


def setting_errors(
    groups: Mapping[str, list[str]],
    hostvars: Mapping[str, Mapping],
    defaults: Mapping[str, Any],
    argument_specs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """The values of the settings the inventory gives the roles (kafkakit.rules.settings): extra
    properties and the kit's own variables against Kafka's definitions and the roles' argument
    specs, ports, super users."""
    everyone = list(groups.get("all", []))
    releases = {dc: _dc_release(groups, hostvars, defaults, dc) for dc in data_centres(groups, hostvars)}

    def read(host: str, name: str) -> tuple[Any, str | None]:
        return _read(hostvars, host, name)

    def release(host: str, component: str) -> str | None:
        if component == "connect" and host in groups.get("kafka_connect", []):
            return _connect_release(hostvars, host)
        value, problem = _read(hostvars, host, "dc")
        return None if problem or value is None else releases.get(str(value))

    refused = argument_spec_errors(groups, read, argument_specs or {}, skip=CHECKED_BY_OWN_RULES)
    errors = [message for messages in refused.values() for message in messages]
    # A whole number the integer rule refuses is said once, by it.
    said = {*refused, *(k for k in INTEGER_SETTINGS if integer_setting_errors(groups, hostvars, defaults, k))}
    errors += kit_property_errors(groups, read, release, skip=said)
    for group, variable, component, is_protected in (
        ("kafka_broker", "kafka_extra_properties", "broker", protected),
        ("kafka_controller", "kafka_controller_extra_properties", "broker", protected),
        ("kafka_connect", "kafka_connect_extra_properties", "connect", connect_protected),
        ("mirrormaker", "mirrormaker_extra_properties", "mirrormaker", connect_protected),
    ):
        extras = {h: (release(h, component), read(h, variable)[0]) for h in groups.get(group, [])}
        errors += extra_property_value_errors(variable, component, extras, is_protected, releases)
    errors += port_errors(everyone, read, skip=refused) + super_user_errors(everyone, read)
    return errors + admin_client_errors(everyone, read)


def input_errors(
    groups: Mapping[str, list[str]],
    hostvars: Mapping[str, Mapping],
    defaults: Mapping[str, Any],
    argument_specs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """Everything wrong with the inventory's values as typed (kafkakit.rules.hosts, topic_rules,
    access_rules, broker_properties, settings): what a role would choke on, or apply and regret."""
    everyone = list(groups.get("all", []))
    brokers_all = list(groups.get("kafka_broker", []))
    errors = node_id_errors(groups, hostvars) + private_ip_errors(everyone, hostvars)
    errors += integer_setting_errors(groups, hostvars, defaults)
    errors += data_dir_errors(brokers_all, hostvars, defaults)
    errors += tls_protocol_errors(groups, hostvars, defaults)
    errors += session_setting_errors(groups, hostvars, defaults)
    # (group, its extra-properties variable, what may not be overridden, what to set instead)
    for group, variable, is_protected, instead in (
        ("kafka_broker", "kafka_extra_properties", protected, PROTECTED_PROPERTIES),
        ("kafka_controller", "kafka_controller_extra_properties", protected, {}),
        ("kafka_connect", "kafka_connect_extra_properties", connect_protected, CONNECT_PROTECTED),
        ("mirrormaker", "mirrormaker_extra_properties", connect_protected, CONNECT_PROTECTED),
    ):
        extra = {h: hostvars.get(h, {}).get(variable) for h in groups.get(group, [])}
        errors += extra_property_errors(extra, variable, is_protected, instead)
    errors += setting_errors(groups, hostvars, defaults, argument_specs)
    for dc in data_centres(groups, hostvars):
        brokers = _dc_hosts(groups, dc, "kafka_broker")
        if not brokers:
            continue
        # Topic configs of the DC's release: the declared one, else the line its mode runs.
        line = _dc_release(groups, hostvars, defaults, dc)
        topics = _first(hostvars, brokers, "kafka_topics", defaults)
        errors += topic_errors(dc, [] if topics is None else topics, line)
        service_users = (
            "kafka_admin_user",
            "kafka_mirrormaker_user",
            "kafka_spark_user",
            "kafka_monitoring_user",
            "kafka_connect_user",
        )
        known = [str(u) for key in service_users if (u := _first(hostvars, brokers, key, defaults))]
        errors += acl_principal_errors(
            dc,
            _first(hostvars, brokers, "kafka_acls", defaults),
            _first(hostvars, brokers, "kafka_users", defaults),
            known + brokers,  # a broker's principal is its certificate's CN, its inventory name
        )
        errors += quota_default_errors(dc, _first(hostvars, brokers, "kafka_user_quota_defaults", defaults))
    for dc in data_centres(groups, hostvars):
        workers = _dc_hosts(groups, dc, "kafka_connect")
        keys = (
            "kafka_connect_version",
            "kafka_connect_min_workers",
            "kafka_connect_replication_factor",
            "kafka_connect_min_insync_replicas",
            "kafka_connect_rebalance_delay_ms",
            "kafka_connect_ready_timeout",
            "kafka_connect_worker_sync_timeout_ms",
        )
        settings = {k: _first(hostvars, workers, k, defaults) for k in keys}
        errors += connect_errors(dc, workers, _dc_hosts(groups, dc, "kafka_broker"), settings)
    return errors


def preflight_errors(
    groups: Mapping[str, list[str]],
    hostvars: Mapping[str, Mapping],
    defaults: Mapping[str, Any],
    argument_specs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """Everything the preflight refuses: missing variables first, then values that are wrong as
    typed, then the topology rules (read from values known to be well formed). `argument_specs`:
    the roles' meta/argument_specs.yml (role -> its argument_specs), which the inventory's values
    are checked against too."""
    missing = missing_hostvars(groups, hostvars) or host_name_errors(list(groups.get("all", [])), hostvars)
    if missing:
        return missing
    mixed = mixed_metadata_modes(groups, hostvars)
    if mixed:
        return mixed
    wrong = input_errors(groups, hostvars, defaults, argument_specs)
    if wrong:
        return wrong
    return validate(topology_from_inventory(groups, hostvars, defaults))

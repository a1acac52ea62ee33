"""The server.properties settings `kafka_extra_properties` may not override: the ones that make
the kit secure and durable by default. The template sets them from the kit's own variables (or
not at all, where the secure choice is Kafka's default); an extra property with the same name
would silently win, so the preflight refuses it and names the variable to use instead.
"""

from __future__ import annotations

from collections.abc import Mapping

# Exact names -> what to do instead (empty: the kit does not let it change).
PROTECTED_PROPERTIES: dict[str, str] = {
    # Security: listeners, who authenticates how, who may do what.
    "listeners": "",
    "advertised.listeners": "",
    "listener.security.protocol.map": "",
    "inter.broker.listener.name": "",
    "security.inter.broker.protocol": "",
    "authorizer.class.name": "",
    "allow.everyone.if.no.acl.found": "",
    "super.users": "kafka_admin_user",
    "principal.builder.class": "",
    "zookeeper.connect": "kafka_zookeeper_connect",
    "zookeeper.set.acl": "",
    "zookeeper.clientCnxnSocket": "",
    "delegation.token.secret.key": "",
    "delegation.token.master.key": "",
    "password.encoder.secret": "",
    # Durability: replicas, acknowledged writes, where the data lives (the encrypted volume).
    "unclean.leader.election.enable": "",
    "min.insync.replicas": "kafka_min_insync_replicas",
    "default.replication.factor": "kafka_default_replication_factor",
    "offsets.topic.replication.factor": "kafka_offsets_topic_replication_factor",
    "transaction.state.log.replication.factor": "kafka_transaction_state_log_replication_factor",
    "transaction.state.log.min.isr": "kafka_transaction_state_log_min_isr",
    "log.dirs": "kafka_data_dirs",
    "log.dir": "kafka_data_dirs",
    "broker.id": "broker_id",
    "broker.rack": "kafka_rack",
    "auto.create.topics.enable": "kafka_auto_create_topics",
}
# Whole families: every TLS, SASL and per-listener setting, and the brokers' TLS/SASL to ZooKeeper.
PROTECTED_PREFIXES: tuple[str, ...] = ("ssl.", "sasl.", "listener.name.", "zookeeper.ssl.", "zookeeper.sasl.")


def protected(key: str) -> bool:
    return key in PROTECTED_PROPERTIES or key.startswith(PROTECTED_PREFIXES)


def extra_property_errors(extra_by_host: Mapping[str, object]) -> list[str]:
    """One message per protected key that any broker's kafka_extra_properties sets, naming the
    hosts (a group variable names them all) and what to set instead."""
    hosts_by_key: dict[str, list[str]] = {}
    errors = []
    for host, extra in extra_by_host.items():
        if extra in (None, ""):
            continue
        if not isinstance(extra, Mapping):
            errors.append(f"host {host}: kafka_extra_properties must be a mapping of property names to values")
            continue
        for key in extra:
            if protected(str(key)):
                hosts_by_key.setdefault(str(key), []).append(host)
    for key, hosts in sorted(hosts_by_key.items()):
        instead = PROTECTED_PROPERTIES.get(key, "")
        hint = f"set {instead} instead" if instead else "the kit sets it for security or durability and keeps it"
        errors.append(f"kafka_extra_properties of {hosts} overrides {key}: {hint}")
    return errors

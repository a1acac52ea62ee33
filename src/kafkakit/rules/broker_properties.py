"""The settings the extra properties of a broker, a controller, a Connect worker or MirrorMaker 2
may not override: the ones that make the kit secure and durable by default. The templates set them
from the kit's own variables (or not at all, where the secure choice is Kafka's default); an extra
property with the same name would silently win, so the preflight refuses it and names the variable
to use instead. And the TLS versions the kit may enable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

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


# Kafka Connect's worker and MirrorMaker 2 (connect-distributed.properties, mm2.properties): the
# security of every client they open, whatever its prefix ("", producer., consumer., admin., a cluster
# alias), the REST listeners, and the file config provider's allowed paths.
CONNECT_PROTECTED: dict[str, str] = {
    "listeners": "",
    "admin.listeners": "",
    "rest.advertised.listener": "",
    "config.providers": "",
    "connector.client.config.override.policy": "kafka_connect_client_config_override_policy",
    # MirrorMaker 2's internal REST server is plain HTTP: the kit opens it only where a data centre has
    # several MirrorMaker hosts to coordinate, on the private address.
    "dedicated.mode.enable.internal.rest": "",
}
_CLIENT_SECURITY = re.compile(r"(^|\.)(security\.protocol$|sasl\.|ssl\.)")


def connect_protected(key: str) -> bool:
    return (
        key in CONNECT_PROTECTED
        or key.startswith(("listeners.", "config.providers."))
        or _CLIENT_SECURITY.search(key) is not None
    )


def extra_property_errors(
    extra_by_host: Mapping[str, object],
    variable: str = "kafka_extra_properties",
    is_protected: Callable[[str], bool] = protected,
    instead_of: Mapping[str, str] = PROTECTED_PROPERTIES,
) -> list[str]:
    """One message per protected key that any host's `variable` (its extra properties) sets, naming
    the hosts (a group variable names them all) and what to set instead."""
    hosts_by_key: dict[str, list[str]] = {}
    errors = []
    for host, extra in extra_by_host.items():
        if extra in (None, ""):
            continue
        if not isinstance(extra, Mapping):
            errors.append(f"host {host}: {variable} must be a mapping of property names to values")
            continue
        for key in extra:
            if is_protected(str(key)):
                hosts_by_key.setdefault(str(key), []).append(host)
    for key, hosts in sorted(hosts_by_key.items()):
        instead = instead_of.get(key, "")
        hint = f"set {instead} instead" if instead else "the kit sets it for security or durability and keeps it"
        errors.append(f"{variable} of {hosts} overrides {key}: {hint}")
    return errors


# The TLS versions Kafka enables by default (org.apache.kafka.common.config.SslConfigs
# .DEFAULT_SSL_ENABLED_PROTOCOLS of every Kafka archive the kit ships; tests/unit/rules/
# test_kafka_definitions.py compares): an older one is broken, another name fails every handshake.
KAFKA_TLS_PROTOCOLS = ("TLSv1.2", "TLSv1.3")


def tls_protocols_problem(value: object) -> str | None:
    """What is wrong with a kafka_tls_protocols / zookeeper_tls_protocols value, said after it."""
    if not isinstance(value, list) or not value:
        return f"must be a non-empty list of TLS versions, of {list(KAFKA_TLS_PROTOCOLS)}"
    bad = [p for p in value if p not in KAFKA_TLS_PROTOCOLS]
    if bad:
        return (
            f"enables {bad}: only Kafka's default TLS versions {list(KAFKA_TLS_PROTOCOLS)} are allowed "
            "(an older one is broken)"
        )
    return None

"""A data centre's declared users, their quotas and ACLs (roles/kafka_resources): every ACL must be
for a principal that exists, or it grants nothing today and everything to whoever takes the name
later; every entry and quota must be one Kafka takes; and no ACL may open the cluster to every user or
to unauthenticated clients.

The values are checked by the validators the kafka_acls and kafka_scram_users modules apply
(kafkakit.cluster.acls, kafkakit.cluster.scram_users: Kafka's operations, resource types, pattern
types and SCRAM mechanisms, through confluent-kafka's enums), so the preflight refuses exactly what
those modules would, before any host is touched. They are imported when called: the Pulumi program
imports this package without confluent-kafka. The quotas are checked by kafkakit.cluster.quotas, as
the kafka_quotas action plugin checks them (Kafka's types for each quota, above 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# Kafka's wildcard principal (every user) and the principal of a client that did not authenticate
# (org.apache.kafka.common.security.auth.KafkaPrincipal.ANONYMOUS).
WILDCARD_PRINCIPAL = "User:*"
ANONYMOUS_PRINCIPAL = "User:ANONYMOUS"
# What the kit never allows every user: ALL, and the operations that create, change or delete what
# others own or run the cluster. Reading, writing and describing stay grantable to everyone.
NOT_FOR_EVERYONE = frozenset({"ALL", "ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DELETE"})


def declared_users(users: object) -> tuple[list[str], list[str]]:
    """The names of the users kafka_users keeps (state present), and one message per malformed entry:
    no name, or a mechanism, state, password or quota the kafka_scram_users and kafka_quotas modules
    would refuse."""
    from kafkakit.cluster.quotas import user_quota_errors
    from kafkakit.cluster.scram_users import user_errors

    if users in (None, ""):
        return [], []
    if not isinstance(users, list):
        return [], [f"kafka_users must be a list of users (name, password), not {users!r}"]
    names, errors = [], []
    for i, user in enumerate(users):
        if not isinstance(user, Mapping) or not isinstance(user.get("name"), str) or not user["name"]:
            errors.append(f"kafka_users[{i}] has no name")
            continue
        problems = user_errors(i, user)
        errors += [f"kafka_{p}" for p in problems]
        if not problems and user.get("state", "present") == "present":
            names.append(user["name"])
    return names, errors + user_quota_errors(users)


def quota_default_errors(dc: str, defaults: object) -> list[str]:
    """One message per quota of kafka_user_quota_defaults (Kafka's default user entity) Kafka would refuse."""
    from kafkakit.cluster.quotas import quota_errors

    return [] if defaults is None else [f"{dc}: {e}" for e in quota_errors("kafka_user_quota_defaults", defaults)]


def _acl_value_errors(where: str, principal: str, acl: Mapping) -> list[str]:
    """What the kafka_acls module would refuse in the entry, else what it would grant too widely."""
    from kafkakit.cluster.acls import desired_bindings, entry_errors

    problems = entry_errors(acl)
    if problems:
        return [f"{where}: {p}" for p in problems]
    allowed = {k.operation for k in desired_bindings([acl]) if k.permission == "ALLOW"}
    if principal == ANONYMOUS_PRINCIPAL and allowed:
        return [
            f"{where}: allows {ANONYMOUS_PRINCIPAL}, Kafka's principal of a client that did not authenticate; "
            "grant to declared users"
        ]
    wide = sorted(allowed & NOT_FOR_EVERYONE)
    if principal == WILDCARD_PRINCIPAL and wide:
        return [
            f"{where}: allows {', '.join(o.lower() for o in wide)} to every user ({WILDCARD_PRINCIPAL}); the kit "
            f"grants everyone at most reads, writes and describes: name the users"
        ]
    return []


def acl_principal_errors(dc: str, acls: object, users: object, known: Iterable[str]) -> list[str]:
    """One message per kafka_acls entry of `dc` whose principal is no declared user: kafka_users
    (present), or `known` (the admin, the kit's service users, the brokers' certificate names); per
    value the kafka_acls module would refuse; per grant too wide for everyone or the unauthenticated."""
    names, errors = declared_users(users)
    errors = [f"{dc}: {e}" for e in errors]
    if acls in (None, ""):
        return errors
    if not isinstance(acls, list):
        return [*errors, f"{dc}: kafka_acls must be a list of ACL entries, not {acls!r}"]
    everyone = set(names) | set(known) | {"*"}
    for i, acl in enumerate(acls):
        principal = acl.get("principal") if isinstance(acl, Mapping) else None
        if not isinstance(principal, str):
            errors.append(f"{dc}: kafka_acls[{i}] has no principal (User:<name>)")
            continue
        kind, _, name = principal.partition(":")
        if kind != "User" or not name:
            errors.append(f"{dc}: kafka_acls[{i}] principal {principal!r} is not of the form User:<name>")
            continue
        if name not in everyone and principal != ANONYMOUS_PRINCIPAL:
            errors.append(
                f"{dc}: kafka_acls[{i}] is for {principal}, which no declared user has; add {name} to "
                f"kafka_users or fix the principal (declared: {sorted(names)})"
            )
        errors += _acl_value_errors(f"{dc}: kafka_acls[{i}]", principal, acl)
    return errors

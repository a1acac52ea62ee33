"""ACLs as code: declared bindings vs. the cluster's, and applying the difference.

The pure part (validation, binding keys, planning, rendering) works on plain strings so it can be
tested without a cluster; `AdminAclStore` is the only piece that talks to Kafka.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from kafkakit.cluster.admin import failed_futures

TIMEOUT = 30.0
CLUSTER_NAME = "kafka-cluster"

# Operations each resource type accepts, as Kafka's own kafka-acls tool enforces them; ALL is valid on every type.
SUPPORTED_OPERATIONS: dict[str, frozenset[str]] = {
    "topic": frozenset("READ WRITE CREATE DESCRIBE DELETE ALTER DESCRIBE_CONFIGS ALTER_CONFIGS ALL".split()),
    "group": frozenset("READ DESCRIBE DELETE ALL".split()),
    "cluster": frozenset(
        "CREATE CLUSTER_ACTION DESCRIBE ALTER DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE ALL".split()
    ),
    "transactional_id": frozenset("DESCRIBE WRITE ALL".split()),
}
ALL_OPERATIONS = frozenset().union(*SUPPORTED_OPERATIONS.values())
PATTERN_TYPES = ("literal", "prefixed")
PERMISSIONS = ("allow", "deny")
ENTRY_KEYS = frozenset({"principal", "resource_type", "name", "pattern_type", "operations", "permission", "host"})

# librdkafka calls Kafka's CLUSTER resource type BROKER (same wire value, 4).
_RESOURCE_TO_ENUM = {
    "topic": ResourceType.TOPIC,
    "group": ResourceType.GROUP,
    "cluster": ResourceType.BROKER,
    "transactional_id": ResourceType.TRANSACTIONAL_ID,
}
_ENUM_TO_RESOURCE = {v: k for k, v in _RESOURCE_TO_ENUM.items()}


class AclError(Exception):
    """Invalid declarations, or a failed ACL API call."""


class AclKey(NamedTuple):
    """One Kafka ACL binding in canonical form: hashable, sortable and comparable with the cluster's."""

    principal: str
    resource_type: str  # topic | group | cluster | transactional_id
    name: str
    pattern_type: str  # literal | prefixed
    operation: str  # upper case, e.g. READ, DESCRIBE_CONFIGS
    permission: str  # ALLOW | DENY
    host: str


def render(key: AclKey) -> str:
    """One readable line, e.g. 'User:app1 ALLOW READ topic:orders (literal) from *'."""
    return (
        f"{key.principal} {key.permission} {key.operation} "
        f"{key.resource_type}:{key.name} ({key.pattern_type}) from {key.host}"
    )


def render_all(keys: Iterable[AclKey]) -> list[str]:
    return sorted(render(k) for k in keys)


def _canonical_operation(raw: Any) -> str | None:
    # Accept read / READ / describe_configs / describe-configs / DescribeConfigs alike.
    squashed = re.sub(r"[-_\s]", "", str(raw)).lower()
    for op in ALL_OPERATIONS:
        if op.replace("_", "").lower() == squashed:
            return op
    return None


def _validate_principal(principal: Any) -> list[str]:
    if not isinstance(principal, str) or not re.fullmatch(r"[^:\s]+:\S.*", principal):
        return [f"principal {principal!r} must look like 'User:name'"]
    return []


def _validate_resource(rtype: Any, name: Any, pattern: Any) -> list[str]:
    if rtype not in SUPPORTED_OPERATIONS:
        return [f"unknown resource_type {rtype!r}; expected one of {', '.join(SUPPORTED_OPERATIONS)}"]
    errors = []
    if pattern not in PATTERN_TYPES:
        errors.append(f"unknown pattern_type {pattern!r}; expected literal or prefixed")
    if rtype == "cluster":
        if name != CLUSTER_NAME:
            errors.append(f"the cluster resource is named {CLUSTER_NAME!r}, not {name!r}")
        if pattern == "prefixed":
            errors.append("the cluster resource cannot use a prefixed pattern")
    elif not isinstance(name, str) or not name:
        errors.append(f"{rtype} ACLs need a non-empty name")
    elif pattern == "prefixed" and name == "*":
        errors.append("'*' is a literal wildcard; a prefixed pattern needs a real prefix")
    return errors


def _validate_operations(rtype: str, operations: Any) -> tuple[list[str], list[str]]:
    """The canonical operations and the errors found among them."""
    if not isinstance(operations, list) or not operations:
        return [], ["operations must be a non-empty list"]
    canonical, errors = [], []
    for raw in operations:
        op = _canonical_operation(raw)
        if op is None:
            errors.append(f"unknown operation {raw!r}")
        elif rtype in SUPPORTED_OPERATIONS and op not in SUPPORTED_OPERATIONS[rtype]:
            allowed = ", ".join(sorted(o.lower() for o in SUPPORTED_OPERATIONS[rtype]))
            errors.append(f"operation {op.lower()} does not apply to {rtype} (allowed: {allowed})")
        else:
            canonical.append(op)
    return canonical, errors


def _entry_keys(entry: Mapping[str, Any]) -> tuple[set[AclKey], list[str]]:
    """The bindings one declared entry expands to (one per operation) and its validation errors."""
    unknown = sorted(set(entry) - ENTRY_KEYS)
    errors = [f"unknown field(s) {', '.join(unknown)}"] if unknown else []
    principal = entry.get("principal")
    rtype = str(entry.get("resource_type") or "").lower()
    pattern = str(entry.get("pattern_type") or "literal").lower()
    permission = str(entry.get("permission") or "allow").lower()
    host = entry.get("host") or "*"
    # The cluster has exactly one legal name, so it may be left out.
    name = entry.get("name") or (CLUSTER_NAME if rtype == "cluster" else None)

    errors += _validate_principal(principal)
    errors += _validate_resource(rtype, name, pattern)
    if permission not in PERMISSIONS:
        errors.append(f"unknown permission {permission!r}; expected allow or deny")
    if not isinstance(host, str):
        errors.append(f"host {host!r} must be a string")
    operations, op_errors = _validate_operations(rtype, entry.get("operations"))
    errors += op_errors
    if errors:
        return set(), errors
    keys = {AclKey(principal, rtype, name, pattern, op, permission.upper(), host) for op in operations}
    return keys, []


def entry_errors(entry: Mapping[str, Any]) -> list[str]:
    """What desired_bindings would refuse in one declared entry (empty: nothing); the preflight asks."""
    return _entry_keys(entry)[1]


def desired_bindings(entries: Sequence[Mapping[str, Any]]) -> set[AclKey]:
    """Validate every declared entry and expand them to binding keys; one AclError lists all problems."""
    desired: set[AclKey] = set()
    problems = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            problems.append(f"acls[{index}]: expected a mapping, got {type(entry).__name__}")
            continue
        keys, errors = _entry_keys(entry)
        label = f"acls[{index}] ({entry.get('principal')} {entry.get('resource_type')}:{entry.get('name')})"
        problems += [f"{label}: {e}" for e in errors]
        desired |= keys
    if problems:
        raise AclError("invalid ACL declarations:\n  " + "\n  ".join(problems))
    return desired


@dataclass
class AclPlan:
    to_add: list[AclKey] = field(default_factory=list)
    to_remove: list[AclKey] = field(default_factory=list)
    # Present, not declared, not protected: what `exclusive` removes, listed either way.
    undeclared: list[AclKey] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.to_add or self.to_remove)

    @property
    def added(self) -> list[str]:
        return render_all(self.to_add)

    @property
    def removed(self) -> list[str]:
        return render_all(self.to_remove)


def _is_protected(key: AclKey, principals: Collection[str], topic_prefixes: Collection[str]) -> bool:
    if key.principal in principals:
        return True
    return key.resource_type == "topic" and any(key.name.startswith(p) for p in topic_prefixes)


def plan_acls(
    desired: set[AclKey],
    current: set[AclKey],
    exclusive: bool,
    protected_principals: Collection[str] = (),
    protected_topic_prefixes: Collection[str] = (),
) -> AclPlan:
    """Add what is declared and missing; with `exclusive`, remove what is present and undeclared,
    except bindings of protected principals (the admin and brokers must not lock themselves out)
    and topic bindings another owner manages (MirrorMaker 2's ACL sync on mirrored topics)."""
    to_add = sorted(desired - current)
    principals = set(protected_principals)
    undeclared = sorted(k for k in current - desired if not _is_protected(k, principals, protected_topic_prefixes))
    to_remove = undeclared if exclusive else []
    after = (current - set(to_remove)) | set(to_add)
    return AclPlan(
        to_add=to_add,
        to_remove=to_remove,
        undeclared=undeclared,
        before=render_all(current),
        after=render_all(after),
    )


class AclStore(Protocol):
    """Where the bindings live; AdminAclStore in production, a fake in unit tests."""

    def list(self) -> set[AclKey]: ...

    def create(self, keys: Sequence[AclKey]) -> None: ...

    def delete(self, keys: Sequence[AclKey]) -> None: ...


def apply_acls(
    store: AclStore,
    desired: set[AclKey],
    exclusive: bool,
    protected_principals: Collection[str] = (),
    check_mode: bool = False,
    protected_topic_prefixes: Collection[str] = (),
) -> AclPlan:
    plan = plan_acls(desired, store.list(), exclusive, protected_principals, protected_topic_prefixes)
    if check_mode:
        return plan
    # Add before removing so a principal whose binding is being reshaped never loses access in between.
    if plan.to_add:
        store.create(plan.to_add)
    if plan.to_remove:
        store.delete(plan.to_remove)
    return plan


# --- confluent-kafka side -------------------------------------------------------------------------


def to_binding(key: AclKey) -> AclBinding:
    return AclBinding(
        _RESOURCE_TO_ENUM[key.resource_type],
        key.name,
        ResourcePatternType[key.pattern_type.upper()],
        key.principal,
        key.host,
        AclOperation[key.operation],
        AclPermissionType[key.permission],
    )


def to_exact_filter(key: AclKey) -> AclBindingFilter:
    """A filter matching this one binding only (every field set, no MATCH/ANY wildcards)."""
    b = to_binding(key)
    return AclBindingFilter(
        b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type
    )


def from_binding(binding: AclBinding) -> AclKey:
    rtype = _ENUM_TO_RESOURCE.get(binding.restype, binding.restype.name.lower())
    return AclKey(
        principal=binding.principal,
        resource_type=rtype,
        name=binding.name,
        pattern_type=binding.resource_pattern_type.name.lower(),
        operation=binding.operation.name,
        permission=binding.permission_type.name,
        host=binding.host,
    )


class AdminAclStore:
    """The cluster's ACLs through AdminClient; needs an authorizer on the brokers and an admin principal."""

    def __init__(self, admin: AdminClient, timeout: float = TIMEOUT) -> None:
        self.admin = admin
        self.timeout = timeout

    def list(self) -> set[AclKey]:
        everything = AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
        )
        try:
            bindings = self.admin.describe_acls(everything, request_timeout=self.timeout).result()
        except (KafkaException, ValueError) as exc:
            # ValueError: a binding of a resource type this client has no enum for (e.g. delegation tokens).
            raise AclError(f"cannot list ACLs: {exc}") from exc
        return {from_binding(b) for b in bindings}

    def create(self, keys: Sequence[AclKey]) -> None:
        futures = self.admin.create_acls([to_binding(k) for k in keys], request_timeout=self.timeout)
        self._wait(futures, "create")

    def delete(self, keys: Sequence[AclKey]) -> None:
        futures = self.admin.delete_acls([to_exact_filter(k) for k in keys], request_timeout=self.timeout)
        self._wait(futures, "delete")

    @staticmethod
    def _wait(futures: Mapping[AclBinding, Any], verb: str) -> None:
        failed = failed_futures(futures, lambda binding: render(from_binding(binding)))
        if failed:
            raise AclError(f"could not {verb} ACLs:\n  " + "\n  ".join(failed))

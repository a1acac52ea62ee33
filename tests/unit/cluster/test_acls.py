"""kafkakit.cluster.acls: declared ACL entries vs. the cluster's bindings, without a cluster."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from kafkakit.cluster.acls import (
    AclError,
    AclKey,
    AdminAclStore,
    apply_acls,
    desired_bindings,
    from_binding,
    plan_acls,
    render,
    to_binding,
    to_exact_filter,
)


def key(principal="User:app1", rtype="topic", name="orders", pattern="literal", op="READ", perm="ALLOW", host="*"):
    return AclKey(principal, rtype, name, pattern, op, perm, host)


def entry(**overrides):
    base = {"principal": "User:app1", "resource_type": "topic", "name": "orders", "operations": ["read"]}
    return {**base, **overrides}


class FakeStore:
    def __init__(self, current=()):
        self.current = set(current)
        self.calls = []

    def list(self):
        return set(self.current)

    def create(self, keys):
        self.calls.append(("create", list(keys)))
        self.current |= set(keys)

    def delete(self, keys):
        self.calls.append(("delete", list(keys)))
        self.current -= set(keys)


# --- normalisation -------------------------------------------------------------------------------


def test_entry_expands_to_one_binding_per_operation_with_defaults():
    assert desired_bindings([entry(operations=["read", "describe"])]) == {key(op="READ"), key(op="DESCRIBE")}


def test_operation_spellings_are_canonicalised():
    spellings = ["describe_configs", "DESCRIBE-CONFIGS", "DescribeConfigs", "describeconfigs"]
    assert desired_bindings([entry(operations=spellings)]) == {key(op="DESCRIBE_CONFIGS")}


def test_enum_like_fields_are_case_insensitive():
    got = desired_bindings([entry(resource_type="TOPIC", pattern_type="Prefixed", permission="DENY", name="ord")])
    assert got == {key(name="ord", pattern="prefixed", perm="DENY")}


def test_cluster_name_defaults_to_kafka_cluster():
    got = desired_bindings([{"principal": "User:app1", "resource_type": "cluster", "operations": ["idempotent_write"]}])
    assert got == {key(rtype="cluster", name="kafka-cluster", op="IDEMPOTENT_WRITE")}


def test_duplicate_declarations_collapse():
    assert desired_bindings([entry(), entry(operations=["READ"])]) == {key()}


def test_host_is_kept():
    assert desired_bindings([entry(host="10.0.0.7")]) == {key(host="10.0.0.7")}


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (entry(operations=["reed"]), "unknown operation 'reed'"),
        (entry(resource_type="queue"), "unknown resource_type 'queue'"),
        (
            entry(resource_type="cluster", name="kafka-cluster", pattern_type="prefixed", operations=["alter"]),
            "cluster resource cannot use a prefixed pattern",
        ),
        (entry(resource_type="cluster", name="prod", operations=["alter"]), "named 'kafka-cluster', not 'prod'"),
        (entry(resource_type="group", operations=["write"]), "operation write does not apply to group"),
        (entry(resource_type="transactional_id", operations=["read"]), "does not apply to transactional_id"),
        (entry(principal="app1"), "must look like 'User:name'"),
        (entry(name=""), "topic ACLs need a non-empty name"),
        (entry(name="*", pattern_type="prefixed"), "prefixed pattern needs a real prefix"),
        (entry(pattern_type="match"), "unknown pattern_type 'match'"),
        (entry(permission="maybe"), "unknown permission 'maybe'"),
        (entry(operations=[]), "operations must be a non-empty list"),
        (entry(operation=["read"]), "unknown field(s) operation"),
    ],
)
def test_invalid_entries_are_refused(bad, message):
    with pytest.raises(AclError, match="invalid ACL declarations") as err:
        desired_bindings([bad])
    assert message in str(err.value)


def test_all_problems_are_reported_at_once_with_their_position():
    with pytest.raises(AclError) as err:
        desired_bindings([entry(), entry(operations=["reed"]), "not-a-mapping", entry(resource_type="queue")])
    text = str(err.value)
    assert "acls[1] (User:app1 topic:orders): unknown operation 'reed'" in text
    assert "acls[2]: expected a mapping, got str" in text
    assert "acls[3]" in text and "acls[0]" not in text


def test_all_is_valid_on_every_resource_type():
    for rtype in ("topic", "group", "cluster", "transactional_id"):
        desired_bindings([entry(resource_type=rtype, name="kafka-cluster", operations=["all"])])


# --- planning ------------------------------------------------------------------------------------


def test_render_is_one_readable_line():
    assert render(key()) == "User:app1 ALLOW READ topic:orders (literal) from *"
    assert render(key(rtype="group", name="app-", pattern="prefixed", perm="DENY", host="10.0.0.1")) == (
        "User:app1 DENY READ group:app- (prefixed) from 10.0.0.1"
    )


def test_missing_bindings_are_added_and_present_ones_kept():
    plan = plan_acls({key(), key(op="DESCRIBE")}, {key()}, exclusive=True)
    assert plan.to_add == [key(op="DESCRIBE")]
    assert plan.to_remove == []
    assert plan.changed


def test_matching_state_is_a_no_op():
    plan = plan_acls({key(), key(op="DESCRIBE")}, {key(), key(op="DESCRIBE")}, exclusive=True)
    assert not plan.changed
    assert plan.before == plan.after


def test_exclusive_removes_undeclared_bindings():
    plan = plan_acls({key()}, {key(), key(op="WRITE")}, exclusive=True)
    assert plan.to_remove == [key(op="WRITE")]


def test_non_exclusive_leaves_undeclared_bindings():
    plan = plan_acls({key()}, {key(op="WRITE")}, exclusive=False)
    assert plan.to_remove == []
    assert plan.to_add == [key()]


def test_undeclared_bindings_are_listed_whether_removed_or_kept():
    for exclusive in (True, False):
        plan = plan_acls({key()}, {key(), key(op="WRITE"), key(principal="User:admin")}, exclusive, ["User:admin"])
        assert plan.undeclared == [key(op="WRITE")], exclusive


def test_protected_principals_are_never_removed():
    admin = key(principal="User:admin", op="ALL")
    broker = key(principal="User:broker", rtype="cluster", name="kafka-cluster", op="CLUSTER_ACTION")
    plan = plan_acls(set(), {admin, broker, key()}, exclusive=True, protected_principals=["User:admin", "User:broker"])
    assert plan.to_remove == [key()]


def test_literal_and_prefixed_and_host_are_distinct_bindings():
    plan = plan_acls({key(pattern="prefixed")}, {key(), key(pattern="prefixed", host="10.0.0.1")}, exclusive=True)
    assert plan.to_add == [key(pattern="prefixed")]
    assert set(plan.to_remove) == {key(), key(pattern="prefixed", host="10.0.0.1")}


def test_diff_is_sorted_lines_before_and_after():
    plan = plan_acls({key(op="WRITE")}, {key(principal="User:zed"), key()}, exclusive=True)
    assert plan.before == [
        "User:app1 ALLOW READ topic:orders (literal) from *",
        "User:zed ALLOW READ topic:orders (literal) from *",
    ]
    assert plan.after == ["User:app1 ALLOW WRITE topic:orders (literal) from *"]
    assert plan.added == ["User:app1 ALLOW WRITE topic:orders (literal) from *"]
    assert len(plan.removed) == 2


# --- applying (fake store) -----------------------------------------------------------------------


def test_check_mode_plans_without_mutating():
    store = FakeStore({key(op="WRITE")})
    plan = apply_acls(store, {key()}, exclusive=True, check_mode=True)
    assert plan.to_add == [key()] and plan.to_remove == [key(op="WRITE")]
    assert store.calls == []


def test_apply_adds_before_removing_and_second_run_is_a_no_op():
    store = FakeStore({key(op="WRITE")})
    apply_acls(store, {key()}, exclusive=True)
    assert store.calls == [("create", [key()]), ("delete", [key(op="WRITE")])]
    store.calls.clear()
    assert not apply_acls(store, {key()}, exclusive=True).changed
    assert store.calls == []


def test_apply_keeps_protected_bindings():
    admin = key(principal="User:admin", op="ALL")
    store = FakeStore({admin})
    apply_acls(store, set(), exclusive=True, protected_principals=["User:admin"])
    assert store.current == {admin}


# --- confluent-kafka conversions and the AdminClient store (fake admin) --------------------------


def test_cluster_maps_to_librdkafka_broker_resource_and_back():
    k = key(rtype="cluster", name="kafka-cluster", op="IDEMPOTENT_WRITE")
    binding = to_binding(k)
    assert binding.restype == ResourceType.BROKER
    assert binding.operation == AclOperation.IDEMPOTENT_WRITE
    assert from_binding(binding) == k


def test_round_trip_for_every_resource_type():
    for k in (key(), key(rtype="group", pattern="prefixed", perm="DENY"), key(rtype="transactional_id", op="WRITE")):
        assert from_binding(to_binding(k)) == k


def test_exact_filter_pins_every_field():
    f = to_exact_filter(key(pattern="prefixed", host="10.0.0.1"))
    assert isinstance(f, AclBindingFilter)
    assert (f.restype, f.name, f.resource_pattern_type) == (ResourceType.TOPIC, "orders", ResourcePatternType.PREFIXED)
    assert (f.principal, f.host, f.operation, f.permission_type) == (
        "User:app1",
        "10.0.0.1",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )


class Done:
    def __init__(self, value=None, error=None):
        self.value, self.error = value, error

    def result(self, timeout=None):
        if self.error:
            raise KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "denied"))
        return self.value


class FakeAdmin:
    def __init__(self, bindings=(), fail=False):
        self.bindings = list(bindings)
        self.fail = fail
        self.created, self.deleted = [], []

    def describe_acls(self, flt, request_timeout=None):
        assert flt.restype == ResourceType.ANY and flt.resource_pattern_type == ResourcePatternType.ANY
        return Done(self.bindings)

    def create_acls(self, bindings, request_timeout=None):
        self.created += bindings
        return {b: Done(error=self.fail) for b in bindings}

    def delete_acls(self, filters, request_timeout=None):
        self.deleted += filters
        return {f: Done([]) for f in filters}


def test_admin_store_lists_and_converts_bindings():
    b = AclBinding(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.LITERAL,
        "User:app1",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    assert AdminAclStore(FakeAdmin([b])).list() == {key()}


def test_admin_store_creates_and_deletes_exact_bindings():
    admin = FakeAdmin()
    store = AdminAclStore(admin)
    store.create([key()])
    store.delete([key(op="WRITE")])
    assert [from_binding(b) for b in admin.created] == [key()]
    assert [from_binding(f) for f in admin.deleted] == [key(op="WRITE")]


def test_admin_store_reports_every_failed_binding():
    with pytest.raises(AclError, match=r"could not create ACLs:\n  User:app1 ALLOW READ topic:orders"):
        AdminAclStore(FakeAdmin(fail=True)).create([key()])

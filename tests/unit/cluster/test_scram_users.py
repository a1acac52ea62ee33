"""kafkakit.cluster.scram_users: declared SCRAM users vs. the cluster's credentials, without a cluster."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)

from kafkakit.cluster.scram_users import (
    AdminScramStore,
    ScramError,
    ScramUser,
    apply_users,
    is_auth_failure,
    login_config,
    parse_users,
    plan_users,
    try_login,
)

SHA512, SHA256 = "SCRAM-SHA-512", "SCRAM-SHA-256"


class Logins:
    """A fake broker login: accepts the passwords it was given, records every attempt."""

    def __init__(self, **passwords):
        self.passwords = passwords
        self.tried = []

    def __call__(self, user, password, mechanism):
        self.tried.append(user)
        return self.passwords.get(user) == password


class FakeStore:
    def __init__(self, current):
        self.current = current
        self.calls = []

    def list(self):
        return {u: dict(m) for u, m in self.current.items()}

    def upsert(self, users, iterations):
        self.calls.append(("upsert", [u.name for u in users], iterations))

    def delete(self, credentials):
        self.calls.append(("delete", list(credentials)))


def users(*entries):
    return parse_users(list(entries))


# --- parsing and validation ----------------------------------------------------------------------


def test_defaults_are_present_and_sha512():
    assert users({"name": "app1", "password": "pw"}) == [ScramUser("app1", "pw", SHA512, True)]


def test_absent_user_needs_no_password():
    assert users({"name": "old", "state": "absent"}) == [ScramUser("old", "", SHA512, False)]


def test_password_never_appears_in_repr():
    assert "hunter2" not in repr(users({"name": "app1", "password": "hunter2"}))


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([{"name": "app1"}], "a present user needs a non-empty password"),
        ([{"name": "", "password": "x"}], "name must be a non-empty string"),
        ([{"name": "app1", "password": "x", "mechanism": "PLAIN"}], "unknown mechanism 'PLAIN'"),
        ([{"name": "app1", "password": "x", "state": "gone"}], "state must be present or absent"),
        (
            [{"name": "a", "password": "x"}, {"name": "a", "password": "y"}],
            "a (SCRAM-SHA-512) is declared more than once",
        ),
        (
            [{"name": "a", "password": "x"}, {"name": "a", "state": "absent", "mechanism": SHA256}],
            "a is declared both present and absent",
        ),
        (["app1"], "expected a mapping, got str"),
    ],
)
def test_invalid_declarations_are_refused(entries, message):
    with pytest.raises(ScramError, match="invalid SCRAM user declarations") as err:
        parse_users(entries)
    assert message in str(err.value)


def test_protected_user_cannot_be_declared_absent():
    with pytest.raises(ScramError, match="admin is protected"):
        parse_users([{"name": "admin", "state": "absent"}], protected=["admin"])


def test_same_user_with_two_mechanisms_is_fine():
    got = users({"name": "a", "password": "x"}, {"name": "a", "password": "x", "mechanism": "scram-sha-256"})
    assert [u.mechanism for u in got] == [SHA512, SHA256]


def test_every_problem_is_reported_at_once():
    with pytest.raises(ScramError) as err:
        parse_users([{"name": "a"}, {"name": "b", "password": "x", "mechanism": "MD5"}])
    assert "users[0] (a)" in str(err.value) and "users[1] (b)" in str(err.value)


# --- planning ------------------------------------------------------------------------------------


def test_new_user_is_created_without_a_login_check():
    logins = Logins()
    plan = plan_users(users({"name": "app1", "password": "pw"}), {"admin": {SHA512: 8192}}, logins)
    assert plan.created == ["app1"] and plan.updated == [] and plan.removed == []
    assert logins.tried == []
    assert plan.before == ["admin"] and plan.after == ["admin", "app1"]


def test_matching_password_is_a_no_op():
    plan = plan_users(users({"name": "app1", "password": "pw"}), {"app1": {SHA512: 8192}}, Logins(app1="pw"))
    assert not plan.changed


def test_rejected_login_means_the_password_changed():
    logins = Logins(app1="old")
    plan = plan_users(users({"name": "app1", "password": "new"}), {"app1": {SHA512: 8192}}, logins)
    assert plan.updated == ["app1"] and plan.created == []
    assert logins.tried == ["app1"]
    assert plan.before == plan.after == ["app1"]


def test_other_iteration_count_is_rehashed_without_a_login_check():
    logins = Logins(app1="pw")
    plan = plan_users(users({"name": "app1", "password": "pw"}), {"app1": {SHA512: 4096}}, logins, iterations=8192)
    assert plan.updated == ["app1"] and logins.tried == []


def test_missing_mechanism_for_an_existing_user_is_added():
    plan = plan_users(users({"name": "app1", "password": "pw"}), {"app1": {SHA256: 8192}}, Logins(app1="pw"))
    assert plan.updated == ["app1"]


def test_absent_user_loses_every_mechanism():
    plan = plan_users(users({"name": "old", "state": "absent"}), {"old": {SHA256: 4096, SHA512: 8192}}, Logins())
    assert plan.remove == [("old", SHA256), ("old", SHA512)]
    assert plan.removed == ["old"] and plan.after == []


def test_absent_user_that_does_not_exist_is_a_no_op():
    assert not plan_users(users({"name": "old", "state": "absent"}), {}, Logins()).changed


def test_exclusive_removes_undeclared_but_never_protected_users():
    current = {"admin": {SHA512: 8192}, "broker": {SHA512: 8192}, "app1": {SHA512: 8192}, "stray": {SHA512: 8192}}
    plan = plan_users(
        users({"name": "app1", "password": "pw"}),
        current,
        Logins(app1="pw"),
        exclusive=True,
        protected=["admin", "broker"],
    )
    assert plan.removed == ["stray"]
    assert plan.after == ["admin", "app1", "broker"]


def test_non_exclusive_keeps_undeclared_users():
    plan = plan_users(users({"name": "app1", "password": "pw"}), {"stray": {SHA512: 8192}}, Logins())
    assert plan.removed == [] and plan.after == ["app1", "stray"]


def test_plan_output_never_carries_passwords():
    plan = plan_users(users({"name": "app1", "password": "s3cr3t"}), {"app1": {SHA512: 8192}}, Logins())
    exposed = [plan.before, plan.after, plan.created, plan.updated, plan.removed, repr(plan)]
    assert "s3cr3t" not in str(exposed)


# --- applying (fake store) -----------------------------------------------------------------------


def test_check_mode_plans_without_mutating():
    store = FakeStore({"app1": {SHA512: 8192}, "stray": {SHA512: 8192}})
    declared = users({"name": "app1", "password": "new"}, {"name": "app2", "password": "pw"})
    plan = apply_users(store, declared, Logins(app1="old"), exclusive=True, check_mode=True)
    assert (plan.created, plan.updated, plan.removed) == (["app2"], ["app1"], ["stray"])
    assert store.calls == []


def test_apply_upserts_then_deletes():
    store = FakeStore({"app1": {SHA512: 8192}, "stray": {SHA256: 4096}})
    declared = users({"name": "app1", "password": "new"}, {"name": "app2", "password": "pw"})
    apply_users(store, declared, Logins(app1="old"), iterations=8192, exclusive=True)
    assert store.calls == [("upsert", ["app2", "app1"], 8192), ("delete", [("stray", SHA256)])]


def test_nothing_to_do_calls_nothing():
    store = FakeStore({"app1": {SHA512: 8192}})
    assert not apply_users(store, users({"name": "app1", "password": "pw"}), Logins(app1="pw")).changed
    assert store.calls == []


@pytest.mark.parametrize("iterations", [1000, 20000])
def test_iterations_outside_kafkas_range_are_refused(iterations):
    with pytest.raises(ScramError, match="iterations must be between 4096 and 16384"):
        apply_users(FakeStore({}), [], Logins(), iterations=iterations)


# --- login check plumbing ------------------------------------------------------------------------


def test_login_config_swaps_the_identity_and_keeps_tls():
    admin = {
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": "/ca.pem",
        "sasl.mechanism": SHA512,
        "sasl.username": "admin",
        "sasl.password": "adminpw",
    }
    conf = login_config("b1:9093", admin, "app1", "pw", SHA256)
    assert conf["bootstrap.servers"] == "b1:9093" and conf["ssl.ca.location"] == "/ca.pem"
    assert (conf["sasl.username"], conf["sasl.password"], conf["sasl.mechanisms"]) == ("app1", "pw", SHA256)
    assert "sasl.mechanism" not in conf and "adminpw" not in conf.values()


def test_login_config_refuses_a_non_sasl_protocol():
    with pytest.raises(ScramError, match="SASL_SSL"):
        login_config("b1:9093", {"security.protocol": "SSL"}, "app1", "pw", SHA512)


def test_authentication_errors_are_recognised():
    assert is_auth_failure(KafkaError(KafkaError._AUTHENTICATION, "SASL authentication error"))
    assert is_auth_failure(KafkaError(KafkaError._TRANSPORT, "Authentication failed during authentication"))
    assert not is_auth_failure(KafkaError(KafkaError._TRANSPORT, "Connection refused"))


def test_unreachable_broker_is_an_error_not_a_password_change():
    conf = {
        "bootstrap.servers": "127.0.0.1:1",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": SHA512,
        "sasl.username": "u",
        "sasl.password": "p",
    }
    with pytest.raises(ScramError, match="could not tell"):
        try_login(conf, timeout=1.5)


# --- the AdminClient store (fake admin) ----------------------------------------------------------


class Done:
    def __init__(self, value=None):
        self.value = value

    def result(self, timeout=None):
        return self.value


class FakeAdmin:
    def __init__(self, described=None):
        self.described = described or {}
        self.alterations = []

    def describe_user_scram_credentials(self, users=None, request_timeout=None):
        assert users is None  # one call for every user
        return Done(self.described)

    def alter_user_scram_credentials(self, alterations, request_timeout=None):
        self.alterations += alterations
        return {a.user: Done() for a in alterations}


def test_admin_store_lists_mechanisms_and_iterations():
    described = {
        "app1": UserScramCredentialsDescription(
            "app1",
            [
                ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
                ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
            ],
        )
    }
    assert AdminScramStore(FakeAdmin(described)).list() == {"app1": {SHA512: 8192, SHA256: 4096}}


def test_admin_store_upserts_with_bytes_password_and_deletes_per_mechanism():
    admin = FakeAdmin()
    store = AdminScramStore(admin)
    store.upsert(users({"name": "app1", "password": "pä"}), 8192)
    store.delete([("old", SHA256)])
    up, down = admin.alterations
    assert isinstance(up, UserScramCredentialUpsertion) and up.password == "pä".encode()
    assert (up.scram_credential_info.mechanism, up.scram_credential_info.iterations) == (
        ScramMechanism.SCRAM_SHA_512,
        8192,
    )
    assert isinstance(down, UserScramCredentialDeletion) and (down.user, down.mechanism) == (
        "old",
        ScramMechanism.SCRAM_SHA_256,
    )

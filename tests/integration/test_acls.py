"""ACLs as code, checked with the users' own client configs (written by site.yml from the
inventory's kafka_users / kafka_acls): deny by default, read-only, prefixed grants. In every data
centre: AclAuthorizer in dc1 (ZooKeeper), StandardAuthorizer in dc2 (KRaft)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.cluster.admin import read_client_conf
from tests.integration.clients import consumer, denied, produce_one, produce_sequence
from tests.integration.conftest import wait_until
from tests.integration.lab import CLIENT_DIR, Lab

pytestmark = pytest.mark.every_dc


@pytest.fixture(scope="module")
def user_conf(lab: Lab, dc: str) -> Callable[[str], dict[str, str]]:
    """A user's client config in the DC; skips the test when the DC's inventory does not declare
    the user (a DC may have other users than dc1; the lab declares the same in both)."""
    users = lab.group_vars(dc).get("kafka_users") or []
    declared = {u["name"] for u in users if u.get("state", "present") == "present"}

    def conf(name: str) -> dict[str, str]:
        if name not in declared:
            pytest.skip(f"the inventory declares no user {name} in {dc}")
        return read_client_conf(CLIENT_DIR / dc / "users" / f"{name}.conf")

    return conf


def read_error(conf: dict[str, str], topic: str, group: str, protocol: str = "classic") -> KafkaError | None:
    """The first error a consumer in `group` meets reading `topic`, or None once it gets a record."""
    c = consumer(conf, group, protocol=protocol)
    c.subscribe([topic])
    try:
        for _ in range(40):
            msg = c.poll(0.5)
            if msg is None:
                continue
            return msg.error()  # None for a real record
        return KafkaError(KafkaError._TIMED_OUT)
    finally:
        c.close()


def create_error(conf: dict[str, str], topic: str) -> KafkaError | None:
    admin = AdminClient(conf)  # keep the handle alive until the future resolves
    try:
        # No replication factor: the DC's default (the lab's dc2 has two brokers).
        admin.create_topics([NewTopic(topic, 1)])[topic].result(timeout=20)
        return None
    except KafkaException as exc:
        return exc.args[0]


@pytest.fixture(scope="module")
def orders_has_data(lab, dc, client_conf):
    # The users' topics are the DC's declared ones (a producer to a missing topic would wait minutes).
    if "orders" not in {t["name"] for t in lab.group_vars(dc).get("kafka_topics") or []}:
        pytest.skip(f"the inventory declares no orders topic in {dc}")
    produce_sequence(client_conf, "orders", 10, keys=["acl-probe"])


def test_a_user_without_acls_can_do_nothing(orders_has_data, user_conf):
    conf = user_conf("no-acl")
    assert denied(produce_one(conf, "orders"))
    assert denied(read_error(conf, "orders", "orders-noacl"))
    assert denied(create_error(conf, f"noacl-{uuid.uuid4().hex[:6]}"))


def test_a_user_without_acls_cannot_use_a_group(orders_has_data, user_conf):
    # Finding a group's coordinator needs DESCRIBE on the group: refused before any join.
    admin = AdminClient(user_conf("no-acl"))
    future = admin.describe_consumer_groups(["orders-join-probe"])["orders-join-probe"]
    with pytest.raises(KafkaException) as info:
        future.result(timeout=20)
    assert info.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_the_reader_reads_but_cannot_write(orders_has_data, user_conf):
    reader = user_conf("orders-reader")
    assert read_error(reader, "orders", f"orders-{uuid.uuid4().hex[:6]}") is None
    assert denied(produce_one(reader, "orders"))
    # Its group grant is prefixed orders-: any other group name is refused.
    err = read_error(reader, "orders", "billing-consumers")
    assert err is not None and err.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


@pytest.mark.every_dc("kraft")
def test_the_readers_group_grant_holds_for_a_kip848_group(orders_has_data, user_conf):
    # The new consumer protocol is authorized like the classic one: READ on the group.
    reader = user_conf("orders-reader")
    assert read_error(reader, "orders", f"orders-{uuid.uuid4().hex[:6]}", protocol="consumer") is None
    err = read_error(reader, "orders", "billing-consumers", protocol="consumer")
    assert err is not None and err.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_the_writer_writes_but_cannot_read(orders_has_data, user_conf):
    writer = user_conf("orders-writer")
    assert produce_one(writer, "orders") is None
    assert denied(read_error(writer, "orders", "orders-writer-peek"))
    assert denied(produce_one(writer, "payments"))


def test_a_prefixed_acl_grants_exactly_its_prefix(user_conf):
    team = user_conf("team-a")
    inside = f"team-a.{uuid.uuid4().hex[:6]}"
    assert create_error(team, inside) is None
    assert produce_one(team, inside) is None
    assert read_error(team, inside, f"team-a.{uuid.uuid4().hex[:6]}") is None
    # team-aX... shares the characters but not the "team-a." prefix.
    assert denied(create_error(team, f"team-ab{uuid.uuid4().hex[:6]}"))
    assert denied(produce_one(team, "orders"))
    team_admin = AdminClient(team)
    team_admin.delete_topics([inside])[inside].result(timeout=30)


def test_site_check_diff_shows_an_acl_drift_and_the_next_run_removes_it(lab: Lab):
    """An undeclared binding added by hand in every data centre (one per metadata mode, so both
    authorizers) is shown by one --check --diff and removed by the next site.yml run."""
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    from tests.integration.conftest import fresh_admin
    from tests.integration.playbooks import run_site

    rogue = AclBinding(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.LITERAL,
        "User:no-acl",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    dcs = lab.data_centres()
    assert {lab.metadata_mode(dc) for dc in dcs} == {"zookeeper", "kraft"}, dcs
    admins = {dc: fresh_admin(lab.client_conf(dc)) for dc in dcs}
    no_acl = {dc: read_client_conf(CLIENT_DIR / dc / "users" / "no-acl.conf") for dc in dcs}

    # READ implies DESCRIBE: while the binding exists, the user sees the topic in the metadata
    # (a broker lists only the topics a principal may describe), and without it sees nothing.
    def sees_orders(dc: str) -> bool:
        return "orders" in AdminClient(no_acl[dc]).list_topics(timeout=10).topics

    assert not any(sees_orders(dc) for dc in dcs)
    try:
        for dc in dcs:
            admins[dc].create_acls([rogue])[rogue].result(timeout=20)
            wait_until(f"the rogue binding in force in {dc}", lambda dc=dc: sees_orders(dc), 30)
        check = run_site("--check", "--diff", "--tags", "acls")
        # The diff's removed line, and the count the role gives first (the lab sets kafka_acls_exclusive).
        assert check.count("-User:no-acl ALLOW READ topic:orders") == len(dcs), check[-3000:]
        for dc in dcs:
            assert f"undeclared ACL binding(s) in {dc}: removing them" in check
            assert sees_orders(dc), f"--check removed the binding in {dc}"
        run_site("--tags", "acls")
        for dc in dcs:
            wait_until(f"the rogue binding gone in {dc}", lambda dc=dc: not sees_orders(dc), 30)
            assert read_error(no_acl[dc], "orders", "orders-after-cleanup") is not None
    finally:
        # Whatever failed above, no binding of this test stays behind.
        found = AclBindingFilter(
            ResourceType.TOPIC,
            "orders",
            ResourcePatternType.LITERAL,
            "User:no-acl",
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        for admin in admins.values():
            admin.delete_acls([found])[found].result(timeout=20)

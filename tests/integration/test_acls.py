"""ACLs as code, checked with the users' own client configs (written by site.yml from the
inventory's kafka_users / kafka_acls): deny by default, read-only, prefixed grants. In every data
centre: AclAuthorizer in dc1 (ZooKeeper), StandardAuthorizer in dc2 (KRaft). A binding added by hand
and removed by the next run is the drift scenario (scenarios/test_drift.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from kafkakit.cluster.admin import read_client_conf
from tests.integration.clients import denied, produce_one, produce_sequence, read_error
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

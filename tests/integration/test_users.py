"""SCRAM users as code against the real cluster, in every data centre: create, change a
password, no-op, remove; and on KRaft, every login kept by a broker that replays its whole
metadata log after a removal."""

from __future__ import annotations

import secrets
import uuid

import pytest

from kafkakit.cluster.scram_users import (
    AdminScramStore,
    LoginCheck,
    ScramError,
    ScramPlan,
    apply_users,
    login_checker,
    parse_users,
)
from tests.integration.conftest import wait_until
from tests.integration.lab import properties
from tests.java_hash import hashmap_bucket

pytestmark = pytest.mark.every_dc
# A user whose name heads HashMap bucket 0, like kafka_scram_anchor_user's, but created after it.
PROBE = "kafkakit-scram-probe-1ifwr"


def apply_one(store: AdminScramStore, can_login: LoginCheck, name: str, password: str, state: str) -> ScramPlan:
    """The users module's own apply, for one user of the default mechanism; the admin protected."""
    users = parse_users([{"name": name, "password": password, "state": state}], ["admin"])
    return apply_users(store, users, can_login, protected=["admin"])


def test_a_password_changes_once_and_then_nothing_changes(admin, client_conf):
    name = f"temp-{uuid.uuid4().hex[:8]}"
    bootstrap = client_conf["bootstrap.servers"]
    settings = {k: v for k, v in client_conf.items() if k != "bootstrap.servers"}
    can_login = login_checker(bootstrap, settings)
    store = AdminScramStore(admin)

    def apply(password: str, state: str = "present") -> ScramPlan:
        return apply_one(store, can_login, name, password, state)

    assert apply("first-password-1").created == [name]
    assert can_login(name, "first-password-1", "SCRAM-SHA-512")
    assert not apply("first-password-1").changed

    assert apply("second-password-2").updated == [name]
    assert can_login(name, "second-password-2", "SCRAM-SHA-512")
    assert not can_login(name, "first-password-1", "SCRAM-SHA-512")
    assert not apply("second-password-2").changed

    assert apply("second-password-2", state="absent").removed == [name]
    # Each broker drops the credential when the change reaches it (ZooKeeper's notification, or
    # the KRaft metadata log).
    wait_until("the removed user refused", lambda: not can_login(name, "second-password-2", "SCRAM-SHA-512"), 60)


@pytest.mark.every_dc("kraft")
@pytest.mark.usefixtures("healthy_after")
def test_a_broker_replaying_its_whole_metadata_log_keeps_every_login(lab, dc, admin, client_conf):
    """Kafka 4.1-4.4 drop every SCRAM credential of a mechanism when a node replays its metadata log
    and the first change met is a removal (see kafka_scram_anchor_user). The probe's removal would be
    that change, were the anchor not first: the broker that replays would refuse the admin."""
    assert {hashmap_bucket(PROBE, 2**n) for n in range(4, 21)} == {0}
    mechanism = client_conf["sasl.mechanisms"]  # the default one, which apply_one declares
    settings = {k: v for k, v in client_conf.items() if k != "bootstrap.servers"}
    can_login = login_checker(client_conf["bootstrap.servers"], settings)
    password = secrets.token_urlsafe(24)
    store = AdminScramStore(admin)
    apply_one(store, can_login, PROBE, password, "present")
    wait_until("the probe user logs in", lambda: can_login(PROBE, password, mechanism), 60)
    apply_one(store, can_login, PROBE, password, "absent")
    wait_until("the removed probe user is refused", lambda: not can_login(PROBE, password, mechanism), 60)

    # The broker's own metadata log removed: it fetches and replays the whole log from the controllers.
    broker = lab.brokers(dc)[-1]
    host = lab.testinfra(broker)
    props = properties(host.file("/etc/kafka/server.properties").content_string)
    metadata_dir = props.get("metadata.log.dir") or props["log.dirs"].split(",")[0]
    host.run_expect([0], f"systemctl stop kafka && rm -rf {metadata_dir}/__cluster_metadata-0 && systemctl start kafka")
    port = client_conf["bootstrap.servers"].split(",")[0].rsplit(":", 1)[1]
    on_broker = login_checker(f"{broker.ip}:{port}", settings)

    def admin_accepted() -> bool:
        try:
            return on_broker(settings["sasl.username"], settings["sasl.password"], mechanism)
        except ScramError:  # not serving yet
            return False

    wait_until(f"{broker.name} accepting the admin after replaying the whole metadata log", admin_accepted, 180)
    assert not on_broker(PROBE, password, mechanism)

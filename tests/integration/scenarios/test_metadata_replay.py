"""A KRaft broker that lost its metadata directory replays the whole log from the controllers and
keeps every SCRAM login, also after a user was removed (kafka_scram_anchor_user, docs/kraft.md)."""

from __future__ import annotations

import secrets

import pytest

from kafkakit.cluster.scram_users import AdminScramStore, ScramError, login_checker
from tests.integration.conftest import wait_until
from tests.integration.lab import properties
from tests.integration.users import apply_one
from tests.java_hash import hashmap_bucket

# A user whose name heads HashMap bucket 0, like kafka_scram_anchor_user's, but created after it.
PROBE = "kafkakit-scram-probe-1ifwr"


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

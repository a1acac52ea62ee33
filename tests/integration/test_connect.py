"""Kafka Connect (roles/kafka_connect): the workers of a data centre form one group on its Kafka
cluster; the REST API answers only HTTPS with a client certificate of the kit's CA, on the private
address, and forwards a follower's request to the leader under the same rules; the internal topics
are the declared ones; the workers' principal reaches nothing else. Every refusal beside its
positive control, sent to the same worker right before."""

from __future__ import annotations

import http.client
import ssl
from pathlib import Path

import pytest
import yaml
from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource

from kafkakit.cluster.connect import RestError, request
from kafkakit.monitoring.prometheus import JMX_PORTS
from tests.integration.conftest import wait_until
from tests.integration.connect_lab import DC, PORT, WORKERS, admin_tls, env, rest, url
from tests.integration.lab import ROOT, Host, Lab, properties
from tests.selfsigned import self_signed

LAB = Lab()
CONF = "/etc/kafka-connect/connect-distributed.properties"


def worker_conf(worker: Host) -> dict[str, str]:
    return properties(LAB.testinfra(worker).check_output(f"cat {CONF}"))


def test_the_lab_has_two_workers_on_two_racks():
    assert len(WORKERS) == 2 and len({w.rack for w in WORKERS}) == 2, WORKERS
    assert env()["CONNECT_URL"] in {url(w) for w in WORKERS}


def test_every_worker_is_ready_on_its_data_centres_cluster(lab: Lab):
    """Each worker calls itself healthy (Connect's GET /health: joined its group, read the config
    topic) and works on dc1's cluster with the release the kit pins. That they share one group is
    shown by the forwarding test: what one stores, the other serves."""
    admin = AdminClient(lab.client_conf(DC))
    cluster_id = admin.describe_cluster(request_timeout=15).result().cluster_id
    tls = admin_tls()
    answers = [request(url(w), "GET", "/", tls)[1] for w in WORKERS]
    assert {a["kafka_cluster_id"] for a in answers} == {cluster_id}
    # kafka_connect_version: the lab's (4.3.1, for connect-mirror's heartbeat connector), or its
    # default, the Kafka 4.x release the kit pins.
    pinned = yaml.safe_load((ROOT / "roles/kafka_common/defaults/main.yml").read_text())["kafka_kraft_version"]
    assert {a["version"] for a in answers} == {str(lab.group_vars(DC).get("kafka_connect_version", pinned))}
    assert [request(url(w), "GET", "/health", tls)[1]["status"] for w in WORKERS] == ["healthy"] * len(WORKERS)


def _https(worker: Host, ctx: ssl.SSLContext, path: str = "/") -> int:
    conn = http.client.HTTPSConnection(worker.ip, PORT, timeout=15, context=ctx)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


def _refused(worker: Host, ctx: ssl.SSLContext) -> bool:
    """No HTTP answer over this TLS context: the handshake (or the first read) fails."""
    try:
        _https(worker, ctx)
    except (ssl.SSLError, ConnectionError, OSError):
        return True
    return False


def _context(ca: str, cert: str | None = None, key: str | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


@pytest.mark.parametrize("worker", WORKERS, ids=lambda w: w.name)
def test_rest_refuses_plain_http_no_certificate_and_another_ca(worker: Host, tmp_path: Path):
    tls = admin_tls()
    good = _context(tls.ca, tls.cert, tls.key)
    # Positive control: the admin's certificate gets the worker's answer, and its plugins.
    assert _https(worker, good) == 200
    plugins = request(url(worker), "GET", "/connector-plugins", tls)[1]
    assert any(p["class"].endswith("MirrorSourceConnector") for p in plugins), plugins
    # Plain HTTP to the REST port: no HTTP answer of Connect's (Jetty closes or answers 400).
    conn = http.client.HTTPConnection(worker.ip, PORT, timeout=15)
    try:
        conn.request("GET", "/connectors")
        status = conn.getresponse().status
    except (ConnectionError, http.client.HTTPException, OSError):
        status = 0
    finally:
        conn.close()
    assert status not in range(200, 400), status
    # TLS without a client certificate.
    assert _https(worker, good) == 200
    assert _refused(worker, _context(tls.ca))
    # A client certificate of another CA.
    cert, key = self_signed(tmp_path, "intruder")
    assert _https(worker, good) == 200
    assert _refused(worker, _context(tls.ca, str(cert), str(key)))


@pytest.mark.parametrize("worker", WORKERS, ids=lambda w: w.name)
def test_rest_listens_on_the_private_address_only_and_the_admin_endpoints_are_off(worker: Host):
    host = LAB.testinfra(worker)
    listening = host.check_output("ss -Hltnp | grep java | awk '{print $4}'").split()
    # The REST API and the JMX exporter agent (roles/monitoring), both on the private address only.
    assert sorted(listening) == sorted([f"{worker.ip}:{PORT}", f"{worker.ip}:{JMX_PORTS['kafka_connect']}"]), listening
    # Another address of the same host (loopback) has nothing on the port.
    assert host.run(f"bash -c 'exec 3<>/dev/tcp/127.0.0.1/{PORT}'").rc != 0
    assert host.run(f"bash -c 'exec 3<>/dev/tcp/{worker.ip}/{PORT}'").rc == 0
    # The log-level endpoints (admin.listeners) are off; the control: a path the API has.
    tls = admin_tls()
    assert request(url(worker), "GET", "/connectors", tls)[0] == 200
    with pytest.raises(RestError) as off:
        request(url(worker), "GET", "/admin/loggers", tls)
    assert off.value.status == 404


def test_a_request_to_either_worker_reaches_the_leader_over_mutual_tls():
    """A connector created through each worker in turn (one of them is a follower, which forwards
    to the leader presenting its host certificate); created stopped, so it runs nothing. Each
    worker answers from its own read of the config topic: the other one lists the connector once
    it has read the leader's write, and drops it the same way."""
    tls = admin_tls()
    conf = LAB.client_conf(DC)

    def listed(worker: Host) -> list[str]:
        return rest(url(worker), "GET", "/connectors", tls)[1]

    for via, other in ((WORKERS[0], WORKERS[1]), (WORKERS[1], WORKERS[0])):
        name = f"kafkakit-forward-probe-{via.name}"
        config = {
            "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
            "source.cluster.alias": DC,
            "target.cluster.alias": DC,
            "source.cluster.bootstrap.servers": conf["bootstrap.servers"],
            "target.cluster.bootstrap.servers": conf["bootstrap.servers"],
            "tasks.max": "1",
        }
        try:
            status, created = rest(
                url(via), "POST", "/connectors", tls, {"name": name, "config": config, "initial_state": "STOPPED"}
            )
            assert status == 201 and created["name"] == name, created
            wait_until(f"{other.name} to list {name}", lambda o=other, n=name: n in listed(o), 30)
        finally:
            try:
                rest(url(via), "DELETE", f"/connectors/{name}", tls)
            except RestError as exc:
                assert exc.status == 404, exc
        wait_until(f"{other.name} to drop {name}", lambda o=other, n=name: n not in listed(o), 30)


def test_the_internal_topics_are_the_declared_ones(lab: Lab):
    admin = AdminClient(lab.client_conf(DC))
    topics = {f"connect-{DC}-{kind}" for kind in ("configs", "offsets", "status")}
    meta = admin.list_topics(timeout=15).topics
    assert topics <= set(meta), sorted(meta)
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in sorted(topics)]
    for resource, future in admin.describe_configs(resources).items():
        configs = future.result()
        assert configs["cleanup.policy"].value == "compact", resource
        assert configs["min.insync.replicas"].value == "2", resource
        assert {len(p.replicas) for p in meta[resource.name].partitions.values()} == {3}, resource
    assert len(meta[f"connect-{DC}-configs"].partitions) == 1
    # And the workers use them, with the worker's view of them matching.
    conf = worker_conf(WORKERS[0])
    assert {conf["config.storage.topic"], conf["offset.storage.topic"], conf["status.storage.topic"]} == topics
    assert conf["exactly.once.source.support"] == "enabled"


def _connect_principal(lab: Lab) -> dict[str, str]:
    password = (ROOT / "build/lab/secrets/kafka-connect").read_text().split()[0]
    return {**lab.client_conf(DC), "sasl.username": "connect", "sasl.password": password}


def test_the_workers_principal_reads_its_topics_and_nothing_else(lab: Lab):
    c = Consumer({**_connect_principal(lab), "group.id": f"connect-{DC}", "enable.auto.commit": "false"})
    try:
        # Positive control: its status topic.
        own = c.list_topics(f"connect-{DC}-status", timeout=20).topics[f"connect-{DC}-status"]
        assert own.error is None, own.error
        low, high = c.get_watermark_offsets(TopicPartition(f"connect-{DC}-status", 0), timeout=20)
        assert high >= low
        # A declared topic of the users' is not its to read.
        other = c.list_topics("orders", timeout=20).topics["orders"]
        assert other.error is not None and other.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, other.error
    finally:
        c.close()


def test_the_workers_secrets_are_for_the_service_only():
    host = LAB.testinfra(WORKERS[0])
    for path, mode in ((CONF, 0o640), ("/etc/kafka-connect/tls/keystore.p12", 0o640)):
        f = host.file(path)
        assert (f.user, f.group, f.mode) == ("root", "kafka-connect", mode), path
    # The admin's client key stays on the controller, for its user only.
    assert Path(env()["CONNECT_KEY"]).stat().st_mode & 0o077 == 0
    assert not host.file(env()["CONNECT_KEY"]).exists

"""testinfra per role, reading hosts from the inventory (works on the lab or on AWS)."""

from __future__ import annotations

import pytest

from tests.integration.lab import Lab, properties

LAB = Lab()
ZOOKEEPERS = [h for dc in ("dc1", "dc2") for h in LAB.zookeepers(dc)]
BROKERS = [h for dc in ("dc1", "dc2") for h in LAB.brokers(dc)]
# The lab's dc2 is KRaft: its controllers instead of a ZooKeeper ensemble.
CONTROLLERS = [h for dc in ("dc1", "dc2") for h in LAB.controllers(dc)]


@pytest.mark.parametrize(
    "node", ZOOKEEPERS + [b for b in BROKERS if b not in ZOOKEEPERS] + CONTROLLERS, ids=lambda h: h.name
)
def test_java_runtime(node):
    host = LAB.testinfra(node)
    assert host.package("openjdk-17-jre-headless").is_installed
    assert 'version "17.' in host.run("java -version").stderr


@pytest.mark.parametrize("zk", ZOOKEEPERS, ids=lambda h: h.name)
def test_zookeeper_server(zk):
    host = LAB.testinfra(zk)
    service = host.service("zookeeper")
    assert service.is_enabled and service.is_running
    user = host.user("zookeeper")
    assert user.shell == "/usr/sbin/nologin"
    # TLS client port only, on the private address (not every interface); the plaintext one is closed.
    assert host.socket(f"tcp://{zk.ip}:2182").is_listening
    assert not host.socket("tcp://127.0.0.1:2182").is_listening
    assert not host.socket("tcp://0.0.0.0:2181").is_listening
    peers = len(LAB.zookeepers(zk.dc))
    if peers > 1:
        assert host.socket(f"tcp://{zk.ip}:3888").is_listening
    assert host.file("/var/lib/zookeeper/data/myid").content_string.strip() == str(zk.zookeeper_id)
    cfg = properties(host.file("/etc/zookeeper/zoo.cfg").content_string)
    assert cfg["dataDir"] != cfg["dataLogDir"]
    assert cfg["4lw.commands.whitelist"] == "ruok,srvr,mntr"
    assert int(cfg["autopurge.purgeInterval"]) > 0
    assert {k for k in cfg if k.startswith("server.")} == {f"server.{z.zookeeper_id}" for z in LAB.zookeepers(zk.dc)}
    conf_file = host.file("/etc/zookeeper/zoo.cfg")
    assert (conf_file.user, conf_file.group, conf_file.mode) == ("root", "zookeeper", 0o640)
    for d in ("/var/lib/zookeeper/data", "/var/lib/zookeeper/txlog"):
        assert host.file(d).user == "zookeeper" and host.file(d).mode == 0o750
    # Four-letter words outside the allow-list are refused.
    assert "is not executed because it is not in the whitelist" in host.run("zookeeper-4lw conf").stdout


@pytest.mark.parametrize("broker", BROKERS, ids=lambda h: h.name)
def test_kafka_broker(broker):
    host = LAB.testinfra(broker)
    service = host.service("kafka")
    assert service.is_enabled and service.is_running
    assert host.user("kafka").shell == "/usr/sbin/nologin"
    for port in (9091, 9093):
        assert host.socket(f"tcp://{broker.ip}:{port}").is_listening
    props = properties(host.file("/etc/kafka/server.properties").content_string)
    kraft = LAB.kraft(broker.dc)
    assert props["node.id" if kraft else "broker.id"] == str(broker.broker_id)
    assert props["broker.rack"] == broker.rack
    assert props["unclean.leader.election.enable"] == "false"
    assert props["auto.create.topics.enable"] == "false"
    assert props["replica.selector.class"].endswith("RackAwareReplicaSelector")
    brokers_in_dc = len(LAB.brokers(broker.dc))
    assert int(props["min.insync.replicas"]) < int(props["default.replication.factor"]) <= brokers_in_dc
    if kraft:
        assert props["process.roles"] == "broker" and "zookeeper.connect" not in props
        bootstrap = {hp.split(":")[0] for hp in props["controller.quorum.bootstrap.servers"].split(",")}
        assert bootstrap == {c.ip for c in LAB.controllers(broker.dc)}
    else:
        zk_ips = {z.ip for z in LAB.zookeepers(broker.dc)}
        assert {hp.split(":")[0] for hp in props["zookeeper.connect"].split("/")[0].split(",")} == zk_ips
    conf_file = host.file("/etc/kafka/server.properties")
    assert (conf_file.user, conf_file.group, conf_file.mode) == ("root", "kafka", 0o640)
    assert host.file("/var/lib/kafka/data").user == "kafka"
    node_key = "node.id" if kraft else "broker.id"
    assert host.file("/var/lib/kafka/data/meta.properties").contains(f"{node_key}={broker.broker_id}")
    cmdline = host.process.get(user="kafka", comm="java").args
    assert "-XX:+UseG1GC" in cmdline and "kafka.Kafka" in cmdline


@pytest.mark.parametrize("controller", CONTROLLERS, ids=lambda h: h.name)
def test_kafka_controller(controller):
    host = LAB.testinfra(controller)
    service = host.service("kafka-controller")
    assert service.is_enabled and service.is_running
    assert host.socket(f"tcp://{controller.ip}:9094").is_listening
    # Controllers serve no clients: no broker listener on them.
    assert not host.socket(f"tcp://{controller.ip}:9093").is_listening
    props = properties(host.file("/etc/kafka/controller.properties").content_string)
    assert props["process.roles"] == "controller" and props["node.id"] == str(controller.controller_id)
    assert "PLAINTEXT" not in props.get("listener.security.protocol.map", "")
    conf_file = host.file("/etc/kafka/controller.properties")
    assert (conf_file.user, conf_file.group, conf_file.mode) == ("root", "kafka", 0o640)
    meta = host.file("/var/lib/kafka-controller/metadata/meta.properties")
    assert meta.contains(f"node.id={controller.controller_id}") and meta.user == "kafka"

"""Every protection of the security issue, attacked for real: each test fails if its protection
is removed (a PLAINTEXT listener, SASL off, a trusting CA, znodes without ACLs, loose modes)."""

from __future__ import annotations

import datetime
import socket
import ssl
import warnings
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.integration.lab import CLIENT_DIR, Lab

LAB = Lab()
DC1 = LAB.brokers("dc1")


def can_list_topics(conf: dict[str, str]) -> bool:
    try:
        AdminClient({**conf, "socket.timeout.ms": "5000"}).list_topics(timeout=8)
        return True
    except Exception:  # noqa: BLE001 - any failure to get metadata is a refusal here
        return False


def test_the_admin_config_works(client_conf):
    # The positive control for every refusal below.
    assert can_list_topics(client_conf)


@pytest.mark.parametrize("port", [9091, 9093])
def test_plaintext_kafka_is_refused(port):
    conf = {"bootstrap.servers": f"{DC1[0].ip}:{port}", "security.protocol": "PLAINTEXT"}
    assert not can_list_topics(conf)


def test_tls_without_sasl_is_refused_on_the_client_listener(client_conf):
    conf = {
        "bootstrap.servers": client_conf["bootstrap.servers"],
        "security.protocol": "SSL",
        "ssl.ca.location": client_conf["ssl.ca.location"],
    }
    assert not can_list_topics(conf)


def test_a_wrong_password_is_refused(client_conf):
    assert not can_list_topics({**client_conf, "sasl.password": client_conf["sasl.password"] + "x"})


def test_an_unknown_user_is_refused(client_conf):
    assert not can_list_topics({**client_conf, "sasl.username": "nobody-here"})


def other_ca(tmp_path: Path) -> Path:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "somebody else's CA")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(key, hashes.SHA256())
    )
    path = tmp_path / "other-ca.crt"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def test_a_client_trusting_another_ca_fails_the_handshake(client_conf, tmp_path):
    assert not can_list_topics({**client_conf, "ssl.ca.location": str(other_ca(tmp_path))})


def tls_handshake(ip: str, port: int, server_hostname: str, ca: str) -> None:
    ctx = ssl.create_default_context(cafile=ca)
    with socket.create_connection((ip, port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_hostname):
            pass


def test_a_certificate_for_another_hostname_is_rejected(client_conf):
    ca = client_conf["ssl.ca.location"]
    broker, other = DC1[0], DC1[1]
    tls_handshake(broker.ip, 9093, broker.ip, ca)  # its own address: accepted
    with pytest.raises(ssl.SSLCertVerificationError, match="match"):
        tls_handshake(broker.ip, 9093, other.name, ca)


@pytest.mark.parametrize("port", [9091, 9093])
def test_tls_below_1_2_is_refused_by_the_broker(client_conf, port):
    ctx = ssl.create_default_context(cafile=client_conf["ssl.ca.location"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # old versions on purpose
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    ctx.set_ciphers("ALL:@SECLEVEL=0")
    with socket.create_connection((DC1[0].ip, port), timeout=5) as raw:
        # The broker's alert, not a client-side refusal, proves the server says no.
        with pytest.raises(ssl.SSLError, match="PROTOCOL_VERSION"):
            ctx.wrap_socket(raw, server_hostname=DC1[0].ip)


@pytest.mark.parametrize("zk", LAB.zookeepers("dc1")[:1] + LAB.zookeepers("dc2")[:1], ids=lambda h: h.name)
def test_zookeeper_has_no_plaintext_port(zk):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((zk.ip, 2181), timeout=5).close()
    # The TLS port does not answer a plaintext four-letter word.
    with socket.create_connection((zk.ip, 2182), timeout=5) as s:
        s.sendall(b"srvr")
        s.settimeout(5)
        try:
            reply = s.recv(1024)
        except (TimeoutError, ConnectionResetError):
            reply = b""
        assert b"Mode:" not in reply


ZK_SHELL = (
    "kafkakit-run {jaas} org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka "
    "-zk-tls-config-file /etc/kafka/zookeeper-client.properties -server {server} {cmd}"
)


def zk_shell(host, server: str, cmd: str, sasl: bool) -> str:
    jaas = "-Djava.security.auth.login.config=/etc/kafka/jaas.conf" if sasl else ""
    result = host.run(ZK_SHELL.format(jaas=jaas, server=server, cmd=cmd))
    return result.stdout + result.stderr


def test_kafka_znodes_are_protected_from_unauthenticated_clients():
    broker = LAB.testinfra(DC1[0])
    server = f"{LAB.zookeepers('dc1')[0].ip}:2182"
    # The brokers' SASL identity owns Kafka's znodes...
    acl = zk_shell(broker, server, "getAcl /kafka/brokers/ids", sasl=True)
    assert "'sasl,'kafka" in acl and "cdrwa" in acl
    assert "'world,'anyone\n: cdrwa" not in acl
    # ...and a TLS client without SASL cannot change anything under them.
    out = zk_shell(broker, server, "create /kafka/brokers/ids/999 intruder", sasl=False)
    assert "Created /kafka/brokers/ids/999" not in out
    assert "Created" not in zk_shell(broker, server, "create /kafka/config/users/intruder x", sasl=False)


SECRET_FILES = ["kafka-admin", "kafka-keystore", "kafka-zookeeper", "zookeeper-keystore"]


@pytest.mark.parametrize("node", DC1, ids=lambda h: h.name)
def test_key_and_store_files_have_owner_and_mode(node):
    host = LAB.testinfra(node)
    expect = {
        "/etc/kafkakit/pki/host.key": ("root", 0o600),
        "/etc/kafka/tls/keystore.p12": ("kafka", 0o600),
        "/etc/zookeeper/tls/keystore.p12": ("zookeeper", 0o600),
        "/etc/kafka/server.properties": ("root", 0o640),
        "/etc/kafka/jaas.conf": ("root", 0o640),
        "/etc/zookeeper/zoo.cfg": ("root", 0o640),
        "/etc/zookeeper/jaas.conf": ("root", 0o640),
    }
    for path, (owner, mode) in expect.items():
        f = host.file(path)
        assert (f.user, f.mode) == (owner, mode), path


@pytest.mark.parametrize("node", DC1, ids=lambda h: h.name)
def test_no_password_in_a_world_readable_file(node):
    host = LAB.testinfra(node)
    secrets = [(CLIENT_DIR / "secrets" / name).read_text().split()[0] for name in SECRET_FILES]
    readable = host.check_output(
        "find /etc/kafka /etc/zookeeper /etc/kafkakit /etc/systemd/system -type f -perm -o=r"
    ).split()
    assert readable, "expected some world-readable files (certificates, units) to scan"
    for path in readable:
        content = host.file(path).content_string
        leaked = [n for n, s in zip(SECRET_FILES, secrets, strict=True) if s in content]
        assert not leaked, f"{path} is world-readable and holds {leaked}"

"""Every protection of the security issue, attacked for real in every data centre: each test fails
if its protection is removed (a PLAINTEXT listener, SASL off, a trusting CA, znodes without ACLs,
a KRaft controller listener without mutual TLS, loose modes)."""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from kafkakit.cluster.acls import AdminAclStore
from tests.integration.lab import CLIENT_DIR, Host, Lab
from tests.selfsigned import self_signed

LAB = Lab()
pytestmark = pytest.mark.every_dc
# kafka_common's kafka_controller_port: the KRaft controllers' listener (mutual TLS).
CONTROLLER_PORT = 9094
PKI = "/etc/kafkakit/pki"


def kafka_nodes(lab: Lab) -> list[Host]:
    """Every broker, ZooKeeper server and KRaft controller, each once (dc1's brokers run ZooKeeper)."""
    nodes: list[Host] = []
    for dc in lab.data_centres():
        for node in lab.brokers(dc) + lab.zookeepers(dc) + lab.controllers(dc):
            if node not in nodes:
                nodes.append(node)
    return nodes


NODES = kafka_nodes(LAB)


def can_list_topics(conf: dict[str, str], timeout: float = 8) -> bool:
    try:
        AdminClient({**conf, "socket.timeout.ms": "5000"}).list_topics(timeout=timeout)
        return True
    except Exception:  # noqa: BLE001 - any failure to get metadata is a refusal here
        return False


def assert_refused(conf: dict[str, str], control: dict[str, str]) -> None:
    """`conf` gets no metadata from the brokers it names, while the admin's own settings (`control`,
    sent to those same brokers right before and after) do: a broker that is down or unreachable
    fails the test instead of passing it as a refusal."""
    control = {**control, "bootstrap.servers": conf["bootstrap.servers"].replace(":9091", ":9093")}
    assert can_list_topics(control), f"positive control: the admin gets no metadata from {control['bootstrap.servers']}"
    # 3 s: a refused client never gets metadata, so waiting longer only slows the suite; the
    # controls keep 8 s, the time a loaded lab may take to answer a good client.
    assert not can_list_topics(conf, timeout=3)
    assert can_list_topics(control), "positive control after the refusal"


def test_the_admin_config_works(client_conf):
    assert can_list_topics(client_conf)


@pytest.mark.parametrize("port", [9091, 9093])
def test_plaintext_kafka_is_refused(lab, dc, port, client_conf):
    conf = {"bootstrap.servers": f"{lab.brokers(dc)[0].ip}:{port}", "security.protocol": "PLAINTEXT"}
    assert_refused(conf, client_conf)


def test_tls_without_sasl_is_refused_on_the_client_listener(client_conf):
    conf = {
        "bootstrap.servers": client_conf["bootstrap.servers"],
        "security.protocol": "SSL",
        "ssl.ca.location": client_conf["ssl.ca.location"],
    }
    assert_refused(conf, client_conf)


def test_a_wrong_password_is_refused(client_conf):
    assert_refused({**client_conf, "sasl.password": client_conf["sasl.password"] + "x"}, client_conf)


def test_an_unknown_user_is_refused(client_conf):
    assert_refused({**client_conf, "sasl.username": "nobody-here"}, client_conf)


def other_ca(tmp_path: Path) -> Path:
    return self_signed(tmp_path, "somebody else's CA", ca=True)[0]


def test_a_client_trusting_another_ca_fails_the_handshake(client_conf, tmp_path):
    assert_refused({**client_conf, "ssl.ca.location": str(other_ca(tmp_path))}, client_conf)


def tls_handshake(ip: str, port: int, server_hostname: str, ca: str) -> None:
    ctx = ssl.create_default_context(cafile=ca)
    with socket.create_connection((ip, port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_hostname):
            pass


def test_a_certificate_for_another_hostname_is_rejected(lab, dc, client_conf):
    ca = client_conf["ssl.ca.location"]
    broker, other = lab.brokers(dc)[:2]
    tls_handshake(broker.ip, 9093, broker.ip, ca)  # its own address: accepted
    with pytest.raises(ssl.SSLCertVerificationError, match="match"):
        tls_handshake(broker.ip, 9093, other.name, ca)


def assert_old_tls_refused(ip: str, port: int, ca: str) -> None:
    ctx = ssl.create_default_context(cafile=ca)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # old versions on purpose
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    ctx.set_ciphers("ALL:@SECLEVEL=0")
    with socket.create_connection((ip, port), timeout=5) as raw:
        # The server's alert, not a client-side refusal, proves the server says no.
        with pytest.raises(ssl.SSLError, match="PROTOCOL_VERSION"):
            ctx.wrap_socket(raw, server_hostname=ip)


@pytest.mark.parametrize("port", [9091, 9093])
def test_tls_below_1_2_is_refused_by_the_broker(lab, dc, client_conf, port):
    assert_old_tls_refused(lab.brokers(dc)[0].ip, port, client_conf["ssl.ca.location"])


@pytest.mark.every_dc("kraft")
def test_tls_below_1_2_is_refused_by_the_controllers(lab, dc, client_conf):
    for controller in lab.controllers(dc):
        assert_old_tls_refused(controller.ip, CONTROLLER_PORT, client_conf["ssl.ca.location"])


# One TLS handshake, then one read: OPEN when the server keeps the connection (a Kafka listener
# waits for a request), REFUSED and the reason when it says no. Run here and on lab hosts
# (python3 -c; no single quotes or braces: it travels through Ansible's shell module).
TLS_PROBE = """
import socket, ssl, sys


def probe(ip, port, ca, identity):
    ctx = ssl.create_default_context(cafile=ca)
    if identity:
        ctx.load_cert_chain(*identity)
    raw = socket.create_connection((ip, int(port)), timeout=10)
    try:
        tls = ctx.wrap_socket(raw, server_hostname=ip)
    except (ssl.SSLError, ConnectionError) as e:
        return "REFUSED in the handshake: " + str(e)
    tls.settimeout(3)
    try:
        data = tls.recv(1)
    except TimeoutError:
        return "OPEN"
    except (ssl.SSLError, ConnectionError) as e:
        # TLS 1.3: the server judges the client certificate after the client has finished.
        return "REFUSED after the handshake: " + str(e)
    finally:
        tls.close()
    return "CLOSED" if not data else "DATA"


print(probe(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
"""


def probe_from_host(host, ip: str, port: int, *identity: str) -> str:
    """TLS_PROBE on a lab host against ip:port, trusting the host's CA bundle, with `identity`
    (certificate, key) as its client certificate or none."""
    args = [TLS_PROBE, ip, str(port), f"{PKI}/ca.crt", *identity]
    return host.check_output("python3 -c" + " %s" * len(args), *args).strip()


@pytest.mark.every_dc("kraft")
def test_the_controller_listener_takes_only_clients_with_a_certificate(lab, dc, client_conf):
    """KRaft's counterpart of the protected znodes: the controllers' listener is mutual TLS. On a
    broker host the same handshake is taken with the broker's certificate (the positive control)
    and refused without it; from here, trusting the CA but with no certificate, refused too."""
    broker = lab.testinfra(lab.brokers(dc)[0])
    for controller in lab.controllers(dc):
        taken = probe_from_host(broker, controller.ip, CONTROLLER_PORT, f"{PKI}/host.crt", f"{PKI}/host.key")
        assert taken == "OPEN", f"{controller.name} with the broker's certificate: {taken}"
        refused = probe_from_host(broker, controller.ip, CONTROLLER_PORT)
        assert refused.startswith("REFUSED"), f"{controller.name} without a certificate: {refused}"
        args = [controller.ip, str(CONTROLLER_PORT), client_conf["ssl.ca.location"]]
        here = subprocess.run([sys.executable, "-c", TLS_PROBE, *args], capture_output=True, text=True, timeout=30)
        assert here.stdout.startswith("REFUSED"), f"{controller.name} from the test host: {here.stdout}{here.stderr}"


def host_identity(lab: Lab, name: str, tmp_path: Path) -> tuple[str, str]:
    """A copy here of a lab host's certificate and key, to present as a client certificate."""
    host = lab.testinfra(name)
    crt, key = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
    crt.write_text(host.check_output(f"cat {PKI}/host.crt") + "\n")
    key.touch(mode=0o600)
    key.write_text(host.check_output(f"cat {PKI}/host.key") + "\n")
    return str(crt), str(key)


def visible_acls(ip: str, ca: str, identity: tuple[str, str]) -> int:
    """How many ACL bindings the principal of `identity` sees on the inter-broker listener: a super
    user sees every one, any other principal only those it may describe (none, in the kit)."""
    conf = {
        "bootstrap.servers": f"{ip}:9091",
        "security.protocol": "SSL",
        "ssl.ca.location": ca,
        "ssl.certificate.location": identity[0],
        "ssl.key.location": identity[1],
    }
    return len(AdminAclStore(AdminClient(conf)).list())


def test_only_the_dc_brokers_certificates_are_super_users(lab, dc, client_conf, tmp_path):
    """super.users names the DC's shared broker principal (the OU of its brokers' certificates),
    not each broker. A broker's certificate is a super user (the positive control, on the same
    listener); a certificate of the same CA for another kind of host (MirrorMaker 2 or monitoring:
    the CN is its principal), or for a broker of the other data centre, is not."""
    ca, ip = client_conf["ssl.ca.location"], lab.brokers(dc)[0].ip
    assert visible_acls(ip, ca, host_identity(lab, lab.brokers(dc)[1].name, tmp_path)) > 0
    others = lab.groups["mirrormaker"] + lab.groups["monitoring"]
    assert visible_acls(ip, ca, host_identity(lab, others[0], tmp_path)) == 0, others[0]
    other_dc = next(d for d in lab.data_centres() if d != dc)
    assert visible_acls(ip, ca, host_identity(lab, lab.brokers(other_dc)[0].name, tmp_path)) == 0, other_dc


@pytest.mark.every_dc("zookeeper")
def test_zookeeper_has_no_plaintext_port(lab, dc):
    zk = lab.zookeepers(dc)[0]
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


@pytest.mark.every_dc("zookeeper")
def test_kafka_znodes_are_protected_from_unauthenticated_clients(lab, dc):
    broker = lab.testinfra(lab.brokers(dc)[0])
    server = f"{lab.zookeepers(dc)[0].ip}:2182"
    # The brokers' SASL identity owns Kafka's znodes...
    acl = zk_shell(broker, server, "getAcl /kafka/brokers/ids", sasl=True)
    assert "'sasl,'kafka" in acl and "cdrwa" in acl
    assert "'world,'anyone\n: cdrwa" not in acl
    # ...and a TLS client without SASL cannot change anything under them.
    out = zk_shell(broker, server, "create /kafka/brokers/ids/999 intruder", sasl=False)
    assert "Created /kafka/brokers/ids/999" not in out
    assert "Created" not in zk_shell(broker, server, "create /kafka/config/users/intruder x", sasl=False)


# Every service's configuration folder (a folder a host does not have is left out).
CONFIG_FOLDERS = (
    "/etc/kafka",
    "/etc/zookeeper",
    "/etc/kafkakit",
    "/etc/systemd/system",
    "/etc/kafka-mirrormaker",
    "/etc/kafka-connect",
    "/etc/spark",
    "/etc/prometheus",
    "/etc/kafkakit-lag-exporter",
    "/opt/jmx-exporter",
    "/opt/spark-jobs",
)
ALL_HOSTS = sorted(LAB.hosts.values(), key=lambda h: h.name)


def lab_secrets() -> dict[str, str]:
    """Every secret the lab generated (build/lab/secrets: passwords, the CA passphrase, keystore
    passwords), by file name; the first word of each file is the value."""
    folder = CLIENT_DIR / "secrets"
    return {p.name: p.read_text().split()[0] for p in sorted(folder.iterdir()) if p.is_file() and p.read_text().strip()}


def world_readable(host) -> dict[str, str]:  # noqa: ANN001 - testinfra host
    """Path -> content of every world-readable file (small, not a jar) in the host's config folders,
    read in one command."""
    folders = [d for d in CONFIG_FOLDERS if host.file(d).is_directory]
    out = host.check_output(
        f"find {' '.join(folders)} -type f -perm -o=r ! -name '*.jar' -size -1024k "
        '-exec sh -c \'for f; do printf "\\n@@@ %s\\n" "$f"; cat "$f"; done\' _ {} +'
    )
    files: dict[str, str] = {}
    for chunk in out.split("\n@@@ ")[1:]:
        path, _, content = chunk.partition("\n")
        files[path] = content
    return files


def protected_files(node: Host) -> dict[str, tuple[str, int]]:
    """The node's key, keystores and files holding a password, with the owner and mode each must
    have, by the services the inventory gives it."""
    groups = LAB.groups
    expect = {f"{PKI}/host.key": ("root", 0o600)}
    if node.name in groups.get("kafka_broker", []):
        expect |= {"/etc/kafka/tls/keystore.p12": ("kafka", 0o600), "/etc/kafka/server.properties": ("root", 0o640)}
        if not LAB.kraft(node.dc):
            expect["/etc/kafka/jaas.conf"] = ("root", 0o640)  # the brokers' ZooKeeper login
    if node.name in groups.get("zookeeper", []):
        expect |= {
            "/etc/zookeeper/tls/keystore.p12": ("zookeeper", 0o600),
            "/etc/zookeeper/zoo.cfg": ("root", 0o640),
            "/etc/zookeeper/jaas.conf": ("root", 0o640),
        }
    if node.name in groups.get("kafka_controller", []):
        expect |= {
            "/etc/kafka/controller-tls/keystore.p12": ("kafka", 0o600),
            "/etc/kafka/controller.properties": ("root", 0o640),
            # The quorum tools' login: the keystore password, for root only.
            "/etc/kafka/controller-client.properties": ("root", 0o600),
        }
    return expect


@pytest.mark.parametrize("node", NODES, ids=lambda h: h.name)
def test_key_and_store_files_have_owner_and_mode(node):
    host = LAB.testinfra(node)
    for path, (owner, mode) in protected_files(node).items():
        f = host.file(path)
        assert (f.user, f.mode) == (owner, mode), path


@pytest.mark.parametrize("node", ALL_HOSTS, ids=lambda h: h.name)
def test_no_secret_in_a_world_readable_file(node):
    """No secret of the lab (every one it generated) in a world-readable file on any host."""
    secrets = lab_secrets()
    assert {"kafka-admin", "kafka-mirrormaker", "kafka-spark", "ca-passphrase"} <= set(secrets), sorted(secrets)
    readable = world_readable(LAB.testinfra(node))
    assert readable, "expected some world-readable files (certificates, units) to scan"
    for path, content in readable.items():
        leaked = [name for name, value in secrets.items() if value in content]
        assert not leaked, f"{path} is world-readable and holds {leaked}"

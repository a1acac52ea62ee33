"""KRaft without the lab: the kit's controller and broker templates, rendered by Ansible for three
controllers and one broker on loopback addresses (127.0.0.x), formatted by kafka_storage_format with
the real Kafka 4.3.1 storage tool, then run as real Kafka processes (small heaps) over mutual TLS
exactly as the templates say. Passes when kafka-metadata-quorum shows a leader and the three voters
caught up, the broker is registered, and the admin's bootstrap SCRAM credential (--add-scram) logs
in over SASL_SSL as a super user. A second render + format run changes nothing.

Slow (JVMs on a small machine), so it lives in tests/functional: `make test` runs it, `make unit`
does not. Needs build/artifacts/kafka_2.13-<KAFKA_KRAFT_VERSION>.tgz (`make artifacts`)."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kafkakit.kraft import quorum_health

ROOT = Path(__file__).resolve().parents[2]
VERSION = os.environ.get("KAFKA_KRAFT_VERSION", "4.3.1")
ARCHIVE = ROOT / "build" / "artifacts" / f"kafka_2.13-{VERSION}.tgz"
PLAYBOOK = Path(__file__).with_name("render.yml")
CONTROLLERS = {"ctrl-1": (101, "127.0.0.11"), "ctrl-2": (102, "127.0.0.12"), "ctrl-3": (103, "127.0.0.13")}
BROKERS = {"broker-1": (1, "127.0.0.21")}
# Ports above the usual ones, on addresses of their own: nothing else on this machine uses them.
PORTS = {"kafka_controller_port": 19094, "kafka_internal_port": 19091, "kafka_client_port": 19093}
SECRET = "loopback-test-secret-1"  # keystores and the admin: a throwaway, for this test only
HEAP = "-Xmx256m"
QUORUM_TIMEOUT = 120


def java_tool(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["java", HEAP, "-cp", f"{home}/libs/*", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


# --- a throwaway CA and one certificate per node (as kafka_pki gives each host) ---------------


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_pki(out: Path, hosts: dict[str, str]) -> None:
    """out/ca.crt and, per host, out/<host>/keystore.p12 (CN = host, SAN = its IP) + truststore.pem."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("kraft loopback test CA"))
        .issuer_name(_name("kraft loopback test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    (out / "ca.crt").write_bytes(ca_pem)
    for host, ip in hosts.items():
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(host))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(
                x509.SubjectAlternativeName([x509.DNSName(host), x509.IPAddress(ipaddress.ip_address(ip))]),
                critical=False,
            )
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .sign(ca_key, hashes.SHA256())
        )
        tls = out / host / "tls"
        tls.mkdir(parents=True)
        (tls / "keystore.p12").write_bytes(
            pkcs12.serialize_key_and_certificates(
                host.encode(), key, cert, None, serialization.BestAvailableEncryption(SECRET.encode())
            )
        )
        (tls / "truststore.pem").write_bytes(ca_pem)


# --- the cluster ------------------------------------------------------------------------------


def inventory() -> dict:
    return {
        "all": {
            "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "dc": "dc9"},
            "children": {
                "dc9": {"hosts": {h: None for h in [*CONTROLLERS, *BROKERS]}},
                "kafka_controller": {
                    "hosts": {h: {"controller_id": i, "private_ip": ip} for h, (i, ip) in CONTROLLERS.items()}
                },
                "kafka_broker": {
                    "hosts": {
                        h: {"broker_id": i, "private_ip": ip, "kafka_rack": "r1"} for h, (i, ip) in BROKERS.items()
                    }
                },
            },
        }
    }


def render_and_format(work: Path, home: Path, cluster_id: str, initial: str) -> dict:
    """ansible-playbook render.yml over the test inventory; returns its JSON result per task/host."""
    (work / "hosts.yml").write_text(yaml.safe_dump(inventory()))
    host_dir = str(work) + "/{{ inventory_hostname }}"
    extra = {
        "kraft_test_dir": str(work),
        "kraft_test_cluster_id": cluster_id,
        "kraft_test_initial_controllers": initial,
        "kafka_metadata_mode": "kraft",
        "kafka_home": str(home),
        "kafka_conf_dir": host_dir,
        "kafka_controller_tls_dir": host_dir + "/tls",
        "kafka_tls_dir": host_dir + "/tls",
        "kafka_controller_metadata_dir": host_dir + "/metadata",
        "kafka_data_dirs": [host_dir + "/data"],
        "kafka_keystore_password": SECRET,
        "kafka_admin_password": SECRET,
        "kafka_pki_ca_dir": str(work),
        # One broker: Kafka's internal topics with one replica.
        "kafka_default_replication_factor": 1,
        "kafka_min_insync_replicas": 1,
        "kafka_offsets_topic_replication_factor": 1,
        "kafka_transaction_state_log_replication_factor": 1,
        "kafka_transaction_state_log_min_isr": 1,
        "kafka_extra_properties": {"share.coordinator.state.topic.replication.factor": 1},
        **PORTS,
    }
    (work / "extra.json").write_text(json.dumps(extra))
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible" / "ansible.cfg"),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    playbook = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(work / "hosts.yml")]
    run = subprocess.run(
        [*playbook, "-e", f"@{work}/extra.json", str(PLAYBOOK)],
        cwd=ROOT / "ansible",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    # The JSON callback's document, between the lines the config's profile_roles callback prints.
    start = run.stdout.index("{") if run.stdout.startswith("{") else run.stdout.index("\n{") + 1
    return json.JSONDecoder().raw_decode(run.stdout[start:])[0]


def changed_hosts(result: dict, task_name: str) -> list[str]:
    for play in result["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"] == task_name:
                return sorted(h for h, r in task["hosts"].items() if r.get("changed"))
    raise AssertionError(f"no task {task_name!r}")


def port_open(ip: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((ip, port)) == 0


@pytest.fixture(scope="module")
def kafka_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not ARCHIVE.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{ARCHIVE} is missing: make artifacts builds it")
        pytest.skip(f"{ARCHIVE} is missing (make artifacts)")
    if not shutil.which("java"):
        pytest.skip("no java on this machine")
    top = tmp_path_factory.mktemp("kafka")
    with tarfile.open(ARCHIVE) as tgz:
        tgz.extractall(top, filter="data")
    return top / f"kafka_2.13-{VERSION}"


@pytest.fixture(scope="module")
def cluster(kafka_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    for ip in [ip for _, ip in [*CONTROLLERS.values(), *BROKERS.values()]]:
        for port in PORTS.values():
            assert not port_open(ip, port), f"{ip}:{port} is already taken"
    work = tmp_path_factory.mktemp("kraft")
    make_pki(work, {h: ip for h, (_, ip) in [*CONTROLLERS.items(), *BROKERS.items()]})
    ids = java_tool(kafka_home, "kafka.tools.StorageTool", "random-uuid")
    assert ids.returncode == 0, ids.stderr
    cluster_id = ids.stdout.strip()
    dir_ids = {
        i: java_tool(kafka_home, "kafka.tools.StorageTool", "random-uuid").stdout.strip()
        for i, _ in CONTROLLERS.values()
    }
    initial = ",".join(f"{i}@{ip}:{PORTS['kafka_controller_port']}:{dir_ids[i]}" for i, ip in CONTROLLERS.values())
    started = time.monotonic()
    first = render_and_format(work, kafka_home, cluster_id, initial)
    procs: dict[str, subprocess.Popen] = {}
    info = {"work": work, "home": kafka_home, "cluster_id": cluster_id, "dir_ids": dir_ids, "first": first,
            "procs": procs, "render_seconds": time.monotonic() - started}  # fmt: skip
    try:
        for host, conf in [
            *((h, "controller.properties") for h in CONTROLLERS),
            *((h, "server.properties") for h in BROKERS),
        ]:
            log = open(work / host / "kafka.log", "w")  # noqa: SIM115 - closed with the process
            procs[host] = subprocess.Popen(
                ["java", "-Xms256m", HEAP, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                 f"-Dlog4j2.configurationFile={work / host / 'log4j2.properties'}",
                 "-cp", f"{kafka_home}/libs/*", "kafka.Kafka", str(work / host / conf)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        info["started"] = time.monotonic()
        yield info
    finally:
        # Brokers first: their controlled shutdown needs the controllers.
        for group in (BROKERS, CONTROLLERS):
            for host in group:
                if host in procs and procs[host].poll() is None:
                    procs[host].terminate()
            for host in group:
                if host in procs:
                    try:
                        procs[host].wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        procs[host].kill()
                        procs[host].wait()


def describe(cluster: dict, what: str) -> subprocess.CompletedProcess:
    host = next(iter(CONTROLLERS))
    _, ip = CONTROLLERS[host]
    return java_tool(
        cluster["home"], "org.apache.kafka.tools.MetadataQuorumCommand",
        "--bootstrap-controller", f"{ip}:{PORTS['kafka_controller_port']}",
        "--command-config", str(cluster["work"] / host / "controller-client.properties"),
        "describe", what,
    )  # fmt: skip


def logs(cluster: dict) -> str:
    return "\n".join(
        f"--- {h}\n" + (cluster["work"] / h / "kafka.log").read_text(errors="replace")[-3000:] for h in cluster["procs"]
    )


def test_first_format_formats_every_node(cluster: dict) -> None:
    first = cluster["first"]
    assert changed_hosts(first, "Format a controller's metadata directory (first formatting of the quorum)") == sorted(
        CONTROLLERS
    )
    assert changed_hosts(first, "Format a broker's log directories") == sorted(BROKERS)
    for host, (node, _) in CONTROLLERS.items():
        meta = (cluster["work"] / host / "metadata" / "meta.properties").read_text()
        assert f"cluster.id={cluster['cluster_id']}" in meta and f"node.id={node}" in meta
        # --initial-controllers: the controller's metadata dir got the directory id given for it.
        assert f"directory.id={cluster['dir_ids'][node]}" in meta
    assert SECRET not in json.dumps(first), "the SCRAM password leaked into Ansible's output"


def test_quorum_has_a_leader_and_three_caught_up_voters(cluster: dict) -> None:
    voters = [i for i, _ in CONTROLLERS.values()]
    deadline = time.monotonic() + QUORUM_TIMEOUT
    health = None
    while time.monotonic() < deadline:
        assert all(p.poll() is None for p in cluster["procs"].values()), "a Kafka process exited:\n" + logs(cluster)
        status, replication = describe(cluster, "--status"), describe(cluster, "--replication")
        if status.returncode == 0 and replication.returncode == 0:
            health = quorum_health(status.stdout, replication.stdout, voters, max_lag=20)
            if not health.problems and BROKERS["broker-1"][0] in health.observers:
                break
        time.sleep(2)
    else:
        pytest.fail(f"no healthy quorum within {QUORUM_TIMEOUT}s: {health}\n{logs(cluster)}")
    print(f"\nquorum healthy {time.monotonic() - cluster['started']:.1f}s after start "
          f"(render+format {cluster['render_seconds']:.1f}s): leader {health.leader}, voters {health.voters}, "
          f"observers {health.observers}")  # fmt: skip
    assert health.leader in voters
    assert health.voters == sorted(voters)
    assert status.stdout.split("ClusterId:")[1].split()[0] == cluster["cluster_id"]


def test_admin_logs_in_with_its_bootstrap_scram_credential(cluster: dict) -> None:
    """--add-scram put the admin's credential in the metadata: SASL_SSL/SCRAM-SHA-512 works on the
    broker's client listener with no other step, and the admin is a super user (StandardAuthorizer)."""
    from confluent_kafka.admin import AdminClient

    _, ip = BROKERS["broker-1"]
    admin = AdminClient(
        {
            "bootstrap.servers": f"{ip}:{PORTS['kafka_client_port']}",
            "security.protocol": "SASL_SSL",
            "sasl.mechanisms": "SCRAM-SHA-512",
            "sasl.username": "admin",
            "sasl.password": SECRET,
            "ssl.ca.location": str(cluster["work"] / "ca.crt"),
        }
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            described = admin.describe_cluster(request_timeout=10).result(timeout=15)
            break
        except Exception as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"the admin cannot describe the cluster: {exc}\n{logs(cluster)}") from exc
            time.sleep(2)
    assert described.cluster_id == cluster["cluster_id"]
    assert [n.id for n in described.nodes] == [BROKERS["broker-1"][0]]


def test_a_second_run_changes_nothing(cluster: dict) -> None:
    """Re-rendering and re-formatting a running cluster: the module sees its own format and leaves it."""
    initial = ",".join(
        f"{i}@{ip}:{PORTS['kafka_controller_port']}:{cluster['dir_ids'][i]}" for i, ip in CONTROLLERS.values()
    )
    again = render_and_format(cluster["work"], cluster["home"], cluster["cluster_id"], initial)
    for play in again["plays"]:
        for task in play["tasks"]:
            assert not any(r.get("changed") for r in task["hosts"].values()), task["task"]["name"]

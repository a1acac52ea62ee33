"""Monitoring on the lab: every exporter answers (and only with the scrape login; Prometheus, the
node exporters and the lag exporter over HTTPS only), Prometheus scrapes every target, and the
alerts fire on real faults: a broker stopped by a full data disk (disk full, under-replicated
partitions; and its recovery, ops/recover-broker.yml) and a stalled consumer group (lag). The lab
shortens the alerts' `for:` (inventories/local/group_vars/all.yml) so a firing alert is seen within
a minute or two."""

from __future__ import annotations

import base64
import http.client
import json
import re
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
import yaml

from kafkakit.admin import delete_topics_retrying
from kafkakit.monitoring import JMX_PORTS, LAG_EXPORTER_PORT, NODE_EXPORTER_PORT, PROMETHEUS_PORT
from tests.integration.clients import ProduceReport, consume, consumer, produce_sequence
from tests.integration.conftest import wait_until
from tests.integration.faults import RATE, assert_clean, broker_back, fill_one_broker, run_scenario
from tests.integration.lab import CLIENT_DIR, ROOT, Lab
from tests.integration.playbooks import playbook_process, run_playbook

SECRETS = ROOT / "build/lab/secrets"
# roles/kafka_broker's kafka_data_dirs (the lab keeps the default).
DATA_DIR = "/var/lib/kafka/data"


def lab_tls() -> ssl.SSLContext:
    """Trusts the lab's CA bundle (the one clients use) and checks the address in the certificate."""
    return ssl.create_default_context(cafile=str(CLIENT_DIR / "pki" / "trusted.crt"))


def scrape_password() -> str:
    return (SECRETS / "monitoring-scrape").read_text().strip()


def http_get(
    url: str, auth: tuple[str, str] | None = None, timeout: float = 10, tls: ssl.SSLContext | None = None
) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if auth:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    if url.startswith("https:") and tls is None:
        tls = lab_tls()
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=tls) as response:  # noqa: S310 - lab addresses
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


class Prometheus:
    def __init__(self, ip: str) -> None:
        self.base = f"https://{ip}:{PROMETHEUS_PORT}/api/v1"
        self.login = ("prometheus", scrape_password())

    def get(self, path: str, **params: str) -> dict:
        status, body = http_get(f"{self.base}/{path}?{urllib.parse.urlencode(params)}", self.login)
        assert status == 200, f"{path}: HTTP {status}"
        return json.loads(body)["data"]

    def query(self, expr: str) -> list[dict]:
        return self.get("query", query=expr)["result"]

    def firing(self, alert: str, **labels: str) -> bool:
        return any(
            a["labels"]["alertname"] == alert
            and a["state"] == "firing"
            and all(a["labels"].get(k) == v for k, v in labels.items())
            for a in self.get("alerts")["alerts"]
        )


@pytest.fixture(scope="module")
def prometheus(lab: Lab) -> Prometheus:
    monitors = lab.groups.get("monitoring", [])
    assert monitors, "the lab inventory has no monitoring host"
    return Prometheus(lab.hosts[monitors[0]].ip)


@pytest.fixture(scope="module")
def scrape_login() -> tuple[str, str]:
    return "prometheus", scrape_password()


def expected_targets(lab: Lab) -> set[tuple[str, str]]:
    jobs = {(group, host) for group in JMX_PORTS for host in lab.groups.get(group, [])}
    jobs |= {("node", host) for _, host in jobs}
    jobs |= {(job, host) for host in lab.groups["monitoring"] for job in ("prometheus", "consumer_lag")}
    return jobs


def test_prometheus_scrapes_every_inventory_target_and_all_are_up(lab: Lab, prometheus: Prometheus) -> None:
    def targets() -> dict[tuple[str, str], str]:
        active = prometheus.get("targets", state="active")["activeTargets"]
        return {(t["labels"]["job"], t["labels"]["instance"]): t["health"] for t in active}

    wait_until("every target scraped and up", lambda: set(targets().values()) == {"up"}, 120)
    assert set(targets()) == expected_targets(lab)


# The groups with hosts in this inventory.
@pytest.mark.parametrize("group", sorted(g for g in JMX_PORTS if Lab().groups.get(g)))
def test_jmx_agents_answer_only_the_login_and_only_over_tls(lab: Lab, group: str, scrape_login) -> None:
    host = lab.hosts[lab.groups[group][0]]
    url = f"https://{host.ip}:{JMX_PORTS[group]}/metrics"
    status, body = http_get(url, scrape_login)
    assert status == 200  # the positive control
    # Curated rules: the JVM's own metrics and the component's, not every MBean.
    assert "jvm_memory_used_bytes" in body or "jvm_memory_bytes_used" in body
    assert len(body.splitlines()) < 5000
    assert http_get(url)[0] == 401
    assert http_get(url, ("prometheus", "not-the-password"))[0] == 401
    assert_no_page_over_plain_http_or_untrusted_tls(url, scrape_login, "jvm_")


def assert_no_page_over_plain_http_or_untrusted_tls(url: str, login: tuple[str, str], marker: str) -> None:
    # Plain HTTP gets no page: the server answers it with an error or closes the connection.
    try:
        status, body = http_get(url.replace("https:", "http:"), login)
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError):
        status, body = 0, ""
    assert status != 200 and marker not in body, status
    # A client that does not trust the lab's CA gets no page either.
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        http_get(url, login, tls=ssl.create_default_context())


def web_endpoints() -> dict[str, tuple[str, str]]:
    """Prometheus's API, a node exporter of each kind of host, the lag exporter: (url, what a
    page with the login contains)."""
    lab = Lab()
    monitor = lab.hosts[lab.groups["monitoring"][0]].ip
    found = {
        "prometheus": (f"https://{monitor}:{PROMETHEUS_PORT}/api/v1/status/buildinfo", '"status":"success"'),
        "lag_exporter": (f"https://{monitor}:{LAG_EXPORTER_PORT}/metrics", "kafkakit_lag_exporter_up"),
    }
    for group in ("kafka_broker", "kafka_controller", "zookeeper", "mirrormaker"):
        if lab.groups.get(group):
            url = f"https://{lab.hosts[lab.groups[group][0]].ip}:{NODE_EXPORTER_PORT}/metrics"
            found[f"node_exporter@{group}"] = (url, "node_filesystem_avail_bytes")
    return found


@pytest.mark.parametrize("endpoint", sorted(web_endpoints()))
def test_prometheus_and_its_exporters_answer_only_the_login_and_only_over_tls(endpoint: str, scrape_login) -> None:
    url, marker = web_endpoints()[endpoint]
    status, body = http_get(url, scrape_login)
    assert status == 200 and marker in body, (status, body[:200])  # the positive control
    assert http_get(url)[0] == 401
    assert http_get(url, ("prometheus", "not-the-password"))[0] == 401
    assert http_get(url, ("someone-else", scrape_login[1]))[0] == 401
    assert_no_page_over_plain_http_or_untrusted_tls(url, scrape_login, marker)


def test_the_lag_exporter_reads_both_data_centres(lab: Lab, scrape_login) -> None:
    monitor = lab.hosts[lab.groups["monitoring"][0]]
    url = f"https://{monitor.ip}:{LAG_EXPORTER_PORT}/metrics"

    def both_up() -> bool:
        body = http_get(url, scrape_login)[1]
        return all(f'kafkakit_lag_exporter_up{{dc="{dc}"}} 1' in body for dc in ("dc1", "dc2"))

    # Earlier tests kill and move brokers; a round that failed then is followed by one with new
    # clients (interval 10 s), so both data centres must be up within a few rounds.
    wait_until("the lag exporter reads both data centres", both_up, 60)


def test_certificate_expiry_is_exported_per_host(lab: Lab, prometheus: Prometheus) -> None:
    broker = lab.brokers("dc1")[0]
    end = lab.testinfra(broker).check_output("openssl x509 -noout -enddate -in /etc/kafkakit/pki/host.crt")
    not_after = datetime.strptime(end.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z").replace(tzinfo=UTC)
    expr = f'kafkakit_certificate_expiry_timestamp_seconds{{instance="{broker.name}",path=~".*host.crt"}}'
    wait_until("certificate expiry scraped", lambda: len(prometheus.query(expr)) == 1, 90)
    value = float(prometheus.query(expr)[0]["value"][1])
    assert value == not_after.timestamp()


def alert_expr(alert: str) -> str:
    """An alert's expression as the monitoring role installs it (default thresholds)."""
    doc = yaml.safe_load((ROOT / "roles/monitoring/files/alerts.yml").read_text())
    return next(r["expr"] for g in doc["groups"] for r in g["rules"] if r.get("alert") == alert)


def test_each_data_centre_has_one_active_controller_and_the_quorum_is_scraped(lab: Lab, prometheus: Prometheus) -> None:
    """The metrics KafkaActiveControllerCount and the KRaft alerts read come from both modes: the
    brokers' count in the ZooKeeper DC, the dedicated controllers' in the KRaft DC, which also
    export the fenced-broker count and the Raft leader they follow."""
    by_dc = "sum by (dc) (kafka_controller_kafkacontroller_activecontrollercount)"
    dcs = sorted({lab.hosts[b].dc for b in lab.groups["kafka_broker"]})
    counts = lambda: {r["metric"]["dc"]: float(r["value"][1]) for r in prometheus.query(by_dc)}  # noqa: E731
    wait_until("one active controller per data centre", lambda: counts() == dict.fromkeys(dcs, 1.0), 120)
    for dc in (d for d in dcs if lab.kraft(d)):
        controllers = {c.name: c.controller_id for c in lab.controllers(dc)}
        fenced = prometheus.query(f'kafka_controller_kafkacontroller_fencedbrokercount{{dc="{dc}"}}')
        assert {r["metric"]["instance"] for r in fenced} == set(controllers)
        assert {r["value"][1] for r in fenced} == {"0"}
        leaders = {r["value"][1] for r in prometheus.query(f'kafka_server_raft_metrics_current_leader{{dc="{dc}"}}')}
        assert len(leaders) == 1 and int(float(leaders.pop())) in controllers.values()
        # KafkaControllerQuorumLag's own expression, its threshold left off, on the real series:
        # one lag per controller, small.
        lag = re.sub(r"\s*>\s*[\d.]+\s*$", "", alert_expr("KafkaControllerQuorumLag"))
        lags = {r["metric"]["instance"]: float(r["value"][1]) for r in prometheus.query(lag) if r["metric"]["dc"] == dc}
        assert set(lags) == set(controllers) and all(v < 1000 for v in lags.values()), lags


def test_a_full_data_disk_fires_its_alerts_the_other_broker_serves_and_the_recovery_brings_it_back(
    lab: Lab, prometheus: Prometheus
) -> None:
    """dc2 (KRaft, two brokers, min.insync.replicas 1), under a transactional acks=all load: a
    one-replica topic fills one broker's data volume until the broker stops. The disk and the
    under-replicated alerts fire, the other broker takes the whole load, the operator deletes the
    topic, the broker still cannot start, ops/recover-broker.yml refuses a healthy broker and frees
    and restarts this one, both alerts clear, and nothing acknowledged is lost (faults.py)."""
    dc = "dc2"
    conf = lab.client_conf(dc)
    other, victim = lab.brokers(dc)[0], lab.brokers(dc)[-1]
    host = lab.testinfra(victim)
    urp = f'kafka_server_replicamanager_underreplicatedpartitions{{dc="{dc}"}}'
    # Before the fault: the metric is scraped from every broker at 0 and both alerts are quiet, so
    # the firing below is this fault's and not one left over (nor an alert that cannot clear).
    quiet = lambda: (  # noqa: E731
        {r["metric"]["instance"]: float(r["value"][1]) for r in prometheus.query(urp)}
        == {b.name: 0.0 for b in lab.brokers(dc)}
        and not prometheus.firing("KafkaUnderReplicatedPartitions", dc=dc)
        and not prometheus.firing("KafkaDataDiskFull", instance=victim.name)
    )
    wait_until(f"{dc} scraped with no under-replicated partition and the alerts quiet", quiet, 300)
    fill = f"fill-{uuid.uuid4().hex[:8]}"
    times: dict[str, float] = {}

    def fault(_topic: str, report: ProduceReport) -> None:
        start = time.monotonic()
        filled = fill_one_broker(conf, victim.broker_id, fill, cap_bytes=4 * 2**30)
        wait_until(f"{victim.name} out of the cluster", lambda: not broker_back(conf, victim.broker_id)(), 120)
        times[f"filled {filled / 2**20:.0f} MiB, broker out"] = time.monotonic() - start
        # The last bytes: what a real fill leaves free is luck (a restart between two crashes can
        # squeeze in); the test leaves none, as Kafka's user, inside the fill topic's partition.
        host.run(f"runuser -u kafka -- dd if=/dev/zero of={DATA_DIR}/{fill}-0/top-off bs=1M")
        took = wait_until(
            "KafkaDataDiskFull firing", lambda: prometheus.firing("KafkaDataDiskFull", instance=victim.name), 240
        )
        times["disk alert firing"] = took
        wait_until(
            "KafkaUnderReplicatedPartitions firing",
            lambda: prometheus.firing("KafkaUnderReplicatedPartitions", dc=dc),
            120,
        )
        # The other broker keeps the load going alone.
        during = len(report.acked)
        wait_until("the load acknowledged while the broker is down", lambda: len(report.acked) >= during + RATE * 5, 60)
        # The operator deletes the topic that filled the disk; its data stays on the stopped broker,
        # which cannot start to remove it.
        delete_topics_retrying(conf, [fill])
        assert host.file(f"{DATA_DIR}/{fill}-0").is_directory
        assert not broker_back(conf, victim.broker_id)()
        # Refused for a broker that serves with room on its disk; the same run for the full one,
        # next, is the positive control.
        refused = playbook_process(
            "ops/recover-broker.yml", "-e", f"recover_host={other.name}", "-e", f"recover_confirm={other.name}"
        )
        assert refused.returncode != 0 and f"{other.name} serves and its data volume is" in refused.stdout, (
            refused.stdout[-2000:]
        )
        start = time.monotonic()
        out = run_playbook(
            "ops/recover-broker.yml", "-e", f"recover_host={victim.name}", "-e", f"recover_confirm={victim.name}"
        )
        times["recovery (playbook, broker back in every ISR)"] = time.monotonic() - start
        # Only the deleted topic and what Kafka itself dropped: a live partition in this list would
        # be re-replicated and pass unseen (once, every id with a '+' or '/' was on it).
        deleted = re.search(rf"deleted on {victim.name}: ([^;]*);", " ".join(out.split()))
        assert deleted, out[-3000:]
        names = deleted[1].split(", ")
        assert f"{fill}-0" in names and all(n == f"{fill}-0" or n.endswith(("-delete", "-stray")) for n in names), names
        assert not host.file(f"{DATA_DIR}/{fill}-0").exists and host.file(f"{DATA_DIR}/__cluster_metadata-0").exists
        assert broker_back(conf, victim.broker_id)()
        for alert, labels in (
            ("KafkaUnderReplicatedPartitions", {"dc": dc}),
            ("KafkaDataDiskFull", {"instance": victim.name}),
        ):
            times[f"{alert} cleared"] = wait_until(
                f"{alert} cleared", lambda a=alert, kv=labels: not prometheus.firing(a, **kv), 300
            )

    outcome = run_scenario(f"a full data disk on {victim.name}", conf, fault, replicas=2, with_report=True)
    assert_clean(outcome)
    print("\n" + outcome.row())
    for what, seconds in times.items():
        print(f"  {what}: {seconds:.0f} s")


def test_a_stalled_consumer_group_shows_growing_lag_and_fires_the_lag_alert(
    client_conf: dict[str, str], new_topic: Callable[..., str], prometheus: Prometheus
) -> None:
    topic = new_topic(partitions=3)
    group = f"lagtest-{topic}"
    produce_sequence(client_conf, topic, 300)
    c = consumer(client_conf, group)
    c.subscribe([topic])
    try:
        assert len(consume(c, 300)) == 300
        c.commit(asynchronous=False)
    finally:
        c.close()  # the group stalls here: nobody reads on

    def lag() -> float:
        result = prometheus.query(f'sum(kafkakit_consumergroup_lag{{dc="dc1",group="{group}"}})')
        return float(result[0]["value"][1]) if result else -1.0

    wait_until("lag 0 seen after the commit", lambda: lag() == 0, 120)
    assert not prometheus.firing("KafkaConsumerGroupLagHigh", group=group, topic=topic)
    produce_sequence(client_conf, topic, 600)
    wait_until("lag 600", lambda: lag() == 600, 120)
    produce_sequence(client_conf, topic, 900)
    wait_until("lag grew to 1500", lambda: lag() == 1500, 120)
    start = time.monotonic()
    wait_until(
        "KafkaConsumerGroupLagHigh firing",
        lambda: prometheus.firing("KafkaConsumerGroupLagHigh", group=group, topic=topic),
        240,
    )
    print(f"\nlag alert firing {time.monotonic() - start:.0f} s after the lag reached 1500")

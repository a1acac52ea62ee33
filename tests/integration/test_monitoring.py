"""Monitoring on the lab: every exporter answers (and only with the scrape login; Prometheus, the
node exporters and the lag exporter over HTTPS only), Prometheus scrapes every target, each data
centre's quorum and certificates are scraped. Alerts fired by real faults are scenarios: a stalled
consumer group (scenarios/test_alerts.py) and a broker stopped by a full data disk
(scenarios/test_disk_full.py)."""

from __future__ import annotations

import http.client
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime

import pytest
import yaml

from kafkakit.monitoring.prometheus import JMX_PORTS, LAG_EXPORTER_PORT, NODE_EXPORTER_PORT, PROMETHEUS_PORT
from tests.integration.conftest import wait_until
from tests.integration.lab import ROOT, Lab
from tests.integration.prometheus import Prometheus, http_get

# roles/kafka_broker's kafka_data_dirs (the lab keeps the default).
DATA_DIR = "/var/lib/kafka/data"


def expected_targets(lab: Lab) -> set[tuple[str, str]]:
    jobs = {(group, host) for group in JMX_PORTS for host in lab.groups.get(group, [])}
    jobs |= {("node", host) for _, host in jobs}
    jobs |= {(job, host) for host in lab.groups["monitoring"] for job in ("prometheus", "consumer_lag")}
    # The source databases' exporters (monitoring_postgres_sources: the lab's one database).
    jobs |= {("postgres", host) for host in lab.groups.get("source_db", [])}
    # The Spark master's node exporter: the CDC job's lag (its textfile) beside the host's own.
    jobs |= {("node", host) for host in lab.groups.get("spark_master", [])}
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

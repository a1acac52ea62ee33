"""Monitoring: the alert rules pass promtool, their metrics exist, and the scrape targets follow
the inventory."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import bcrypt
import pytest
import yaml

from kafkakit.monitoring import prometheus as monitoring
from kafkakit.rules.inventory import HostRecord, build_inventory
from tests.unit.support import plugin_files

ROOT = Path(__file__).resolve().parents[3]
FILES = ROOT / "roles" / "monitoring" / "files"
ALERTS = FILES / "alerts.yml"
JMX_RULES = sorted((FILES / "jmx").glob("*.yml"))


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        # CI installs it with the apt packages (Debian's prometheus); a bare dev box may not have it.
        if os.environ.get("CI"):
            pytest.fail("promtool is missing (apt-get install prometheus)")
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    return path


def run(*args: str | Path) -> None:
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout}{result.stderr}"


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


# --- promtool --------------------------------------------------------------------------------


def test_alert_rules_pass_promtool_check():
    run(promtool(), "check", "rules", ALERTS)


def test_alert_rules_pass_their_unit_tests():
    run(promtool(), "test", "rules", FILES / "tests" / "alerts_test.yml")


def test_rendered_rules_with_other_thresholds_pass_promtool(tmp_path: Path):
    values = {
        "monitoring_alert_isr_shrinks_per_second": 0.5,
        "monitoring_alert_data_disk_used_ratio": 0.9,
        "monitoring_alert_data_disk_mountpoints": "/data.*",
        "monitoring_alert_certificate_days": 30,
        "monitoring_alert_spark_cdc_lag_seconds": 300,
        "monitoring_alert_spark_cdc_stalled_seconds": 1800,
    }
    rendered = tmp_path / "alerts.yml"
    rendered.write_text(monitoring.render_alert_rules(ALERTS.read_text(), values))
    run(promtool(), "check", "rules", rendered)
    exprs = {r["alert"]: r["expr"] for g in load(rendered)["groups"] for r in g["rules"]}
    assert exprs["KafkaDataDiskFull"].endswith("> 0.9")
    assert 'mountpoint=~"/data.*"' in exprs["KafkaDataDiskFull"]
    assert exprs["KafkaIsrShrinking"].endswith("> 0.5")
    assert exprs["KafkaCertificateExpiringSoon"].endswith("< 30")
    assert "(kafkakit_cdc_lag_seconds) > 300 and " in exprs["SparkCdcLagHigh"]
    assert exprs["SparkCdcStalled"].endswith("> 1800")
    # Other alerts keep their literal 0.
    assert exprs["KafkaUnderReplicatedPartitions"].endswith("> 0")


# --- the rules file itself -------------------------------------------------------------------


def alert_rules() -> list[dict[str, Any]]:
    return [r for g in load(ALERTS)["groups"] for r in g["rules"] if "alert" in r]


def test_every_alert_has_for_severity_and_annotations_using_labels():
    for rule in alert_rules():
        assert rule.get("for"), rule["alert"]
        assert rule["labels"]["severity"] in {"warning", "critical"}, rule["alert"]
        assert {"summary", "description"} <= set(rule["annotations"]), rule["alert"]
        assert "$labels." in rule["annotations"]["summary"] + rule["annotations"]["description"], rule["alert"]


def test_every_alert_has_a_unit_test():
    tested = {
        t["alertname"] for case in load(FILES / "tests" / "alerts_test.yml")["tests"] for t in case["alert_rule_test"]
    }
    assert {r["alert"] for r in alert_rules()} == tested


def test_rendering_with_defaults_changes_nothing():
    rendered = yaml.safe_load(monitoring.render_alert_rules(ALERTS.read_text(), {}))
    assert rendered == load(ALERTS)


def test_alert_durations_are_replaced_and_checked():
    rendered = yaml.safe_load(
        monitoring.render_alert_rules(ALERTS.read_text(), {}, {"KafkaUnderReplicatedPartitions": "30s"})
    )
    durations = {r["alert"]: r.get("for") for g in rendered["groups"] for r in g["rules"]}
    original = {r["alert"]: r.get("for") for r in alert_rules()}
    assert durations == {**original, "KafkaUnderReplicatedPartitions": "30s"}
    with pytest.raises(ValueError, match="not an alert"):
        monitoring.render_alert_rules(ALERTS.read_text(), {}, {"NoSuchAlert": "30s"})
    with pytest.raises(ValueError, match="not a duration"):
        monitoring.render_alert_rules(ALERTS.read_text(), {}, {"KafkaUnderReplicatedPartitions": "soon"})


def test_a_threshold_that_is_not_in_its_alert_is_refused():
    text = ALERTS.read_text().replace("< 14", "< 21")
    with pytest.raises(ValueError, match="KafkaCertificateExpiringSoon"):
        monitoring.render_alert_rules(text, {})


# --- metric names: alerts only use what something produces ---------------------------------


def produced_patterns() -> list:
    return [p for path in JMX_RULES for p in monitoring.jmx_metric_patterns(load(path))]


def test_jmx_rules_files_are_curated():
    for path in JMX_RULES:
        doc = load(path)
        assert doc["lowercaseOutputName"] is True, path.name
        assert doc["includeObjectNames"], f"{path.name}: no whitelist, the exporter would read every MBean"
        assert all(r.get("pattern") and r.get("name") for r in doc["rules"]), path.name
    assert [p.name for p in JMX_RULES] == [
        "kafka-broker.yml",
        "kafka-connect.yml",
        "kafka-controller.yml",
        "mirrormaker.yml",
        "zookeeper.yml",
    ]


def test_every_metric_in_the_alerts_is_produced_or_documented():
    patterns = produced_patterns()
    known = set(monitoring.KAFKAKIT_METRICS) | set(monitoring.EXTERNAL_METRICS)
    missing = {
        alert: sorted(n for n in names if n not in known and not any(p.fullmatch(n) for p in patterns))
        for alert, names in monitoring.alert_rules_metric_names(load(ALERTS)).items()
    }
    assert {a: m for a, m in missing.items() if m} == {}
    used = set().union(*monitoring.alert_rules_metric_names(load(ALERTS)).values())
    assert set(monitoring.KAFKAKIT_METRICS) <= used, "a documented kafkakit_* metric no alert uses"


def test_a_renamed_jmx_metric_is_caught():
    patterns = produced_patterns()
    assert any(p.fullmatch("kafka_server_replicamanager_underreplicatedpartitions") for p in patterns)
    assert not any(p.fullmatch("kafka_server_replicamanager_underreplicated_partitions") for p in patterns)
    assert any(p.fullmatch("kafka_connect_mirror_source_replication_latency_ms_max") for p in patterns)
    assert not any(p.fullmatch("kafka_connect_mirror_source_replication_latency_ms_min") for p in patterns)


def test_promql_metric_names():
    expr = (
        '(count by (dc) (zookeeper_quorum_member) or on (dc) count by (dc) (up{job="zookeeper"}) * 0) * 2 '
        '<= on (dc) count by (dc) (up{job="zookeeper"}) and rate(a_total[5m]) > 0'
    )
    assert monitoring.promql_metric_names(expr) == {"zookeeper_quorum_member", "up", "a_total"}


# --- scrape targets from the inventory -------------------------------------------------------


def play_view(doc: dict) -> tuple[dict[str, list[str]], dict[str, dict]]:
    groups: dict[str, list[str]] = {}
    hostvars: dict[str, dict] = {}
    for name, group in doc["all"]["children"].items():
        groups[name] = list(group["hosts"])
        for host, hv in group["hosts"].items():
            hostvars.setdefault(host, {}).update(hv)
    return groups, hostvars


def lab_inventory() -> dict:
    zk_kafka = ("zookeeper", "kafka_broker")
    return build_inventory(
        [
            HostRecord("dc1-kafka1", "dc1", "dc1-az1", "10.0.0.11", zk_kafka, broker_id=1, zookeeper_id=1),
            HostRecord("dc1-kafka2", "dc1", "dc1-az2", "10.0.0.12", zk_kafka, broker_id=2, zookeeper_id=2),
            HostRecord("dc2-kafka1", "dc2", "dc2-az1", "10.0.0.21", ("kafka_broker",), broker_id=1),
            HostRecord("dc2-mm2-1", "dc2", "dc2-az1", "10.0.0.23", ("mirrormaker",)),
            HostRecord("dc1-mon", "dc1", "dc1-az1", "10.0.0.40", ("monitoring",)),
            HostRecord("spark1", "dc1", "dc1-az1", "10.0.0.31", ("spark_master",)),
        ]
    )


def targets(configs: list[dict[str, Any]]) -> dict[str, list[tuple[str, dict[str, str]]]]:
    return {c["job_name"]: [(s["targets"][0], s["labels"]) for s in c["static_configs"]] for c in configs}


def test_scrape_targets_follow_the_inventory():
    groups, hostvars = play_view(lab_inventory())
    jobs = targets(monitoring.scrape_configs(groups, hostvars))
    assert list(jobs) == ["kafka_broker", "zookeeper", "mirrormaker", "node", "prometheus"]
    assert jobs["kafka_broker"] == [
        ("10.0.0.11:7071", {"dc": "dc1", "rack": "dc1-az1", "component": "kafka_broker", "instance": "dc1-kafka1"}),
        ("10.0.0.12:7071", {"dc": "dc1", "rack": "dc1-az2", "component": "kafka_broker", "instance": "dc1-kafka2"}),
        ("10.0.0.21:7071", {"dc": "dc2", "rack": "dc2-az1", "component": "kafka_broker", "instance": "dc2-kafka1"}),
    ]
    assert [t for t, _ in jobs["zookeeper"]] == ["10.0.0.11:7072", "10.0.0.12:7072"]
    # One node exporter per scraped host, even when it runs two components, and the Spark master's
    # (its jobs' textfile metrics); no monitoring host.
    assert [lbl["instance"] for _, lbl in jobs["node"]] == [
        "dc1-kafka1",
        "dc1-kafka2",
        "dc2-kafka1",
        "dc2-mm2-1",
        "spark1",
    ]
    assert jobs["prometheus"] == [
        ("10.0.0.40:9090", {"dc": "dc1", "rack": "dc1-az1", "component": "monitoring", "instance": "dc1-mon"})
    ]


def test_a_zookeeper_dcs_controllers_are_scraped_only_once_it_is_kraft():
    # The controllers a ZooKeeper DC will migrate to run nothing before the migration.
    groups = {"kafka_controller": ["dc2-controller1", "dc3-controller1"], "kafka_broker": []}
    hostvars = {
        "dc2-controller1": {
            "private_ip": "10.0.0.31",
            "dc": "dc2",
            "kafka_rack": "dc2-az1",
            "kafka_metadata_mode": "kraft",
        },
        "dc3-controller1": {"private_ip": "10.0.0.71", "dc": "dc3", "kafka_rack": "dc3-az1"},
    }
    jobs = targets(monitoring.scrape_configs(groups, hostvars, {"kafka_controller": 7074}))
    assert [t for t, _ in jobs["kafka_controller"]] == ["10.0.0.31:7074"]
    hostvars["dc3-controller1"]["kafka_metadata_mode"] = "kraft"
    jobs = targets(monitoring.scrape_configs(groups, hostvars, {"kafka_controller": 7074}))
    assert [t for t, _ in jobs["kafka_controller"]] == ["10.0.0.31:7074", "10.0.0.71:7074"]


def test_mirrormaker_target_and_optional_node_exporter():
    groups, hostvars = play_view(lab_inventory())
    jobs = targets(monitoring.scrape_configs(groups, hostvars, node_exporter_port=None))
    assert "node" not in jobs
    assert jobs["mirrormaker"] == [
        ("10.0.0.23:7073", {"dc": "dc2", "rack": "dc2-az1", "component": "mirrormaker", "instance": "dc2-mm2-1"})
    ]


def test_with_a_ca_bundle_every_target_is_scraped_over_https_with_the_login():
    groups, hostvars = play_view(lab_inventory())
    login = {"username": "prometheus", "password_file": "/etc/prometheus/scrape.password"}
    configs = {
        c["job_name"]: c
        for c in monitoring.scrape_configs(groups, hostvars, None, 9100, 9090, login, 9308, "/etc/ca.crt")
    }
    assert set(configs) == {"kafka_broker", "zookeeper", "mirrormaker", "node", "prometheus", "consumer_lag"}
    for job, config in configs.items():
        assert config["scheme"] == "https", job
        assert config["tls_config"] == {"ca_file": "/etc/ca.crt"}, job
        assert config["basic_auth"] == login, job


def test_each_source_database_is_scraped_from_every_monitoring_host_labelled_as_the_database():
    groups, hostvars = play_view(lab_inventory())
    login = {"username": "prometheus", "password_file": "/etc/prometheus/scrape.password"}
    sources = [{"name": "dc1-source-db", "dc": "dc1"}, {"name": "billing-db", "dc": "dc2"}]
    configs = {
        c["job_name"]: c
        for c in monitoring.scrape_configs(groups, hostvars, None, 9100, 9090, login, 9308, "/etc/ca.crt", sources)
    }
    postgres = configs["postgres"]
    assert (postgres["scheme"], postgres["basic_auth"]) == ("https", login)
    assert targets([postgres])["postgres"] == [
        ("10.0.0.40:9187", {"dc": "dc1", "component": "postgres", "instance": "dc1-source-db"}),
        ("10.0.0.40:9188", {"dc": "dc2", "component": "postgres", "instance": "billing-db"}),
    ]
    # No source database declared: no job.
    assert "postgres" not in targets(monitoring.scrape_configs(groups, hostvars))


def test_the_filter_takes_what_prometheus_yml_passes():
    # templates/prometheus.yml.j2: groups | kafkakit_scrape_configs(hostvars, and these eight).
    filters = plugin_files.load("filter/monitoring.py", "kafkakit_monitoring_filters")
    groups, hostvars = play_view(lab_inventory())
    login = {"username": "p", "password_file": "/f"}
    args = [{}, 9100, 9090, login, 9308, "/ca.crt", [{"name": "db", "dc": "dc1"}], 9187]
    jobs = filters.kafkakit_scrape_configs(groups, hostvars, *args)
    assert [j["job_name"] for j in jobs][-1] == "postgres"


def test_the_web_login_hash_is_the_same_on_every_run_and_differs_per_host_and_password():
    first = monitoring.web_login_hash("s3cret", "dc1-kafka1:/etc/prometheus/node-exporter-web.yml")
    assert bcrypt.checkpw(b"s3cret", first.encode()) and first.startswith("$2b$10$")
    # A second run writes the same file, without reading it back.
    assert monitoring.web_login_hash("s3cret", "dc1-kafka1:/etc/prometheus/node-exporter-web.yml") == first
    # Another host (or file) gets another salt; a new password another hash, which it matches.
    other = monitoring.web_login_hash("s3cret", "dc1-kafka2:/etc/prometheus/node-exporter-web.yml")
    assert other[7:29] != first[7:29] and bcrypt.checkpw(b"s3cret", other.encode())
    changed = monitoring.web_login_hash("new-s3cret", "dc1-kafka1:/etc/prometheus/node-exporter-web.yml")
    assert changed[7:29] != first[7:29] and bcrypt.checkpw(b"new-s3cret", changed.encode())
    assert not bcrypt.checkpw(b"s3cret", changed.encode())


def test_generated_config_passes_promtool(tmp_path: Path):
    groups, hostvars = play_view(lab_inventory())
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "kafkakit-alerts.yml").write_text(ALERTS.read_text())
    (tmp_path / "ca.crt").write_text("")
    login = {"username": "prometheus", "password_file": str(tmp_path / "scrape.password")}
    config = {
        "global": {"scrape_interval": "15s"},
        "rule_files": [str(tmp_path / "rules" / "*.yml")],
        "scrape_configs": monitoring.scrape_configs(
            groups, hostvars, None, 9100, 9090, login, 9308, str(tmp_path / "ca.crt")
        ),
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    run(promtool(), "check", "config", tmp_path / "prometheus.yml")


def test_a_metric_is_read_from_the_exporters_text():
    text = (
        "# HELP kafka_controller_kafkacontroller_zkmigrationstate Attribute exposed for management\n"
        "# TYPE kafka_controller_kafkacontroller_zkmigrationstate gauge\n"
        "kafka_controller_kafkacontroller_zkmigrationstatex 7.0\n"
        "kafka_controller_kafkacontroller_zkmigrationstate 1.0\n"
    )
    assert monitoring.metric_value(text, "kafka_controller_kafkacontroller_zkmigrationstate") == 1
    assert monitoring.metric_value('m{dc="dc3"} 2.0\n', "m") == 2
    assert monitoring.metric_value(text, "kafka_controller_kafkacontroller_activecontrollercount") == -1
    assert monitoring.metric_value("", "m") == -1
